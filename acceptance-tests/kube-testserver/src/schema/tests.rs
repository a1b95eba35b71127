use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({"type": "object", "required": ["spec"], "properties": {
        "spec": {"type": "object", "required": ["op"], "properties": {
            "op": {"type": "string", "enum": ["In", "NotIn"]},
            "weight": {"type": "integer", "minimum": 1, "maximum": 100},
            "q": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}],
                  "pattern": "^[0-9]+(m|Gi)?$"},
            "d": {"type": "object", "default": {"a": "x"}, "properties": {
                "a": {"type": "string"}, "b": {"type": "string", "default": "y"}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "tags": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string", "maxLength": 3}},
            "list": {"type": "array", "maxItems": 2, "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
        }},
        "status": {"type": "object"}
    }})
}

#[test]
fn prunes_defaults_and_validates() {
    let s = schema();
    let mut o = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a", "junk": 1},
        "spec": {"op": "In", "unknown": 1, "free": {"k": 1}, "q": "5Gi"}, "other": 2});
    let mut dropped = prune_root(&s, &mut o);
    dropped.sort();
    assert_eq!(dropped, vec!["metadata.junk", "other", "spec.unknown"]);
    default_root(&s, &mut o);
    assert_eq!(o["spec"]["d"], json!({"a": "x", "b": "y"}));
    assert_eq!(o["spec"]["free"], json!({"k": 1}));
    assert!(validate_root(&s, &o).is_empty());
}

#[test]
fn reports_each_failure_with_its_path() {
    let s = schema();
    let o = json!({"spec": {"op": "Gt", "weight": 0, "q": "abc", "tags": {"a": "long", "b": "x"},
        "list": ["a", "a", "b"]}});
    let errs = validate_root(&s, &o);
    let full: Vec<String> = errs.iter().map(FieldError::full).collect();
    assert!(
        full.contains(&"spec.op: Unsupported value: \"Gt\": supported values: \"In\", \"NotIn\"".to_string()),
        "{full:?}"
    );
    assert!(
        full.contains(
            &"spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1"
                .to_string()
        ),
        "{full:?}"
    );
    assert!(
        full.iter()
            .any(|e| e.starts_with("spec.q: Invalid value: \"abc\": spec.q in body should match")),
        "{full:?}"
    );
    assert!(
        full.contains(&"spec.tags: Too many: 2: must have at most 1 items".to_string()),
        "{full:?}"
    );
    assert!(
        full.contains(&"spec.tags.a: Too long: may not be more than 3 bytes".to_string()),
        "{full:?}"
    );
    assert!(
        full.contains(&"spec.list: Too many: 3: must have at most 2 items".to_string()),
        "{full:?}"
    );
    assert!(
        full.contains(&"spec.list[1]: Duplicate value: \"a\"".to_string()),
        "{full:?}"
    );
    let missing = validate_root(&s, &json!({"spec": {"weight": "x"}}));
    let full: Vec<String> = missing.iter().map(FieldError::full).collect();
    assert!(full.contains(&"spec.op: Required value".to_string()), "{full:?}");
    assert!(full.contains(&"spec.weight: Invalid value: \"string\": spec.weight in body must be of type integer: \"string\"".to_string()));
    assert_eq!(validate_root(&s, &json!({})).len(), 1);
}

#[test]
fn int_or_string_accepts_both() {
    let s = schema();
    assert!(validate_root(&s, &json!({"spec": {"op": "In", "q": 5}})).is_empty());
    assert_eq!(
        validate_root(&s, &json!({"spec": {"op": "In", "q": true}})).len(),
        1
    );
}

#[test]
fn null_of_non_nullable_is_dropped_before_defaulting() {
    let s = schema();
    let mut o = json!({"spec": {"op": "In", "d": null}});
    default_root(&s, &mut o);
    assert_eq!(o["spec"]["d"], json!({"a": "x", "b": "y"}));
}

#[test]
fn every_pattern_in_the_shared_crds_compiles() {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(p)) = o.get("pattern") {
                    out.push(p.clone());
                }
                o.values().for_each(|c| walk(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut patterns = Vec::new();
    for dir in ["v1", "v1alpha5"] {
        for e in std::fs::read_dir(crate::upstream::path(&format!("crds/{dir}"))).unwrap() {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            walk(&serde_saphyr::from_str::<Value>(&text).unwrap(), &mut patterns);
        }
    }
    assert!(patterns.len() > 20, "{}", patterns.len());
    for p in &patterns {
        assert!(regex_for(p).is_some(), "pattern does not compile: {p}");
    }
}

#[test]
fn names_are_checked() {
    assert!(validate_name(&json!({"metadata": {"name": "ok-1.a"}})).is_empty());
    assert_eq!(
        validate_name(&json!({"metadata": {"name": "Bad"}}))[0].reason,
        "FieldValueInvalid"
    );
    assert_eq!(
        validate_name(&json!({"metadata": {}}))[0].reason,
        "FieldValueRequired"
    );
}

#[test]
fn date_times_must_be_real() {
    for ok in [
        "2024-02-29T10:00:00Z",
        "2023-12-31T23:59:59.5+01:00",
        "2024-05-01t00:00:00z",
    ] {
        assert!(is_date_time(ok), "{ok}");
    }
    for bad in [
        "2024-02-30T10:00:00Z",
        "2023-02-29T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T00:00:60Z",
        "2024-01-01 00:00:00Z",
        "2024-01-01T00:00:00",
    ] {
        assert!(!is_date_time(bad), "{bad}");
    }
    let s = json!({"type": "object", "properties": {"t": {"type": "string", "format": "date-time"}}});
    assert_eq!(validate_root(&s, &json!({"t": "2024-02-30T10:00:00Z"})).len(), 1);
}

#[test]
fn annotations_are_limited_to_256_kib_in_total() {
    let half = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT / 2);
    let ok = json!({"metadata": {"name": "a", "annotations": {"a": half.clone()}}});
    assert!(validate_name(&ok).is_empty());
    let over = json!({"metadata": {"name": "a", "annotations": {"a": half.clone(), "b": half}}});
    let errs = validate_name(&over);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "metadata.annotations");
    let bad_key = json!({"metadata": {"name": "a", "labels": {"-x": "v"}}});
    assert_eq!(validate_name(&bad_key).len(), 1);
}
