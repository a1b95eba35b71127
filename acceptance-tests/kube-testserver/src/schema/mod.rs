//! Structural-schema handling for custom objects, following the rules kube-apiserver applies
//! to a CRD version's `openAPIV3Schema`: pruning of unknown fields, dropping of `null` for
//! non-nullable fields, `default` values (recursively, also inside defaults), and validation
//! of types, `required`, `enum`, `pattern`, lengths, item and property counts, bounds,
//! `x-kubernetes-int-or-string`, list-type `set`/`map` uniqueness and `allOf`/`anyOf`/`oneOf`.
//! CEL rules (`x-kubernetes-validations`) run through [`crate::cel`]; of `format`, `date-time`
//! is checked (a real calendar date and time, as the server's strfmt parser requires) and the
//! integer formats `int32`/`int64` bound the value.

pub use crate::field_error::{FieldError, show, type_name};
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Keys kept under `metadata` (everything else there is dropped, as ObjectMeta decoding does).
const META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn preserve_unknown(s: &Value) -> bool {
    s.get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}
fn nullable(s: &Value) -> bool {
    s.get("nullable").and_then(Value::as_bool).unwrap_or(false)
}
fn int_or_string(s: &Value) -> bool {
    s.get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}
fn embedded(s: &Value) -> bool {
    s.get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Remove unknown fields of a whole object (root schema). Returns the paths that were dropped.
pub fn prune_root(schema: &Value, obj: &mut Value) -> Vec<String> {
    let mut dropped = Vec::new();
    if let Some(o) = obj.as_object_mut() {
        if let Some(Value::Object(m)) = o.get_mut("metadata") {
            m.retain(|k, _| {
                let keep = META_FIELDS.contains(&k.as_str());
                if !keep {
                    dropped.push(format!("metadata.{k}"));
                }
                keep
            });
        }
        let props = schema.get("properties").and_then(Value::as_object);
        let keep_all = preserve_unknown(schema);
        let keys: Vec<String> = o.keys().cloned().collect();
        for k in keys {
            if k == "apiVersion" || k == "kind" || k == "metadata" {
                continue;
            }
            match props.and_then(|p| p.get(&k)) {
                Some(ps) => {
                    if let Some(child) = o.get_mut(&k) {
                        prune(ps, child, &k, &mut dropped);
                    }
                }
                None if keep_all => {}
                None => {
                    o.remove(&k);
                    dropped.push(k);
                }
            }
        }
    }
    dropped
}

fn prune(s: &Value, v: &mut Value, path: &str, dropped: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if embedded(s)
                && let Some(Value::Object(m)) = o.get_mut("metadata")
            {
                m.retain(|k, _| META_FIELDS.contains(&k.as_str()));
            }
            let props = s.get("properties").and_then(Value::as_object);
            let addl = s.get("additionalProperties");
            let keep_unknown = preserve_unknown(s)
                || matches!(addl, Some(Value::Bool(true)))
                || (props.is_none() && addl.is_none() && s.get("type").is_none());
            let keys: Vec<String> = o.keys().cloned().collect();
            for k in keys {
                let child_path = join(path, &k);
                if let Some(ps) = props.and_then(|p| p.get(&k)) {
                    if let Some(c) = o.get_mut(&k) {
                        prune(ps, c, &child_path, dropped);
                    }
                } else if let Some(a @ Value::Object(_)) = addl {
                    if let Some(c) = o.get_mut(&k) {
                        prune(a, c, &child_path, dropped);
                    }
                } else if embedded(s) && (k == "apiVersion" || k == "kind" || k == "metadata") {
                } else if !keep_unknown {
                    o.remove(&k);
                    dropped.push(child_path);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.get("items") {
                for (i, c) in a.iter_mut().enumerate() {
                    prune(items, c, &format!("{path}[{i}]"), dropped);
                }
            }
        }
        _ => {}
    }
}

/// Apply `default` values and drop `null`s of non-nullable fields, for a whole object.
pub fn default_root(schema: &Value, obj: &mut Value) {
    apply_defaults(schema, obj);
}

fn apply_defaults(s: &Value, v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, ps) in props {
                    let is_null = matches!(o.get(k), Some(Value::Null));
                    if is_null && !nullable(ps) {
                        o.remove(k);
                    }
                    if !o.contains_key(k)
                        && let Some(d) = ps.get("default")
                    {
                        o.insert(k.clone(), d.clone());
                    }
                    if let Some(c) = o.get_mut(k) {
                        apply_defaults(ps, c);
                    }
                }
            }
            if let Some(a @ Value::Object(_)) = s.get("additionalProperties") {
                for (_, c) in o.iter_mut() {
                    apply_defaults(a, c);
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = s.get("items") {
                for c in items.iter_mut() {
                    apply_defaults(is, c);
                }
            }
        }
        _ => {}
    }
}

