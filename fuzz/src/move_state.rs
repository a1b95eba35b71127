//! MoveResourceState: another provider's stored state (kubectl_manifest's YAML, or
//! kubernetes_manifest's dynamic manifest) moved into one of the four Karpenter kinds. Whatever
//! is adopted must conform to the resource's type and encode as msgpack.

use super::{KINDS, split};
use terraform_provider_karpenter::terraform::framework::{MoveSource, Resource};
use terraform_provider_karpenter::terraform::tfvalue::msgpack;

const SOURCES: &[(&str, &str)] = &[
    ("registry.terraform.io/gavinbunney/kubectl", "kubectl_manifest"),
    ("registry.terraform.io/alekc/kubectl", "kubectl_manifest"),
    (
        "registry.terraform.io/hashicorp/kubernetes",
        "kubernetes_manifest",
    ),
    ("registry.terraform.io/hashicorp/null", "null_resource"),
];

/// Runs one input; panics on a broken property (the fuzzer reports it as a crash).
pub fn move_state(data: &[u8]) {
    let (selector, bytes) = split(data);
    let kind = &KINDS[selector % KINDS.len()];
    let (provider_address, type_name) = SOURCES[(selector >> 2) % SOURCES.len()];
    let source = MoveSource {
        provider_address,
        type_name,
        schema_version: 0,
        state_json: bytes,
    };
    let Ok(state) = kind.move_state(&source) else {
        return;
    };
    let ty = kind.schema.value_type();
    if let Err((path, message)) = state.conforms_to(&ty) {
        panic!("moved state does not conform to {ty} at {path}: {message}");
    }
    if let Err(e) = msgpack::encode(&state, &ty) {
        panic!("moved state does not encode: {e}");
    }
}
