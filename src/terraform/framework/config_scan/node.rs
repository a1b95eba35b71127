//! What the scan evaluates expressions to: [`Node`], an object or tuple whose keys carry the
//! place they are written at, down to scalars; alternatives; or "unknown", with the reason
//! when the keys of a value the user wrote elsewhere cannot be read. Shared by the evaluator
//! ([`eval`](super::eval)) and the YAML/JSON reader ([`yaml`](super::yaml)).

use std::rc::Rc;

use super::finding::Place;
use super::index::Expr;

/// A scalar value.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Scalar {
    Str(String),
    /// As written (`1.50`); compared by value.
    Num(String),
    Bool(bool),
    Null,
}

/// An object entry: its key, where the key is written, its value.
#[derive(Clone)]
pub(super) struct Entry<'a> {
    pub key: String,
    pub at: Option<Place>,
    pub value: Node<'a>,
}

/// A value as far as the scan can follow it.
#[derive(Clone)]
pub(super) enum Node<'a> {
    Object(Vec<Entry<'a>>),
    Tuple(Vec<Node<'a>>),
    Scalar(Scalar),
    /// Any one of these.
    OneOf(Vec<Node<'a>>),
    /// A collection whose keys or length are unknown and each of whose elements is this (a
    /// `for` expression's result).
    Elements(Box<Node<'a>>),
    /// Not followed; with a reason when the value is one the user wrote somewhere the scan
    /// cannot read (worth a warning where an object is expected).
    Unknown(Option<Rc<str>>),
    /// Not evaluated yet.
    Lazy(Expr<'a>, Rc<Scope<'a>>),
}

impl Node<'_> {
    pub fn unknown() -> Self {
        Node::Unknown(None)
    }
}

/// What names mean where an expression is evaluated.
pub(super) struct Scope<'a> {
    /// Index into [`Config::modules`].
    pub module: usize,
    /// `each.value`, when the block or module call has a `for_each`.
    pub each: Option<Rc<Node<'a>>>,
    /// `for` expression variables.
    pub bindings: Vec<(&'a str, Rc<Node<'a>>)>,
}

impl<'a> Scope<'a> {
    pub fn module(module: usize) -> Rc<Self> {
        Rc::new(Scope {
            module,
            each: None,
            bindings: Vec::new(),
        })
    }
}