/// Validate a whole object against the root schema (metadata is checked by the caller).
pub fn validate_root(schema: &Value, obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(o) = obj.as_object() else {
        errs.push(FieldError::new(
            "FieldValueTypeInvalid",
            "<root>",
            "must be an object".into(),
        ));
        return errs;
    };
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if !o.contains_key(r) {
                errs.push(FieldError::new("FieldValueRequired", r, "Required value".into()));
            }
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    for (k, c) in o {
        if k == "apiVersion" || k == "kind" || k == "metadata" {
            continue;
        }
        if let Some(ps) = props.and_then(|p| p.get(k)) {
            validate(ps, c, k, &mut errs);
        }
    }
    errs
}

fn type_ok(expected: &str, v: &Value) -> bool {
    let actual = type_name(v);
    match expected {
        "number" => actual == "number" || actual == "integer",
        t => t == actual,
    }
}

/// A compiled pattern, shared (an `Arc`, not a clone of the `Regex`, so its match caches are
/// reused: cloning a `Regex` starts with empty caches, which made every check rebuild them).
fn regex_for(pattern: &str) -> Option<Arc<Regex>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<Regex>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut g = cache.lock().unwrap_or_else(|e| e.into_inner());
    g.entry(pattern.to_string())
        .or_insert_with(|| Regex::new(pattern).ok().map(Arc::new))
        .clone()
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn validate(s: &Value, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if v.is_null() {
        if nullable(s) {
            return;
        }
        if let Some(t) = s.get("type").and_then(Value::as_str) {
            errs.push(FieldError::new(
                "FieldValueTypeInvalid",
                path,
                format!("Invalid value: \"null\": {path} in body must be of type {t}: \"null\""),
            ));
            return;
        }
    }
    if int_or_string(s) {
        let t = type_name(v);
        if t != "integer" && t != "string" {
            errs.push(FieldError::new(
                "FieldValueTypeInvalid",
                path,
                format!("Invalid value: \"{t}\": {path} in body must be of type integer or string: \"{t}\""),
            ));
            return;
        }
    } else if let Some(t) = s.get("type").and_then(Value::as_str)
        && !type_ok(t, v)
    {
        let actual = type_name(v);
        errs.push(FieldError::new(
            "FieldValueTypeInvalid",
            path,
            format!("Invalid value: \"{actual}\": {path} in body must be of type {t}: \"{actual}\""),
        ));
        return;
    }
    if let Some(en) = s.get("enum").and_then(Value::as_array)
        && !en.contains(v)
    {
        let supported: Vec<String> = en.iter().map(show).collect();
        errs.push(FieldError::new(
            "FieldValueNotSupported",
            path,
            format!(
                "Unsupported value: {}: supported values: {}",
                show(v),
                supported.join(", ")
            ),
        ));
    }
    match v {
        Value::String(st) => validate_string(s, st, v, path, errs),
        Value::Number(_) => validate_number(s, v, path, errs),
        Value::Array(a) => validate_array(s, a, v, path, errs),
        Value::Object(o) => validate_object(s, o, v, path, errs),
        _ => {}
    }
    validate_combinators(s, v, path, errs);
    crate::cel::check(s, v, path, errs);
}

fn validate_string(s: &Value, st: &str, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let len = st.chars().count() as u64;
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
        && len > max
    {
        errs.push(FieldError::new(
            "FieldValueTooLong",
            path,
            format!("Too long: may not be more than {max} bytes"),
        ));
    }
    if let Some(min) = s.get("minLength").and_then(Value::as_u64)
        && len < min
    {
        errs.push(FieldError::new(
            "FieldValueInvalid",
            path,
            format!(
                "Invalid value: {}: {path} in body should be at least {min} chars long",
                show(v)
            ),
        ));
    }
    if s.get("format").and_then(Value::as_str) == Some("date-time") && !is_date_time(st) {
        errs.push(FieldError::new(
            "FieldValueInvalid",
            path,
            format!(
                "Invalid value: {}: {path} in body must be of type date-time: {}",
                show(v),
                show(v)
            ),
        ));
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str)
        && let Some(re) = regex_for(p)
        && !re.is_match(st)
    {
        errs.push(FieldError::new(
            "FieldValueInvalid",
            path,
            format!("Invalid value: {}: {path} in body should match '{p}'", show(v)),
        ));
    }
}

