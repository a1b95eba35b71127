//! Terraform's value model as the wire protocol carries it: types, values (with null and
//! unknown), and attribute paths. Nothing here knows gRPC or Karpenter; the codecs for
//! `DynamicValue` live in [`msgpack`] and [`json`].

pub mod json;
pub mod msgpack;
mod number;
mod path;

use std::collections::BTreeMap;

pub use number::Number;
pub use path::{AttributePath, PathStep};

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

/// A Terraform value. Values are untyped here; the codecs pair them with a [`Type`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Unknown(Refinements),
    Bool(bool),
    Number(Number),
    String(String),
    List(Vec<Value>),
    Set(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Object(BTreeMap<String, Value>),
    Tuple(Vec<Value>),
    /// A known, non-null value that sat in a `dynamic` slot, with the concrete type it had.
    Dynamic(Box<Type>, Box<Value>),
}

impl Value {
    /// A plain unknown with no refinements.
    pub fn unknown() -> Value {
        Value::Unknown(Refinements::default())
    }

    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// True for an unknown at this level (not looking inside collections).
    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown(_))
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
