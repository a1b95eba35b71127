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

/// The fields of an applied configuration (identity fields excluded): every leaf and every
/// non-empty object on the way to one (as real managedFields record with `.`).
pub fn fieldset_of(v: &Value) -> FieldSet {
    with_parents(&leaves_of(v))
}

/// Add every ancestor of each path (except the bare `metadata`).
pub fn with_parents(fs: &FieldSet) -> FieldSet {
    let mut out = fs.clone();
    for p in fs {
        for i in 1..p.len() {
            let prefix = p[..i].to_vec();
            if prefix != ["metadata"] {
                out.insert(prefix);
            }
        }
    }
    out
}

/// Only the leaves (scalars, lists, empty objects) of a configuration.
pub fn leaves_of(v: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    if let Some(o) = v.as_object() {
        for (k, c) in o {
            match k.as_str() {
                "apiVersion" | "kind" => {}
                "metadata" => {
                    if let Some(m) = c.as_object() {
                        for (mk, mv) in m {
                            if matches!(
                                mk.as_str(),
                                "labels" | "annotations" | "finalizers" | "ownerReferences"
                            ) {
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

/// Render a field set as `FieldsV1` (`{"f:spec":{".":{},"f:weight":{}}}`).
pub fn to_fields_v1(fs: &FieldSet) -> Value {
    let mut root = Map::new();
    for p in fs {
        let is_parent = fs.iter().any(|q| q.len() > p.len() && q.starts_with(p));
        insert_path(&mut root, p, is_parent);
    }
    Value::Object(root)
}

fn insert_path(node: &mut Map<String, Value>, p: &[String], is_parent: bool) {
    match p {
        [] => {
            if is_parent {
                node.insert(".".into(), json!({}));
            }
        }
        [head, rest @ ..] => {
            let e = node.entry(format!("f:{head}")).or_insert_with(|| json!({}));
            if !e.is_object() {
                *e = json!({});
            }
            if let Some(m) = e.as_object_mut() {
                insert_path(m, rest, is_parent);
            }
        }
    }
}

/// Parse `FieldsV1` back into leaf paths (entries other than `f:` are treated as leaves).
pub fn from_fields_v1(v: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    fn walk(v: &Value, path: FieldPath, out: &mut FieldSet) {
        let children: Vec<(&String, &Value)> = v
            .as_object()
            .map(|o| o.iter().filter(|(k, _)| k.starts_with("f:")).collect())
            .unwrap_or_default();
        let own = v.as_object().is_some_and(|o| o.contains_key("."));
        if (children.is_empty() || own) && !path.is_empty() {
            out.insert(path.clone());
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

/// Remove the value at a path, then remove parents that became empty.
fn remove_path(v: &mut Value, p: &[String]) {
    fn rec(v: &mut Value, p: &[String]) -> bool {
        let Some(o) = v.as_object_mut() else {
            return false;
        };
        match p {
            [] => false,
            [last] => o.remove(last).is_some(),
            [head, rest @ ..] => {
                let Some(child) = o.get_mut(head) else {
                    return false;
                };
                let removed = rec(child, rest);
                if removed && child.as_object().is_some_and(Map::is_empty) {
                    o.remove(head);
                }
                removed
            }
        }
    }
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
    /// When this manager last wrote (`None`: now, for the manager of the current request).
    pub time: Option<String>,
}

/// Read `metadata.managedFields`.
pub fn managers(obj: &Value) -> Vec<Manager> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| Manager {
                    manager: e.get("manager").and_then(Value::as_str).unwrap_or("").to_string(),
                    operation: e
                        .get("operation")
                        .and_then(Value::as_str)
                        .unwrap_or("Update")
                        .to_string(),
                    subresource: e
                        .get("subresource")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    fields: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
                    api_version: e
                        .get("apiVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    time: e.get("time").and_then(Value::as_str).map(String::from),
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
                "time": m.time.as_deref().unwrap_or(time),
                "fieldsType": "FieldsV1",
                "fieldsV1": to_fields_v1(&m.fields),
            });
            if !m.subresource.is_empty()
                && let Some(o) = e.as_object_mut()
            {
                o.insert("subresource".into(), json!(m.subresource));
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

/// The answer of a real API server to an apply configuration with fields its CRD schema does
/// not declare (outside `metadata`, which is checked elsewhere): structured-merge-diff cannot
/// type the patch, and the server returns that as a 500 with no reason, naming the object as
/// `(<namespace>/<name>; <group>/<version>, Kind=<Kind>)` and then the field path, or an
/// `errors:` list of them when there are several.
pub fn undeclared_fields_error(
    schema: &Value,
    cfg: &Value,
    ns: &str,
    name: &str,
    api_version: &str,
    kind: &str,
) -> Option<ApiError> {
    let mut probe = cfg.clone();
    let undeclared: Vec<String> = crate::schema::prune_root(schema, &mut probe)
        .into_iter()
        .filter(|p| !p.starts_with("metadata."))
        .collect();
    let problem = |p: &String| format!(".{p}: field not declared in schema");
    let detail = match undeclared.as_slice() {
        [] => return None,
        [one] => problem(one),
        many => format!(
            "errors:\n{}",
            many.iter()
                .map(|p| format!("  {}", problem(p)))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    Some(ApiError::new(
        500,
        "",
        format!("failed to create typed patch object ({ns}/{name}; {api_version}, Kind={kind}): {detail}"),
    ))
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
    let new_leaves = leaves_of(cfg);
    let new_fields = with_parents(&new_leaves);
    let old_fields = ms
        .iter()
        .find(|m| m.manager == manager && m.operation == "Apply" && m.subresource == subresource)
        .map(|m| m.fields.clone())
        .unwrap_or_default();
    // A conflict is a field another manager owns whose value this apply changes; a field
    // both set to the same value is shared, whatever `force` says.
    let is_self =
        |m: &Manager| m.manager == manager && m.operation == "Apply" && m.subresource == subresource;
    let changes = |p: &FieldPath| get_path(live, p) != get_path(cfg, p);
    let mut conflicts: Vec<(String, FieldPath)> = Vec::new();
    for m in ms.iter().filter(|m| !is_self(m)) {
        for p in new_leaves.iter().filter(|p| changes(p)) {
            if m.fields.iter().any(|q| q.starts_with(p)) {
                conflicts.push((print_manager(m), p.clone()));
            }
        }
    }
    if !force && !conflicts.is_empty() {
        let (msg, causes) = conflict_status(&conflicts);
        return Err(conflict(msg, causes));
    }
    let mut out = live.clone();
    // Fields this applier stopped sending are removed unless another manager owns them.
    let others: FieldSet = ms
        .iter()
        .filter(|m| !is_self(m))
        .flat_map(|m| m.fields.iter().cloned())
        .collect();
    for p in old_fields.difference(&new_fields) {
        if !others.iter().any(|q| q.starts_with(p)) && !new_fields.iter().any(|q| q.starts_with(p)) {
            remove_path(&mut out, p);
        }
    }
    let mut body = cfg.clone();
    if let Some(o) = body.as_object_mut() {
        o.remove("apiVersion");
        o.remove("kind");
        if let Some(Value::Object(m)) = o.get_mut("metadata") {
            m.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "labels" | "annotations" | "finalizers" | "ownerReferences"
                )
            });
        }
    }
    merge_config(&mut out, &body);
    // Ownership: the applier owns what it sent; a forced apply takes the conflicting fields
    // (only those: an equal value stays shared). Fields the merge removed leave every manager.
    for m in ms.iter_mut().filter(|m| !is_self(m)) {
        let before = m.fields.clone();
        m.fields
            .retain(|q| !conflicts.iter().any(|(_, p)| q.starts_with(p)) && get_path(&out, q).is_some());
        drop_orphan_parents(&before, &mut m.fields);
    }
    match ms
        .iter_mut()
        .find(|m| m.manager == manager && m.operation == "Apply" && m.subresource == subresource)
    {
        Some(m) => {
            m.fields = new_fields;
            m.time = None;
        }
        None => ms.push(Manager {
            manager: manager.to_string(),
            operation: "Apply".into(),
            subresource: subresource.to_string(),
            fields: new_fields,
            api_version: api_version.to_string(),
            time: None,
        }),
    }
    write_managers(&mut out, &ms, &crate::util::now_rfc3339());
    Ok(out)
}

/// How the API server names a manager in a conflict: an applier by its name, an updater with
/// the API version it wrote and when.
fn print_manager(m: &Manager) -> String {
    let mut s = format!("{:?}", m.manager);
    if !m.subresource.is_empty() {
        s.push_str(&format!(" with subresource {:?}", m.subresource));
    }
    if m.operation == "Update" {
        s.push_str(&format!(" using {}", m.api_version));
        if let Some(t) = &m.time {
            s.push_str(&format!(" at {t}"));
        }
    }
    s
}

/// The message and causes of a 409 apply conflict, as kube-apiserver words them: one conflict
/// inline, several grouped by manager (sorted), one `- .path` line each.
fn conflict_status(conflicts: &[(String, FieldPath)]) -> (String, Vec<Value>) {
    let dotted = |p: &FieldPath| format!(".{}", p.join("."));
    let causes = conflicts
        .iter()
        .map(|(m, p)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"), "field": dotted(p)}))
        .collect();
    if let [(m, p)] = conflicts {
        return (
            format!("Apply failed with 1 conflict: conflict with {m}: {}", dotted(p)),
            causes,
        );
    }
    let mut by: std::collections::BTreeMap<&str, Vec<String>> = std::collections::BTreeMap::new();
    for (m, p) in conflicts {
        by.entry(m.as_str()).or_default().push(dotted(p));
    }
    let lines: Vec<String> = by
        .iter()
        .flat_map(|(m, ps)| {
            std::iter::once(format!("conflicts with {m}:")).chain(ps.iter().map(|p| format!("- {p}")))
        })
        .collect();
    (
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        ),
        causes,
    )
}

/// Leaf paths whose values differ between two objects (within spec/status/metadata labels etc.).
pub fn changed_fields(old: &Value, new: &Value) -> FieldSet {
    let a = leaves_of(old);
    let b = leaves_of(new);
    b.iter()
        .filter(|p| !a.contains(*p) || get_path(old, p) != get_path(new, p))
        .cloned()
        .collect()
}

/// Remove paths that were parents in `before` but have no descendants left in `after`.
fn drop_orphan_parents(before: &FieldSet, after: &mut FieldSet) {
    loop {
        let orphan: Vec<FieldPath> = after
            .iter()
            .filter(|p| {
                before.iter().any(|q| q.len() > p.len() && q.starts_with(p))
                    && !after.iter().any(|q| q.len() > p.len() && q.starts_with(p))
            })
            .cloned()
            .collect();
        if orphan.is_empty() {
            return;
        }
        for p in orphan {
            after.remove(&p);
        }
    }
}

/// Record an Update-operation by `manager` that changed `changed` fields.
pub fn record_update(
    obj: &mut Value,
    manager: &str,
    subresource: &str,
    changed: &FieldSet,
    api_version: &str,
) {
    let mut ms = managers(obj);
    for m in ms.iter_mut() {
        let before = m.fields.clone();
        m.fields
            .retain(|q| !changed.iter().any(|p| q.starts_with(p)) && get_path(obj, q).is_some());
        drop_orphan_parents(&before, &mut m.fields);
    }
    let owned = with_parents(changed);
    match ms
        .iter_mut()
        .find(|m| m.manager == manager && m.operation == "Update" && m.subresource == subresource)
    {
        Some(m) => {
            m.fields.extend(owned);
            m.time = None;
        }
        None => ms.push(Manager {
            manager: manager.to_string(),
            operation: "Update".into(),
            subresource: subresource.to_string(),
            fields: owned,
            api_version: api_version.to_string(),
            time: None,
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
        assert_eq!(fs.len(), 7, "{fs:?}");
    }

    #[test]
    fn dropped_fields_are_removed_and_others_kept() {
        let live = json!({"metadata": {"name": "x"}, "spec": {"a": 1, "b": 2, "c": 3}});
        let first = apply(
            &live,
            &json!({"spec": {"a": 1, "b": 2}}),
            "tf",
            "",
            true,
            "v1",
            err,
        )
        .unwrap();
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
        assert_eq!(
            managers(&forced).iter().filter(|m| m.manager == "other").count(),
            0
        );
    }
    fn owners(obj: &Value, path: &[&str]) -> Vec<String> {
        let p: FieldPath = path.iter().map(|s| s.to_string()).collect();
        managers(obj)
            .into_iter()
            .filter(|m| m.fields.contains(&p))
            .map(|m| format!("{}/{}", m.manager, m.operation))
            .collect()
    }

    /// kubectl client-side apply and kubectl patch write with Update; their fields are theirs.
    fn created_by_update(manager: &str) -> Value {
        let mut obj = json!({"metadata": {"name": "x"}, "spec": {"a": 1, "b": 2, "m": {"k": "v"}}});
        let fs = fieldset_of(&obj);
        record_update(&mut obj, manager, "", &fs, "v1");
        obj
    }

    #[test]
    fn two_appliers_of_the_same_value_share_it_even_when_forced() {
        let live = json!({"metadata": {"name": "x"}, "spec": {"a": 1}});
        let one = apply(&live, &json!({"spec": {"a": 1}}), "one", "", true, "v1", err).unwrap();
        let two = apply(&one, &json!({"spec": {"a": 1}}), "two", "", true, "v1", err).unwrap();
        assert_eq!(owners(&two, &["spec", "a"]), ["one/Apply", "two/Apply"]);
    }

    #[test]
    fn a_dropped_field_stays_while_another_manager_owns_it() {
        let one = apply(
            &created_by_update("kubectl-patch"),
            &json!({"spec": {"a": 1, "b": 2}}),
            "tf",
            "",
            false,
            "v1",
            err,
        )
        .unwrap();
        assert_eq!(owners(&one, &["spec", "b"]), ["kubectl-patch/Update", "tf/Apply"]);
        let two = apply(&one, &json!({"spec": {"a": 1}}), "tf", "", false, "v1", err).unwrap();
        assert_eq!(two["spec"]["b"], 2, "co-owned by kubectl-patch: kept");
        assert_eq!(owners(&two, &["spec", "b"]), ["kubectl-patch/Update"]);
    }

    #[test]
    fn conflicts_name_update_managers_with_version_and_group_several() {
        let live = created_by_update("kubectl-client-side-apply");
        let e = apply(
            &live,
            &json!({"spec": {"a": 5}}),
            "tf",
            "",
            false,
            "karpenter.sh/v1",
            |m, c| ApiError::new(409, "Conflict", m).with_details(json!({"causes": c})),
        )
        .unwrap_err();
        assert!(
            e.message.starts_with(
                "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1 at "
            ) && e.message.ends_with(": .spec.a"),
            "{}",
            e.message
        );
        let cause = &e.details.as_ref().unwrap()["causes"][0];
        assert_eq!(cause["reason"], "FieldManagerConflict");
        assert_eq!(cause["field"], ".spec.a");
        let e = apply(
            &live,
            &json!({"spec": {"a": 5, "b": 6}}),
            "tf",
            "",
            false,
            "v1",
            err,
        )
        .unwrap_err();
        assert!(
            e.message.starts_with(
                "Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using v1 at "
            ),
            "{}",
            e.message
        );
        assert!(e.message.ends_with(":\n- .spec.a\n- .spec.b"), "{}", e.message);
        // Another applier is named without version or time.
        let applied = apply(
            &json!({"metadata": {"name": "x"}}),
            &json!({"spec": {"a": 1}}),
            "other",
            "",
            true,
            "v1",
            err,
        )
        .unwrap();
        let e = apply(&applied, &json!({"spec": {"a": 2}}), "tf", "", false, "v1", err).unwrap_err();
        assert_eq!(
            e.message,
            "Apply failed with 1 conflict: conflict with \"other\": .spec.a"
        );
    }

    #[test]
    fn forced_apply_takes_only_the_conflicting_fields() {
        let live = created_by_update("kubectl-patch");
        let forced = apply(
            &live,
            &json!({"spec": {"a": 5, "b": 2}}),
            "tf",
            "",
            true,
            "v1",
            err,
        )
        .unwrap();
        assert_eq!(owners(&forced, &["spec", "a"]), ["tf/Apply"]);
        assert_eq!(
            owners(&forced, &["spec", "b"]),
            ["kubectl-patch/Update", "tf/Apply"]
        );
        assert_eq!(owners(&forced, &["spec", "m", "k"]), ["kubectl-patch/Update"]);
    }

    #[test]
    fn an_update_takes_what_it_changed_and_keeps_the_others_time() {
        let mut obj = apply(
            &created_by_update("kubectl-client-side-apply"),
            &json!({"spec": {"a": 1}}),
            "tf",
            "",
            false,
            "v1",
            err,
        )
        .unwrap();
        let before = obj.clone();
        obj["spec"]["a"] = json!(7);
        let changed = changed_fields(&before, &obj);
        record_update(&mut obj, "kubectl-edit", "", &changed, "v1");
        assert_eq!(owners(&obj, &["spec", "a"]), ["kubectl-edit/Update"]);
        assert_eq!(owners(&obj, &["spec", "b"]), ["kubectl-client-side-apply/Update"]);
    }
}
