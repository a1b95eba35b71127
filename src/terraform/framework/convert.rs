//! Schema-driven conversion between Terraform values and API objects (JSON), both ways.
//!
//! The same attribute descriptors that define the Terraform schema name each field on the
//! wire (`node_class_ref` ↔ `nodeClassRef`), so a resource converts with one call and adding a
//! field is one edit. Errors carry the attribute path they happened at.
//!
//! - [`to_wire`] writes only what the user can set (computed-only and `not_on_wire` attributes
//!   are left out) and omits nulls, which is what server-side apply wants: the object states
//!   exactly the fields we manage.
//! - [`from_wire`] reads only the fields the schema knows, so anything else the server or a
//!   controller writes never shows as drift. Attributes that are not on the wire keep their
//!   prior value. An absent field reads back as the prior value when that was an empty
//!   collection (the server does not keep empty lists and maps).

use serde_json::{Map, Value as Json};
use thiserror::Error;

use super::schema::{Attribute, Nesting, Wire};
use crate::terraform::tfvalue::{AttributePath, Number, Type, Value};

#[derive(Debug, Error, PartialEq)]
#[error("{path}: {message}")]
pub struct ConvertError {
    pub path: AttributePath,
    pub message: String,
}

fn err(path: &AttributePath, message: impl Into<String>) -> ConvertError {
    ConvertError {
        path: path.clone(),
        message: message.into(),
    }
}

/// Terraform value (an object of `attributes`) → JSON object of the settable, on-wire fields.
pub fn to_wire(
    attributes: &[Attribute],
    value: &Value,
    path: &AttributePath,
) -> Result<Map<String, Json>, ConvertError> {
    let mut out = Map::new();
    for a in attributes {
        let Some(field) = a.wire_field() else { continue };
        if !a.is_settable() {
            continue;
        }
        let v = value.get(a.name).unwrap_or(&Value::Null);
        if v.is_null() {
            continue;
        }
        let here = path.attr(a.name);
        let json = match (a.wire, a.nested()) {
            (Wire::Json(_), _) => {
                let text = v.as_str().ok_or_else(|| err(&here, "expected a JSON string"))?;
                serde_json::from_str(text).map_err(|e| err(&here, format!("not valid JSON: {e}")))?
            }
            (_, Some((nesting, nested))) => nested_to_wire(nesting, nested, v, &here)?,
            (_, None) => plain_to_wire(v, &here)?,
        };
        out.insert(field, json);
    }
    Ok(out)
}

fn nested_to_wire(
    nesting: Nesting,
    nested: &[Attribute],
    v: &Value,
    path: &AttributePath,
) -> Result<Json, ConvertError> {
    match nesting {
        Nesting::Single => Ok(Json::Object(to_wire(nested, v, path)?)),
        Nesting::List | Nesting::Set => {
            let elements = v.as_elements().ok_or_else(|| err(path, "expected a list"))?;
            elements
                .iter()
                .enumerate()
                .map(|(i, e)| to_wire(nested, e, &path.index(i)).map(Json::Object))
                .collect::<Result<Vec<_>, _>>()
                .map(Json::Array)
        }
        Nesting::Map => {
            let entries = v.as_entries().ok_or_else(|| err(path, "expected a map"))?;
            let mut m = Map::new();
            for (k, e) in entries {
                m.insert(k.clone(), Json::Object(to_wire(nested, e, &path.key(k.clone()))?));
            }
            Ok(Json::Object(m))
        }
    }
}

fn plain_to_wire(v: &Value, path: &AttributePath) -> Result<Json, ConvertError> {
    Ok(match v {
        Value::Null => Json::Null,
        Value::Unknown(_) => return Err(err(path, "value is not known yet")),
        Value::Bool(b) => Json::Bool(*b),
        Value::String(s) => Json::String(s.clone()),
        Value::Number(n) => {
            number_to_json(n).ok_or_else(|| err(path, format!("{n} cannot be sent as a JSON number")))?
        }
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, e)| plain_to_wire(e, &path.index(i)))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(m) | Value::Object(m) => {
            let mut out = Map::new();
            for (k, e) in m {
                if !e.is_null() {
                    out.insert(k.clone(), plain_to_wire(e, &path.key(k.clone()))?);
                }
            }
            Json::Object(out)
        }
        Value::Dynamic(_, inner) => plain_to_wire(inner, path)?,
    })
}