/// An RFC 3339 date-time naming a real instant: `2024-02-30T10:00:00Z` is refused, as the
/// server's `date-time` format check refuses it.
pub fn is_date_time(s: &str) -> bool {
    const RE: &str = r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-]([0-9]{2}):([0-9]{2}))$";
    let Some(c) = regex_for(RE).and_then(|re| {
        re.captures(s).map(|c| {
            (1..=10)
                .map(|i| c.get(i).and_then(|m| m.as_str().parse::<u32>().ok()))
                .collect::<Vec<_>>()
        })
    }) else {
        return false;
    };
    let n = |i: usize| c.get(i).copied().flatten();
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(se)) = (n(0), n(1), n(2), n(3), n(4), n(5))
    else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    let offset_ok = match (n(8), n(9)) {
        (Some(oh), Some(om)) => oh < 24 && om < 60,
        _ => true,
    };
    d >= 1 && d <= days && h < 24 && mi < 60 && se < 60 && offset_ok
}

fn validate_number(s: &Value, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(x) = num(v) else { return };
    if s.get("format").and_then(Value::as_str) == Some("int32")
        && (x < f64::from(i32::MIN) || x > f64::from(i32::MAX))
    {
        errs.push(FieldError::new(
            "FieldValueInvalid",
            path,
            format!(
                "Invalid value: {}: {path} in body must be of type int32: {}",
                show(v),
                show(v)
            ),
        ));
    }
    if let Some(min) = s.get("minimum").and_then(num) {
        let excl = s
            .get("exclusiveMinimum")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if (excl && x <= min) || (!excl && x < min) {
            let word = if excl {
                "greater than"
            } else {
                "greater than or equal to"
            };
            errs.push(FieldError::new(
                "FieldValueInvalid",
                path,
                format!(
                    "Invalid value: {}: {path} in body should be {word} {}",
                    show(v),
                    fmt_num(min)
                ),
            ));
        }
    }
    if let Some(max) = s.get("maximum").and_then(num) {
        let excl = s
            .get("exclusiveMaximum")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if (excl && x >= max) || (!excl && x > max) {
            let word = if excl {
                "less than"
            } else {
                "less than or equal to"
            };
            errs.push(FieldError::new(
                "FieldValueInvalid",
                path,
                format!(
                    "Invalid value: {}: {path} in body should be {word} {}",
                    show(v),
                    fmt_num(max)
                ),
            ));
        }
    }
}

fn fmt_num(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

fn validate_array(s: &Value, a: &[Value], _v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let n = a.len() as u64;
    if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
        && n > max
    {
        errs.push(FieldError::new(
            "FieldValueTooMany",
            path,
            format!("Too many: {n}: must have at most {max} items"),
        ));
    }
    if let Some(min) = s.get("minItems").and_then(Value::as_u64)
        && n < min
    {
        errs.push(FieldError::new(
            "FieldValueInvalid",
            path,
            format!("Invalid value: {n}: {path} in body should have at least {min} items"),
        ));
    }
    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => {
            for (i, x) in a.iter().enumerate() {
                if a[..i].contains(x) {
                    errs.push(FieldError::new(
                        "FieldValueDuplicate",
                        &format!("{path}[{i}]"),
                        format!("Duplicate value: {}", show(x)),
                    ));
                }
            }
        }
        Some("map") => {
            let keys: Vec<&str> = s
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let key_of = |x: &Value| {
                keys.iter()
                    .map(|k| x.get(*k).cloned().unwrap_or(Value::Null))
                    .collect::<Vec<_>>()
            };
            for (i, x) in a.iter().enumerate() {
                let kx = key_of(x);
                if a[..i].iter().any(|y| key_of(y) == kx) {
                    let shown: Map<String, Value> = keys
                        .iter()
                        .map(|k| (k.to_string(), x.get(*k).cloned().unwrap_or(Value::Null)))
                        .collect();
                    errs.push(FieldError::new(
                        "FieldValueDuplicate",
                        &format!("{path}[{i}]"),
                        format!("Duplicate value: {}", Value::Object(shown)),
                    ));
                }
            }
        }
        _ => {}
    }
    if let Some(items) = s.get("items") {
        for (i, x) in a.iter().enumerate() {
            validate(items, x, &format!("{path}[{i}]"), errs);
        }
    }
}

fn validate_object(s: &Value, o: &Map<String, Value>, _v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(req) = s.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if !o.contains_key(r) {
                errs.push(FieldError::new(
                    "FieldValueRequired",
                    &join(path, r),
                    "Required value".into(),
                ));
            }
        }
    }
    let n = o.len() as u64;
    if let Some(max) = s.get("maxProperties").and_then(Value::as_u64)
        && n > max
    {
        errs.push(FieldError::new(
            "FieldValueTooMany",
            path,
            format!("Too many: {n}: must have at most {max} items"),
        ));
    }
    if let Some(min) = s.get("minProperties").and_then(Value::as_u64)
        && n < min
    {
        errs.push(FieldError::new(
            "FieldValueInvalid",
            path,
            format!("Invalid value: {n}: {path} in body should have at least {min} properties"),
        ));
    }
    let props = s.get("properties").and_then(Value::as_object);
    let addl = s.get("additionalProperties").filter(|a| a.is_object());
    for (k, c) in o {
        let cp = join(path, k);
        if let Some(ps) = props.and_then(|p| p.get(k)) {
            validate(ps, c, &cp, errs);
        } else if let Some(a) = addl {
            validate(a, c, &cp, errs);
        }
    }
}

