//! Values the cluster's CRD refuses. Our schemas follow the newest Karpenter; an older one's CRD
//! may lack an enum value (`consolidationPolicy: Balanced` before v1.14, the `Gte`/`Lte`
//! operators before v1.9) or hold a stricter pattern or bound. [`refused`] walks an object about
//! to be written against the served `openAPIV3Schema` as a whole — enums, patterns, string
//! lengths, numeric bounds, item counts — so the resource stops before the write with one error
//! per value on its attribute, instead of the API server's 422 for the whole object.
//! [`first_value_release`] says which Karpenter release added an enum value, from
//! [`FIRST_VALUE_RELEASES`], a table kept honest by a test that derives it from the CRDs of
//! every v1 minor.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use regex::Regex;
use serde_json::Value as Json;

use super::skew::generic_path;

/// `(CRD name, wire path, enum value, first Karpenter release whose CRD allows it)`, for every
/// enum value of a `spec` field our schemas write that an older v1 CRD's enum lacks.
pub const FIRST_VALUE_RELEASES: &[(&str, &str, &str, &str)] = &[
    (
        "ec2nodeclasses.karpenter.k8s.aws",
        "spec.amiFamily",
        "Windows2025",
        "v1.9",
    ),
    (
        "nodepools.karpenter.sh",
        "spec.disruption.consolidationPolicy",
        "Balanced",
        "v1.14",
    ),
    (
        "nodepools.karpenter.sh",
        "spec.template.spec.requirements[].operator",
        "Gte",
        "v1.9",
    ),
    (
        "nodepools.karpenter.sh",
        "spec.template.spec.requirements[].operator",
        "Lte",
        "v1.9",
    ),
];

/// The first Karpenter release whose CRD `crd` allows `value` at `path` (concrete or generic).
pub fn first_value_release(crd: &str, path: &str, value: &str) -> Option<&'static str> {
    let generic = generic_path(path);
    FIRST_VALUE_RELEASES
        .iter()
        .find(|(c, p, v, _)| *c == crd && *p == generic && *v == value)
        .map(|(_, _, _, release)| *release)
}

/// One value the served schema refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// `spec.x[0].y`.
    pub path: String,
    pub value: Json,
    /// "is not one of WhenEmpty, WhenEmptyOrUnderutilized", "does not match ^…$", …
    pub problem: String,
    /// The value, when the problem is a missing enum value (for [`first_value_release`]).
    pub enum_value: Option<String>,
}

/// A schema's patterns, compiled on first use and kept (a plan checks the same patterns for every
/// object of a kind); a pattern that does not compile is kept as such and checks nothing.
#[derive(Debug, Default)]
pub struct Patterns(Mutex<HashMap<String, Option<Arc<Regex>>>>);

impl Patterns {
    /// Whether `text` matches `pattern`; `None` when the pattern does not compile here.
    fn matches(&self, pattern: &str, text: &str) -> Option<bool> {
        let re = {
            let mut compiled = self.0.lock().unwrap_or_else(|e| e.into_inner());
            compiled
                .entry(pattern.to_string())
                .or_insert_with(|| Regex::new(pattern).ok().map(Arc::new))
                .clone()?
        };
        Some(re.is_match(text))
    }
}

/// The values of `object`'s `spec` that the CRD schema `root` refuses (its patterns compiled
/// through `patterns`).
pub fn refused(root: &Json, patterns: &Patterns, object: &Json) -> Vec<Refusal> {
    let mut out = Vec::new();
    if let (Some(spec_schema), Some(spec)) = (root.pointer("/properties/spec"), object.get("spec")) {
        walk(spec_schema, patterns, spec, "spec", &mut out);
    }
    out
}

