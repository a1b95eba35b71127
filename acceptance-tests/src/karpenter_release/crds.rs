//! The property inventory of a release's CRDs: for each CRD file of the release's CRD
//! directory, every property of the storage version's `spec` and `status`, with its shape,
//! written as `data/karpenter/crds/<minor>.tsv`. The provider's CRD coverage test reads these
//! (every property of every minor is an attribute, or deliberately left out), and a release's
//! diff against the previous one shows what its CRDs added or changed.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value as Json;

use terraform_provider_karpenter::k8s::skew::schema_shape;

use super::error::ReleaseError;

fn fail(message: impl Into<String>) -> ReleaseError {
    ReleaseError::Input(message.into())
}

/// One property: CRD name, API version, path (`spec.template.spec.requirements[].key`), shape.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Property {
    pub crd: String,
    pub version: String,
    pub path: String,
    pub shape: &'static str,
}

fn walk(node: &Json, prefix: &str, crd: &str, version: &str, out: &mut Vec<Property>) {
    for (name, sub) in node["properties"].as_object().into_iter().flatten() {
        let path = format!("{prefix}.{name}");
        out.push(Property {
            crd: crd.to_string(),
            version: version.to_string(),
            path: path.clone(),
            shape: schema_shape(sub),
        });
        if sub.get("properties").is_some() {
            walk(sub, &path, crd, version, out);
        }
        if sub["items"].get("properties").is_some() {
            walk(&sub["items"], &format!("{path}[]"), crd, version, out);
        }
    }
}

/// The properties of one CRD file's text.
pub fn properties_of(text: &str) -> Result<Vec<Property>, ReleaseError> {
    let crd: Json = serde_saphyr::from_str(text).map_err(|e| fail(format!("not YAML: {e}")))?;
    if crd["kind"] != "CustomResourceDefinition" {
        return Err(fail("not a CustomResourceDefinition"));
    }
    let name = crd["metadata"]["name"]
        .as_str()
        .ok_or_else(|| fail("a CRD without metadata.name"))?;
    let versions = crd["spec"]["versions"]
        .as_array()
        .ok_or_else(|| fail(format!("{name}: no versions")))?;
    let storage = versions
        .iter()
        .find(|v| v["storage"] == Json::Bool(true))
        .ok_or_else(|| fail(format!("{name}: no storage version")))?;
    let version = storage["name"].as_str().unwrap_or_default();
    let root = &storage["schema"]["openAPIV3Schema"]["properties"];
    let mut out = Vec::new();
    for part in ["spec", "status"] {
        walk(&root[part], part, name, version, &mut out);
    }
    if out.is_empty() {
        return Err(fail(format!("{name}: no spec or status properties")));
    }
    Ok(out)
}

/// Every property of every CRD file (`*.yaml`) in `dir`, sorted.
pub fn inventory(dir: &Path) -> Result<Vec<Property>, ReleaseError> {
    let entries = std::fs::read_dir(dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| fail(format!("{}: {e}", file.display())))?;
        out.extend(properties_of(&text).map_err(|e| fail(format!("{}: {e}", file.display())))?);
    }
    if out.is_empty() {
        return Err(fail(format!("{}: no CRD files", dir.display())));
    }
    out.sort();
    Ok(out)
}

/// The text of `data/karpenter/crds/<version>.tsv`; `note`, when given, is one more header line
/// (where the CRDs came from, when they are not the release's own).
pub fn render(version: &str, properties: &[Property], note: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The properties of Karpenter {version}'s CRDs: for each CRD, its storage version's spec and status,\n\
         # one row per property: <CRD> <API version> <path> <shape> (`[]` is a list's item; shapes: object,\n\
         # map, free-form, list(object), list, string, number, bool).\n\
         # Written by scripts/karpenter-release.sh; do not edit."
    );
    if let Some(note) = note {
        let _ = writeln!(out, "# {note}");
    }
    let _ = writeln!(out, "@karpenter_version\t{version}");
    for p in properties {
        let _ = writeln!(out, "{}\t{}\t{}\t{}", p.crd, p.version, p.path, p.shape);
    }
    out
}
