//! CustomResourceDefinitions as objects of the store: their validation, the resource type a
//! CRD version serves, and establishment.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::schema::{self, FieldError};
use crate::store::types::ResourceType;
use crate::util::meta_str;

/// Resolve the served kind for `version` of a CRD object, if it is established and serves it.
pub fn type_from_crd(crd: &Value, version: &str) -> Option<ResourceType> {
    if !crd_established(crd) {
        return None;
    }
    let spec = crd.get("spec")?;
    let names = spec.get("names")?;
    let v = spec.get("versions")?.as_array()?.iter().find(|v| {
        v.get("name").and_then(Value::as_str) == Some(version)
            && v.get("served").and_then(Value::as_bool) == Some(true)
    })?;
    let kind = names.get("kind")?.as_str()?.to_string();
    let strs = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    Some(ResourceType {
        group: spec.get("group")?.as_str()?.to_string(),
        version: version.to_string(),
        plural: names.get("plural")?.as_str()?.to_string(),
        singular: names
            .get("singular")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| kind.to_lowercase()),
        list_kind: names
            .get("listKind")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| format!("{kind}List")),
        kind,
        namespaced: spec.get("scope").and_then(Value::as_str) == Some("Namespaced"),
        short_names: strs(names.get("shortNames")),
        categories: strs(names.get("categories")),
        status_subresource: v.pointer("/subresources/status").is_some(),
        scale_subresource: v.pointer("/subresources/scale").is_some(),
        schema: v.pointer("/schema/openAPIV3Schema").cloned().map(Arc::new),
        printer_columns: v
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    })
}

/// Whether a CRD object carries `Established=True`.
pub fn crd_established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

pub(super) fn validate_crd(obj: &mut Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let err = |r: &'static str, f: &str, m: &str| FieldError {
        reason: r,
        field: f.into(),
        message: m.into(),
    };
    let group = obj
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let plural = obj
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = obj
        .pointer("/spec/names/kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if group.is_empty() {
        errs.push(err("FieldValueRequired", "spec.group", "Required value"));
    }
    if plural.is_empty() {
        errs.push(err("FieldValueRequired", "spec.names.plural", "Required value"));
    }
    if kind.is_empty() {
        errs.push(err("FieldValueRequired", "spec.names.kind", "Required value"));
    }
    match obj.pointer("/spec/scope").and_then(Value::as_str) {
        Some("Cluster") | Some("Namespaced") => {}
        other => errs.push(err(
            "FieldValueNotSupported",
            "spec.scope",
            &format!(
                "Unsupported value: {}: supported values: \"Cluster\", \"Namespaced\"",
                schema::show(&other.map(|s| json!(s)).unwrap_or(Value::Null))
            ),
        )),
    }
    let versions = obj
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        errs.push(err(
            "FieldValueInvalid",
            "spec.versions",
            "Invalid value: \"null\": must have exactly one version marked as storage version",
        ));
    } else if versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count()
        != 1
    {
        errs.push(err(
            "FieldValueInvalid",
            "spec.versions",
            "Invalid value: \"array\": must have exactly one version marked as storage version",
        ));
    }
    let name = meta_str(obj, "name").unwrap_or("").to_string();
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        errs.push(err(
            "FieldValueInvalid",
            "metadata.name",
            &format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    if let Some(names) = obj.pointer_mut("/spec/names").and_then(Value::as_object_mut)
        && !kind.is_empty()
    {
        names
            .entry("singular")
            .or_insert_with(|| json!(kind.to_lowercase()));
        names
            .entry("listKind")
            .or_insert_with(|| json!(format!("{kind}List")));
    }
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("conversion")
            .or_insert_with(|| json!({"strategy": "None"}));
    }
    errs
}
