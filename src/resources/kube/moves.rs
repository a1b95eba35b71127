//! Reading the Kubernetes manifest out of another provider's resource state, for `moved {}`
//! blocks from the untyped resources people used before this provider:
//!
//! - `kubectl_manifest` (gavinbunney/kubectl, alekc/kubectl): the manifest is the YAML in
//!   `yaml_body` (`yaml_body_parsed` as a fallback).
//! - `kubernetes_manifest` (hashicorp/kubernetes): the manifest is `manifest` (or `object`), a
//!   dynamically typed attribute that state JSON stores either wrapped as
//!   `{"value": …, "type": …}` or as the bare object.
//!
//! A manifest of an earlier API version the cluster converts (karpenter.sh/v1beta1 NodePool,
//! karpenter.k8s.aws/v1beta1 EC2NodeClass) is accepted by the v1 resource types; see
//! `crate::k8s::kinds::Kind::converted_from`.
//!
//! The source state is parsed defensively: it comes from another provider's schema, possibly
//! an older version of it, and is never upgraded by that provider first.

use serde_json::Value as Json;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum MoveError {
    #[error(
        "moving from {type_name} ({provider}) is not supported: the sources are kubectl_manifest (gavinbunney/kubectl, alekc/kubectl) and kubernetes_manifest (hashicorp/kubernetes)"
    )]
    UnsupportedSource { type_name: String, provider: String },
    #[error("the {type_name} state could not be read: {reason}")]
    Unreadable { type_name: String, reason: String },
}

/// The manifest (a Kubernetes object as JSON) a source resource's state holds.
pub fn source_manifest(
    provider_address: &str,
    type_name: &str,
    state_json: &[u8],
) -> Result<Json, MoveError> {
    let unreadable = |reason: String| MoveError::Unreadable {
        type_name: type_name.to_string(),
        reason,
    };
    let provider = provider_address.trim_start_matches("registry.terraform.io/");
    let state: Json = serde_json::from_slice(state_json).map_err(|e| unreadable(format!("not JSON: {e}")))?;
    let manifest = match (type_name, provider) {
        ("kubectl_manifest", "gavinbunney/kubectl" | "alekc/kubectl") => {
            let yaml = ["yaml_body", "yaml_body_parsed"]
                .iter()
                .find_map(|k| {
                    state
                        .get(*k)
                        .and_then(Json::as_str)
                        .filter(|s| !s.trim().is_empty())
                })
                .ok_or_else(|| unreadable("it has no yaml_body".into()))?;
            serde_saphyr::from_str::<Json>(yaml)
                .map_err(|e| unreadable(format!("yaml_body is not YAML: {e}")))?
        }
        ("kubernetes_manifest", "hashicorp/kubernetes") => ["manifest", "object"]
            .iter()
            .filter_map(|k| state.get(*k))
            .map(|v| match v.get("value") {
                Some(inner) if v.get("type").is_some() => inner.clone(),
                _ => v.clone(),
            })
            .find(Json::is_object)
            .ok_or_else(|| unreadable("it has no manifest".into()))?,
        _ => {
            return Err(MoveError::UnsupportedSource {
                type_name: type_name.to_string(),
                provider: provider_address.to_string(),
            });
        }
    };
    if !manifest.is_object() {
        return Err(unreadable("the manifest is not an object".into()));
    }
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_yaml_body_of_kubectl_manifest() {
        let state = json!({"yaml_body": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  weight: 10\n"});
        let m = source_manifest(
            "registry.terraform.io/gavinbunney/kubectl",
            "kubectl_manifest",
            state.to_string().as_bytes(),
        )
        .expect("manifest");
        assert_eq!(m["kind"], "NodePool");
        assert_eq!(m["spec"]["weight"], 10);
        assert!(
            source_manifest(
                "registry.terraform.io/alekc/kubectl",
                "kubectl_manifest",
                state.to_string().as_bytes()
            )
            .is_ok()
        );
    }

    #[test]
    fn reads_wrapped_and_bare_kubernetes_manifest() {
        let object = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "a"}});
        for state in [
            json!({"manifest": {"value": object, "type": ["object", {}]}}),
            json!({"manifest": object}),
        ] {
            let m = source_manifest(
                "registry.terraform.io/hashicorp/kubernetes",
                "kubernetes_manifest",
                state.to_string().as_bytes(),
            )
            .expect("manifest");
            assert_eq!(m["metadata"]["name"], "a");
        }
    }

    #[test]
    fn refuses_other_sources_and_bad_states_with_reasons() {
        assert!(matches!(
            source_manifest("registry.terraform.io/hashicorp/null", "null_resource", b"{}"),
            Err(MoveError::UnsupportedSource { .. })
        ));
        assert!(matches!(
            source_manifest(
                "registry.terraform.io/gavinbunney/kubectl",
                "kubectl_manifest",
                b"{}"
            ),
            Err(MoveError::Unreadable { .. })
        ));
        assert!(matches!(
            source_manifest(
                "registry.terraform.io/gavinbunney/kubectl",
                "kubectl_manifest",
                br#"{"yaml_body": "a: [1"}"#
            ),
            Err(MoveError::Unreadable { .. })
        ));
    }
}
