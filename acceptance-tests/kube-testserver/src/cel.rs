//! CEL validation rules (`x-kubernetes-validations`) of a CRD schema, evaluated the way
//! kube-apiserver does on create and update: each rule of a schema node runs with `self` bound
//! to the node's value (after defaulting), only when that value is present; a rule that is
//! false fails with its `message` (or the value of its `messageExpression`, or
//! `failed rule: <rule>`) on the node's path, or on `fieldPath` under it when given.
//!
//! Transition rules (those that mention `oldSelf`) only run when there is an old value: on a
//! create there is none, so they are skipped, as on the real server.
//!
//! The interpreter is the `cel` crate. Kubernetes adds libraries to standard CEL; the rules in
//! the Karpenter CRDs use two of them: `split` (from the strings extension, which `cel` ships)
//! and the regex library's `find`, registered here. A rule that does not compile is not
//! ignored: it fails every object it applies to with a message that says so, and
//! [`inventory`] lists it (the parity test asserts that list is empty).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cel::objects::{Key, Map};
use cel::{Context, Env, ExecutionError, Program, Value as Cel};
use regex::Regex;
use serde_json::Value;

use crate::field_error::{FieldError, show};

/// A compiled rule, or why it could not be compiled.
type Compiled = Arc<Result<Program, String>>;

fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // The strings extension gives `split` (and the rest of the Kubernetes strings library
        // that `cel` implements); a failure here only means fewer functions, which the
        // not-compiled inventory then shows.
        if let Err(e) = env.add_extension(cel::extensions::strings) {
            tracing::warn!(error = %e, "CEL strings extension not registered");
        }
        Arc::new(env)
    })
}

fn compile(rule: &str) -> Compiled {
    static CACHE: OnceLock<Mutex<HashMap<String, Compiled>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut g = cache.lock().unwrap_or_else(|e| e.into_inner());
    g.entry(rule.to_string())
        .or_insert_with(|| Arc::new(env().compile(rule).map_err(|e| e.to_string())))
        .clone()
}

/// A pattern compiled once, or why it does not compile.
type CompiledRegex = Result<Arc<Regex>, String>;

/// Kubernetes' regex library `find`: the first match of `pattern` in the string, or `""`.
fn find(this: Arc<String>, pattern: Arc<String>) -> Result<Arc<String>, ExecutionError> {
    // compiled once per pattern: the label rules call `find` for every key of every object
    static CACHE: OnceLock<Mutex<HashMap<String, CompiledRegex>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let re = cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(pattern.to_string())
        .or_insert_with(|| Regex::new(&pattern).map(Arc::new).map_err(|e| e.to_string()))
        .clone()
        .map_err(|e| ExecutionError::function_error("find", e))?;
    Ok(Arc::new(
        re.find(&this).map(|m| m.as_str().to_string()).unwrap_or_default(),
    ))
}

fn context_with(vars: &[(&str, &Value)]) -> Result<Context<'static, 'static>, String> {
    let mut ctx = Context::with_env(env().clone());
    ctx.add_function(
        "find",
        |cel::extractors::This(this): cel::extractors::This<Arc<String>>, pattern: Arc<String>| {
            find(this, pattern)
        },
    )
    .map_err(|e| format!("{e:?}"))?;
    for (name, v) in vars {
        ctx.add_variable_from_value(*name, to_cel(v));
    }
    Ok(ctx)
}

/// JSON to CEL as the API server types it: whole numbers are `int`, others `double`, objects
/// are maps (Karpenter's schemas have no field that needs an object type of its own).
pub fn to_cel(v: &Value) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Cel::Int(i),
            None => Cel::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(a) => Cel::List(Arc::new(a.iter().map(to_cel).collect())),
        Value::Object(o) => Cel::Map(Map {
            map: Arc::new(
                o.iter()
                    .map(|(k, c)| (Key::String(Arc::new(k.clone())), to_cel(c)))
                    .collect(),
            ),
        }),
    }
}

