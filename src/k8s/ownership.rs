//! Field ownership: making this provider the only manager of the fields it manages.
//!
//! Server-side apply removes a field the applier stopped sending only when no other field
//! manager owns it. Objects this provider adopts (import, `moved {}` from kubectl_manifest or
//! kubernetes_manifest, a create over an existing object) are usually co-owned by
//! `kubectl-client-side-apply`, `kubectl-patch`, `kubectl-edit` or another applier, so removing
//! a setting from the configuration would change nothing in the cluster. As `kubectl` does when
//! it upgrades client-side-apply ownership, the provider rewrites `metadata.managedFields`:
//! the entries of the other managers lose the fields this provider manages (what the prior
//! state and the plan state, nothing else: not Karpenter's status, not labels it never set),
//! and those fields move into this provider's `Apply` entry. The rewrite is a patch guarded by
//! the `resourceVersion` it was computed from, so a concurrent writer makes it fail (and it is
//! computed again) instead of being overwritten.
//!
//! Paths here are plain object keys from the root (`["spec", "limits", "memory"]`); in
//! `FieldsV1` each key is written `f:<key>`.
//!
//! A create also stamps its object with a [`CreateToken`], fresh for every create, so that when
//! the answer to its write is lost the provider can tell its own write from an object another
//! writer made under the same name meanwhile.

use serde_json::{Map, Value as Json};

/// The annotation a create writes its [`CreateToken`] in. The next update of the object no
/// longer states it, so server-side apply removes it; import and reads never take it as user
/// intent (its prefix is this provider's).
pub const CREATE_TOKEN_ANNOTATION: &str = "terraform-provider-karpenter/create-token";

/// A random token one create writes on its object: finding it (with this provider's field
/// manager) on an object after a write whose answer was lost proves the write was this
/// create's, and not another writer's who took the name in the meantime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateToken(String);

impl CreateToken {
    /// A fresh token: 128 random bits from the TLS library's system random source, in hex.
    pub fn new() -> Self {
        let mut bytes = [0u8; 16];
        let random = rustls::crypto::aws_lc_rs::default_provider()
            .secure_random
            .fill(&mut bytes);
        if random.is_err() {
            // No system randomness: time and a process-wide counter are still unique enough
            // to tell this create's write from another writer's.
            static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default();
            let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            bytes[..8].copy_from_slice(&(nanos as u64).to_le_bytes());
            bytes[8..].copy_from_slice(&(n ^ u64::from(std::process::id())).to_le_bytes());
        }
        CreateToken(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Writes the token into `manifest`'s annotations.
    pub fn stamp(&self, manifest: &mut Json) {
        if let Some(metadata) = manifest.get_mut("metadata").and_then(Json::as_object_mut) {
            let annotations = metadata
                .entry("annotations")
                .or_insert_with(|| Json::Object(Map::new()));
            if let Some(annotations) = annotations.as_object_mut() {
                annotations.insert(CREATE_TOKEN_ANNOTATION.into(), Json::String(self.0.clone()));
            }
        }
    }

    /// Whether `obj` is the object this create wrote: it carries this token, and `manager`
    /// manages its fields.
    pub fn wrote(&self, obj: &kube::api::DynamicObject, manager: &str) -> bool {
        let stamped = obj
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(CREATE_TOKEN_ANNOTATION))
            .is_some_and(|t| *t == self.0);
        stamped && managers(obj).iter().any(|m| m == manager)
    }
}

impl Default for CreateToken {
    fn default() -> Self {
        Self::new()
    }
}

/// A field: object keys from the root of the object.
pub type FieldPath = Vec<String>;

/// The fields a manifest states: every object key down to a scalar, a list or an empty
/// object; under `metadata` only the label and annotation keys.
pub fn stated_fields(manifest: &Json) -> Vec<FieldPath> {
    let mut out = Vec::new();
    let Some(root) = manifest.as_object() else {
        return out;
    };
    for (k, v) in root {
        match k.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                for part in ["labels", "annotations"] {
                    if let Some(Json::Object(m)) = v.get(part) {
                        for key in m.keys() {
                            out.push(vec!["metadata".into(), part.into(), key.clone()]);
                        }
                    }
                }
            }
            _ => collect(v, vec![k.clone()], &mut out),
        }
    }
    out
}