fn validate_combinators(s: &Value, v: &Value, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for sub in all {
            validate(sub, v, path, errs);
        }
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        let ok = any.iter().any(|sub| {
            let mut e = Vec::new();
            validate(sub, v, path, &mut e);
            e.is_empty()
        });
        if !ok {
            errs.push(FieldError::new(
                "FieldValueInvalid",
                path,
                format!(
                    "Invalid value: {}: {path} in body must validate at least one schema (anyOf)",
                    show(v)
                ),
            ));
        }
    }
    if let Some(one) = s.get("oneOf").and_then(Value::as_array) {
        let passing = one
            .iter()
            .filter(|sub| {
                let mut e = Vec::new();
                validate(sub, v, path, &mut e);
                e.is_empty()
            })
            .count();
        if passing != 1 {
            errs.push(FieldError::new(
                "FieldValueInvalid",
                path,
                format!(
                    "Invalid value: {}: {path} in body must validate one and only one schema (oneOf)",
                    show(v)
                ),
            ));
        }
    }
}

/// The real server's limit on all annotations of an object together (keys and values).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// A qualified name (label or annotation key): an optional DNS-subdomain prefix of at most 253
/// characters and `/`, then 1 to 63 alphanumerics, `-`, `_` or `.`, alphanumeric at both ends.
fn key_ok(key: &str) -> bool {
    const PREFIX: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
    const NAME: &str = r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let prefix_ok =
        prefix.is_none_or(|p| p.len() <= 253 && regex_for(PREFIX).is_some_and(|re| re.is_match(p)));
    prefix_ok && name.len() <= 63 && regex_for(NAME).is_some_and(|re| re.is_match(name))
}

/// Label and annotation checks of ObjectMeta: keys are qualified names, label values at most
/// 63 characters of the label-value alphabet, annotations at most 256 KiB in total.
fn validate_labels_and_annotations(obj: &Value, errs: &mut Vec<FieldError>) {
    const VALUE: &str = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";
    if let Some(labels) = obj.pointer("/metadata/labels").and_then(Value::as_object) {
        for (k, v) in labels {
            if !key_ok(k) {
                errs.push(FieldError::new(
                    "FieldValueInvalid",
                    "metadata.labels",
                    format!("Invalid value: {}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", show(&Value::String(k.clone()))),
                ));
            }
            if let Some(val) = v.as_str()
                && (val.len() > 63 || !regex_for(VALUE).is_some_and(|re| re.is_match(val)))
            {
                errs.push(FieldError::new(
                    "FieldValueInvalid",
                    "metadata.labels",
                    format!("Invalid value: {}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", show(v)),
                ));
            }
        }
    }
    if let Some(ann) = obj.pointer("/metadata/annotations").and_then(Value::as_object) {
        let mut total = 0usize;
        for (k, v) in ann {
            if !key_ok(&k.to_ascii_lowercase()) {
                errs.push(FieldError::new(
                    "FieldValueInvalid",
                    "metadata.annotations",
                    format!("Invalid value: {}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", show(&Value::String(k.clone()))),
                ));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            errs.push(FieldError::new(
                "FieldValueTooLong",
                "metadata.annotations",
                format!("Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
            ));
        }
    }
}

/// Validate ObjectMeta of a custom object: `metadata.name` (a DNS-1123 subdomain, present),
/// label keys and values, annotation keys and the annotations' total size.
pub fn validate_name(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    validate_labels_and_annotations(obj, &mut errs);
    match obj.pointer("/metadata/name").and_then(Value::as_str) {
        None | Some("") => errs.push(FieldError::new(
            "FieldValueRequired",
            "metadata.name",
            "Required value: name or generateName is required".into(),
        )),
        Some(n) => {
            const RE: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
            if n.len() > 253 {
                errs.push(FieldError::new(
                    "FieldValueTooLong",
                    "metadata.name",
                    "Too long: may not be more than 253 bytes".into(),
                ));
            } else if !regex_for(RE).is_some_and(|re| re.is_match(n)) {
                errs.push(FieldError::new(
                    "FieldValueInvalid",
                    "metadata.name",
                    format!(
                        "Invalid value: {}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                        show(&Value::String(n.to_string()))
                    ),
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests;
