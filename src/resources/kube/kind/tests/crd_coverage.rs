//! Checks the schemas against the upstream CRDs. [`compare_root`], against one CRD file (the
//! newest release's): every `spec` field of the CRD is an attribute (by wire name, recursively)
//! and every on-wire attribute is a CRD field, with the same shape; required fields agree;
//! server defaults are declared with the CRD's values; the `status` attributes mirror the CRD's
//! status fields. [`uncovered`], against the property inventory of every Karpenter minor
//! (`data/karpenter/crds/<minor>.tsv`, [`inventories`]): every property is an attribute of a
//! compatible shape, or deliberately left out. This is the comparison; each kind's tests, and
//! `resources/kube/every_minor.rs`, run it on their schemas.

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::k8s::skew::schema_shape;

use crate::terraform::framework::schema::{AttrType, Mode, Nesting};
use crate::terraform::framework::{Attribute, Schema};
use crate::terraform::tfvalue::{Type, Value};

#[derive(Debug, PartialEq)]
pub(crate) struct Field {
    pub(crate) shape: &'static str,
    pub(crate) required: bool,
    pub(crate) default: Option<Json>,
}

/// The `openAPIV3Schema` of `version` in the CRD file `crds/<dir>/<file>`.
pub(crate) fn load_version(dir: &str, version: &str, file: &str) -> Json {
    let path = kube_testserver::upstream::path(&format!("crds/{dir}/{file}"));
    openapi_schema(&path.to_string_lossy(), version)
}

/// The `openAPIV3Schema` of `version` in the CRD file at `path`.
pub(crate) fn openapi_schema(path: &str, version: &str) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let crd: Json = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let versions = crd["spec"]["versions"].as_array().expect("versions");
    let found = versions
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("{path}: no version {version}"));
    found["schema"]["openAPIV3Schema"].clone()
}

pub(crate) fn crd_fields(node: &Json, prefix: &str, out: &mut BTreeMap<String, Field>) {
    let required: Vec<&str> = node["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    for (name, sub) in node["properties"].as_object().into_iter().flatten() {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        out.insert(
            path.clone(),
            Field {
                shape: schema_shape(sub),
                required: required.contains(&name.as_str()),
                default: sub.get("default").cloned(),
            },
        );
        if sub.get("properties").is_some() {
            crd_fields(sub, &path, out);
        }
        if sub["items"].get("properties").is_some() {
            crd_fields(&sub["items"], &format!("{path}[]"), out);
        }
    }
}

fn our_shape(a: &Attribute) -> &'static str {
    if matches!(a.wire, crate::terraform::framework::schema::Wire::Json(_)) {
        return "free-form";
    }
    match &a.ty {
        AttrType::Nested {
            nesting: Nesting::Single,
            ..
        } => "object",
        AttrType::Nested {
            nesting: Nesting::List,
            ..
        } => "list(object)",
        AttrType::Nested { .. } => "other",
        AttrType::Plain(Type::String) => "string",
        AttrType::Plain(Type::Number) => "number",
        AttrType::Plain(Type::Bool) => "bool",
        AttrType::Plain(Type::List(_)) => "list",
        AttrType::Plain(Type::Map(_)) => "map",
        // Takes a number, a string or a map, each value with its own type (int-or-string).
        AttrType::Plain(Type::Dynamic) => "dynamic",
        AttrType::Plain(_) => "other",
    }
}

/// Our default in wire form, to compare with the CRD's `default`.
fn default_json(a: &Attribute, v: &Value) -> Json {
    match (a.nested(), v) {
        (Some((Nesting::Single, nested)), _) => Json::Object(object_json(nested, v)),
        (Some((_, nested)), Value::List(items)) => Json::Array(
            items
                .iter()
                .map(|e| Json::Object(object_json(nested, e)))
                .collect(),
        ),
        (_, Value::String(s)) => Json::String(s.clone()),
        (_, Value::Bool(b)) => Json::Bool(*b),
        (_, Value::Number(n)) => n.as_i64().map_or(Json::Null, Json::from),
        _ => Json::Null,
    }
}