fn collect(v: &Json, path: FieldPath, out: &mut Vec<FieldPath>) {
    match v {
        Json::Object(o) if !o.is_empty() => {
            for (k, c) in o {
                let mut p = path.clone();
                p.push(k.clone());
                collect(c, p, out);
            }
        }
        _ => out.push(path),
    }
}

/// The field managers of an object's own fields (entries of subresources such as `status`,
/// where Karpenter writes, left out), each once, in the order `managedFields` lists them.
pub fn managers(obj: &kube::api::DynamicObject) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for entry in obj.metadata.managed_fields.iter().flatten() {
        if entry.subresource.as_deref().is_some_and(|s| !s.is_empty()) {
            continue;
        }
        if let Some(m) = entry.manager.as_ref()
            && !out.contains(m)
        {
            out.push(m.clone());
        }
    }
    out
}

/// What a takeover changes: the new `managedFields` and who lost which fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Takeover {
    pub managed_fields: Vec<Json>,
    /// `(manager, fields)` for every entry that lost fields (fields as `.spec.limits.memory`).
    pub taken: Vec<(String, Vec<String>)>,
}

/// Moves `fields` (and what they contain) out of every other manager's entry into the `Apply`
/// entry of `manager`. Entries of subresources (`status`) are left alone; entries left with
/// nothing are dropped. `None` when no other manager owns any of the fields, or when there is
/// no `Apply` entry of `manager` to move them into (the object was not applied by us yet).
pub fn take_over(managed_fields: &[Json], fields: &[FieldPath], manager: &str) -> Option<Takeover> {
    let is_ours = |e: &Json| {
        e.get("manager").and_then(Json::as_str) == Some(manager)
            && e.get("operation").and_then(Json::as_str) == Some("Apply")
            && e.get("subresource")
                .and_then(Json::as_str)
                .is_none_or(str::is_empty)
    };
    let ours = managed_fields.iter().position(is_ours)?;
    let mut entries = managed_fields.to_vec();
    let mut gained = Map::new();
    let mut taken = Vec::new();
    for (i, entry) in entries.iter_mut().enumerate() {
        if i == ours
            || entry
                .get("subresource")
                .and_then(Json::as_str)
                .is_some_and(|s| !s.is_empty())
        {
            continue;
        }
        let Some(tree) = entry.get_mut("fieldsV1") else {
            continue;
        };
        let mut lost = Vec::new();
        for path in fields {
            if let Some((sub, marked)) = detach(tree, path) {
                graft(&mut gained, path, sub, &marked);
                lost.push(format!(".{}", path.join(".")));
            }
        }
        if !lost.is_empty() {
            let name = entry.get("manager").and_then(Json::as_str).unwrap_or_default();
            let op = entry.get("operation").and_then(Json::as_str).unwrap_or("Update");
            taken.push((format!("{name} ({op})"), lost));
        }
    }
    if taken.is_empty() {
        return None;
    }
    if let Some(Json::Object(tree)) = entries[ours].get_mut("fieldsV1") {
        merge_tree(tree, gained);
    }
    entries.retain(|e| {
        e.get("fieldsV1")
            .and_then(Json::as_object)
            .is_some_and(|t| !t.is_empty())
    });
    Some(Takeover {
        managed_fields: entries,
        taken,
    })
}

/// Removes the node of `path` from a `FieldsV1` tree and returns it, with the depths of the
/// ancestors that went too: an ancestor left with nothing but its own `.` marker only existed
/// for the removed field, so it moves along (see [`graft`]).
fn detach(tree: &mut Json, path: &[String]) -> Option<(Json, Vec<usize>)> {
    fn rec(node: &mut Json, path: &[String], depth: usize, emptied: &mut Vec<usize>) -> Option<Json> {
        let (head, rest) = path.split_first()?;
        let map = node.as_object_mut()?;
        let key = format!("f:{head}");
        if rest.is_empty() {
            return map.remove(&key);
        }
        let child = map.get_mut(&key)?;
        let sub = rec(child, rest, depth + 1, emptied)?;
        if child.as_object().is_some_and(|c| c.keys().all(|k| k == ".")) {
            if child.get(".").is_some() {
                emptied.push(depth + 1);
            }
            map.remove(&key);
        }
        Some(sub)
    }
    let mut emptied = Vec::new();
    rec(tree, path, 0, &mut emptied).map(|sub| (sub, emptied))
}

