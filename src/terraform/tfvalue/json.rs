//! The JSON form of values: `DynamicValue.json` and `RawState.json` (stored state, which
//! UpgradeResourceState and MoveResourceState hand us), following go-cty's `cty/json`.
//!
//! Same structure as msgpack, with JSON numbers kept at full precision, no unknowns, and a
//! dynamic slot written as `{"value": …, "type": <type JSON>}`. As in cty, primitives convert
//! on the way in: a JSON number or bool is accepted for a string (its text), a numeric string
//! for a number, `"true"`/`"false"` for a bool.
//!
//! [`decode`] is strict: objects must carry exactly the type's attributes. [`decode_lenient`]
//! is for stored state written by another schema version: missing attributes become null,
//! extra attributes (and extra keys of a dynamic wrapper) are ignored, a repeated key keeps
//! its last value.

use std::collections::BTreeMap;

use super::error::{DecodeError, EncodeError};
use super::jsontext::{self, Json};
use super::msgpack::{
    check_attributes, dynamic_of_dynamic, enc_mismatch, enc_too_deep, enc_tuple_length, missing_message,
    unwrapped_dynamic,
};
use super::number::Number;
use super::path::AttributePath;
use super::trail::Trail;
use super::typejson::{from_tree as type_from_tree, write_type};
use super::value::{MAX_DEPTH, Type, Value};

/// Decodes `DynamicValue.json` strictly.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, DecodeError> {
    decode_with(bytes, ty, false)
}

/// Decodes stored state (`RawState.json`) leniently, see the module docs.
pub fn decode_lenient(bytes: &[u8], ty: &Type) -> Result<Value, DecodeError> {
    decode_with(bytes, ty, true)
}

/// Encodes a wholly known value as compact JSON (object keys sorted). Unknowns and infinite
/// numbers cannot be written in JSON and are errors, as are values that do not conform.
pub fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, EncodeError> {
    let mut out = String::new();
    encode_value(&mut out, value, ty, &Trail::Root, 0)?;
    Ok(out.into_bytes())
}

fn decode_with(bytes: &[u8], ty: &Type, lenient: bool) -> Result<Value, DecodeError> {
    let doc = jsontext::parse(bytes).map_err(|message| DecodeError {
        path: AttributePath::root(),
        message,
    })?;
    from_json(&doc, ty, &Trail::Root, 0, lenient)
}

fn err(trail: &Trail<'_>, message: impl Into<String>) -> DecodeError {
    DecodeError {
        path: trail.to_path(),
        message: message.into(),
    }
}

// The recursive path keeps small frames (see the msgpack codec): containers, leaves and error
// messages are separate non-inlined functions.
fn from_json(
    doc: &Json,
    ty: &Type,
    trail: &Trail<'_>,
    depth: usize,
    lenient: bool,
) -> Result<Value, DecodeError> {
    if depth > MAX_DEPTH {
        return Err(too_deep(trail));
    }
    match (ty, doc) {
        (_, Json::Null) => Ok(Value::Null),
        (Type::Dynamic, _) => dynamic_from_json(doc, trail, depth, lenient),
        (Type::String | Type::Number | Type::Bool, _) => primitive_from_json(doc, ty, trail),
        (Type::List(ety), Json::Array(items)) => Ok(Value::List(elements_from_json(
            items, ety, trail, depth, lenient,
        )?)),
        (Type::Set(ety), Json::Array(items)) => {
            Ok(Value::Set(elements_from_json(items, ety, trail, depth, lenient)?))
        }
        (Type::Tuple(etys), Json::Array(items)) => tuple_from_json(items, ty, etys, trail, depth, lenient),
        (Type::Map(ety), Json::Object(members)) => map_from_json(members, ety, trail, depth, lenient),
        (Type::Object(attrs), Json::Object(members)) => {
            object_from_json(members, attrs, trail, depth, lenient)
        }
        _ => Err(mismatch(trail, ty, doc)),
    }
}

#[cold]
#[inline(never)]
fn too_deep(trail: &Trail<'_>) -> DecodeError {
    err(trail, format!("value nests deeper than {MAX_DEPTH} levels"))
}

#[cold]
#[inline(never)]
fn mismatch(trail: &Trail<'_>, ty: &Type, doc: &Json) -> DecodeError {
    err(trail, format!("{ty} is required, found {}", doc.kind()))
}

#[cold]
#[inline(never)]
fn named(trail: &Trail<'_>, what: &str, name: &str) -> DecodeError {
    err(trail, format!("{what} {name:?}"))
}

