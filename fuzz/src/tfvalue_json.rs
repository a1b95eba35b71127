//! The JSON decoder: strict (`DynamicValue.json`) and lenient (`RawState.json`, the stored
//! state UpgradeResourceState reads against the resource's schema) against a fixed set of types
//! including every schema's type. Whatever decodes must conform, re-encode as JSON and decode
//! strictly to the same value, and survive msgpack as the upgraded state does.

use super::{TYPES, split};
use terraform_provider_karpenter::terraform::tfvalue::{json, msgpack};

/// Runs one input; panics on a broken property (the fuzzer reports it as a crash).
pub fn tfvalue_json(data: &[u8]) {
    let (selector, bytes) = split(data);
    let ty = &TYPES[(selector >> 1) % TYPES.len()];
    let decoded = if selector & 1 == 0 {
        json::decode(bytes, ty)
    } else {
        json::decode_lenient(bytes, ty)
    };
    let Ok(value) = decoded else {
        return;
    };
    if let Err((path, message)) = value.conforms_to(ty) {
        panic!("decoded value does not conform to {ty} at {path}: {message}");
    }
    let text = match json::encode(&value, ty) {
        Ok(t) => t,
        Err(e) => panic!("decoded value does not re-encode as JSON: {e}"),
    };
    match json::decode(&text, ty) {
        Ok(back) => assert_eq!(back, value, "JSON round trip changed the value"),
        Err(e) => panic!("re-encoded JSON does not decode: {e}"),
    }
    let packed = match msgpack::encode(&value, ty) {
        Ok(b) => b,
        Err(e) => panic!("JSON-decoded value does not encode as msgpack: {e}"),
    };
    match msgpack::decode(&packed, ty) {
        Ok(back) => assert_eq!(back, value, "msgpack round trip changed the value"),
        Err(e) => panic!("msgpack of a JSON-decoded value does not decode: {e}"),
    }
}
