//! The property inventory of a release's CRDs: for each CRD file of the release's CRD
//! directory, what the CRD is (its kind, scope and subresources) and every property of the
//! storage version's `spec` and `status`, with its shape, written as
//! `data/karpenter/crds/<minor>.tsv`. The provider's CRD coverage test reads these (every
//! property of every minor is an attribute, or deliberately left out), a release's diff against
//! the previous one shows what its CRDs added or changed, and [`super::served`] rebuilds a
//! CRD from them for the local test environment.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value as Json;

use terraform_provider_karpenter::k8s::skew::schema_shape;

use super::error::ReleaseError;

fn fail(message: impl Into<String>) -> ReleaseError {
    ReleaseError::Input(message.into())
}

/// What a CRD is, beside its properties (`@crd` rows): its name (`nodepools.karpenter.sh`), kind,
/// scope, storage version and subresources (`status`, `scale:<spec path>:<status path>`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Head {
    pub name: String,
    pub kind: String,
    pub scope: String,
    pub version: String,
    pub subresources: Vec<String>,
}

/// A release's CRDs: what each is, and every property of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inventory {
    pub heads: Vec<Head>,
    pub properties: Vec<Property>,
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

/// The subresources of a CRD version, in the `@crd` row's words.
fn subresources_of(version: &Json) -> Vec<String> {
    let sub = &version["subresources"];
    let mut out = Vec::new();
    if sub.get("status").is_some() {
        out.push("status".to_string());
    }
    if let Some(scale) = sub.get("scale") {
        out.push(format!(
            "scale:{}:{}",
            scale["specReplicasPath"].as_str().unwrap_or_default(),
            scale["statusReplicasPath"].as_str().unwrap_or_default()
        ));
    }
    out
}

/// What one CRD file's text is, and its properties.
pub fn properties_of(text: &str) -> Result<(Head, Vec<Property>), ReleaseError> {
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
    let head = Head {
        name: name.to_string(),
        kind: crd["spec"]["names"]["kind"]
            .as_str()
            .ok_or_else(|| fail(format!("{name}: no spec.names.kind")))?
            .to_string(),
        scope: crd["spec"]["scope"]
            .as_str()
            .ok_or_else(|| fail(format!("{name}: no spec.scope")))?
            .to_string(),
        version: version.to_string(),
        subresources: subresources_of(storage),
    };
    let root = &storage["schema"]["openAPIV3Schema"]["properties"];
    let mut out = Vec::new();
    for part in ["spec", "status"] {
        walk(&root[part], part, name, version, &mut out);
    }
    if out.is_empty() {
        return Err(fail(format!("{name}: no spec or status properties")));
    }
    Ok((head, out))
}

/// Every CRD file (`*.yaml`) in `dir`: what each is and its properties, sorted.
pub fn inventory(dir: &Path) -> Result<Inventory, ReleaseError> {
    let entries = std::fs::read_dir(dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut out = Inventory::default();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| fail(format!("{}: {e}", file.display())))?;
        let (head, properties) =
            properties_of(&text).map_err(|e| fail(format!("{}: {e}", file.display())))?;
        out.heads.push(head);
        out.properties.extend(properties);
    }
    if out.heads.is_empty() {
        return Err(fail(format!("{}: no CRD files", dir.display())));
    }
    out.heads.sort();
    out.properties.sort();
    Ok(out)
}

/// The text of `data/karpenter/crds/<version>.tsv`; `note`, when given, is one more header line
/// (where the CRDs came from, when they are not the release's own).
pub fn render(version: &str, inventory: &Inventory, note: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The properties of Karpenter {version}'s CRDs: for each CRD, its storage version's spec and status,\n\
         # one row per property: <CRD> <API version> <path> <shape> (`[]` is a list's item; shapes: object,\n\
         # map, free-form, list(object), list, string, number, bool); and one @crd row per CRD:\n\
         # <CRD> <kind> <scope> <storage version> <subresources: status, scale:<spec path>:<status path>>.\n\
         # Written by scripts/karpenter-release.sh; do not edit."
    );
    if let Some(note) = note {
        let _ = writeln!(out, "# {note}");
    }
    let _ = writeln!(out, "@karpenter_version\t{version}");
    for h in &inventory.heads {
        let _ = writeln!(
            out,
            "@crd\t{}\t{}\t{}\t{}\t{}",
            h.name,
            h.kind,
            h.scope,
            h.version,
            h.subresources.join(",")
        );
    }
    for p in &inventory.properties {
        let _ = writeln!(out, "{}\t{}\t{}\t{}", p.crd, p.version, p.path, p.shape);
    }
    out
}

/// The inventory a `data/karpenter/crds/<minor>.tsv` holds ([`render`]'s text read back).
pub fn parse(text: &str) -> Result<Inventory, ReleaseError> {
    let shape = |s: &str| -> Result<&'static str, ReleaseError> {
        SHAPES
            .iter()
            .find(|known| **known == s)
            .copied()
            .ok_or_else(|| fail(format!("unknown shape {s:?}")))
    };
    let mut out = Inventory::default();
    for (n, line) in text.lines().enumerate() {
        let at = |e: ReleaseError| fail(format!("line {}: {e}", n + 1));
        let fields: Vec<&str> = line.split('\t').collect();
        match fields[..] {
            _ if line.starts_with('#') || line.starts_with("@karpenter_version") => {}
            ["@crd", name, kind, scope, version, subresources] => out.heads.push(Head {
                name: name.to_string(),
                kind: kind.to_string(),
                scope: scope.to_string(),
                version: version.to_string(),
                subresources: subresources
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            }),
            [crd, version, path, s] if !crd.starts_with('@') => out.properties.push(Property {
                crd: crd.to_string(),
                version: version.to_string(),
                path: path.to_string(),
                shape: shape(s).map_err(at)?,
            }),
            _ => {
                return Err(at(fail(format!(
                    "{line:?} is neither a property nor an @crd row"
                ))));
            }
        }
    }
    Ok(out)
}

/// Every shape [`schema_shape`] gives a property.
pub const SHAPES: &[&str] = &[
    "object",
    "map",
    "free-form",
    "list(object)",
    "list",
    "string",
    "number",
    "bool",
];
