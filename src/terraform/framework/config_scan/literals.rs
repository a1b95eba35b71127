//! Telling which block a `Validate*Config` call is about.
//!
//! The request carries only the type name and the configuration value, not the block's
//! address. A block's *literal leaves* — the scalars it writes directly as constants in its
//! own text (`name = "p"`, `weight = 10`, `{ kind = "EC2NodeClass" }` inside an object or
//! tuple constructor) — appear unchanged in that value, after Terraform's type conversion
//! (`10` written for a string attribute arrives as `"10"`). A block agrees with a
//! configuration when no leaf contradicts it; an unknown value, a set (whose elements have no
//! order) or a type the comparison does not cover never contradicts. Among the blocks that
//! agree, the one with the most leaves confirmed is the best match.

use hcl_edit::expr::{Expression, ObjectKey};

use super::index::{BodyView, TargetBlock};
use super::node::Scalar;
use crate::terraform::framework::schema::{AttrType, Attribute, Block, Nesting, Schema};
use crate::terraform::tfvalue::{Number, Type, Value};

/// One step into a configuration value.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LitStep {
    Attr(String),
    Index(usize),
}

/// A scalar a block writes literally, and where in its value it is.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Leaf {
    pub path: Vec<LitStep>,
    pub value: Scalar,
}

/// The literal leaves of a block.
pub(super) fn leaves(block: &TargetBlock<'_>, schema: &Schema) -> Vec<Leaf> {
    let mut out = Vec::new();
    body(&block.body, &schema.attributes, &schema.blocks, &[], &mut out);
    out
}

fn body(
    view: &BodyView<'_>,
    attributes: &[Attribute],
    blocks: &[Block],
    path: &[LitStep],
    out: &mut Vec<Leaf>,
) {
    for (name, expr) in &view.attributes {
        if let Some(a) = attributes.iter().find(|a| a.name == *name) {
            expression(
                Want::Attribute(a),
                expr.expr,
                &with(path, LitStep::Attr(name.to_string())),
                out,
            );
        }
    }
    for block in blocks.iter().filter(|b| b.nesting == Nesting::Single) {
        let mut found = view
            .blocks
            .iter()
            .filter(|(b, _)| b.ident.value().as_str() == block.name);
        if let (Some((only, file)), None) = (found.next(), found.next()) {
            let inner = BodyView::of(&only.body, file);
            body(
                &inner,
                &block.attributes,
                &block.blocks,
                &with(path, LitStep::Attr(block.name.to_string())),
                out,
            );
        }
    }
}

fn with(path: &[LitStep], step: LitStep) -> Vec<LitStep> {
    let mut p = path.to_vec();
    p.push(step);
    p
}