/// A JSON value as the value of a `Dynamic` attribute: the value of its own type (see
/// [`dynamic_from_json`]) with that type, so a number stays a number.
pub fn json_to_dynamic(j: &Json) -> Result<Value, String> {
    let value = dynamic_from_json(j, &AttributePath::root()).map_err(|e| e.message)?;
    Ok(Value::Dynamic(Box::new(json_type(j)), Box::new(value)))
}

/// The Terraform type of a JSON value read into a `Dynamic` attribute ([`dynamic_from_json`]).
fn json_type(j: &Json) -> Type {
    match j {
        Json::Null => Type::Dynamic,
        Json::Bool(_) => Type::Bool,
        Json::String(_) => Type::String,
        Json::Number(_) => Type::Number,
        Json::Array(items) => Type::Tuple(items.iter().map(json_type).collect()),
        Json::Object(m) => Type::Object(m.iter().map(|(k, e)| (k.clone(), json_type(e))).collect()),
    }
}

/// A JSON value as the Terraform value of its own type: numbers, strings and booleans as
/// themselves, objects as objects, arrays as tuples.
fn dynamic_from_json(j: &Json, path: &AttributePath) -> Result<Value, ConvertError> {
    Ok(match j {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::String(s) => Value::String(s.clone()),
        Json::Number(n) => Value::Number(
            Number::parse(&n.to_string()).ok_or_else(|| err(path, format!("{n} is not a number")))?,
        ),
        Json::Array(items) => Value::Tuple(
            items
                .iter()
                .enumerate()
                .map(|(i, e)| dynamic_from_json(e, &path.index(i)))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(m) => Value::Object(
            m.iter()
                .map(|(k, e)| Ok((k.clone(), dynamic_from_json(e, &path.key(k.clone()))?)))
                .collect::<Result<_, ConvertError>>()?,
        ),
    })
}

fn number_to_json(n: &Number) -> Option<Json> {
    if let Some(i) = n.as_i64() {
        return Some(Json::from(i));
    }
    n.as_f64()
        .and_then(serde_json::Number::from_f64)
        .map(Json::Number)
}

/// JSON object → Terraform value of `attributes`. Off-wire attributes come from `prior`.
pub fn from_wire(
    attributes: &[Attribute],
    json: &Map<String, Json>,
    prior: &Value,
    path: &AttributePath,
) -> Result<Value, ConvertError> {
    let mut out = std::collections::BTreeMap::new();
    for a in attributes {
        let p = prior.get(a.name).unwrap_or(&Value::Null);
        let here = path.attr(a.name);
        let value = match a.wire_field() {
            None => p.clone(),
            Some(field) => match json.get(&field) {
                None | Some(Json::Null) => absent(p),
                Some(j) if matches!(a.wire, Wire::Json(_)) => json_string(j, p),
                Some(j) => match a.nested() {
                    Some((nesting, nested)) => nested_from_wire(nesting, nested, j, p, &here)?,
                    None => {
                        let read = plain_from_wire(&a.value_type(), j, p, &here)?;
                        match a.same {
                            // What the prior state holds, in the spelling the state has.
                            Some(same) if !p.is_null() && p.is_wholly_known() && same(&read, p) => p.clone(),
                            _ => read,
                        }
                    }
                },
            },
        };
        out.insert(a.name.to_string(), value);
    }
    Ok(Value::Object(out))
}

/// A free-form field as a JSON string: the prior text when it means the same JSON.
fn json_string(j: &Json, prior: &Value) -> Value {
    let same = prior
        .as_str()
        .and_then(|t| serde_json::from_str::<Json>(t).ok())
        .is_some_and(|p| p == *j);
    if same {
        prior.clone()
    } else {
        Value::String(j.to_string())
    }
}

/// What an absent field reads as: null, or the prior empty collection it normalises from.
fn absent(prior: &Value) -> Value {
    match prior {
        Value::List(v) | Value::Set(v) if v.is_empty() => prior.clone(),
        Value::Map(m) if m.is_empty() => prior.clone(),
        _ => Value::Null,
    }
}

fn nested_from_wire(
    nesting: Nesting,
    nested: &[Attribute],
    j: &Json,
    prior: &Value,
    path: &AttributePath,
) -> Result<Value, ConvertError> {
    match (nesting, j) {
        (Nesting::Single, Json::Object(m)) => from_wire(nested, m, prior, path),
        (Nesting::List | Nesting::Set, Json::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let Json::Object(m) = item else {
                    return Err(err(&path.index(i), "expected an object"));
                };
                let p = prior.as_elements().and_then(|e| e.get(i)).unwrap_or(&Value::Null);
                out.push(from_wire(nested, m, p, &path.index(i))?);
            }
            if out.is_empty() && prior.is_null() {
                return Ok(Value::Null);
            }
            Ok(if nesting == Nesting::Set {
                Value::Set(out)
            } else {
                Value::List(out)
            })
        }
        (Nesting::Map, Json::Object(m)) => {
            let mut out = std::collections::BTreeMap::new();
            for (k, item) in m {
                let Json::Object(obj) = item else {
                    return Err(err(&path.key(k.clone()), "expected an object"));
                };
                let p = prior.get(k).unwrap_or(&Value::Null);
                out.insert(k.clone(), from_wire(nested, obj, p, &path.key(k.clone()))?);
            }
            Ok(Value::Map(out))
        }
        _ => Err(err(path, format!("unexpected JSON {}", kind(j)))),
    }
}

