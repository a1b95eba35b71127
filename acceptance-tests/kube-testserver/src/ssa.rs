//! A simplified server-side apply: field sets (leaf paths, lists treated as atomic), their
//! `FieldsV1` rendering for `metadata.managedFields`, and the apply merge itself. It gives the
//! result real SSA gives for a manager that applies its full intent: fields it stopped sending
//! (and nobody else owns) are removed, fields it sends are set. Conflicts are reported when a
//! field the applier sends is owned by another manager with a different value and `force` is off.

use crate::util::ApiError;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// A path of object keys from the root of an object.
pub type FieldPath = Vec<String>;
/// A set of owned leaf paths.
pub type FieldSet = BTreeSet<FieldPath>;

/// The fields of an applied configuration (identity fields excluded).
pub fn fieldset_of(v: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    if let Some(o) = v.as_object() {
        for (k, c) in o {
            match k.as_str() {
                "apiVersion" | "kind" => {}
                "metadata" => {
                    if let Some(m) = c.as_object() {
                        for (mk, mv) in m {
                            if matches!(mk.as_str(), "labels" | "annotations" | "finalizers" | "ownerReferences") {
                                collect(mv, vec!["metadata".into(), mk.clone()], &mut out);
                            }
                        }
                    }
                }
                _ => collect(c, vec![k.clone()], &mut out),
            }
        }
    }
    out
}

fn collect(v: &Value, path: FieldPath, out: &mut FieldSet) {
    match v {
        Value::Object(o) if !o.is_empty() => {
            for (k, c) in o {
                let mut p = path.clone();
                p.push(k.clone());
                collect(c, p, out);
            }
        }
        _ => {
            out.insert(path);
        }
    }
}

/// Render a field set as `FieldsV1` (`{"f:spec":{"f:weight":{}}}`).
pub fn to_fields_v1(fs: &FieldSet) -> Value {
    let mut root = Map::new();
    for p in fs {
        let mut cur = &mut root;
        for seg in p {
            let e = cur.entry(format!("f:{seg}")).or_insert_with(|| json!({}));
            if !e.is_object() {
                *e = json!({});
            }
            let Some(m) = e.as_object_mut() else { break };
            cur = m;
        }
    }
    Value::Object(root)
}

/// Parse `FieldsV1` back into leaf paths (entries other than `f:` are treated as leaves).
pub fn from_fields_v1(v: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    fn walk(v: &Value, path: FieldPath, out: &mut FieldSet) {
        let children: Vec<(&String, &Value)> = v
            .as_object()
            .map(|o| o.iter().filter(|(k, _)| k.starts_with("f:")).collect())
            .unwrap_or_default();
        if children.is_empty() {
            if !path.is_empty() {
                out.insert(path);
            }
            return;
        }
        for (k, c) in children {
            let mut p = path.clone();
            p.push(k[2..].to_string());
            walk(c, p, out);
        }
    }
    walk(v, Vec::new(), &mut out);
    out
}

/// The value at a path, if present.
pub fn get_path<'a>(v: &'a Value, p: &[String]) -> Option<&'a Value> {
    let mut cur = v;
    for seg in p {
        cur = cur.as_object()?.get(seg)?;
    }
    Some(cur)
}

/// Remove the value at a path, then remove parents that became empty unless `keep` holds them.
fn remove_path(v: &mut Value, p: &[String], keep: &FieldSet) {
    fn rec(v: &mut Value, p: &[String]) -> bool {
        let Some(o) = v.as_object_mut() else { return false };
        match p {
            [] => false,
            [last] => o.remove(last).is_some(),
            [head, rest @ ..] => {
                let Some(child) = o.get_mut(head) else { return false };
                let removed = rec(child, rest);
                if removed && child.as_object().is_some_and(Map::is_empty) {
                    o.remove(head);
                }
                removed
            }
        }
    }
    let _ = keep;
    rec(v, p);
}