#[inline(never)]
fn dynamic_from_json(
    doc: &Json,
    trail: &Trail<'_>,
    depth: usize,
    lenient: bool,
) -> Result<Value, DecodeError> {
    let (inner_ty, value_doc) = dynamic_parts(doc, trail, lenient)?;
    let inner = from_json(value_doc, &inner_ty, trail, depth + 1, lenient)?;
    if inner_ty == Type::Dynamic {
        Ok(inner)
    } else {
        Ok(Value::Dynamic(Box::new(inner_ty), Box::new(inner)))
    }
}

/// The type and the value document of `{"value": …, "type": …}`.
#[inline(never)]
fn dynamic_parts<'d>(
    doc: &'d Json,
    trail: &Trail<'_>,
    lenient: bool,
) -> Result<(Type, &'d Json), DecodeError> {
    let Json::Object(members) = doc else {
        return Err(err(
            trail,
            format!(
                "a dynamic value must be a JSON object {{\"value\": …, \"type\": …}}, found {}",
                doc.kind()
            ),
        ));
    };
    let mut type_doc = None;
    let mut value_doc = None;
    for (key, member) in members {
        let slot = match key.as_str() {
            "type" => &mut type_doc,
            "value" => &mut value_doc,
            _ if lenient => continue,
            other => return Err(named(trail, "invalid key in a dynamic value:", other)),
        };
        if slot.replace(member).is_some() && !lenient {
            return Err(named(trail, "duplicate key in a dynamic value:", key));
        }
    }
    let Some(type_doc) = type_doc else {
        return Err(err(trail, "a dynamic value is missing its \"type\""));
    };
    let Some(value_doc) = value_doc else {
        return Err(err(trail, "a dynamic value is missing its \"value\""));
    };
    let inner_ty = type_from_tree(type_doc).map_err(|e| err(trail, e.to_string()))?;
    Ok((inner_ty, value_doc))
}

#[inline(never)]
fn primitive_from_json(doc: &Json, ty: &Type, trail: &Trail<'_>) -> Result<Value, DecodeError> {
    match (ty, doc) {
        (Type::String, Json::String(s)) => Ok(Value::String(s.clone())),
        (Type::String, Json::Number(text)) => Ok(Value::String(text.clone())),
        (Type::String, Json::Bool(b)) => Ok(Value::String(b.to_string())),
        // JSON cannot hold an infinity (the encoder refuses one), so "inf" in a string is not
        // a number here either: what decodes from JSON must encode back to JSON.
        (Type::Number, Json::Number(text) | Json::String(text)) => Number::parse(text)
            .filter(|n| !n.is_infinite())
            .map(Value::Number)
            .ok_or_else(|| err(trail, format!("{text:?} is not a valid (finite) number"))),
        (Type::Bool, Json::Bool(b)) => Ok(Value::Bool(*b)),
        (Type::Bool, Json::String(s)) if s == "true" => Ok(Value::Bool(true)),
        (Type::Bool, Json::String(s)) if s == "false" => Ok(Value::Bool(false)),
        (Type::Bool, Json::String(s)) => Err(err(trail, format!("{s:?} is not a valid bool"))),
        _ => Err(mismatch(trail, ty, doc)),
    }
}

#[inline(never)]
fn elements_from_json(
    items: &[Json],
    ety: &Type,
    trail: &Trail<'_>,
    depth: usize,
    lenient: bool,
) -> Result<Vec<Value>, DecodeError> {
    let mut values = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        values.push(from_json(item, ety, &trail.index(i), depth + 1, lenient)?);
    }
    Ok(values)
}

#[inline(never)]
fn tuple_from_json(
    items: &[Json],
    ty: &Type,
    etys: &[Type],
    trail: &Trail<'_>,
    depth: usize,
    lenient: bool,
) -> Result<Value, DecodeError> {
    if items.len() != etys.len() {
        return Err(err(
            trail,
            format!(
                "{ty} needs exactly {} elements, found {}",
                etys.len(),
                items.len()
            ),
        ));
    }
    let mut values = Vec::with_capacity(items.len());
    for (i, (item, ety)) in items.iter().zip(etys).enumerate() {
        values.push(from_json(item, ety, &trail.index(i), depth + 1, lenient)?);
    }
    Ok(Value::Tuple(values))
}

