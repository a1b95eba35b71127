//! Typed schemas and offline validation for the Karpenter v1 kinds: `karpenter_node_pool`
//! (karpenter.sh/v1 NodePool) and `karpenter_ec2_node_class` (karpenter.k8s.aws/v1 EC2NodeClass),
//! following the released v1.14.1 CRDs field by field.
//!
//! Shape (design.md §1): `name`, `metadata = { labels, annotations }` (the object's own metadata,
//! mapped by the resource, not part of `spec`), every `spec` field as a top-level attribute
//! (snake_case of the CRD's camelCase name; explicit wire names where that rule would not give
//! the CRD name), `status` (computed), and a `timeouts {}` block. This module holds the parts
//! both kinds share; the validators every kind shares are in
//! [`crate::resources::kube::kind::rules`].

pub mod ec2_node_class;
pub mod node_pool;

pub use ec2_node_class::{EC2_NODE_CLASS, validate_ec2_node_class};
pub use node_pool::{NODE_POOL, node_pool_replacements, validate_node_pool};

use crate::resources::kube::kind::rules;
use crate::terraform::framework::schema::Block;
use crate::terraform::framework::validate as v;
use crate::terraform::framework::{Attribute, timeouts};
use crate::terraform::tfvalue::{Type, Value};

/// `name`: the object's name; changing it replaces the object.
pub(crate) fn name_attribute(kind: &str) -> Attribute {
    Attribute::string("name")
        .required()
        .replace_on_change()
        .not_on_wire()
        .describe(format!(
            "Name of the {kind} (a Kubernetes object name: lowercase letters, digits, `-` and `.`, at most 253 characters). Changing it replaces the {kind}."
        ))
        .validate(rules::object_name())
}

/// `metadata`: the object's own labels and annotations (not the nodes').
pub(crate) fn metadata_attribute(kind: &str) -> Attribute {
    Attribute::object(
        "metadata",
        vec![
            Attribute::map_of("labels", Type::String)
                .describe(format!("Labels on the {kind} object itself."))
                .validate(rules::object_meta_keys())
                .validate(v::each(rules::label_value())),
            Attribute::map_of("annotations", Type::String)
                .describe(format!("Annotations on the {kind} object itself."))
                .validate(rules::object_meta_keys()),
        ],
    )
    .not_on_wire()
    .describe(format!(
        "Labels and annotations of the {kind} object itself. Entries that others (e.g. Karpenter) add are not managed here."
    ))
}

/// `force_destroy`: a provider-only switch (never sent to the cluster, so never drift) for the
/// teardown of `crate::resources::kube::teardown` when Karpenter is gone. `cleanup` says what is
/// cleaned up for this kind.
pub(crate) fn force_destroy_attribute(kind: &str, cleanup: &str) -> Attribute {
    Attribute::bool("force_destroy")
        .default_value(Value::Bool(false))
        .not_on_wire()
        .describe(format!(
            "When true and a destroy finds that no Karpenter controller is running (its leader-election Lease \
             `karpenter-leader-election` is gone, released or no longer renewed), the provider does Karpenter's \
             part of deleting the {kind} itself: {cleanup} Everything is scoped by the tags Karpenter puts on what \
             it creates, including the cluster's name, which comes from the provider's `cluster_name` \
             (or its `kubernetes {{ eks {{ cluster_name }} }}`); nothing without those tags is touched. Set it (and apply) \
             before the destroy. When false (the default), such a destroy fails within about half a minute \
             (once per run, however many objects wait), saying what is stuck. With Karpenter running, the delete is Karpenter's, whatever this says. On an EKS Auto Mode cluster (one that serves `nodeclasses.eks.amazonaws.com`), AWS runs Karpenter outside the cluster: it has no Lease, which never counts as gone there, so the delete waits for AWS's Karpenter and this does nothing."
        ))
}

/// The `timeouts {}` block both kinds offer.
pub(crate) fn timeouts_block() -> Block {
    timeouts::block(&[("create", "10m"), ("update", "10m"), ("delete", "15m")])
}

/// `status.conditions`: the condition list both kinds report.
pub(crate) fn conditions_attribute() -> Attribute {
    Attribute::list_of_objects(
        "conditions",
        vec![
            Attribute::string("type")
                .computed()
                .describe("Condition type, e.g. `Ready`."),
            Attribute::string("status")
                .computed()
                .describe("`True`, `False` or `Unknown`."),
            Attribute::string("reason")
                .computed()
                .describe("Machine-readable reason for the last transition."),
            Attribute::string("message")
                .computed()
                .describe("Human-readable detail of the last transition."),
            Attribute::string("last_transition_time")
                .computed()
                .describe("When the status last changed (RFC 3339)."),
            Attribute::number("observed_generation")
                .computed()
                .describe("The object generation the condition was computed for."),
        ],
    )
    .computed()
    .describe("Conditions Karpenter reports; `Ready` summarises the others.")
}