/// Deep-merge an applied configuration into a live object: objects merge, everything else
/// (scalars, lists) is replaced; `null` removes.
pub fn merge_config(live: &mut Value, cfg: &Value) {
    match (live.as_object_mut(), cfg.as_object()) {
        (Some(l), Some(c)) => {
            for (k, cv) in c {
                if cv.is_null() {
                    l.remove(k);
                } else if cv.is_object() && l.get(k).is_some_and(Value::is_object) {
                    if let Some(lv) = l.get_mut(k) {
                        merge_config(lv, cv);
                    }
                } else {
                    l.insert(k.clone(), cv.clone());
                }
            }
        }
        _ => *live = cfg.clone(),
    }
}

/// One manager's recorded ownership.
#[derive(Debug, Clone)]
pub struct Manager {
    pub manager: String,
    pub operation: String,
    pub subresource: String,
    pub fields: FieldSet,
    pub api_version: String,
}

/// Read `metadata.managedFields`.
pub fn managers(obj: &Value) -> Vec<Manager> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| Manager {
                    manager: e.get("manager").and_then(Value::as_str).unwrap_or("").to_string(),
                    operation: e.get("operation").and_then(Value::as_str).unwrap_or("Update").to_string(),
                    subresource: e.get("subresource").and_then(Value::as_str).unwrap_or("").to_string(),
                    fields: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
                    api_version: e.get("apiVersion").and_then(Value::as_str).unwrap_or("").to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Write `metadata.managedFields` (entries with no fields are dropped).
pub fn write_managers(obj: &mut Value, ms: &[Manager], time: &str) {
    let entries: Vec<Value> = ms
        .iter()
        .filter(|m| !m.fields.is_empty())
        .map(|m| {
            let mut e = json!({
                "manager": m.manager,
                "operation": m.operation,
                "apiVersion": m.api_version,
                "time": time,
                "fieldsType": "FieldsV1",
                "fieldsV1": to_fields_v1(&m.fields),
            });
            if !m.subresource.is_empty() {
                if let Some(o) = e.as_object_mut() {
                    o.insert("subresource".into(), json!(m.subresource));
                }
            }
            e
        })
        .collect();
    if let Some(meta) = crate::util::meta_mut(obj) {
        if entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(entries));
        }
    }
}

fn overlaps(a: &FieldPath, b: &FieldPath) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Apply `cfg` for `manager` onto `live` (an existing object); returns the merged object with
/// updated managedFields. `subresource` is `""` or `"status"`.
pub fn apply(
    live: &Value,
    cfg: &Value,
    manager: &str,
    subresource: &str,
    force: bool,
    api_version: &str,
    conflict: impl Fn(String, Vec<Value>) -> ApiError,
) -> Result<Value, ApiError> {
    let mut ms = managers(live);
    let new_fields = fieldset_of(cfg);
    let old_fields = ms
        .iter()
        .find(|m| m.manager == manager && m.operation == "Apply" && m.subresource == subresource)
        .map(|m| m.fields.clone())
        .unwrap_or_default();
    if !force {
        let mut conflicts = Vec::new();
        for m in ms.iter().filter(|m| !(m.manager == manager && m.operation == "Apply")) {
            for p in &new_fields {
                if m.fields.iter().any(|q| overlaps(p, q)) && get_path(live, p) != get_path(cfg, p) {
                    let using = if m.api_version.is_empty() { String::new() } else { format!(" using {}", m.api_version) };
                    conflicts.push((format!("conflict with \"{}\"{using}", m.manager), format!(".{}", p.join("."))));
                }
            }
        }
        if !conflicts.is_empty() {
            let n = conflicts.len();
            let list: Vec<String> = conflicts.iter().map(|(m, f)| format!("{m}: {f}")).collect();
            let msg = if n == 1 {
                format!("Apply failed with 1 conflict: {}", list[0])
            } else {
                format!("Apply failed with {n} conflicts: {}", list.join("\n"))
            };
            let causes: Vec<Value> = conflicts.iter().map(|(m, f)| json!({"reason": "FieldManagerConflict", "message": m, "field": f})).collect();
            return Err(conflict(msg, causes));
        }
    }
    let mut out = live.clone();
    let others: FieldSet = ms
        .iter()
        .filter(|m| !(m.manager == manager && m.operation == "Apply"))
        .flat_map(|m| m.fields.iter().cloned())
        .collect();
    for p in old_fields.difference(&new_fields) {
        if !others.iter().any(|q| overlaps(p, q)) && !new_fields.iter().any(|q| q.starts_with(p)) {
            remove_path(&mut out, p, &new_fields);
        }
    }
    let mut body = cfg.clone();
    if let Some(o) = body.as_object_mut() {
        o.remove("apiVersion");
        o.remove("kind");
        if let Some(Value::Object(m)) = o.get_mut("metadata") {
            m.retain(|k, _| matches!(k.as_str(), "labels" | "annotations" | "finalizers" | "ownerReferences"));
        }
    }
    merge_config(&mut out, &body);
    // Ownership: the applier owns what it sent; with force, others lose those fields.
    for m in ms.iter_mut().filter(|m| !(m.manager == manager && m.operation == "Apply")) {
        if force {
            m.fields.retain(|q| !new_fields.iter().any(|p| overlaps(p, q)));
        }
    }
    match ms.iter_mut().find(|m| m.manager == manager && m.operation == "Apply" && m.subresource == subresource) {
        Some(m) => m.fields = new_fields,
        None => ms.push(Manager {
            manager: manager.to_string(),
            operation: "Apply".into(),
            subresource: subresource.to_string(),
            fields: new_fields,
            api_version: api_version.to_string(),
        }),
    }
    write_managers(&mut out, &ms, &crate::util::now_rfc3339());
    Ok(out)
}