#[inline(never)]
fn map_from_json(
    members: &[(String, Json)],
    ety: &Type,
    trail: &Trail<'_>,
    depth: usize,
    lenient: bool,
) -> Result<Value, DecodeError> {
    let mut entries = BTreeMap::new();
    for (key, member) in members {
        let value = from_json(member, ety, &trail.key(key), depth + 1, lenient)?;
        if entries.insert(key.clone(), value).is_some() && !lenient {
            return Err(named(trail, "duplicate map key", key));
        }
    }
    Ok(Value::Map(entries))
}

#[inline(never)]
fn object_from_json(
    members: &[(String, Json)],
    attrs: &BTreeMap<String, Type>,
    trail: &Trail<'_>,
    depth: usize,
    lenient: bool,
) -> Result<Value, DecodeError> {
    let mut entries = BTreeMap::new();
    for (key, member) in members {
        let Some(aty) = attrs.get(key) else {
            if lenient {
                continue;
            }
            return Err(named(trail, "unsupported attribute", key));
        };
        let value = from_json(member, aty, &trail.attr(key), depth + 1, lenient)?;
        if entries.insert(key.clone(), value).is_some() && !lenient {
            return Err(named(trail, "duplicate attribute", key));
        }
    }
    if entries.len() != attrs.len() {
        if !lenient {
            return Err(err(trail, missing_message(attrs, &entries)));
        }
        for name in attrs.keys() {
            entries.entry(name.clone()).or_insert(Value::Null);
        }
    }
    Ok(Value::Object(entries))
}

fn encode_value(
    out: &mut String,
    value: &Value,
    ty: &Type,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    if depth > MAX_DEPTH {
        return Err(enc_too_deep(trail));
    }
    match (ty, value) {
        (_, Value::Null) => out.push_str("null"),
        (_, Value::Unknown(_)) => {
            return Err(enc_err(trail, "an unknown value cannot be written as JSON"));
        }
        (Type::Dynamic, Value::Dynamic(inner_ty, inner)) => {
            encode_dynamic(out, inner_ty, inner, trail, depth)?;
        }
        (Type::Dynamic, other) => return Err(unwrapped_dynamic(trail, other)),
        (_, Value::Dynamic(inner_ty, inner)) if **inner_ty == *ty => {
            encode_value(out, inner, ty, trail, depth + 1)?;
        }
        (Type::String | Type::Number | Type::Bool, _) => {
            encode_primitive(out, value, ty, trail)?;
        }
        (Type::List(ety), Value::List(items)) | (Type::Set(ety), Value::Set(items)) => {
            encode_elements(out, items.iter().map(|item| (item, &**ety)), trail, depth)?;
        }
        (Type::Tuple(etys), Value::Tuple(items)) => {
            if items.len() != etys.len() {
                return Err(enc_tuple_length(trail, ty, etys.len(), items.len()));
            }
            encode_elements(out, items.iter().zip(etys), trail, depth)?;
        }
        (Type::Map(ety), Value::Map(entries)) => {
            encode_members(
                out,
                entries.iter().map(|(k, v)| (k, v, &**ety)),
                false,
                trail,
                depth,
            )?;
        }
        (Type::Object(attrs), Value::Object(entries)) => {
            check_attributes(entries, ty, attrs, trail)?;
            let members = attrs
                .iter()
                .zip(entries.values())
                .map(|((name, aty), item)| (name, item, aty));
            encode_members(out, members, true, trail, depth)?;
        }
        (_, other) => return Err(enc_mismatch(trail, ty, other)),
    }
    Ok(())
}

#[inline(never)]
fn encode_elements<'v>(
    out: &mut String,
    items: impl Iterator<Item = (&'v Value, &'v Type)>,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    out.push('[');
    for (i, (item, ety)) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        encode_value(out, item, ety, &trail.index(i), depth + 1)?;
    }
    out.push(']');
    Ok(())
}

/// Map entries (`attributes == false`) or object attributes, in the iterator's order.
#[inline(never)]
fn encode_members<'v>(
    out: &mut String,
    members: impl Iterator<Item = (&'v String, &'v Value, &'v Type)>,
    attributes: bool,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    out.push('{');
    for (i, (name, item, ety)) in members.enumerate() {
        if i > 0 {
            out.push(',');
        }
        jsontext::write_string(out, name);
        out.push(':');
        let here = if attributes {
            trail.attr(name)
        } else {
            trail.key(name)
        };
        encode_value(out, item, ety, &here, depth + 1)?;
    }
    out.push('}');
    Ok(())
}

#[inline(never)]
fn encode_dynamic(
    out: &mut String,
    inner_ty: &Type,
    inner: &Value,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    if *inner_ty == Type::Dynamic {
        return Err(dynamic_of_dynamic(trail));
    }
    out.push_str("{\"value\":");
    encode_value(out, inner, inner_ty, trail, depth + 1)?;
    out.push_str(",\"type\":");
    write_type(out, inner_ty);
    out.push('}');
    Ok(())
}

