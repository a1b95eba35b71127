//! Label keys the cluster's CRD refuses. Karpenter's CRDs restrict the label keys a NodePool (or
//! a NodeOverlay) may name, in its template's labels and its requirements' keys, with CEL rules
//! (`label domain "karpenter.k8s.aws" is restricted`: only an allow-list of that domain's keys,
//! which grows release by release — `karpenter.k8s.aws/nitro-sandbox` from v1.15). [`refused`]
//! runs the served schema's label rules (those whose message starts with `label`) on an
//! object about to be written, as the API server would, so a key the installed release forbids
//! is a plan error naming the key, not a 422 at apply. [`first_label_release`] says which
//! release allows a key, from [`FIRST_LABEL_RELEASES`], a table kept honest by a test that
//! derives it from the CRDs of every v1 minor.
//!
//! The rules use standard CEL and Kubernetes' regex `find`, registered here. They are compiled
//! once per served CRD ([`LabelRules::of`], kept with what the plan read of the CRD). A rule
//! that does not compile or evaluate here is left to the API server: the plan never refuses on
//! a guess.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cel::objects::{Key, Map};
use cel::{Context, Env, ExecutionError, Program, Value as Cel};
use regex::Regex;
use serde_json::Value as Json;

/// `(label key, first Karpenter release whose CRDs allow it)`, for every `karpenter.k8s.aws`
/// key a NodePool may name whose allowance came after v1.0.
pub const FIRST_LABEL_RELEASES: &[(&str, &str)] = &[
    ("karpenter.k8s.aws/ec2nodeclass", "v1.1"),
    ("karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz", "v1.1"),
    ("karpenter.k8s.aws/capacity-reservation-id", "v1.3"),
    ("karpenter.k8s.aws/capacity-reservation-type", "v1.6"),
    ("karpenter.k8s.aws/instance-capability-flex", "v1.7"),
    ("karpenter.k8s.aws/instance-tenancy", "v1.9"),
    ("karpenter.k8s.aws/capacity-reservation-interruptible", "v1.10"),
    ("karpenter.k8s.aws/placement-group-id", "v1.11"),
    ("karpenter.k8s.aws/placement-group-partition", "v1.11"),
    ("karpenter.k8s.aws/nitro-sandbox", "v1.15"),
];

/// The release from which Karpenter's CRDs no longer restrict the `kubernetes.io` and `k8s.io`
/// label domains (v1.0–v1.8 allowed only a list of their keys).
pub const OPEN_KUBERNETES_DOMAINS: &str = "v1.9";

/// The first release whose CRDs allow the label `key`, when the table knows it.
pub fn first_label_release(key: &str) -> Option<&'static str> {
    if let Some((_, release)) = FIRST_LABEL_RELEASES.iter().find(|(k, _)| *k == key) {
        return Some(release);
    }
    let domain = key.split_once('/').map_or("", |(d, _)| d);
    (domain == "kubernetes.io"
        || domain.ends_with(".kubernetes.io")
        || domain == "k8s.io"
        || domain.ends_with(".k8s.io"))
    .then_some(OPEN_KUBERNETES_DOMAINS)
}

/// One label key the served schema refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelRefusal {
    /// Where the key is: `spec.template.metadata.labels` or `spec.template.spec.requirements[0].key`.
    pub path: String,
    pub key: String,
    /// The rule's message: `label domain "karpenter.k8s.aws" is restricted`.
    pub message: String,
}

/// The label rules of a CRD schema, compiled: by rule text, the program (or nothing, for a rule
/// that does not compile here).
pub struct LabelRules {
    env: Arc<Env>,
    programs: HashMap<String, Option<Program>>,
    /// The patterns `find` compiled so far, shared by every check against this CRD.
    patterns: Patterns,
}

impl std::fmt::Debug for LabelRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LabelRules")
            .field("rules", &self.programs.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl LabelRules {
    /// The label rules anywhere in the schema `root` (those whose message starts with `label`),
    /// compiled; `None` when the CEL environment cannot be made.
    pub fn of(root: &Json) -> Option<Self> {
        let env = environment().ok()?;
        let mut programs = HashMap::new();
        collect(root, &mut |rule| {
            programs
                .entry(rule.to_string())
                .or_insert_with(|| env.compile(rule).ok());
        });
        Some(Self {
            env,
            programs,
            patterns: Patterns::default(),
        })
    }
}

/// Calls `found` with every label rule of `schema` and below.
fn collect(schema: &Json, found: &mut impl FnMut(&str)) {
    for (rule, _) in label_rules(schema) {
        found(rule);
    }
    for key in ["properties", "additionalProperties", "items"] {
        match schema.get(key) {
            Some(Json::Object(children)) if key == "properties" => {
                for child in children.values() {
                    collect(child, found);
                }
            }
            Some(child @ Json::Object(_)) => collect(child, found),
            _ => {}
        }
    }
}

/// The label rules of one schema node: (rule, message).
fn label_rules(schema: &Json) -> impl Iterator<Item = (&str, &str)> {
    schema
        .get("x-kubernetes-validations")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| Some((v.get("rule")?.as_str()?, v.get("message")?.as_str()?)))
        .filter(|(rule, message)| message.starts_with("label ") && !rule.contains("oldSelf"))
}

