//! The value model itself: a Terraform (cty) [`Type`], a [`Value`] of one (with null, unknown
//! and unknown's [`Refinements`]), and [`MAX_DEPTH`], how deep values may nest. The parent
//! module re-exports it all; the codecs beside this file read and write it.

use std::collections::BTreeMap;
use std::fmt;

use super::number::Number;

/// How deep values may nest (each list, set, map, object, tuple or dynamic wrapper is one
/// level) before the decoders refuse them, so hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 256;

/// A Terraform (cty) type, as named by the schema's "type JSON".
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    String,
    Number,
    Bool,
    /// Any type, decided per value; carried on the wire with its type.
    Dynamic,
    List(Box<Type>),
    Set(Box<Type>),
    Map(Box<Type>),
    Object(BTreeMap<String, Type>),
    Tuple(Vec<Type>),
}

impl Type {
    pub fn list(element: Type) -> Type {
        Type::List(Box::new(element))
    }

    pub fn set(element: Type) -> Type {
        Type::Set(Box::new(element))
    }

    pub fn map(element: Type) -> Type {
        Type::Map(Box::new(element))
    }

    /// An object type from `(name, type)` pairs.
    pub fn object<S: Into<String>>(attributes: impl IntoIterator<Item = (S, Type)>) -> Type {
        Type::Object(
            attributes
                .into_iter()
                .map(|(name, ty)| (name.into(), ty))
                .collect(),
        )
    }

    /// True for list, set and map (the types cty calls collections).
    pub fn is_collection(&self) -> bool {
        matches!(self, Type::List(_) | Type::Set(_) | Type::Map(_))
    }
}

/// The type as HCL writes a type constraint: `string`, `list(number)`,
/// `object({a=string, b=bool})`, `tuple([string, number])`, `any` for dynamic.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::String => f.write_str("string"),
            Type::Number => f.write_str("number"),
            Type::Bool => f.write_str("bool"),
            Type::Dynamic => f.write_str("any"),
            Type::List(e) => write!(f, "list({e})"),
            Type::Set(e) => write!(f, "set({e})"),
            Type::Map(e) => write!(f, "map({e})"),
            Type::Object(attrs) => {
                f.write_str("object({")?;
                for (i, (name, ty)) in attrs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name}={ty}")?;
                }
                f.write_str("})")
            }
            Type::Tuple(elements) => {
                f.write_str("tuple([")?;
                for (i, ty) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{ty}")?;
                }
                f.write_str("])")
            }
        }
    }
}

/// What Terraform tells us about a value it does not know yet (msgpack extension 12).
/// All fields are optional; an unknown with no refinement is plain "unknown".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Refinements {
    /// `Some(false)` means "definitely not null".
    pub nullable: Option<bool>,
    pub string_prefix: Option<String>,
    /// (bound, inclusive)
    pub number_lower: Option<(Number, bool)>,
    pub number_upper: Option<(Number, bool)>,
    pub length_lower: Option<u64>,
    pub length_upper: Option<u64>,
}

impl Refinements {
    pub fn is_empty(&self) -> bool {
        *self == Refinements::default()
    }
}

/// Human-readable, e.g. `not null, prefix "ab"`; empty when there are no refinements.
impl fmt::Display for Refinements {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(nullable) = self.nullable {
            parts.push(if nullable {
                "null".to_string()
            } else {
                "not null".to_string()
            });
        }
        if let Some(prefix) = &self.string_prefix {
            parts.push(format!("prefix {prefix:?}"));
        }
        if let Some((n, inclusive)) = &self.number_lower {
            parts.push(format!("{} {n}", if *inclusive { ">=" } else { ">" }));
        }
        if let Some((n, inclusive)) = &self.number_upper {
            parts.push(format!("{} {n}", if *inclusive { "<=" } else { "<" }));
        }
        if let Some(n) = self.length_lower {
            parts.push(format!("length >= {n}"));
        }
        if let Some(n) = self.length_upper {
            parts.push(format!("length <= {n}"));
        }
        f.write_str(&parts.join(", "))
    }
}

