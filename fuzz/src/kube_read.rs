//! The read path of the four Karpenter kinds: an arbitrary object as an API server could
//! return it (GET after apply, refresh, import) → `from_wire` via `state_from_object`, with a
//! prior state. The state must conform to the resource's type and encode as msgpack (what the
//! plugin sends back), and a second refresh from that state must give the same state.

use super::{KINDS, split};
use kube::api::DynamicObject;
use terraform_provider_karpenter::terraform::framework::values::object;
use terraform_provider_karpenter::terraform::tfvalue::{Value, msgpack};

/// Runs one input; panics on a broken property (the fuzzer reports it as a crash).
pub fn kube_read(data: &[u8]) {
    let (selector, bytes) = split(data);
    let kind = &KINDS[selector % KINDS.len()];
    let Ok(obj) = serde_json::from_slice::<DynamicObject>(bytes) else {
        return;
    };
    let ty = kind.schema.value_type();
    // The prior state: none (import), or one managing a label and an annotation.
    let prior = if (selector >> 2) & 1 == 0 {
        Value::Null
    } else {
        let managed = |k: &str| Value::Map([(k.to_string(), Value::string("x"))].into_iter().collect());
        let metadata = object([("labels", managed("team")), ("annotations", managed("note"))]);
        Value::Object(
            kind.schema
                .attributes
                .iter()
                .map(|a| {
                    let v = match a.name {
                        "metadata" => metadata.clone(),
                        _ => a.default.clone().unwrap_or(Value::Null),
                    };
                    (a.name.to_string(), v)
                })
                .chain(
                    kind.schema
                        .blocks
                        .iter()
                        .map(|b| (b.name.to_string(), Value::Null)),
                )
                .collect(),
        )
    };
    let Ok(state) = kind.state_from_object(&obj, &prior) else {
        return;
    };
    if let Err((path, message)) = state.conforms_to(&ty) {
        panic!("state read from the object does not conform to {ty} at {path}: {message}");
    }
    let packed = match msgpack::encode(&state, &ty) {
        Ok(b) => b,
        Err(e) => panic!("state read from the object does not encode: {e}"),
    };
    match msgpack::decode(&packed, &ty) {
        Ok(back) => assert_eq!(back, state, "msgpack round trip changed the state"),
        Err(e) => panic!("encoded state does not decode: {e}"),
    }
    match kind.state_from_object(&obj, &state) {
        Ok(again) => assert_eq!(
            again, state,
            "a second refresh of the same object changed the state"
        ),
        Err(d) => panic!("a second refresh of the same object failed: {d:?}"),
    }
}