/// Leaf paths whose values differ between two objects (within spec/status/metadata labels etc.).
pub fn changed_fields(old: &Value, new: &Value) -> FieldSet {
    let a = fieldset_of(old);
    let b = fieldset_of(new);
    b.iter()
        .filter(|p| !a.contains(*p) || get_path(old, p) != get_path(new, p))
        .cloned()
        .collect()
}

/// Record an Update-operation by `manager` that changed `changed` fields.
pub fn record_update(obj: &mut Value, manager: &str, subresource: &str, changed: &FieldSet, api_version: &str) {
    let mut ms = managers(obj);
    let all_now = fieldset_of(obj);
    for m in ms.iter_mut() {
        m.fields.retain(|q| !changed.iter().any(|p| overlaps(p, q)) && all_now.iter().any(|p| overlaps(p, q)));
    }
    match ms.iter_mut().find(|m| m.manager == manager && m.operation == "Update" && m.subresource == subresource) {
        Some(m) => m.fields.extend(changed.iter().cloned()),
        None => ms.push(Manager {
            manager: manager.to_string(),
            operation: "Update".into(),
            subresource: subresource.to_string(),
            fields: changed.clone(),
            api_version: api_version.to_string(),
        }),
    }
    write_managers(obj, &ms, &crate::util::now_rfc3339());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(m: String, _c: Vec<Value>) -> ApiError {
        ApiError::new(409, "Conflict", m)
    }

    #[test]
    fn fields_round_trip() {
        let v = json!({"apiVersion": "a", "metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"w": 1, "l": [1], "o": {"p": "q"}}});
        let fs = fieldset_of(&v);
        assert_eq!(from_fields_v1(&to_fields_v1(&fs)), fs);
        assert_eq!(fs.len(), 4);
    }

    #[test]
    fn dropped_fields_are_removed_and_others_kept() {
        let live = json!({"metadata": {"name": "x"}, "spec": {"a": 1, "b": 2, "c": 3}});
        let first = apply(&live, &json!({"spec": {"a": 1, "b": 2}}), "tf", "", true, "v1", err).unwrap();
        let second = apply(&first, &json!({"spec": {"a": 5}}), "tf", "", true, "v1", err).unwrap();
        assert_eq!(second["spec"], json!({"a": 5, "c": 3}));
    }

    #[test]
    fn conflicts_without_force() {
        let live = json!({"metadata": {"name": "x"}, "spec": {"a": 1}});
        let one = apply(&live, &json!({"spec": {"a": 1}}), "other", "", true, "v1", err).unwrap();
        assert!(apply(&one, &json!({"spec": {"a": 2}}), "tf", "", false, "v1", err).is_err());
        assert!(apply(&one, &json!({"spec": {"a": 1}}), "tf", "", false, "v1", err).is_ok());
        let forced = apply(&one, &json!({"spec": {"a": 2}}), "tf", "", true, "v1", err).unwrap();
        assert_eq!(managers(&forced).iter().filter(|m| m.manager == "other").count(), 0);
    }
}
