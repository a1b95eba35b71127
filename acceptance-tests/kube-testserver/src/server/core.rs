//! The core group's reads besides Nodes (which go through the generic resource handlers):
//! `/api/v1` discovery and the Namespaces, which are not stored (every namespace the server
//! knows exists and is Active; see README).

use http::Response;
use serde_json::{Value, json};

use super::discovery::resource_entries;
use crate::shared::{Body, json_response};
use crate::store::{ResourceType, State};
use crate::util::ApiError;

/// `GET /api/v1/<rest>`: the resource list, the Namespace list, or one Namespace.
pub(super) fn read(st: &State, rest: &[&str]) -> Result<Response<Body>, ApiError> {
    match rest {
        [] => {
            let mut resources = vec![
                json!({"name": "namespaces", "singularName": "namespace", "namespaced": false,
                "kind": "Namespace", "verbs": ["get", "list"], "shortNames": ["ns"]}),
            ];
            resources.extend(resource_entries(&ResourceType::node()));
            Ok(json_response(
                200,
                &json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": resources}),
                &[],
            ))
        }
        ["namespaces"] => {
            let listed: Vec<String> = match &st.namespaces {
                Some(known) => known.iter().cloned().collect(),
                None => vec!["default".into(), "kube-system".into()],
            };
            let items: Vec<Value> = listed.iter().map(|n| namespace(n)).collect();
            Ok(json_response(
                200,
                &json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items}),
                &[],
            ))
        }
        ["namespaces", n] => {
            if !st.namespace_exists(n) {
                return Err(crate::store::namespace_not_found(n));
            }
            Ok(json_response(200, &namespace(n), &[]))
        }
        _ => Err(ApiError::no_resource()),
    }
}

/// Every namespace exists and is Active (namespaces are not stored; see README).
fn namespace(name: &str) -> Value {
    json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": name, "uid": format!("00000000-0000-0000-0000-{:012x}", name.len()),
        "resourceVersion": "1", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
}