/// Puts a detached subtree at `path` in the tree being built, with the `.` markers of the
/// ancestors (by depth: 1 is `path[..1]`) that came along.
fn graft(tree: &mut Map<String, Json>, path: &[String], sub: Json, marked: &[usize]) {
    let mut node = tree;
    for (i, seg) in path.iter().enumerate() {
        let entry = node
            .entry(format!("f:{seg}"))
            .or_insert_with(|| Json::Object(Map::new()));
        if !entry.is_object() {
            *entry = Json::Object(Map::new());
        }
        let Json::Object(next) = entry else { return };
        if i + 1 < path.len() && marked.contains(&(i + 1)) {
            next.insert(".".into(), Json::Object(Map::new()));
        }
        node = next;
    }
    if let Json::Object(sub) = sub {
        merge_tree(node, sub);
    }
}

/// Union of two `FieldsV1` trees.
fn merge_tree(into: &mut Map<String, Json>, from: Map<String, Json>) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(Json::Object(a)), Json::Object(b)) => merge_tree(a, b),
            (None, v) => {
                into.insert(k, v);
            }
            _ => {}
        }
    }
}

/// The managers (other than `manager`'s `Apply` entry) whose `FieldsV1` own `path` or a field
/// inside it, as `name (Operation)`.
pub fn other_owners(managed_fields: &[Json], path: &[String], manager: &str) -> Vec<String> {
    managed_fields
        .iter()
        .filter(|e| {
            !(e.get("manager").and_then(Json::as_str) == Some(manager)
                && e.get("operation").and_then(Json::as_str) == Some("Apply"))
        })
        .filter(|e| {
            let mut node = e.get("fieldsV1");
            for seg in path {
                node = node.and_then(|n| n.get(format!("f:{seg}")));
            }
            node.is_some()
        })
        .map(|e| {
            format!(
                "{} ({})",
                e.get("manager").and_then(Json::as_str).unwrap_or_default(),
                e.get("operation").and_then(Json::as_str).unwrap_or("Update")
            )
        })
        .collect()
}

