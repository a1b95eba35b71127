//! Role attributes as Terraform values and back: string maps and sets (null when empty and
//! unset), the partition and account of a role ARN, and `unmanaged_inline_policies`.

use std::collections::{BTreeMap, BTreeSet};

use super::model::Actual;
use super::schema::UNMANAGED_INLINE;
use crate::policy::arn::Arn;
use crate::terraform::tfvalue::Value;

/// A string map attribute as a BTreeMap (null → empty).
pub fn string_map_of(value: &Value, name: &str) -> BTreeMap<String, String> {
    value
        .get(name)
        .and_then(Value::as_entries)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// A string set or list attribute as a BTreeSet (null → empty).
pub fn string_set_of(value: &Value, name: &str) -> BTreeSet<String> {
    value
        .get(name)
        .and_then(Value::as_elements)
        .map(|e| e.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// A map for state: null when empty and the prior value was null (so `tags` unset stays unset).
pub fn map_value(map: &BTreeMap<String, String>, prior: Option<&Value>) -> Value {
    if map.is_empty() && prior.is_none_or(Value::is_null) {
        return Value::Null;
    }
    crate::terraform::framework::values::string_map(map.iter())
}

/// A string set for state: null when empty and the prior value was null.
pub fn set_value(set: &BTreeSet<String>, prior: Option<&Value>) -> Value {
    if set.is_empty() && prior.is_none_or(Value::is_null) {
        return Value::Null;
    }
    Value::Set(set.iter().map(|s| Value::string(s.clone())).collect())
}

/// The ARN's partition and account (from a role ARN such as the one CreateRole returns).
pub fn partition_and_account(role_arn: &str) -> Option<(String, String)> {
    Arn::parse(role_arn).ok().map(|a| (a.partition, a.account))
}

/// The inline policies of `actual` other than `managed` (the one the resource puts, if any),
/// for state: always a known set, empty when there are none.
pub fn unmanaged_inline(actual: &Actual, managed: Option<&str>) -> Value {
    let names: BTreeSet<&String> = actual
        .inline_names
        .iter()
        .filter(|n| Some(n.as_str()) != managed)
        .collect();
    Value::Set(names.into_iter().map(|n| Value::string(n.clone())).collect())
}

/// Plans `unmanaged_inline_policies` empty: what apply leaves.
pub fn plan_unmanaged_inline(planned: &mut Value) {
    if let Value::Object(fields) = planned {
        fields.insert(UNMANAGED_INLINE.into(), Value::Set(Vec::new()));
    }
}
