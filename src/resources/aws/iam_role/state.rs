//! What both roles write back to state from what exists, the same way: the role itself (`id`,
//! `name`, `arn`, `path`, `permissions_boundary`, and the `partition` each role words its own
//! way), its tags (`tags` and `tags_all`), its attached policies (`managed_policy_arns`, the
//! resource's own; `additional_policy_arns`, the others) and its trust policy
//! (`assume_role_policy`). Each role then writes what is its alone.

use std::collections::{BTreeMap, BTreeSet};

use super::documents::canonical;
use super::model::Actual;
use super::values::set_value;
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::{opt_string, string_list};
use crate::terraform::tfvalue::Value;

/// `base`'s attributes with those both roles read back from `actual` written over them.
/// `default_tags` are the provider's (to tell `tags` from `tags_all`); `own` are the policies
/// the resource attaches itself (every other attached one is in `additional_policy_arns`),
/// `managed` those of them `managed_policy_arns` lists.
pub fn common_state(
    base: &Value,
    actual: &Actual,
    default_tags: &BTreeMap<String, String>,
    partition: Value,
    own: &[String],
    managed: &[&String],
) -> BTreeMap<String, Value> {
    let mut fields = match base {
        Value::Object(f) => f.clone(),
        _ => BTreeMap::new(),
    };
    let additional: BTreeSet<String> = actual
        .attached
        .iter()
        .filter(|a| !own.contains(a))
        .cloned()
        .collect();
    let (tags, all_tags) = tags_all::read(&actual.tags, default_tags, base.get("tags"));
    let read_back = [
        ("id", Value::string(actual.role.name.clone())),
        ("name", Value::string(actual.role.name.clone())),
        ("arn", Value::string(actual.role.arn.clone())),
        ("path", Value::string(actual.role.path.clone())),
        ("partition", partition),
        (
            "permissions_boundary",
            opt_string(actual.role.permissions_boundary.clone()),
        ),
        ("tags", tags),
        (tags_all::TAGS_ALL, all_tags),
        (
            "additional_policy_arns",
            set_value(&additional, base.get("additional_policy_arns")),
        ),
        ("managed_policy_arns", string_list(managed)),
        (
            "assume_role_policy",
            Value::string(canonical(&actual.role.trust_policy)),
        ),
    ];
    for (name, value) in read_back {
        fields.insert(name.to_string(), value);
    }
    fields
}
