//! A release's CRDs rebuilt from the facts `data/karpenter/crds/<minor>.tsv` keeps (each CRD's
//! kind, scope, storage version and subresources, and every `spec` and `status` property with
//! its shape), for the local test environment of the quick-start: a clone of this repository
//! serves Karpenter's kinds with nothing from outside it.
//!
//! What the facts do not hold, the rebuilt CRDs do not have: no defaults, enums, patterns or CEL
//! rules (the provider plans Karpenter's defaults itself and checks its rules at plan), and only
//! the storage version. Each property gets the type its shape names; a map's values and a
//! plain list's items take a string or a number (the CRDs' maps hold labels, quantities and
//! int-or-string values), so whatever the real CRD accepts there, this one does too. The round
//! trip is exact: the inventory of a rebuilt CRD is the table it was built from (tested).

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json, json};

use super::ReleaseError;
use super::crds::{Head, Inventory, Property};

/// The schema node of one property of `shape`, its own properties (or items') still to add.
fn node(shape: &str) -> Json {
    let scalar = json!({"x-kubernetes-int-or-string": true});
    match shape {
        "object" => json!({"type": "object", "properties": {}}),
        "map" => json!({"type": "object", "additionalProperties": scalar}),
        "free-form" => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        "list(object)" => json!({"type": "array", "items": {"type": "object", "properties": {}}}),
        "list" => json!({"type": "array", "items": scalar}),
        "number" => json!({"type": "number"}),
        "bool" => json!({"type": "boolean"}),
        // `string` covers int-or-string too (the shape does not tell them apart)
        _ => json!({"x-kubernetes-int-or-string": true}),
    }
}

/// The properties map a path's parent keeps its children in: `spec.a[].b` → the items of
/// `spec.a`.
fn children<'a>(root: &'a mut Json, parent: &[&str]) -> Option<&'a mut Map<String, Json>> {
    let mut at = root;
    for step in parent {
        let (name, item) = match step.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (*step, false),
        };
        at = at.get_mut("properties")?.get_mut(name)?;
        if item {
            at = at.get_mut("items")?;
        }
    }
    at.get_mut("properties")?.as_object_mut()
}

/// The `openAPIV3Schema` of one CRD from its properties (sorted, so a parent comes before its
/// children).
fn schema(properties: &[&Property]) -> Json {
    let mut root = json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
        }
    });
    for p in properties {
        let steps: Vec<&str> = p.path.split('.').collect();
        let Some((name, parent)) = steps.split_last() else {
            continue;
        };
        if parent.is_empty() {
            continue;
        }
        if let [top] = parent
            && root["properties"].get(*top).is_none()
        {
            root["properties"][*top] = json!({"type": "object", "properties": {}});
        }
        if let Some(siblings) = children(&mut root, parent) {
            siblings.insert(name.to_string(), node(p.shape));
        }
    }
    root
}

/// One CRD manifest (JSON, which is YAML) from its head and properties.
pub fn crd(head: &Head, properties: &[&Property]) -> Json {
    let (plural, group) = head.name.split_once('.').unwrap_or((&head.name, ""));
    let mut subresources = Map::new();
    for sub in &head.subresources {
        match sub.split(':').collect::<Vec<_>>()[..] {
            ["status"] => {
                subresources.insert("status".into(), json!({}));
            }
            ["scale", spec, status] => {
                subresources.insert(
                    "scale".into(),
                    json!({"specReplicasPath": spec, "statusReplicasPath": status}),
                );
            }
            _ => {}
        }
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": head.name},
        "spec": {
            "group": group,
            "names": {
                "kind": head.kind,
                "listKind": format!("{}List", head.kind),
                "plural": plural,
                "singular": head.kind.to_lowercase(),
            },
            "scope": head.scope,
            "versions": [{
                "name": head.version,
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": schema(properties)},
                "subresources": subresources,
            }],
        }
    })
}

/// Every CRD of an inventory, by name.
pub fn crds(inventory: &Inventory) -> BTreeMap<String, Json> {
    inventory
        .heads
        .iter()
        .map(|head| {
            let mut properties: Vec<&Property> = inventory
                .properties
                .iter()
                .filter(|p| p.crd == head.name)
                .collect();
            properties.sort();
            (head.name.clone(), crd(head, &properties))
        })
        .collect()
}

/// The committed CRD tables, oldest minor first: (minor, inventory).
pub fn committed() -> Result<Vec<(String, Inventory)>, ReleaseError> {
    let dir = super::data_dir().join("crds");
    let entries = std::fs::read_dir(&dir).map_err(|source| ReleaseError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let mut minors: Vec<(Vec<u64>, String)> = entries
        .filter_map(|e| {
            let minor = e
                .ok()?
                .file_name()
                .into_string()
                .ok()?
                .strip_suffix(".tsv")?
                .to_string();
            let key = kube_testserver::upstream::release_key(&minor);
            Some((key, minor))
        })
        .collect();
    minors.sort();
    minors
        .into_iter()
        .map(|(_, minor)| {
            let path = dir.join(format!("{minor}.tsv"));
            let inventory = super::crds::parse(&super::read(&path)?).map_err(|e| super::within(&path, e))?;
            Ok((minor, inventory))
        })
        .collect()
}

/// The CRDs the quick-start's cluster serves: every CRD of the committed tables, each as the
/// newest minor that has it declares it (v1.15's NodePool, NodeClaim and EC2NodeClass; the
/// NodeOverlay and CapacityBuffer of the newest minor whose CRD directory had them).
pub fn newest() -> Result<Vec<Json>, ReleaseError> {
    let mut by_name: BTreeMap<String, Json> = BTreeMap::new();
    // oldest first: a newer minor's CRD replaces an older one's
    for (_, inventory) in committed()? {
        by_name.extend(crds(&inventory));
    }
    Ok(by_name.into_values().collect())
}