/// Whether a rule is a transition rule (reads `oldSelf`).
pub fn is_transition(rule: &str) -> bool {
    rule.contains("oldSelf")
}

/// The outcome of one rule on one value.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Holds,
    Fails,
    /// Evaluation stopped with an error (a missing key, a bad conversion): the API server
    /// reports it as an invalid value too.
    Error(String),
    /// The rule does not compile with our interpreter.
    NotCompiled(String),
}

/// Evaluate `rule` with `self` bound to `value`.
pub fn evaluate(rule: &str, value: &Value) -> Verdict {
    let program = compile(rule);
    let program = match program.as_ref() {
        Ok(p) => p,
        Err(e) => return Verdict::NotCompiled(e.clone()),
    };
    let ctx = match context_with(&[("self", value)]) {
        Ok(c) => c,
        Err(e) => return Verdict::NotCompiled(e),
    };
    match program.execute(&ctx) {
        Ok(Cel::Bool(true)) => Verdict::Holds,
        Ok(Cel::Bool(false)) => Verdict::Fails,
        Ok(other) => Verdict::Error(format!("rule did not evaluate to a bool: {other:?}")),
        Err(e) => Verdict::Error(e.to_string()),
    }
}

fn message_of(validation: &Value, rule: &str, value: &Value) -> String {
    if let Some(expr) = validation.get("messageExpression").and_then(Value::as_str)
        && let Ok(p) = compile(expr).as_ref()
        && let Ok(ctx) = context_with(&[("self", value)])
        && let Ok(Cel::String(s)) = p.execute(&ctx)
    {
        return s.to_string();
    }
    match validation.get("message").and_then(Value::as_str) {
        Some(m) => m.to_string(),
        None => format!("failed rule: {rule}"),
    }
}

/// `fieldPath` (`.a.b`, `.a['b']`) joined onto `path`.
fn with_field_path(path: &str, field_path: Option<&str>) -> String {
    let Some(fp) = field_path.filter(|f| !f.is_empty()) else {
        return path.to_string();
    };
    let rel = fp.trim_start_matches('.');
    if path.is_empty() {
        rel.to_string()
    } else {
        format!("{path}.{rel}")
    }
}

/// Check the `x-kubernetes-validations` of schema node `s` against its (present) value `v`.
pub fn check(s: &Value, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
        return;
    };
    for validation in rules {
        let Some(rule) = validation.get("rule").and_then(Value::as_str) else {
            continue;
        };
        if is_transition(rule) {
            continue;
        }
        let at = with_field_path(path, validation.get("fieldPath").and_then(Value::as_str));
        let at = if at.is_empty() { "<root>".to_string() } else { at };
        let reason = match validation.get("reason").and_then(Value::as_str) {
            Some("FieldValueRequired") => "FieldValueRequired",
            Some("FieldValueDuplicate") => "FieldValueDuplicate",
            Some("FieldValueForbidden") => "FieldValueForbidden",
            _ => "FieldValueInvalid",
        };
        match evaluate(rule, v) {
            Verdict::Holds => {}
            Verdict::Fails => errs.push(FieldError {
                reason,
                field: at,
                message: format!("Invalid value: {}: {}", show(v), message_of(validation, rule, v)),
            }),
            Verdict::Error(e) => errs.push(FieldError {
                reason: "FieldValueInvalid",
                field: at,
                message: format!("Invalid value: {}: {e}", show(v)),
            }),
            Verdict::NotCompiled(e) => errs.push(FieldError {
                reason: "InternalError",
                field: at,
                message: format!("Internal error: rule not compiled by the test server: {rule}: {e}"),
            }),
        }
    }
}