fn object_json(attributes: &[Attribute], v: &Value) -> Map<String, Json> {
    let mut m = Map::new();
    for a in attributes {
        let (Some(field), Some(x)) = (a.wire_field(), v.get(a.name)) else {
            continue;
        };
        if !x.is_null() {
            m.insert(field, default_json(a, x));
        }
    }
    m
}

pub(crate) fn our_fields(attributes: &[Attribute], prefix: &str, out: &mut BTreeMap<String, Field>) {
    for a in attributes {
        let Some(field) = a.wire_field() else { continue };
        let path = if prefix.is_empty() {
            field
        } else {
            format!("{prefix}.{field}")
        };
        out.insert(
            path.clone(),
            Field {
                shape: our_shape(a),
                required: a.mode == Mode::Required,
                default: a.default.as_ref().map(|d| default_json(a, d)),
            },
        );
        match a.nested() {
            Some((Nesting::Single, nested)) => our_fields(nested, &path, out),
            Some((_, nested)) => our_fields(nested, &format!("{path}[]"), out),
            None => {}
        }
    }
}

/// One CRD's properties in one release: path (`spec.template.spec.taints[].key`) → shape.
pub(crate) type Properties = BTreeMap<String, String>;

/// Every committed CRD inventory, oldest release first: (minor, CRD name → its properties).
pub(crate) fn inventories() -> Vec<(String, BTreeMap<String, Properties>)> {
    let dir = format!("{}/data/karpenter/crds", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<(Vec<u64>, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let minor = name.strip_suffix(".tsv")?.to_string();
            let key = kube_testserver::upstream::release_key(&minor);
            Some((key, minor))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(_, minor)| {
            let path = format!("{dir}/{minor}.tsv");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let mut crds: BTreeMap<String, Properties> = BTreeMap::new();
            for line in text
                .lines()
                .filter(|l| !l.starts_with('#') && !l.starts_with('@'))
            {
                let [crd, _version, property, shape] = line.split('\t').collect::<Vec<_>>()[..] else {
                    panic!("{path}: {line:?} is not <CRD> <version> <path> <shape>");
                };
                crds.entry(crd.to_string())
                    .or_default()
                    .insert(property.to_string(), shape.to_string());
            }
            (minor, crds)
        })
        .collect()
}

/// Whether our attribute of shape `ours` covers a CRD property of shape `theirs`: the same
/// shape, or a typed object (or a map) for a free-form one (v1.15's open `kubelet`: our
/// attribute names its fields), or a JSON attribute for anything.
fn covers(ours: &str, theirs: &str) -> bool {
    ours == theirs
        || ours == "free-form"
        || (theirs == "free-form" && matches!(ours, "object" | "map"))
        // A value with its own type: an int-or-string field, a map of them, or a field that
        // takes a number or (from a later release) an expression string.
        || (ours == "dynamic" && matches!(theirs, "map" | "number" | "string"))
}

/// The properties of one release's CRD (`properties`) that `schema` does not cover: not an
/// attribute (by wire path; `status.…` under the `status` attribute), not below a JSON
/// attribute, or of a shape the attribute does not cover ([`covers`]), and not in `left_out`
/// (path, reason). Each names `what` (the release and the kind) and the property.
pub(crate) fn uncovered(
    schema: &Schema,
    properties: &Properties,
    left_out: &[(&str, &str)],
    what: &str,
) -> Vec<String> {
    let mut ours = BTreeMap::new();
    our_fields(&schema.attributes, "", &mut ours);
    let mut our_status = BTreeMap::new();
    if let Some((_, nested)) = schema.attribute("status").and_then(Attribute::nested) {
        our_fields(nested, "", &mut our_status);
    }
    let ours_at = |path: &str| -> Option<&Field> {
        match path.split_once('.') {
            Some(("spec", rest)) => ours.get(rest),
            Some(("status", rest)) => our_status.get(rest),
            _ => None,
        }
    };
    let mut problems = Vec::new();
    for (path, shape) in properties {
        if left_out.iter().any(|(p, _)| p == path) {
            continue;
        }
        // Below a JSON attribute (its free-form value holds the whole subtree).
        let mut ancestor = path.as_str();
        let mut under_json = false;
        while let Some((parent, _)) = ancestor.rsplit_once('.') {
            ancestor = parent.trim_end_matches("[]");
            if ours_at(ancestor).is_some_and(|f| f.shape == "free-form") {
                under_json = true;
                break;
            }
        }
        if under_json {
            continue;
        }
        match ours_at(path) {
            None => problems.push(format!(
                "{what}: CRD property {path} ({shape}) is neither an attribute nor left out on purpose"
            )),
            Some(f) if !covers(f.shape, shape) => problems.push(format!(
                "{what}: CRD property {path} is {shape}, the attribute {}",
                f.shape
            )),
            Some(_) => {}
        }
    }
    problems
}

/// The differences between `schema` and the CRD schema `root` (see the module comment),
/// ignoring the `spec` fields listed in `excluded` (wire path, reason).
pub(crate) fn compare_root(
    schema: &Schema,
    root: &Json,
    kind: &str,
    excluded: &[(&str, &str)],
) -> Vec<String> {
    let mut problems = Vec::new();

    let mut crd = BTreeMap::new();
    crd_fields(&root["properties"]["spec"], "", &mut crd);
    let mut ours = BTreeMap::new();
    our_fields(&schema.attributes, "", &mut ours);
    assert!(crd.len() > 5, "{kind}: only {} CRD fields found", crd.len());

    for (path, f) in &crd {
        if excluded.iter().any(|(p, _)| p == path) {
            continue;
        }
        let Some(o) = ours.get(path) else {
            problems.push(format!("{kind}: CRD field spec.{path} has no attribute"));
            continue;
        };
        if !covers(o.shape, f.shape) || (o.shape == "free-form") != (f.shape == "free-form") {
            problems.push(format!(
                "{kind}: spec.{path} is {} in the CRD but {} here",
                f.shape, o.shape
            ));
        }
        if f.required && !o.required && o.default.is_none() {
            problems.push(format!(
                "{kind}: spec.{path} is required in the CRD; ours is neither required nor defaulted"
            ));
        }
        if o.required && !f.required {
            problems.push(format!(
                "{kind}: spec.{path} is required here but optional in the CRD"
            ));
        }
        if let Some(d) = &f.default
            && o.default.as_ref() != Some(d)
        {
            problems.push(format!(
                "{kind}: spec.{path} defaults to {d} in the CRD, ours {:?}",
                o.default
            ));
        }
    }
    for path in ours.keys() {
        if !crd.contains_key(path) {
            problems.push(format!(
                "{kind}: attribute with wire path spec.{path} is not a CRD field"
            ));
        }
    }

    // status: the computed attributes mirror the CRD's status fields.
    let mut crd_status = BTreeMap::new();
    crd_fields(&root["properties"]["status"], "", &mut crd_status);
    let mut our_status = BTreeMap::new();
    let status = schema.attribute("status").expect("status attribute");
    assert!(status.wire_field().is_none() && status.mode == Mode::Computed);
    our_fields(
        status.nested().map(|(_, n)| n).unwrap_or_default(),
        "",
        &mut our_status,
    );
    for (path, f) in &crd_status {
        match our_status.get(path) {
            None => problems.push(format!("{kind}: CRD field status.{path} has no attribute")),
            Some(o) if o.shape != f.shape => problems.push(format!(
                "{kind}: status.{path} is {} in the CRD but {} here",
                f.shape, o.shape
            )),
            Some(_) => {}
        }
    }
    for path in our_status.keys().filter(|p| !crd_status.contains_key(*p)) {
        problems.push(format!(
            "{kind}: status attribute {path} is not a CRD status field"
        ));
    }
    problems
}