#[inline(never)]
fn encode_primitive(
    out: &mut String,
    value: &Value,
    ty: &Type,
    trail: &Trail<'_>,
) -> Result<(), EncodeError> {
    match (ty, value) {
        (Type::String, Value::String(s)) => jsontext::write_string(out, s),
        (Type::Number, Value::Number(n)) => {
            if n.is_infinite() {
                return Err(enc_err(trail, "an infinite number cannot be written as JSON"));
            }
            out.push_str(&n.to_string());
        }
        (Type::Bool, Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
        (_, other) => return Err(enc_mismatch(trail, ty, other)),
    }
    Ok(())
}

fn enc_err(trail: &Trail<'_>, message: impl Into<String>) -> EncodeError {
    EncodeError {
        path: trail.to_path(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::tfvalue::{AttributePath, Refinements};

    fn num(s: &str) -> Value {
        Value::Number(Number::parse(s).unwrap())
    }

    fn obj(entries: &[(&str, Value)]) -> Value {
        Value::Object(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    /// Fuzz crash (tfvalue_json, fuzz/corpus/tfvalue_json/crash-c79e5578…): the JSON string
    /// `"inf"` for a number decoded to +Inf, which JSON cannot encode back.
    #[test]
    fn infinities_in_strings_are_not_numbers() {
        for text in [&b"\"inf\""[..], b"\"-Infinity\""] {
            let e = decode(text, &Type::Number).unwrap_err();
            assert!(e.message.contains("finite"), "{e}");
            assert!(decode_lenient(text, &Type::Number).is_err());
        }
        assert_eq!(
            decode(b"\"1e400\"", &Type::Number).unwrap(),
            Value::Number(Number::parse("1e400").unwrap())
        );
    }

    #[test]
    fn encodes_compact_json() {
        let ty = Type::object([
            ("name", Type::String),
            ("n", Type::Number),
            ("tags", Type::map(Type::String)),
            ("on", Type::Bool),
            ("none", Type::list(Type::String)),
            ("any", Type::Dynamic),
        ]);
        let v = obj(&[
            ("name", Value::string("a\"b")),
            ("n", num("123456789012345678901234567890.5")),
            (
                "tags",
                Value::Map(BTreeMap::from([("k".to_string(), Value::string("v"))])),
            ),
            ("on", Value::Bool(true)),
            ("none", Value::Null),
            (
                "any",
                Value::Dynamic(
                    Box::new(Type::list(Type::Number)),
                    Box::new(Value::List(vec![num("1"), num("0.5")])),
                ),
            ),
        ]);
        let text = String::from_utf8(encode(&v, &ty).unwrap()).unwrap();
        assert_eq!(
            text,
            r#"{"any":{"value":[1,0.5],"type":["list","number"]},"n":123456789012345678901234567890.5,"name":"a\"b","none":null,"on":true,"tags":{"k":"v"}}"#
        );
        assert_eq!(decode(text.as_bytes(), &ty).unwrap(), v);
        assert_eq!(decode_lenient(text.as_bytes(), &ty).unwrap(), v);
    }

    #[test]
    fn big_numbers_keep_full_precision() {
        for s in ["1e400", "123456789012345678901234567890", "0.1", "-1e-400"] {
            let text = encode(&num(s), &Type::Number).unwrap();
            assert_eq!(decode(&text, &Type::Number).unwrap(), num(s));
        }
        assert_eq!(decode(b"1e400", &Type::Number).unwrap(), num("1e400"));
        assert_eq!(
            decode(b"3.14159265358979323846264338327950288", &Type::Number).unwrap(),
            num("3.14159265358979323846264338327950288")
        );
        assert!(encode(&Value::Number(Number::positive_infinity()), &Type::Number).is_err());
    }

    #[test]
    fn unknowns_cannot_be_json() {
        let e = encode(
            &obj(&[("a", Value::unknown())]),
            &Type::object([("a", Type::String)]),
        )
        .unwrap_err();
        assert_eq!(e.path, AttributePath::root().attr("a"));
        assert_eq!(e.to_string(), "a: an unknown value cannot be written as JSON");
        let refined = Value::Unknown(Box::new(Refinements {
            nullable: Some(false),
            ..Default::default()
        }));
        assert!(encode(&refined, &Type::Bool).is_err());
    }

    #[test]
    fn strict_and_lenient_objects() {
        let ty = Type::object([("a", Type::String), ("b", Type::Number)]);
        let e = decode(br#"{"a":"x"}"#, &ty).unwrap_err();
        assert!(e.message.starts_with("object is missing attribute \"b\""), "{e}");
        let e = decode(br#"{"a":"x","b":1,"old":true}"#, &ty).unwrap_err();
        assert_eq!(e.message, "unsupported attribute \"old\"");
        assert!(decode(br#"{"a":"x","b":1,"a":"y"}"#, &ty).is_err());

        let v = decode_lenient(br#"{"a":"x","old":{"deep":[1]},"a":"y"}"#, &ty).unwrap();
        assert_eq!(v, obj(&[("a", Value::string("y")), ("b", Value::Null)]));
        let nested = Type::object([("spec", ty.clone())]);
        assert_eq!(
            decode_lenient(br#"{"spec":{}}"#, &nested).unwrap(),
            obj(&[("spec", obj(&[("a", Value::Null), ("b", Value::Null)]))])
        );
        // Lenient is still typed.
        let e = decode_lenient(br#"{"spec":{"a":[1]}}"#, &nested).unwrap_err();
        assert_eq!(e.to_string(), "spec.a: string is required, found a JSON array");
    }

    #[test]
    fn primitives_convert_like_cty() {
        assert_eq!(decode(b"12.50", &Type::String).unwrap(), Value::string("12.50"));
        assert_eq!(decode(b"true", &Type::String).unwrap(), Value::string("true"));
        assert_eq!(decode(br#""12""#, &Type::Number).unwrap(), num("12"));
        assert_eq!(decode(br#""false""#, &Type::Bool).unwrap(), Value::Bool(false));
        assert!(decode(br#""yes""#, &Type::Bool).is_err());
        assert!(decode(br#""x""#, &Type::Number).is_err());
        assert!(decode(b"1", &Type::Bool).is_err());
    }

    #[test]
    fn dynamic_json() {
        let v = decode(br#"{"type":"string","value":"hi"}"#, &Type::Dynamic).unwrap();
        assert_eq!(
            v,
            Value::Dynamic(Box::new(Type::String), Box::new(Value::string("hi")))
        );
        assert_eq!(decode(b"null", &Type::Dynamic).unwrap(), Value::Null);
        assert_eq!(
            decode(br#"{"value":null,"type":["list","bool"]}"#, &Type::Dynamic).unwrap(),
            Value::Dynamic(Box::new(Type::list(Type::Bool)), Box::new(Value::Null))
        );
        assert!(decode(br#"{"value":1}"#, &Type::Dynamic).is_err());
        assert!(decode(br#"{"type":"number"}"#, &Type::Dynamic).is_err());
        assert!(decode(br#"{"type":"number","value":1,"x":2}"#, &Type::Dynamic).is_err());
        assert!(decode_lenient(br#"{"type":"number","value":1,"x":2}"#, &Type::Dynamic).is_ok());
        assert!(decode(br#""hi""#, &Type::Dynamic).is_err());
        assert!(encode(&Value::string("x"), &Type::Dynamic).is_err());
    }

    #[test]
    fn tuples_and_collections() {
        let ty = Type::Tuple(vec![Type::String, Type::set(Type::Number)]);
        let v = decode(br#"["a",[1,2]]"#, &ty).unwrap();
        assert_eq!(
            v,
            Value::Tuple(vec![Value::string("a"), Value::Set(vec![num("1"), num("2")])])
        );
        assert_eq!(encode(&v, &ty).unwrap(), br#"["a",[1,2]]"#);
        assert!(decode(br#"["a"]"#, &ty).is_err());
        assert!(decode(br#"{"a":1}"#, &Type::list(Type::Number)).is_err());
        assert!(decode(br#"{"a":1,"a":2}"#, &Type::map(Type::Number)).is_err());
    }

    #[test]
    fn hostile_json_is_refused() {
        let deep = vec![b'['; 100_000];
        assert!(decode(&deep, &Type::Dynamic).is_err());
        let mut deep_ty = Type::String;
        for _ in 0..600 {
            deep_ty = Type::list(deep_ty);
        }
        let mut nested = vec![b'['; 400];
        nested.extend(vec![b']'; 400]);
        let e = decode(&nested, &deep_ty).unwrap_err();
        assert!(e.message.contains("deeper"), "{e}");
        assert!(decode(b"", &Type::String).is_err());
        assert!(decode(b"\"a\" \"b\"", &Type::String).is_err());
    }
}