/// The label keys of `object`'s `spec` that the CRD schema `root` (with its compiled `rules`)
/// refuses.
pub fn refused(root: &Json, rules: &LabelRules, object: &Json) -> Vec<LabelRefusal> {
    let mut out = Vec::new();
    let Ok(mut ctx) = context(&rules.env, &rules.patterns) else {
        return out;
    };
    if let (Some(schema), Some(spec)) = (root.pointer("/properties/spec"), object.get("spec")) {
        walk(rules, &mut ctx, schema, spec, "spec", &mut out);
    }
    out
}

fn walk(
    rules: &LabelRules,
    ctx: &mut Context<'static, 'static>,
    schema: &Json,
    value: &Json,
    path: &str,
    out: &mut Vec<LabelRefusal>,
) {
    check(rules, ctx, schema, value, path, out);
    match value {
        Json::Object(fields) => {
            for (name, v) in fields {
                let sub = schema
                    .pointer(&format!(
                        "/properties/{}",
                        name.replace('~', "~0").replace('/', "~1")
                    ))
                    .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()));
                if let Some(sub) = sub {
                    walk(rules, ctx, sub, v, &format!("{path}.{name}"), out);
                }
            }
        }
        Json::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(rules, ctx, sub, v, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// The label rules of one schema node on its value: a map of labels is checked key by key, so
/// the refusal names the key.
fn check(
    rules: &LabelRules,
    ctx: &mut Context<'static, 'static>,
    schema: &Json,
    value: &Json,
    path: &str,
    out: &mut Vec<LabelRefusal>,
) {
    for (rule, message) in label_rules(schema) {
        let Some(Some(program)) = rules.programs.get(rule) else {
            continue;
        };
        let mut refused_with = |v: &Json| -> bool {
            ctx.add_variable_from_value("self", to_cel(v));
            matches!(program.execute(ctx), Ok(Cel::Bool(false)))
        };
        match value {
            Json::Object(labels) => {
                for (key, v) in labels {
                    let one = Json::Object([(key.clone(), v.clone())].into_iter().collect());
                    if refused_with(&one) {
                        out.push(LabelRefusal {
                            path: path.to_string(),
                            key: key.clone(),
                            message: message.to_string(),
                        });
                    }
                }
            }
            Json::String(key) if refused_with(value) => out.push(LabelRefusal {
                path: path.to_string(),
                key: key.clone(),
                message: message.to_string(),
            }),
            _ => {}
        }
    }
}

/// Standard CEL with the strings extension (`split`, …), as the API server's.
fn environment() -> Result<Arc<Env>, String> {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(env))
}

/// Patterns `find` compiled so far (the label rules call it for every key).
type Patterns = Arc<Mutex<HashMap<String, Result<Regex, String>>>>;

fn context(env: &Arc<Env>, patterns: &Patterns) -> Result<Context<'static, 'static>, String> {
    let mut ctx = Context::with_env(env.clone());
    let patterns = patterns.clone();
    ctx.add_function(
        "find",
        move |cel::extractors::This(this): cel::extractors::This<Arc<String>>, pattern: Arc<String>| {
            find(&patterns, &this, &pattern)
        },
    )
    .map_err(|e| format!("{e:?}"))?;
    Ok(ctx)
}

/// Kubernetes' regex library `find`: the first match of `pattern` in the string, or `""`.
fn find(patterns: &Patterns, this: &str, pattern: &str) -> Result<Arc<String>, ExecutionError> {
    let mut compiled = patterns.lock().unwrap_or_else(|e| e.into_inner());
    let re = compiled
        .entry(pattern.to_string())
        .or_insert_with(|| Regex::new(pattern).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| ExecutionError::function_error("find", e.clone()))?;
    Ok(Arc::new(
        re.find(this).map(|m| m.as_str().to_string()).unwrap_or_default(),
    ))
}

/// JSON as the API server types it for CEL.
fn to_cel(v: &Json) -> Cel {
    match v {
        Json::Null => Cel::Null,
        Json::Bool(b) => Cel::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Cel::Int(i),
            None => Cel::Float(n.as_f64().unwrap_or_default()),
        },
        Json::String(s) => Cel::String(Arc::new(s.clone())),
        Json::Array(a) => Cel::List(Arc::new(a.iter().map(to_cel).collect())),
        Json::Object(o) => Cel::Map(Map {
            map: Arc::new(
                o.iter()
                    .map(|(k, c)| (Key::String(Arc::new(k.clone())), to_cel(c)))
                    .collect(),
            ),
        }),
    }
}

#[cfg(test)]
mod tests;
