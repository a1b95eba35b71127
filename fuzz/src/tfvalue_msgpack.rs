//! The msgpack decoder (`DynamicValue.msgpack`, what Terraform sends in every RPC that carries a
//! value) against a fixed set of types. Whatever decodes must conform to its type, re-encode,
//! and decode again to the same value.

use super::{TYPES, split};
use terraform_provider_karpenter::terraform::tfvalue::msgpack;

/// Runs one input; panics on a broken property (the fuzzer reports it as a crash).
pub fn tfvalue_msgpack(data: &[u8]) {
    let (selector, bytes) = split(data);
    let ty = &TYPES[selector % TYPES.len()];
    let Ok(value) = msgpack::decode(bytes, ty) else {
        return;
    };
    if let Err((path, message)) = value.conforms_to(ty) {
        panic!("decoded value does not conform to {ty} at {path}: {message}");
    }
    let again = match msgpack::encode(&value, ty) {
        Ok(b) => b,
        Err(e) => panic!("decoded value does not re-encode: {e}"),
    };
    match msgpack::decode(&again, ty) {
        Ok(back) => assert_eq!(back, value, "msgpack round trip changed the value"),
        Err(e) => panic!("re-encoded value does not decode: {e}"),
    }
}