/// Every rule of a schema (walked recursively): `(path, rule, is_transition, compiles)`.
pub fn inventory(schema: &Value) -> Vec<(String, String, bool, Option<String>)> {
    fn walk(s: &Value, path: &str, out: &mut Vec<(String, String, bool, Option<String>)>) {
        let Some(o) = s.as_object() else { return };
        if let Some(rules) = o.get("x-kubernetes-validations").and_then(Value::as_array) {
            for r in rules {
                if let Some(rule) = r.get("rule").and_then(Value::as_str) {
                    let err = compile(rule).as_ref().as_ref().err().cloned();
                    out.push((path.to_string(), rule.to_string(), is_transition(rule), err));
                }
            }
        }
        if let Some(props) = o.get("properties").and_then(Value::as_object) {
            for (k, c) in props {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(c, &p, out);
            }
        }
        if let Some(items) = o.get("items") {
            walk(items, &format!("{path}[*]"), out);
        }
        if let Some(a @ Value::Object(_)) = o.get("additionalProperties") {
            walk(a, &format!("{path}[*]"), out);
        }
    }
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubernetes_functions_used_by_the_karpenter_rules() {
        let key = json!("karpenter.sh/foo");
        assert_eq!(
            evaluate(
                r#"self in ["karpenter.sh/capacity-type"] || !self.find("^([^/]+)").endsWith("karpenter.sh")"#,
                &key
            ),
            Verdict::Fails
        );
        assert_eq!(
            evaluate(r#"self.find("^([^/]+)") == "karpenter.sh""#, &key),
            Verdict::Holds
        );
        assert_eq!(evaluate(r#"self.find("^zzz") == """#, &key), Verdict::Holds);
        let alias = json!("al2023@latest");
        assert_eq!(
            evaluate("self.split('@')[0] in ['al2','al2023']", &alias),
            Verdict::Holds
        );
        assert_eq!(
            evaluate("self.matches('^[a-zA-Z0-9]+@.+$')", &alias),
            Verdict::Holds
        );
        assert_eq!(evaluate("int(self) >= 0", &json!("+5")), Verdict::Holds);
        assert!(matches!(
            evaluate("int(self) >= 0", &json!("five")),
            Verdict::Error(_)
        ));
        let reqs = json!([{"key": "a", "operator": "In", "values": ["x"], "minValues": 2}]);
        assert_eq!(
            evaluate(
                "self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true)",
                &reqs
            ),
            Verdict::Fails
        );
        assert_eq!(
            evaluate("!self.all(x, has(x.id) && has(x.tags))", &json!([])),
            Verdict::Fails
        );
        assert_eq!(
            evaluate(
                "self.filter(x, has(x.rootVolume)?x.rootVolume==true:false).size() <= 1",
                &json!([{"rootVolume": true}, {}])
            ),
            Verdict::Holds
        );
    }

    #[test]
    fn failures_carry_message_and_field_path() {
        let s = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "has(self.a) || has(self.b)", "message": "expected a or b"},
            {"rule": "self == oldSelf", "message": "immutable"},
            {"rule": "!has(self.a) || self.a != 'x'", "message": "a is not x", "fieldPath": ".a"}
        ]});
        let mut errs = Vec::new();
        check(&s, &json!({"c": 1}), "spec", &mut errs);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].full(), "spec: Invalid value: \"object\": expected a or b");
        errs.clear();
        check(&s, &json!({"a": "x"}), "spec", &mut errs);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.a");
    }

    #[test]
    fn every_rule_of_the_shared_crds_compiles() {
        let crds = |dir: &str| crate::upstream::path(&format!("crds/{dir}"));
        let mut dirs = vec![crds("v1"), crds("v1alpha5")];
        let rd = std::fs::read_dir(crds("versions")).unwrap();
        dirs.extend(rd.filter_map(Result::ok).map(|e| e.path()));
        let mut total = 0;
        for dir in dirs {
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            for e in rd {
                let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
                let crd: Value = serde_saphyr::from_str(&text).unwrap();
                for v in crd["spec"]["versions"].as_array().unwrap() {
                    for (path, rule, _, err) in inventory(&v["schema"]["openAPIV3Schema"]) {
                        total += 1;
                        assert!(err.is_none(), "{}: {path}: {rule}: {err:?}", dir.display());
                    }
                }
            }
        }
        assert!(total > 80, "{total}");
    }
}