/// A Terraform value. Values are untyped here; the codecs pair them with a [`Type`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    /// Boxed: refinements are rare and large (about 140 bytes), and every value of a state
    /// would otherwise be that large too.
    Unknown(Box<Refinements>),
    Bool(bool),
    Number(Number),
    String(String),
    List(Vec<Value>),
    Set(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Object(BTreeMap<String, Value>),
    Tuple(Vec<Value>),
    /// A value that sat in a `dynamic` slot, with the concrete type it had (never
    /// [`Type::Dynamic`] itself). The inner value is usually known and non-null, but Terraform
    /// also sends typed nulls and typed unknowns there (`[type, nil]`, `[type, unknown]`),
    /// which decode to `Dynamic(ty, Null)` / `Dynamic(ty, Unknown(..))` so they round-trip;
    /// [`Value::is_null`] and [`Value::is_unknown`] look through the wrapper. An untyped null
    /// or unknown in a dynamic slot is plain [`Value::Null`] / [`Value::Unknown`].
    Dynamic(Box<Type>, Box<Value>),
}

impl Value {
    /// A plain unknown with no refinements.
    pub fn unknown() -> Value {
        Value::Unknown(Box::default())
    }

    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    pub fn number(n: impl Into<Number>) -> Value {
        Value::Number(n.into())
    }

    /// An object value from `(name, value)` pairs.
    pub fn object<S: Into<String>>(attributes: impl IntoIterator<Item = (S, Value)>) -> Value {
        Value::Object(attributes.into_iter().map(|(name, v)| (name.into(), v)).collect())
    }

    /// A known value for a `dynamic` slot, tagged with its concrete type.
    pub fn dynamic(ty: Type, value: Value) -> Value {
        Value::Dynamic(Box::new(ty), Box::new(value))
    }

    /// True for a null, also a typed null in a dynamic slot.
    pub fn is_null(&self) -> bool {
        match self {
            Value::Null => true,
            Value::Dynamic(_, v) => v.is_null(),
            _ => false,
        }
    }

    /// True for an unknown at this level (not looking inside collections; looking through a
    /// dynamic wrapper).
    pub fn is_unknown(&self) -> bool {
        match self {
            Value::Unknown(_) => true,
            Value::Dynamic(_, v) => v.is_unknown(),
            _ => false,
        }
    }

    /// The value without its dynamic wrappers (itself when it has none).
    pub fn strip_dynamic(&self) -> &Value {
        match self {
            Value::Dynamic(_, v) => v.strip_dynamic(),
            other => other,
        }
    }

