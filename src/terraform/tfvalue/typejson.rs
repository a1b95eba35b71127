//! cty's type JSON: how schemas (`Attribute.type`) and dynamic values name a type.
//! `"string"`, `"number"`, `"bool"`, `"dynamic"`, `["list",T]`, `["set",T]`, `["map",T]`,
//! `["object",{"name":T,…}]` and `["tuple",[T,…]]`, written compactly with sorted keys.

use super::error::TypeJsonError;
use super::jsontext::{self, Json};
use super::value::Type;

impl Type {
    /// The compact type JSON, e.g. `["object",{"a":"number","b":["list","string"]}]`.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = String::new();
        write_type(&mut out, self);
        out.into_bytes()
    }

    /// Parses a type JSON. Also accepts the object form with a third element listing
    /// optional attributes (`["object",{…},["a"]]`, used in type constraints); that list is
    /// checked for shape and otherwise ignored, since values carry no optional markers.
    pub fn from_json(bytes: &[u8]) -> Result<Type, TypeJsonError> {
        let doc = jsontext::parse(bytes).map_err(|message| TypeJsonError { message })?;
        from_tree(&doc)
    }
}

pub(crate) fn write_type(out: &mut String, ty: &Type) {
    match ty {
        Type::String => out.push_str("\"string\""),
        Type::Number => out.push_str("\"number\""),
        Type::Bool => out.push_str("\"bool\""),
        Type::Dynamic => out.push_str("\"dynamic\""),
        Type::List(e) => {
            out.push_str("[\"list\",");
            write_type(out, e);
            out.push(']');
        }
        Type::Set(e) => {
            out.push_str("[\"set\",");
            write_type(out, e);
            out.push(']');
        }
        Type::Map(e) => {
            out.push_str("[\"map\",");
            write_type(out, e);
            out.push(']');
        }
        Type::Object(attrs) => {
            out.push_str("[\"object\",{");
            for (i, (name, aty)) in attrs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                jsontext::write_string(out, name);
                out.push(':');
                write_type(out, aty);
            }
            out.push_str("}]");
        }
        Type::Tuple(elements) => {
            out.push_str("[\"tuple\",[");
            for (i, ety) in elements.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_type(out, ety);
            }
            out.push_str("]]");
        }
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, TypeJsonError> {
    Err(TypeJsonError {
        message: message.into(),
    })
}

/// Converts a parsed type JSON (depth already bounded by the parser).
pub(crate) fn from_tree(doc: &Json) -> Result<Type, TypeJsonError> {
    match doc {
        Json::String(name) => match name.as_str() {
            "string" => Ok(Type::String),
            "number" => Ok(Type::Number),
            "bool" => Ok(Type::Bool),
            "dynamic" => Ok(Type::Dynamic),
            other => fail(format!("unknown primitive type {other:?}")),
        },
        Json::Array(parts) => {
            let Some(Json::String(kind)) = parts.first() else {
                return fail("a complex type must start with its kind as a string");
            };
            let arity_ok = match kind.as_str() {
                "object" => parts.len() == 2 || parts.len() == 3,
                _ => parts.len() == 2,
            };
            if !arity_ok {
                return fail(format!("wrong number of elements for a {kind:?} type"));
            }
            let arg = &parts[1];
            match kind.as_str() {
                "list" => Ok(Type::List(Box::new(from_tree(arg)?))),
                "set" => Ok(Type::Set(Box::new(from_tree(arg)?))),
                "map" => Ok(Type::Map(Box::new(from_tree(arg)?))),
                "object" => {
                    let Json::Object(members) = arg else {
                        return fail("an object type needs a JSON object of attribute types");
                    };
                    let mut attrs = std::collections::BTreeMap::new();
                    for (name, aty) in members {
                        if attrs.insert(name.clone(), from_tree(aty)?).is_some() {
                            return fail(format!("duplicate attribute {name:?} in object type"));
                        }
                    }
                    if let Some(optional) = parts.get(2) {
                        let Json::Array(names) = optional else {
                            return fail("optional attributes must be a JSON array of names");
                        };
                        for name in names {
                            match name {
                                Json::String(n) if attrs.contains_key(n) => {}
                                _ => {
                                    return fail("optional attributes must name attributes of the object");
                                }
                            }
                        }
                    }
                    Ok(Type::Object(attrs))
                }
                "tuple" => {
                    let Json::Array(elements) = arg else {
                        return fail("a tuple type needs a JSON array of element types");
                    };
                    Ok(Type::Tuple(
                        elements.iter().map(from_tree).collect::<Result<_, _>>()?,
                    ))
                }
                other => fail(format!("unknown type kind {other:?}")),
            }
        }
        other => fail(format!(
            "a type must be a string or an array, found {}",
            other.kind()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_compact_sorted_json() {
        let ty = Type::object([
            ("zeta", Type::list(Type::String)),
            ("alpha", Type::Number),
            (
                "mid",
                Type::Tuple(vec![
                    Type::Bool,
                    Type::map(Type::Dynamic),
                    Type::set(Type::Number),
                ]),
            ),
        ]);
        let text = String::from_utf8(ty.to_json()).unwrap();
        assert_eq!(
            text,
            r#"["object",{"alpha":"number","mid":["tuple",["bool",["map","dynamic"],["set","number"]]],"zeta":["list","string"]}]"#
        );
        assert_eq!(Type::from_json(text.as_bytes()).unwrap(), ty);
        assert_eq!(Type::String.to_json(), b"\"string\"");
        assert_eq!(Type::object::<&str>([]).to_json(), br#"["object",{}]"#);
        assert_eq!(Type::Tuple(vec![]).to_json(), br#"["tuple",[]]"#);
    }

    #[test]
    fn reads_whitespace_and_optional_attributes() {
        let ty = Type::from_json(br#" [ "object" , { "a" : "string", "b": "bool" }, ["b"] ] "#).unwrap();
        assert_eq!(ty, Type::object([("a", Type::String), ("b", Type::Bool)]));
    }

    #[test]
    fn rejects_bad_types() {
        for bad in [
            &br#""str""#[..],
            br#"["list"]"#,
            br#"["list","string","x"]"#,
            br#"["map",{}]"#,
            br#"["object",["a"]]"#,
            br#"["object",{"a":"string","a":"bool"}]"#,
            br#"["object",{"a":"string"},["b"]]"#,
            br#"["tuple","string"]"#,
            br#"["frob","string"]"#,
            br#"[1,"string"]"#,
            br#"42"#,
            br#"null"#,
            b"",
        ] {
            let err = Type::from_json(bad).unwrap_err();
            assert!(err.to_string().starts_with("invalid type JSON: "), "{err}");
        }
    }

    #[test]
    fn deep_type_json_is_refused() {
        let mut text = String::new();
        for _ in 0..100_000 {
            text.push_str("[\"list\",");
        }
        text.push_str("\"string\"");
        for _ in 0..100_000 {
            text.push(']');
        }
        assert!(Type::from_json(text.as_bytes()).is_err());
    }
}