/// An object value with every attribute of `attributes` null except the given ones: how a
/// default for a nested object is written (every attribute must be present).
pub(crate) fn object_with(attributes: &[Attribute], set: &[(&str, Value)]) -> Value {
    Value::Object(
        attributes
            .iter()
            .map(|a| {
                let value = set
                    .iter()
                    .find(|(n, _)| *n == a.name)
                    .map_or(Value::Null, |(_, v)| v.clone());
                (a.name.to_string(), value)
            })
            .collect(),
    )
}

/// Test helpers shared by the v1 schema tests: configs written as JSON with the Terraform
/// attribute names, turned into schema-shaped [`Value`]s (every attribute present, null when
/// not given; the string `"<unknown>"` stands for an unknown value).
#[cfg(test)]
pub(crate) mod testing {
    use serde_json::Value as Json;

    use crate::terraform::framework::plan::plan;
    use crate::terraform::framework::schema::validate_attributes;
    use crate::terraform::framework::schema::{AttrType, Nesting};
    use crate::terraform::framework::{Attribute, Diagnostics, Schema};
    use crate::terraform::tfvalue::{AttributePath, Number, Type, Value};

    pub const UNKNOWN: &str = "<unknown>";

    /// A whole config for `schema` from JSON (blocks are null unless given).
    pub fn config(schema: &Schema, json: &Json) -> Value {
        let mut value = typed(&schema.attributes, json);
        if let Value::Object(fields) = &mut value {
            for b in &schema.blocks {
                fields.insert(b.name.to_string(), Value::Null);
            }
        }
        value
    }

    /// An object of `attributes` from a JSON object (absent attributes are null).
    pub fn typed(attributes: &[Attribute], json: &Json) -> Value {
        if json.as_str() == Some(UNKNOWN) {
            return Value::unknown();
        }
        Value::Object(
            attributes
                .iter()
                .map(|a| {
                    (
                        a.name.to_string(),
                        attribute(a, json.get(a.name).unwrap_or(&Json::Null)),
                    )
                })
                .collect(),
        )
    }

    fn attribute(a: &Attribute, j: &Json) -> Value {
        if j.is_null() {
            return Value::Null;
        }
        if j.as_str() == Some(UNKNOWN) {
            return Value::unknown();
        }
        match &a.ty {
            AttrType::Plain(t) => plain(t, j),
            AttrType::Nested { nesting, attributes } => match nesting {
                Nesting::Single => typed(attributes, j),
                Nesting::List | Nesting::Set => Value::List(
                    j.as_array()
                        .into_iter()
                        .flatten()
                        .map(|e| typed(attributes, e))
                        .collect(),
                ),
                Nesting::Map => Value::Map(
                    j.as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, e)| (k.clone(), typed(attributes, e)))
                        .collect(),
                ),
            },
        }
    }

    fn plain(t: &Type, j: &Json) -> Value {
        match (t, j) {
            (_, Json::Null) => Value::Null,
            (_, Json::String(s)) if s == UNKNOWN => Value::unknown(),
            (Type::String, Json::String(s)) => Value::string(s.clone()),
            (Type::Number, Json::Number(n)) => Value::Number(match n.as_i64() {
                Some(i) => Number::from_i64(i),
                None => n.as_f64().and_then(Number::from_f64).unwrap_or_else(Number::zero),
            }),
            (Type::Bool, Json::Bool(b)) => Value::Bool(*b),
            (Type::List(e), Json::Array(items)) => Value::List(items.iter().map(|x| plain(e, x)).collect()),
            (Type::Map(e), Json::Object(m)) => {
                Value::Map(m.iter().map(|(k, x)| (k.clone(), plain(e, x))).collect())
            }
            _ => panic!("test config does not fit the schema: {j} for {t}"),
        }
    }

    /// Runs every validation Terraform would run at plan: the attribute validators and the
    /// resource's cross-attribute rules.
    pub fn diagnose(schema: &Schema, cross: fn(&Value, &mut Diagnostics), config: &Value) -> Diagnostics {
        assert!(
            config.conforms_to(&schema.value_type()).is_ok(),
            "config does not conform: {:?}",
            config.conforms_to(&schema.value_type())
        );
        let mut d = Diagnostics::new();
        validate_attributes(
            &schema.attributes,
            &schema.blocks,
            config,
            &AttributePath::root(),
            &mut d,
        );
        cross(config, &mut d);
        d
    }

    /// The paths of the error diagnostics, as strings.
    pub fn error_paths(d: &Diagnostics) -> Vec<String> {
        d.iter()
            .filter(|x| x.severity == crate::terraform::framework::Severity::Error)
            .map(|x| x.path.as_ref().map(ToString::to_string).unwrap_or_default())
            .collect()
    }

    /// Sets `value` at a `/`-separated path of attribute names and list indexes, creating
    /// objects on the way (a list index may be one past the end, to append). `~` in a step
    /// stands for `/` inside a map key (`/labels/karpenter.sh~nodepool`).
    pub fn put(json: &mut Json, pointer: &str, value: Json) {
        let mut here = json;
        let steps: Vec<String> = pointer
            .trim_start_matches('/')
            .split('/')
            .map(|s| s.replace('~', "/"))
            .collect();
        for (n, step) in steps.iter().enumerate() {
            let last = n + 1 == steps.len();
            if let Ok(i) = step.parse::<usize>()
                && let Json::Array(items) = here
            {
                if i == items.len() {
                    items.push(Json::Null);
                }
                if last {
                    items[i] = value;
                    return;
                }
                if items[i].is_null() {
                    items[i] = Json::Object(Default::default());
                }
                here = &mut items[i];
                continue;
            }
            if !here.is_object() {
                *here = Json::Object(Default::default());
            }
            let Json::Object(m) = here else { unreachable!() };
            if last {
                m.insert(step.clone(), value);
                return;
            }
            here = m.entry(step.clone()).or_insert(Json::Null);
        }
    }

    /// Plans a create of `config`.
    pub fn plan_create(schema: &Schema, config: &Value) -> Value {
        plan(&schema.attributes, &schema.blocks, config, &Value::Null).planned
    }
}

