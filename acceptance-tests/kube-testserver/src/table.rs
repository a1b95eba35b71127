//! `meta.k8s.io/v1` Table responses (what `kubectl get` asks for), built from a CRD version's
//! `additionalPrinterColumns` with a small JSONPath evaluator (field names with `\.` escapes,
//! `[n]` indexes and `[?(@.field=="value")]` filters), ages shown the way kubectl shows them.

use crate::store::ResourceType;
use serde_json::{Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

/// Whether an `Accept` header asks for a Table.
pub fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table") && first.contains("g=meta.k8s.io"))
}

enum Step {
    Key(String),
    Index(usize),
    Filter(String, Value),
}

fn parse(path: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let chars: Vec<char> = path
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .chars()
        .collect();
    let mut i = 0;
    let mut key = String::new();
    let flush = |key: &mut String, steps: &mut Vec<Step>| {
        if !key.is_empty() {
            steps.push(Step::Key(std::mem::take(key)));
        }
    };
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() => {
                key.push(chars[i + 1]);
                i += 2;
                continue;
            }
            '.' => flush(&mut key, &mut steps),
            '[' => {
                flush(&mut key, &mut steps);
                let end = chars[i..]
                    .iter()
                    .position(|c| *c == ']')
                    .map(|p| p + i)
                    .unwrap_or(chars.len());
                let inner: String = chars[i + 1..end].iter().collect();
                if let Some(f) = inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')')) {
                    if let Some((k, v)) = f.split_once("==") {
                        let v = v.trim().trim_matches('"').trim_matches('\'').to_string();
                        steps.push(Step::Filter(k.trim().to_string(), Value::String(v)));
                    }
                } else if let Ok(n) = inner.trim().parse() {
                    steps.push(Step::Index(n));
                }
                i = end + 1;
                continue;
            }
            c => key.push(c),
        }
        i += 1;
    }
    flush(&mut key, &mut steps);
    steps
}

/// The first value a JSONPath selects, if any.
pub fn eval<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur: Vec<&Value> = vec![obj];
    for step in parse(path) {
        cur = cur
            .into_iter()
            .flat_map(|v| -> Vec<&Value> {
                match &step {
                    Step::Key(k) => v.get(k).into_iter().collect(),
                    Step::Index(n) => v.get(*n).into_iter().collect(),
                    Step::Filter(k, want) => v
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter(|x| {
                                    x.get(k).map(|y| {
                                        y.as_str().map(|s| Value::String(s.into())).unwrap_or(y.clone())
                                    }) == Some(want.clone())
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                }
            })
            .collect();
    }
    cur.into_iter().next()
}

/// Parse `YYYY-MM-DDTHH:MM:SSZ` to seconds since the epoch.
fn parse_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let n = |a: usize, z: usize| s.get(a..z)?.parse::<i64>().ok();
    let (y, m, d) = (n(0, 4)?, n(5, 7)?, n(8, 10)?);
    let (hh, mm, ss) = (n(11, 13)?, n(14, 16)?, n(17, 19)?);
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Age as kubectl prints it (`45s`, `3m12s`, `5h`, `2d3h`, `90d`, `2y3d`).
pub fn human_age(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    let s = secs.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        if s % 60 == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{}s", s % 60)
        }
    } else if m < 180 {
        format!("{m}m")
    } else if h < 8 {
        if m % 60 == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{}m", m % 60)
        }
    } else if h < 48 {
        format!("{h}h")
    } else if h < 192 {
        if h % 24 == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{}h", h % 24)
        }
    } else if d < 365 * 2 {
        format!("{d}d")
    } else if d < 365 * 8 {
        format!("{}y{}d", d / 365, d % 365)
    } else {
        format!("{}y", d / 365)
    }
}

fn cell(col: &Value, obj: &Value, now: i64) -> Value {
    let path = col.get("jsonPath").and_then(Value::as_str).unwrap_or("");
    let Some(v) = eval(obj, path) else {
        return Value::Null;
    };
    match col.get("type").and_then(Value::as_str).unwrap_or("string") {
        "date" => v
            .as_str()
            .and_then(parse_time)
            .map(|t| json!(human_age(now - t)))
            .unwrap_or(Value::Null),
        "integer" | "number" | "boolean" => v.clone(),
        _ => match v {
            Value::String(_) => v.clone(),
            Value::Array(a) => json!(
                a.iter()
                    .map(|x| x.as_str().map(String::from).unwrap_or_else(|| x.to_string()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            other => json!(other.to_string()),
        },
    }
}

/// Build a Table for `items` of kind `rt`.
pub fn table(rt: &ResourceType, items: &[Value], resource_version: u64) -> Value {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let mut cols: Vec<Value> = rt.printer_columns.clone();
    if cols.is_empty() {
        cols.push(json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}));
    }
    let mut defs = vec![json!({"name": "Name", "type": "string", "format": "name",
        "description": "Name must be unique within a namespace.", "priority": 0})];
    defs.extend(cols.iter().map(|c| {
        json!({"name": c.get("name").cloned().unwrap_or(json!("")), "type": c.get("type").cloned().unwrap_or(json!("string")),
            "format": c.get("format").cloned().unwrap_or(json!("")), "description": c.get("description").cloned().unwrap_or(json!("")),
            "priority": c.get("priority").cloned().unwrap_or(json!(0))})
    }));
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let mut cells = vec![o.pointer("/metadata/name").cloned().unwrap_or(Value::Null)];
            cells.extend(cols.iter().map(|c| cell(c, o, now)));
            json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": o.get("metadata").cloned().unwrap_or(json!({}))}})
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": resource_version.to_string()},
        "columnDefinitions": defs, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_printer_column_paths() {
        let o = json!({"metadata": {"labels": {"node.kubernetes.io/instance-type": "m5.large"}},
            "status": {"conditions": [{"type": "Other", "status": "False"}, {"type": "Ready", "status": "True"}], "nodes": 2},
            "spec": {"list": ["a", "b"]}});
        assert_eq!(
            eval(&o, r#".status.conditions[?(@.type=="Ready")].status"#),
            Some(&json!("True"))
        );
        assert_eq!(
            eval(&o, r".metadata.labels.node\.kubernetes\.io/instance-type"),
            Some(&json!("m5.large"))
        );
        assert_eq!(eval(&o, ".spec.list[1]"), Some(&json!("b")));
        assert_eq!(eval(&o, ".status.nodes"), Some(&json!(2)));
        assert_eq!(eval(&o, ".status.missing"), None);
    }

    #[test]
    fn ages_like_kubectl() {
        assert_eq!(human_age(45), "45s");
        assert_eq!(human_age(192), "3m12s");
        assert_eq!(human_age(3600 * 5), "5h");
        assert_eq!(human_age(86_400 * 2 + 3600 * 3), "2d3h");
        assert_eq!(parse_time("1970-01-02T00:00:01Z"), Some(86_401));
        assert_eq!(parse_time("2000-03-01T00:00:00Z"), Some(951_868_800));
    }

    #[test]
    fn detects_table_requests() {
        assert!(wants_table(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
        ));
        assert!(!wants_table("application/json"));
    }
}
