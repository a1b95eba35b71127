//! State upgrade steps that several kinds share (see `docs/guides/upgrading.md` and
//! `terraform::framework::upgrade`): each is one schema version step of the kinds that list it.

use serde_json::{Map, Value as Json};

use crate::terraform::framework::upgrade::{UpgradeError, to_dynamic};

/// Version 0 → 1 of `karpenter_node_pool` and `karpenter_capacity_buffer`: `limits`, a map of
/// strings until 0.1.x, holds numbers or strings (an int-or-string quantity keeps its type).
pub(crate) fn limits_to_dynamic(state: Map<String, Json>) -> Result<Map<String, Json>, UpgradeError> {
    Ok(attribute_to_dynamic(state, "limits"))
}

/// Version 0 → 1 of `karpenter_node_overlay`: `capacity`, as `limits` above.
pub(crate) fn capacity_to_dynamic(state: Map<String, Json>) -> Result<Map<String, Json>, UpgradeError> {
    Ok(attribute_to_dynamic(state, "capacity"))
}

fn attribute_to_dynamic(mut state: Map<String, Json>, name: &str) -> Map<String, Json> {
    if let Some(value) = state.remove(name) {
        state.insert(name.to_string(), to_dynamic(value));
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Json) -> Map<String, Json> {
        v.as_object().cloned().expect("an object")
    }

    #[test]
    fn a_stored_map_of_strings_becomes_a_dynamic_object_of_strings() {
        let upgraded = limits_to_dynamic(object(
            json!({"name": "p", "limits": {"cpu": "1000", "memory": "1000Gi"}}),
        ))
        .expect("upgrades");
        assert_eq!(
            upgraded["limits"],
            json!({"value": {"cpu": "1000", "memory": "1000Gi"}, "type": ["object", {"cpu": "string", "memory": "string"}]})
        );
        assert_eq!(upgraded["name"], json!("p"));
    }

    #[test]
    fn null_and_absent_stay_as_they_are() {
        let upgraded = capacity_to_dynamic(object(json!({"capacity": null}))).expect("upgrades");
        assert_eq!(upgraded["capacity"], Json::Null);
        let upgraded = capacity_to_dynamic(object(json!({"name": "o"}))).expect("upgrades");
        assert!(!upgraded.contains_key("capacity"));
    }
}