/// Checks the schemas against the upstream CRDs (v1.14.1): every `spec` field of the CRD is an
/// attribute (by wire name, recursively) and every on-wire attribute is a CRD field, with the
/// same shape; required fields agree; server defaults are declared with the CRD's values; the
/// `status` attributes mirror the CRD's status fields.
#[cfg(test)]
pub(crate) mod crd_coverage {
    use std::collections::BTreeMap;

    use serde_json::{Map, Value as Json};

    use super::{EC2_NODE_CLASS, NODE_POOL};
    use crate::terraform::framework::schema::{AttrType, Mode, Nesting};
    use crate::terraform::framework::{Attribute, Schema};
    use crate::terraform::tfvalue::{Type, Value};

    /// CRD `spec` fields deliberately not in our schemas, with the reason. Empty: the v1.14.1
    /// CRDs have no free-form or deprecated spec fields we leave out.
    const EXCLUDED: &[(&str, &str)] = &[];

    #[derive(Debug, PartialEq)]
    struct Field {
        shape: &'static str,
        required: bool,
        default: Option<Json>,
    }

    fn load(file: &str) -> Json {
        load_version("v1", "v1", file)
    }

    /// The `openAPIV3Schema` of `version` in the CRD file `crds/<dir>/<file>`.
    pub(crate) fn load_version(dir: &str, version: &str, file: &str) -> Json {
        let path = format!(
            "{}/../shared/karpenter/crds/{dir}/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        openapi_schema(&path, version)
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

    fn crd_shape(node: &Json) -> &'static str {
        if node.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
            return "string";
        }
        if node.get("x-kubernetes-preserve-unknown-fields") == Some(&Json::Bool(true))
            && node.get("properties").is_none()
        {
            return "free-form";
        }
        match node["type"].as_str() {
            Some("object") if node.get("properties").is_some() => "object",
            Some("object") => "map",
            Some("array") if node["items"].get("properties").is_some() => "list(object)",
            Some("array") => "list",
            Some("string") => "string",
            Some("integer") | Some("number") => "number",
            Some("boolean") => "bool",
            _ => "unknown",
        }
    }