/// What is expected where an expression stands.
#[derive(Clone, Copy)]
enum Want<'s> {
    Attribute(&'s Attribute),
    Object(&'s [Attribute]),
    Type(&'s Type),
}

fn expression(want: Want<'_>, expr: &Expression, path: &[LitStep], out: &mut Vec<Leaf>) {
    let scalar = match expr {
        Expression::Null(_) => Some(Scalar::Null),
        Expression::Bool(b) => Some(Scalar::Bool(*b.value())),
        Expression::Number(n) => Some(Scalar::Num(n.value().to_string())),
        Expression::String(s) => Some(Scalar::Str(s.value().clone())),
        _ => None,
    };
    if let Some(value) = scalar {
        out.push(Leaf {
            path: path.to_vec(),
            value,
        });
        return;
    }
    match (want, expr) {
        (_, Expression::Parenthesis(p)) => expression(want, p.inner(), path, out),
        (Want::Attribute(a), _) => match &a.ty {
            AttrType::Nested { nesting, attributes } => match (nesting, expr) {
                (Nesting::Single, _) => expression(Want::Object(attributes), expr, path, out),
                (Nesting::List, Expression::Array(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        expression(
                            Want::Object(attributes),
                            item,
                            &with(path, LitStep::Index(i)),
                            out,
                        );
                    }
                }
                (Nesting::Map, Expression::Object(object)) => {
                    for (key, value) in object.iter() {
                        if let Some(k) = literal_key(key) {
                            expression(
                                Want::Object(attributes),
                                value.expr(),
                                &with(path, LitStep::Attr(k)),
                                out,
                            );
                        }
                    }
                }
                _ => {}
            },
            AttrType::Plain(t) => expression(Want::Type(t), expr, path, out),
        },
        (Want::Object(attributes), Expression::Object(object)) => {
            for (key, value) in object.iter() {
                if let Some(k) = literal_key(key)
                    && let Some(a) = attributes.iter().find(|a| a.name == k)
                {
                    expression(
                        Want::Attribute(a),
                        value.expr(),
                        &with(path, LitStep::Attr(k)),
                        out,
                    );
                }
            }
        }
        (Want::Type(Type::List(e)), Expression::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                expression(Want::Type(e), item, &with(path, LitStep::Index(i)), out);
            }
        }
        (Want::Type(Type::Map(e)), Expression::Object(object)) => {
            for (key, value) in object.iter() {
                if let Some(k) = literal_key(key) {
                    expression(Want::Type(e), value.expr(), &with(path, LitStep::Attr(k)), out);
                }
            }
        }
        (Want::Type(Type::Object(fields)), Expression::Object(object)) => {
            for (key, value) in object.iter() {
                if let Some(k) = literal_key(key)
                    && let Some(t) = fields.get(&k)
                {
                    expression(Want::Type(t), value.expr(), &with(path, LitStep::Attr(k)), out);
                }
            }
        }
        _ => {}
    }
}

fn literal_key(key: &ObjectKey) -> Option<String> {
    match key {
        ObjectKey::Ident(i) => Some(i.value().as_str().to_string()),
        ObjectKey::Expression(Expression::String(s)) => Some(s.value().clone()),
        ObjectKey::Expression(_) => None,
    }
}

/// How many leaves `config` confirms, or `None` when one contradicts it.
pub(super) fn agreement(leaves: &[Leaf], config: &Value) -> Option<usize> {
    let mut confirmed = 0;
    for leaf in leaves {
        match agrees(leaf, config) {
            Some(true) => confirmed += 1,
            Some(false) => return None,
            None => {}
        }
    }
    Some(confirmed)
}

/// Whether the configuration holds the leaf's value at its path: `None` when it cannot tell.
fn agrees(leaf: &Leaf, config: &Value) -> Option<bool> {
    let mut current = config.strip_dynamic();
    for step in &leaf.path {
        if current.is_unknown() {
            return None;
        }
        if current.is_null() {
            return Some(leaf.value == Scalar::Null);
        }
        current = match (step, current) {
            (LitStep::Attr(name), Value::Object(m) | Value::Map(m)) => m.get(name)?,
            (LitStep::Index(i), Value::List(items) | Value::Tuple(items)) => items.get(*i)?,
            _ => return None,
        }
        .strip_dynamic();
    }
    scalar_agrees(&leaf.value, current)
}

fn scalar_agrees(lit: &Scalar, value: &Value) -> Option<bool> {
    if value.is_unknown() {
        return None;
    }
    let same_number = |a: &str, b: &Number| Number::parse(a).map(|n| &n == b);
    match (lit, value) {
        (Scalar::Null, v) => Some(v.is_null()),
        (_, Value::Null) => Some(false),
        (Scalar::Str(s), Value::String(c)) => Some(s == c),
        (Scalar::Str(s), Value::Number(n)) | (Scalar::Num(s), Value::Number(n)) => same_number(s, n),
        (Scalar::Num(s), Value::String(c)) => Number::parse(c).and_then(|n| same_number(s, &n)),
        (Scalar::Str(s), Value::Bool(b)) => match s.as_str() {
            "true" | "false" => Some(s == if *b { "true" } else { "false" }),
            _ => None,
        },
        (Scalar::Bool(b), Value::Bool(c)) => Some(b == c),
        (Scalar::Bool(b), Value::String(c)) => Some(c == if *b { "true" } else { "false" }),
        _ => None,
    }
}