fn kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// A plain (non-nested) value of type `ty`. Int-or-string fields read as strings, unless the
/// attribute is `Dynamic`, which keeps each JSON value's own type.
fn plain_from_wire(ty: &Type, j: &Json, prior: &Value, path: &AttributePath) -> Result<Value, ConvertError> {
    Ok(match (ty, j) {
        (_, Json::Null) => Value::Null,
        (Type::Dynamic, j) => {
            if let Value::Dynamic(_, inner) = prior
                && plain_to_wire(inner, path).is_ok_and(|p| p == *j)
            {
                // The same JSON as the prior value: keep its type (a map stays a map).
                return Ok(prior.clone());
            }
            json_to_dynamic(j).map_err(|e| err(path, e))?
        }
        (Type::String, Json::String(s)) => Value::String(s.clone()),
        (Type::String, Json::Number(n)) => Value::String(n.to_string()),
        (Type::String, Json::Bool(b)) => Value::String(b.to_string()),
        (Type::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Type::Number, Json::Number(n)) => Value::Number(
            Number::parse(&n.to_string()).ok_or_else(|| err(path, format!("{n} is not a number")))?,
        ),
        (Type::Number, Json::String(s)) => {
            Value::Number(Number::parse(s).ok_or_else(|| err(path, format!("{s:?} is not a number")))?)
        }
        (Type::List(t) | Type::Set(t), Json::Array(items)) => {
            if items.is_empty() && prior.is_null() {
                return Ok(Value::Null);
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let p = prior.as_elements().and_then(|e| e.get(i)).unwrap_or(&Value::Null);
                out.push(plain_from_wire(t, item, p, &path.index(i))?);
            }
            if matches!(ty, Type::Set(_)) {
                Value::Set(out)
            } else {
                Value::List(out)
            }
        }
        (Type::Map(t), Json::Object(m)) => {
            if m.is_empty() && prior.is_null() {
                return Ok(Value::Null);
            }
            let mut out = std::collections::BTreeMap::new();
            for (k, item) in m {
                let p = prior.get(k).unwrap_or(&Value::Null);
                out.insert(k.clone(), plain_from_wire(t, item, p, &path.key(k.clone()))?);
            }
            Value::Map(out)
        }
        (Type::Object(fields), Json::Object(m)) => {
            let mut out = std::collections::BTreeMap::new();
            for (name, t) in fields {
                let p = prior.get(name).unwrap_or(&Value::Null);
                let v = match m.get(name) {
                    Some(item) => plain_from_wire(t, item, p, &path.attr(name.clone()))?,
                    None => Value::Null,
                };
                out.insert(name.clone(), v);
            }
            Value::Object(out)
        }
        (t, other) => {
            return Err(err(
                path,
                format!("expected {t:?}, the server sent a JSON {}", kind(other)),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::values::{object, string_list, string_map};
    use serde_json::json;

    fn attrs() -> Vec<Attribute> {
        vec![
            Attribute::string("name").required().not_on_wire(),
            Attribute::object(
                "node_class_ref",
                vec![
                    Attribute::string("group").required(),
                    Attribute::string("kind").required(),
                ],
            ),
            Attribute::list_of_objects(
                "requirements",
                vec![
                    Attribute::string("key").required(),
                    Attribute::list_of("values", Type::String),
                    Attribute::number("min_values"),
                ],
            ),
            Attribute::map_of("limits", Type::String),
            Attribute::number("weight"),
            Attribute::string("status_phase").computed(),
        ]
    }

    fn sample() -> Value {
        object([
            ("name", Value::string("default")),
            (
                "node_class_ref",
                object([
                    ("group", Value::string("karpenter.k8s.aws")),
                    ("kind", Value::string("EC2NodeClass")),
                ]),
            ),
            (
                "requirements",
                Value::List(vec![object([
                    ("key", Value::string("karpenter.sh/capacity-type")),
                    ("values", string_list(["spot", "on-demand"])),
                    ("min_values", Value::Number(Number::from_i64(2))),
                ])]),
            ),
            ("limits", string_map([("cpu", "1000")])),
            ("weight", Value::Null),
            ("status_phase", Value::string("Ready")),
        ])
    }

    #[test]
    fn to_wire_uses_camel_case_and_skips_nulls_and_computed() {
        let wire = to_wire(&attrs(), &sample(), &AttributePath::root()).expect("to_wire");
        assert_eq!(
            Json::Object(wire),
            json!({
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "values": ["spot", "on-demand"], "minValues": 2}],
                "limits": {"cpu": "1000"}
            })
        );
    }

    #[test]
    fn round_trip_keeps_off_wire_values_and_ignores_unknown_fields() {
        let mut wire = to_wire(&attrs(), &sample(), &AttributePath::root()).expect("to_wire");
        wire.insert("somethingKarpenterAdded".into(), json!({"x": 1}));
        let back = from_wire(&attrs(), &wire, &sample(), &AttributePath::root()).expect("from_wire");
        let mut expected = sample();
        if let Value::Object(m) = &mut expected {
            m.insert("status_phase".into(), Value::Null);
        }
        assert_eq!(back, expected);
    }

    #[test]
    fn absent_empty_collections_read_back_as_the_prior_empty_value() {
        let prior = object([("limits", Value::Map(Default::default()))]);
        let back = from_wire(&attrs(), &Map::new(), &prior, &AttributePath::root()).expect("from_wire");
        assert_eq!(back.get("limits"), Some(&Value::Map(Default::default())));
    }

    #[test]
    fn json_fields_round_trip_and_keep_the_prior_formatting() {
        let attrs = vec![Attribute::string("provider_json").json_on_wire("provider")];
        let prior = object([("provider_json", Value::string("{ \"a\": [1, 2] }"))]);
        let wire = to_wire(&attrs, &prior, &AttributePath::root()).expect("to_wire");
        assert_eq!(Json::Object(wire.clone()), json!({"provider": {"a": [1, 2]}}));
        let back = from_wire(&attrs, &wire, &prior, &AttributePath::root()).expect("from_wire");
        assert_eq!(back, prior, "same JSON, prior text kept");
        let changed: Map<String, Json> = [("provider".to_string(), json!({"a": [3]}))]
            .into_iter()
            .collect();
        let back = from_wire(&attrs, &changed, &prior, &AttributePath::root()).expect("from_wire");
        assert_eq!(back.get("provider_json"), Some(&Value::string("{\"a\":[3]}")));
    }

    /// An int-or-string map: each value keeps its JSON type on the way out and back.
    fn quantities(pairs: &[(&str, Value)]) -> Value {
        let ty = Type::Object(
            pairs
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        if v.as_str().is_some() {
                            Type::String
                        } else {
                            Type::Number
                        },
                    )
                })
                .collect(),
        );
        Value::dynamic(ty, object(pairs.iter().map(|(k, v)| (*k, v.clone()))))
    }

    fn same_text(a: &Value, b: &Value) -> bool {
        let text = |v: &Value| -> Option<Vec<(String, String)>> {
            v.as_entries().map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let t = match v.strip_dynamic() {
                            Value::String(s) => s.clone(),
                            other => format!("{other:?}"),
                        };
                        (k.clone(), t)
                    })
                    .collect()
            })
        };
        text(a) == text(b)
    }

    #[test]
    fn dynamic_values_keep_their_json_types_both_ways() {
        let attrs = vec![Attribute::dynamic("limits")];
        let value = object([(
            "limits",
            quantities(&[("cpu", Value::number(100)), ("memory", Value::string("1000Gi"))]),
        )]);
        let wire = to_wire(&attrs, &value, &AttributePath::root()).expect("to_wire");
        assert_eq!(
            Json::Object(wire.clone()),
            json!({"limits": {"cpu": 100, "memory": "1000Gi"}})
        );
        let back = from_wire(&attrs, &wire, &Value::Null, &AttributePath::root()).expect("from_wire");
        assert_eq!(back, value);
        // Read with no prior, the type is the JSON's own.
        let Value::Dynamic(ty, _) = back.get("limits").expect("limits") else {
            panic!("dynamic expected")
        };
        assert_eq!(
            **ty,
            Type::object([("cpu", Type::Number), ("memory", Type::String)])
        );
    }

    #[test]
    fn a_dynamic_value_the_server_holds_unchanged_reads_as_the_prior_with_its_type() {
        let attrs = vec![Attribute::dynamic("limits")];
        // The configuration gave a map(string) (e.g. a variable): the same JSON reads back as it.
        let prior_limits = Value::dynamic(
            Type::map(Type::String),
            Value::Map([("cpu".to_string(), Value::string("1"))].into_iter().collect()),
        );
        let prior = object([("limits", prior_limits.clone())]);
        let wire = json!({"limits": {"cpu": "1"}});
        let back = from_wire(
            &attrs,
            wire.as_object().expect("object"),
            &prior,
            &AttributePath::root(),
        )
        .expect("from_wire");
        assert_eq!(back.get("limits"), Some(&prior_limits));
    }

    /// `from_wire` of one JSON object, as the tests above give it.
    fn read(attrs: &[Attribute], wire: &Json, prior: &Value) -> Value {
        from_wire(
            attrs,
            wire.as_object().expect("object"),
            prior,
            &AttributePath::root(),
        )
        .expect("from_wire")
    }

    #[test]
    fn a_value_that_means_the_prior_reads_as_the_prior() {
        let attrs = vec![Attribute::dynamic("limits").same_when(same_text)];
        let prior = object([("limits", quantities(&[("cpu", Value::string("abc"))]))]);
        let back = read(&attrs, &json!({"limits": {"cpu": "abc"}}), &prior);
        assert_eq!(back.get("limits"), prior.get("limits"));
        let back = read(&attrs, &json!({"limits": {"cpu": "other"}}), &prior);
        assert_ne!(back.get("limits"), prior.get("limits"));
    }

    #[test]
    fn type_mismatch_names_the_path() {
        let wire = json!({"requirements": [{"key": {"not": "a string"}}]});
        let Json::Object(m) = wire else { unreachable!() };
        let e = from_wire(&attrs(), &m, &Value::Null, &AttributePath::root()).expect_err("mismatch");
        assert_eq!(e.path.to_string(), "requirements[0].key");
    }
}