    fn crd_fields(node: &Json, prefix: &str, out: &mut BTreeMap<String, Field>) {
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
                    shape: crd_shape(sub),
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

    fn our_fields(attributes: &[Attribute], prefix: &str, out: &mut BTreeMap<String, Field>) {
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

    fn compare(schema: &Schema, file: &str, kind: &str) -> Vec<String> {
        compare_root(schema, &load(file), kind, EXCLUDED)
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
            if o.shape != f.shape {
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

    #[test]
    fn node_pool_covers_the_crd() {
        let problems = compare(&NODE_POOL, "karpenter.sh_nodepools.yaml", "NodePool");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn ec2_node_class_covers_the_crd() {
        let problems = compare(
            &EC2_NODE_CLASS,
            "karpenter.k8s.aws_ec2nodeclasses.yaml",
            "EC2NodeClass",
        );
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// The comparison finds what it should: a dropped attribute, a wrong wire name and a
    /// changed default are each reported.
    #[test]
    fn coverage_check_detects_gaps() {
        let mut schema = EC2_NODE_CLASS.clone();
        schema.attributes.retain(|a| a.name != "user_data");
        let problems = compare(&schema, "karpenter.k8s.aws_ec2nodeclasses.yaml", "EC2NodeClass");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("spec.userData has no attribute")),
            "{problems:?}"
        );

        let mut schema = EC2_NODE_CLASS.clone();
        for a in &mut schema.attributes {
            if a.name == "associate_public_ip_address" {
                *a = a.clone().wire_name("associatePublicIpAddress");
            }
            if a.name == "metadata_options" {
                a.default = Some(Value::Null);
            }
        }
        let problems = compare(&schema, "karpenter.k8s.aws_ec2nodeclasses.yaml", "EC2NodeClass");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("spec.associatePublicIpAddress is not a CRD field")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("spec.metadataOptions defaults to")),
            "{problems:?}"
        );

        let mut crd = BTreeMap::new();
        crd_fields(
            &load("karpenter.sh_nodepools.yaml")["properties"]["spec"],
            "",
            &mut crd,
        );
        assert!(crd.contains_key("template.spec.requirements[].minValues"));
        assert!(crd["disruption.budgets[].nodes"].required);
    }

    /// #16, defaults that exist in one cluster only: every default this provider plans (at
    /// any depth) is a field of the v1 CRDs of every Karpenter minor in `versions/`, so no
    /// supported cluster is sent a default it does not have, nor expected to return one.
    /// (Should a future default be newer than the oldest minor, the apply leaves it out of the
    /// body on clusters without it: `KubeObjectType::fit_to_cluster`.)
    #[test]
    fn every_planned_default_exists_in_every_v1_minor() {
        let minors = crate::k8s::skew::tests::all_minor_schemas();
        assert!(minors.len() >= 15, "{}", minors.len());
        let mut problems = Vec::new();
        let mut checked = 0;
        for (schema, crd) in [
            (&*NODE_POOL, "nodepools.karpenter.sh"),
            (&*EC2_NODE_CLASS, "ec2nodeclasses.karpenter.k8s.aws"),
        ] {
            let mut ours = BTreeMap::new();
            our_fields(&schema.attributes, "", &mut ours);
            for (release, schemas) in &minors {
                let mut theirs = BTreeMap::new();
                crd_fields(&schemas[crd]["properties"]["spec"], "", &mut theirs);
                for (path, field) in ours.iter().filter(|(_, f)| f.default.is_some()) {
                    checked += 1;
                    if !theirs.contains_key(path) {
                        problems.push(format!(
                            "{release}: {crd} has no spec.{path}, default {:?}",
                            field.default
                        ));
                    }
                }
            }
        }
        assert!(checked >= 15 * 8, "only {checked} default checks");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// Every attribute, at every depth, says what it is for.
    #[test]
    fn every_attribute_is_described() {
        fn walk(attributes: &[Attribute], prefix: &str, missing: &mut Vec<String>) {
            for a in attributes {
                let path = format!("{prefix}{}", a.name);
                if a.description.trim().is_empty() {
                    missing.push(path.clone());
                }
                // Validators describe themselves too: the docs list the rules they enforce.
                if a.validators.iter().any(|v| v.description().trim().is_empty()) {
                    missing.push(format!("{path} (a validator)"));
                }
                if let Some((_, nested)) = a.nested() {
                    walk(nested, &format!("{path}."), missing);
                }
            }
        }
        let mut missing = Vec::new();
        walk(&NODE_POOL.attributes, "node_pool.", &mut missing);
        walk(&EC2_NODE_CLASS.attributes, "ec2_node_class.", &mut missing);
        assert!(missing.is_empty(), "undescribed: {missing:?}");
        assert_eq!(NODE_POOL.blocks.len(), 1);
        assert_eq!(EC2_NODE_CLASS.blocks.len(), 1);
    }
}