    /// A short description of what kind of value this is, for messages ("a string", …).
    pub fn kind(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Unknown(_) => "an unknown value".into(),
            Value::Bool(_) => "a bool".into(),
            Value::Number(_) => "a number".into(),
            Value::String(_) => "a string".into(),
            Value::List(_) => "a list".into(),
            Value::Set(_) => "a set".into(),
            Value::Map(_) => "a map".into(),
            Value::Object(_) => "an object".into(),
            Value::Tuple(_) => "a tuple".into(),
            Value::Dynamic(ty, _) => format!("a dynamic value of type {ty}"),
        }
    }

    /// True when neither this value nor anything inside it is unknown.
    pub fn is_wholly_known(&self) -> bool {
        match self {
            Value::Unknown(_) => false,
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v.iter().all(Value::is_wholly_known),
            Value::Map(m) | Value::Object(m) => m.values().all(Value::is_wholly_known),
            Value::Dynamic(_, v) => v.is_wholly_known(),
            _ => true,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            Value::Dynamic(_, v) => v.as_str(),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            Value::Dynamic(_, v) => v.as_bool(),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            Value::Dynamic(_, v) => v.as_number(),
            _ => None,
        }
    }

    /// Elements of a list, set or tuple.
    pub fn as_elements(&self) -> Option<&[Value]> {
        match self {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => Some(v),
            Value::Dynamic(_, v) => v.as_elements(),
            _ => None,
        }
    }

    /// Entries of a map or the attributes of an object.
    pub fn as_entries(&self) -> Option<&BTreeMap<String, Value>> {
        match self {
            Value::Map(m) | Value::Object(m) => Some(m),
            Value::Dynamic(_, v) => v.as_entries(),
            _ => None,
        }
    }

    /// An object attribute (or map entry); `None` when absent or when this is not an object.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.as_entries().and_then(|m| m.get(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::tfvalue::{AttributePath, decode_dynamic_value, msgpack};

    /// A state holds tens of thousands of values (every instance type's answer of
    /// `karpenter_instance_types` about 80,000): each is as large as the largest variant, so
    /// the rare, large ones (refinements, dynamic) are boxed.
    #[test]
    fn a_value_stays_small() {
        assert!(
            std::mem::size_of::<Value>() <= 40,
            "Value is {} bytes",
            std::mem::size_of::<Value>()
        );
    }

    #[test]
    fn type_display_uses_hcl_syntax() {
        let ty = Type::object([
            ("a", Type::list(Type::String)),
            ("b", Type::Tuple(vec![Type::Number, Type::Dynamic])),
            ("c", Type::map(Type::set(Type::Bool))),
        ]);
        assert_eq!(
            ty.to_string(),
            "object({a=list(string), b=tuple([number, any]), c=map(set(bool))})"
        );
    }

    #[test]
    fn dynamic_wrapper_is_seen_through() {
        let typed_null = Value::dynamic(Type::String, Value::Null);
        assert!(typed_null.is_null());
        assert!(!typed_null.is_unknown());
        let typed_unknown = Value::dynamic(Type::String, Value::unknown());
        assert!(typed_unknown.is_unknown());
        assert!(!typed_unknown.is_wholly_known());
        let known = Value::dynamic(Type::Number, Value::number(3));
        assert_eq!(known.as_number().and_then(Number::as_i64), Some(3));
        assert_eq!(known.strip_dynamic(), &Value::number(3));
    }

    #[test]
    fn conforms_to_reports_path_and_reason() {
        let ty = Type::object([("spec", Type::object([("replicas", Type::Number)]))]);
        let good = Value::object([("spec", Value::object([("replicas", Value::number(2))]))]);
        assert_eq!(good.conforms_to(&ty), Ok(()));
        let bad = Value::object([("spec", Value::object([("replicas", Value::string("2"))]))]);
        let (path, reason) = bad.conforms_to(&ty).unwrap_err();
        assert_eq!(path, AttributePath::root().attr("spec").attr("replicas"));
        assert_eq!(reason, "number is required, found a string");
        let extra = Value::object([(
            "spec",
            Value::object([("replicas", Value::Null), ("x", Value::Null)]),
        )]);
        let (_, reason) = extra.conforms_to(&ty).unwrap_err();
        assert!(reason.starts_with("unsupported attribute \"x\""), "{reason}");
        // Unknowns and nulls fit anywhere.
        assert_eq!(Value::unknown().conforms_to(&ty), Ok(()));
        assert_eq!(Value::Null.conforms_to(&Type::Dynamic), Ok(()));
    }

    #[test]
    fn refinements_display() {
        let r = Refinements {
            nullable: Some(false),
            string_prefix: Some("ab".into()),
            number_lower: Some((Number::from_i64(1), true)),
            length_upper: Some(3),
            ..Default::default()
        };
        assert_eq!(r.to_string(), "not null, prefix \"ab\", >= 1, length <= 3");
        assert_eq!(Refinements::default().to_string(), "");
    }

    #[test]
    fn dynamic_value_picks_its_encoding() {
        let ty = Type::object([("a", Type::String)]);
        let v = Value::object([("a", Value::string("x"))]);
        let packed = msgpack::encode(&v, &ty).unwrap();
        assert_eq!(decode_dynamic_value(&packed, b"{}", &ty).unwrap(), v);
        assert_eq!(decode_dynamic_value(&[], br#"{"a":"x"}"#, &ty).unwrap(), v);
        assert_eq!(decode_dynamic_value(&[], &[], &ty).unwrap(), Value::Null);
        assert!(decode_dynamic_value(&[0xc1], &[], &ty).is_err());
    }
}