fn walk(schema: &Json, patterns: &Patterns, value: &Json, path: &str, out: &mut Vec<Refusal>) {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Json::Bool(true)) {
        return;
    }
    if let Some(problem) = problem(schema, patterns, value) {
        out.push(Refusal {
            path: path.to_string(),
            value: value.clone(),
            enum_value: schema
                .get("enum")
                .and(value.as_str())
                .map(str::to_string)
                .filter(|_| problem.starts_with("is not one of")),
            problem,
        });
        return;
    }
    match value {
        Json::Object(fields) => {
            if let Some(props) = schema.get("properties").and_then(Json::as_object) {
                for (k, v) in fields {
                    if let Some(s) = props.get(k) {
                        walk(s, patterns, v, &format!("{path}.{k}"), out);
                    }
                }
            } else if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                for (k, v) in fields {
                    walk(additional, patterns, v, &format!("{path}[{k}]"), out);
                }
            }
        }
        Json::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(item_schema, patterns, v, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

fn show(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What the schema node says against the value itself (not its children).
fn problem(schema: &Json, patterns: &Patterns, value: &Json) -> Option<String> {
    if let Some(allowed) = schema.get("enum").and_then(Json::as_array)
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(show).collect();
        return Some(format!("is not one of {}", list.join(", ")));
    }
    let bound = |key: &str| schema.get(key).and_then(Json::as_f64);
    match value {
        Json::String(s) => {
            let length = s.chars().count() as f64;
            if let Some(max) = bound("maxLength")
                && length > max
            {
                return Some(format!("is longer than {max} characters"));
            }
            if let Some(min) = bound("minLength")
                && length < min
            {
                return Some(format!("is shorter than {min} characters"));
            }
            if let Some(pattern) = schema.get("pattern").and_then(Json::as_str)
                && patterns.matches(pattern, s) == Some(false)
            {
                return Some(format!("does not match the pattern {pattern}"));
            }
        }
        Json::Number(n) => {
            let n = n.as_f64()?;
            if let Some(max) = bound("maximum")
                && n > max
            {
                return Some(format!("is more than {max}"));
            }
            if let Some(min) = bound("minimum")
                && n < min
            {
                return Some(format!("is less than {min}"));
            }
        }
        Json::Array(items) => {
            if let Some(max) = bound("maxItems")
                && items.len() as f64 > max
            {
                return Some(format!("has more than {max} items"));
            }
            if let Some(min) = bound("minItems")
                && (items.len() as f64) < min
            {
                return Some(format!("has fewer than {min} items"));
            }
        }
        _ => {}
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[test]
    fn finds_enum_pattern_and_bound_refusals() {
        let schema = json!({"properties": {"spec": {"properties": {
            "policy": {"type": "string", "enum": ["WhenEmpty", "WhenEmptyOrUnderutilized"]},
            "after": {"type": "string", "pattern": "^[0-9]+s$"},
            "weight": {"type": "integer", "maximum": 100},
            "reqs": {"type": "array", "items": {"properties": {"operator": {"enum": ["In", "Gt"]}}}}
        }}}});
        let object = json!({"spec": {"policy": "Balanced", "after": "1m", "weight": 5,
            "reqs": [{"operator": "In"}, {"operator": "Gte"}]}});
        let found = refused(&schema, &Patterns::default(), &object);
        let paths: Vec<&str> = found.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            ["spec.after", "spec.policy", "spec.reqs[1].operator"],
            "{found:?}"
        );
        assert_eq!(found[1].enum_value.as_deref(), Some("Balanced"));
        assert_eq!(
            first_value_release(
                "nodepools.karpenter.sh",
                "spec.template.spec.requirements[3].operator",
                "Gte"
            ),
            Some("v1.9")
        );
    }

    fn enums(node: &Json, path: &str, out: &mut BTreeMap<String, Vec<String>>) {
        if let Some(values) = node.get("enum").and_then(Json::as_array) {
            out.insert(path.to_string(), values.iter().map(show).collect());
        }
        for (name, sub) in node["properties"].as_object().into_iter().flatten() {
            enums(sub, &format!("{path}.{name}"), out);
        }
        if node.get("items").is_some() {
            enums(&node["items"], &format!("{path}[]"), out);
        }
    }

    /// The table holds exactly the facts the CRDs show: every enum value of the newest CRD
    /// that an older minor's enum at the same path lacks, with the first minor that has it.
    #[test]
    fn first_value_release_table_matches_the_crds_of_every_minor() {
        let minors = crate::k8s::skew::tests::all_minor_schemas();
        let (_, newest) = minors.last().expect("newest");
        let mut derived = Vec::new();
        for (crd, schema) in newest {
            let mut newest_enums = BTreeMap::new();
            enums(&schema["properties"]["spec"], "spec", &mut newest_enums);
            for (path, values) in &newest_enums {
                for value in values {
                    let first = minors
                        .iter()
                        .find(|(_, schemas)| {
                            let mut have = BTreeMap::new();
                            enums(&schemas[crd]["properties"]["spec"], "spec", &mut have);
                            // A field that has no enum yet (or does not exist) takes the value.
                            have.get(path).is_none_or(|v| v.contains(value))
                        })
                        .map(|(dir, _)| dir.rsplit_once('.').map_or(dir.clone(), |(m, _)| m.to_string()))
                        .expect("the newest minor has it");
                    if first != crate::k8s::skew::OLDEST_SUPPORTED {
                        derived.push((crd.clone(), path.clone(), value.clone(), first));
                    }
                }
            }
        }
        let mut table: Vec<(String, String, String, String)> = FIRST_VALUE_RELEASES
            .iter()
            .map(|(c, p, v, r)| (c.to_string(), p.to_string(), v.to_string(), r.to_string()))
            .collect();
        derived.sort();
        table.sort();
        assert_eq!(
            table, derived,
            "FIRST_VALUE_RELEASES differs from what the CRDs in versions/ show"
        );
    }
}