/// Fields the prior manifest stated and the planned one does not (the configuration removed
/// them) that the stored object still has: a removal the server did not make.
pub fn not_removed(stored: &Json, prior: &Json, planned: &Json) -> Vec<FieldPath> {
    let now = stated_fields(planned);
    stated_fields(prior)
        .into_iter()
        .filter(|p| !now.iter().any(|q| q.starts_with(p) || p.starts_with(q)))
        .filter(|p| {
            let mut node = Some(stored);
            for seg in p {
                node = node.and_then(|n| n.get(seg));
            }
            node.is_some_and(|v| !v.is_null())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn path(p: &str) -> FieldPath {
        p.split('.').map(String::from).collect()
    }

    fn entries() -> Vec<Json> {
        vec![
            json!({"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "karpenter.sh/v1",
                "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}},
                    "f:labels": {".": {}, "f:team": {}, "f:foreign": {}}},
                    "f:spec": {".": {}, "f:limits": {".": {}, "f:cpu": {}, "f:memory": {}}, "f:weight": {}}}}),
            json!({"manager": "karpenter", "operation": "Update", "subresource": "status", "apiVersion": "karpenter.sh/v1",
                "fieldsV1": {"f:status": {"f:resources": {}}}}),
            json!({"manager": "terraform-provider-karpenter", "operation": "Apply", "apiVersion": "karpenter.sh/v1",
                "fieldsV1": {"f:spec": {"f:limits": {"f:cpu": {}}}}}),
        ]
    }

    #[test]
    fn a_create_token_marks_only_its_own_write() {
        let token = CreateToken::new();
        assert_eq!(token.0.len(), 32);
        assert_ne!(token, CreateToken::new());
        let mut manifest =
            json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "a"}});
        token.stamp(&mut manifest);
        let stored = |manifest: &Json, manager: &str| -> kube::api::DynamicObject {
            let mut obj = manifest.clone();
            obj["metadata"]["managedFields"] = json!([{"manager": manager, "operation": "Apply",
                "fieldsV1": {"f:metadata": {"f:annotations": {}}}}]);
            serde_json::from_value(obj).expect("object")
        };
        assert!(token.wrote(
            &stored(&manifest, "terraform-provider-karpenter"),
            "terraform-provider-karpenter"
        ));
        // The same token under another manager, or another token: not this create's write.
        assert!(!token.wrote(
            &stored(&manifest, "kubectl-client-side-apply"),
            "terraform-provider-karpenter"
        ));
        let mut other = manifest.clone();
        CreateToken::new().stamp(&mut other);
        assert!(!token.wrote(
            &stored(&other, "terraform-provider-karpenter"),
            "terraform-provider-karpenter"
        ));
        let plain = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "a"}});
        assert!(!token.wrote(
            &stored(&plain, "terraform-provider-karpenter"),
            "terraform-provider-karpenter"
        ));
    }

    #[test]
    fn stated_fields_are_leaves_and_metadata_keys() {
        let m = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "a", "labels": {"t": "x"}},
            "spec": {"limits": {"cpu": "1"}, "taints": [{"key": "k"}], "kubelet": {}}});
        let mut got = stated_fields(&m);
        got.sort();
        assert_eq!(
            got,
            vec![
                path("metadata.labels.t"),
                path("spec.kubelet"),
                path("spec.limits.cpu"),
                path("spec.taints")
            ]
        );
    }

    /// Only the fields we manage move; foreign labels, the last-applied annotation and the
    /// status subresource entry stay where they were.
    #[test]
    fn takes_over_only_our_fields() {
        let ours = vec![
            path("spec.limits.cpu"),
            path("spec.limits.memory"),
            path("metadata.labels.team"),
        ];
        let t = take_over(&entries(), &ours, "terraform-provider-karpenter").expect("something to take");
        let csa = &t.managed_fields[0]["fieldsV1"];
        assert_eq!(csa["f:spec"], json!({".": {}, "f:weight": {}}));
        assert_eq!(csa["f:metadata"]["f:labels"], json!({".": {}, "f:foreign": {}}));
        assert!(csa["f:metadata"]["f:annotations"].is_object());
        assert_eq!(t.managed_fields[1], entries()[1]);
        assert_eq!(
            t.managed_fields[2]["fieldsV1"],
            json!({"f:spec": {"f:limits": {".": {}, "f:cpu": {}, "f:memory": {}}}, "f:metadata": {"f:labels": {"f:team": {}}}})
        );
        assert_eq!(t.taken.len(), 1);
        assert_eq!(t.taken[0].0, "kubectl-client-side-apply (Update)");
        // Once moved, there is nothing more to take.
        assert_eq!(
            take_over(&t.managed_fields, &ours, "terraform-provider-karpenter"),
            None
        );
    }

    #[test]
    fn an_emptied_entry_is_dropped_and_no_apply_entry_means_no_takeover() {
        let e = vec![
            json!({"manager": "kubectl-patch", "operation": "Update", "fieldsV1": {"f:spec": {"f:userData": {}}}}),
            json!({"manager": "terraform-provider-karpenter", "operation": "Apply", "fieldsV1": {"f:spec": {"f:role": {}}}}),
        ];
        let t = take_over(&e, &[path("spec.userData")], "terraform-provider-karpenter").expect("takeover");
        assert_eq!(t.managed_fields.len(), 1);
        assert_eq!(
            t.managed_fields[0]["fieldsV1"]["f:spec"],
            json!({"f:role": {}, "f:userData": {}})
        );
        assert_eq!(
            take_over(&e[..1], &[path("spec.userData")], "terraform-provider-karpenter"),
            None
        );
    }

    #[test]
    fn finds_removals_the_server_did_not_make_and_who_holds_them() {
        let prior = json!({"spec": {"userData": "x", "limits": {"cpu": "1", "memory": "1Gi"}}});
        let planned = json!({"spec": {"limits": {"cpu": "1"}}});
        let stored = json!({"spec": {"userData": "x", "limits": {"cpu": "1"}}});
        assert_eq!(
            not_removed(&stored, &prior, &planned),
            vec![path("spec.userData")]
        );
        assert_eq!(
            other_owners(
                &entries(),
                &path("spec.limits.memory"),
                "terraform-provider-karpenter"
            ),
            vec!["kubectl-client-side-apply (Update)"]
        );
    }
}
