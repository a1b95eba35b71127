//! Walking a block's attributes against its schema: every key of an object the scan can
//! follow that the schema does not have at that path is an error [`Finding`] naming the key,
//! its full path, where it is written and the nearest valid name; an object whose keys come
//! from somewhere the scan cannot read (a root variable given with `-var-file`, a decoded
//! text it cannot read) is a warning, once per top-level attribute and reason.

use std::collections::HashSet;
use std::rc::Rc;

use hcl_edit::expr::Expression;

use super::eval::Evaluator;
use super::finding::{Finding, Place};
use super::index::{BodyView, Expr, TargetBlock};
use super::node::{Node, Scope};
use super::suggest::{Candidate, nearest};
use crate::terraform::framework::diagnostics::Severity;
use crate::terraform::framework::schema::{AttrType, Attribute, Block, Nesting, Schema};
use crate::terraform::tfvalue::{AttributePath, PathStep, Type};

/// One step of a path as the user reads it.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Attr(String),
    Index(usize),
    Key(String),
    /// An element whose index or key the scan cannot know (`[*]`).
    Any,
}

/// A path into a block's value, for messages and for the diagnostic's subject.
#[derive(Debug, Clone, Default, PartialEq)]
struct Path(Vec<Step>);

impl Path {
    fn with(&self, step: Step) -> Path {
        let mut steps = self.0.clone();
        steps.push(step);
        Path(steps)
    }

    fn attr(&self, name: &str) -> Path {
        self.with(Step::Attr(name.to_string()))
    }

    fn shown(&self) -> String {
        let mut out = String::new();
        for step in &self.0 {
            match step {
                Step::Attr(name) if out.is_empty() => out.push_str(name),
                Step::Attr(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
                Step::Key(k) => out.push_str(&format!("[{k:?}]")),
                Step::Any => out.push_str("[*]"),
            }
        }
        out
    }

    /// What Terraform can show the line of: through blocks, then the first attribute and the
    /// step after it as an element key.
    fn subject(&self, schema: &Schema) -> AttributePath {
        let mut out = AttributePath::root();
        let mut blocks: &[Block] = &schema.blocks;
        let mut steps = self.0.iter().peekable();
        while let Some(Step::Attr(name)) = steps.next() {
            out.steps.push(PathStep::Attribute(name.clone()));
            if let Some(block) = blocks.iter().find(|b| b.name == name.as_str()) {
                if let Some(Step::Index(i)) = steps.peek() {
                    out.steps
                        .push(PathStep::ElementKeyInt(i64::try_from(*i).unwrap_or(0)));
                    steps.next();
                }
                blocks = &block.blocks;
                continue;
            }
            match steps.next() {
                Some(Step::Attr(n) | Step::Key(n)) => out.steps.push(PathStep::ElementKeyString(n.clone())),
                Some(Step::Index(i)) => out
                    .steps
                    .push(PathStep::ElementKeyInt(i64::try_from(*i).unwrap_or(0))),
                Some(Step::Any) | None => {}
            }
            break;
        }
        out
    }
}

/// Whether Terraform's conversion of this attribute's value could drop keys: it is, or
/// holds, an object.
pub(super) fn holds_objects(attribute: &Attribute) -> bool {
    match &attribute.ty {
        AttrType::Nested { .. } => true,
        AttrType::Plain(t) => type_holds_objects(t),
    }
}

fn type_holds_objects(t: &Type) -> bool {
    match t {
        Type::Object(_) => true,
        Type::List(e) | Type::Set(e) | Type::Map(e) => type_holds_objects(e),
        Type::Tuple(items) => items.iter().any(type_holds_objects),
        Type::String | Type::Number | Type::Bool | Type::Dynamic => false,
    }
}

/// The shape expected at a place in the value.
#[derive(Clone, Copy)]
enum Shape<'s> {
    Attributes(&'s [Attribute]),
    Fields(&'s std::collections::BTreeMap<String, Type>),
}

/// Checks blocks, collecting findings.
pub(super) struct Checker<'e, 'c, 'a> {
    eval: &'e Evaluator<'c, 'a>,
    schema: &'e Schema,
    out: Vec<Finding>,
    seen: HashSet<(Option<Place>, String, String)>,
    warned: HashSet<(String, Rc<str>)>,
}

impl<'e, 'c, 'a> Checker<'e, 'c, 'a> {
    /// The findings of one block of module `module`.
    pub fn block(
        eval: &'e Evaluator<'c, 'a>,
        module: usize,
        block: &TargetBlock<'a>,
        schema: &'e Schema,
    ) -> Vec<Finding> {
        eval.reset_budget();
        let mut checker = Checker {
            eval,
            schema,
            out: Vec::new(),
            seen: HashSet::new(),
            warned: HashSet::new(),
        };
        let each = block
            .for_each
            .map(|fe| Rc::new(eval.elements(Node::Lazy(fe, Scope::module(module)))));
        let scope = Rc::new(Scope {
            module,
            each,
            bindings: Vec::new(),
        });
        let path = block
            .prefix
            .map_or_else(Path::default, |p| Path::default().attr(p));
        checker.body(&block.body, &schema.attributes, &schema.blocks, &path, &scope);
        checker.out
    }

    fn body(
        &mut self,
        body: &BodyView<'a>,
        attributes: &[Attribute],
        blocks: &[Block],
        path: &Path,
        scope: &Rc<Scope<'a>>,
    ) {
        for (name, expr) in &body.attributes {
            if let Some(a) = attributes.iter().find(|a| a.name == *name)
                && holds_objects(a)
            {
                self.attribute(a, Node::Lazy(*expr, scope.clone()), &path.attr(name));
            }
            // In JSON syntax a nested block is a property: an object, or an array of them.
            if expr.file.is_json()
                && let Some(schema_block) = blocks.iter().find(|b| b.name == *name)
            {
                self.json_block(schema_block, *expr, &path.attr(name), scope);
            }
        }
        let mut occurrences: Vec<(&str, usize)> = Vec::new();
        for (block, file) in &body.blocks {
            let ident = block.ident.value().as_str();
            let (type_name, inner) = if ident == "dynamic" {
                let Some(label) = block.labels.first() else {
                    continue;
                };
                let content = block.body.get_blocks("content").next();
                match content {
                    Some(c) => (label.as_str(), &c.body),
                    None => continue,
                }
            } else {
                (ident, &block.body)
            };
            let Some(schema_block) = blocks.iter().find(|b| b.name == type_name) else {
                continue;
            };
            let mut block_path = path.attr(type_name);
            if schema_block.nesting != Nesting::Single {
                let n = match occurrences.iter_mut().find(|(t, _)| *t == type_name) {
                    Some((_, n)) => {
                        *n += 1;
                        *n
                    }
                    None => {
                        occurrences.push((type_name, 0));
                        0
                    }
                };
                block_path = block_path.with(if ident == "dynamic" {
                    Step::Any
                } else {
                    Step::Index(n)
                });
            }
            let view = BodyView::of(inner, file);
            self.body(
                &view,
                &schema_block.attributes,
                &schema_block.blocks,
                &block_path,
                scope,
            );
        }
    }

    /// A nested block written as a JSON property (see [`body`](Self::body)).
    fn json_block(&mut self, schema_block: &Block, at: Expr<'a>, path: &Path, scope: &Rc<Scope<'a>>) {
        let bodies: Vec<(Option<usize>, Expr<'a>)> = match at.expr {
            Expression::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, expr)| (Some(i), Expr { expr, file: at.file }))
                .collect(),
            _ => vec![(None, at)],
        };
        for (i, body) in bodies {
            let Some(view) = BodyView::of_json_block(body) else {
                continue;
            };
            let block_path = match (schema_block.nesting, i) {
                (Nesting::Single, _) => path.clone(),
                (_, i) => path.with(Step::Index(i.unwrap_or(0))),
            };
            self.body(
                &view,
                &schema_block.attributes,
                &schema_block.blocks,
                &block_path,
                scope,
            );
        }
    }

    fn attribute(&mut self, attribute: &Attribute, node: Node<'a>, path: &Path) {
        match &attribute.ty {
            AttrType::Nested { nesting, attributes } => {
                self.nested(*nesting, Shape::Attributes(attributes), node, path)
            }
            AttrType::Plain(t) => self.typed(t, node, path),
        }
    }

    fn typed(&mut self, t: &Type, node: Node<'a>, path: &Path) {
        match t {
            Type::Object(fields) => self.nested(Nesting::Single, Shape::Fields(fields), node, path),
            Type::List(e) | Type::Set(e) if type_holds_objects(e) => self.elements(e, node, path, false),
            Type::Map(e) if type_holds_objects(e) => self.elements(e, node, path, true),
            _ => {}
        }
    }

    /// A plain collection type whose elements hold objects.
    fn elements(&mut self, element: &Type, node: Node<'a>, path: &Path, map: bool) {
        match self.eval.force(node) {
            Node::Tuple(items) if !map => {
                for (i, item) in items.into_iter().enumerate() {
                    self.typed(element, item, &path.with(Step::Index(i)));
                }
            }
            Node::Object(entries) if map => {
                for e in entries {
                    self.typed(element, e.value, &path.with(Step::Key(e.key)));
                }
            }
            Node::Elements(inner) => self.typed(element, *inner, &path.with(Step::Any)),
            Node::OneOf(alternatives) => {
                for a in alternatives {
                    self.elements(element, a, path, map);
                }
            }
            Node::Unknown(Some(why)) => self.unchecked(path, why),
            _ => {}
        }
    }

    fn nested(&mut self, nesting: Nesting, shape: Shape<'_>, node: Node<'a>, path: &Path) {
        let node = self.eval.force(node);
        if let Node::OneOf(alternatives) = node {
            for a in alternatives {
                self.nested(nesting, shape, a, path);
            }
            return;
        }
        if let Node::Unknown(Some(why)) = node {
            self.unchecked(path, why);
            return;
        }
        match (nesting, node) {
            (Nesting::Single, node) => self.object(&shape, node, path),
            (Nesting::List | Nesting::Set, Node::Tuple(items)) => {
                for (i, item) in items.into_iter().enumerate() {
                    self.object(&shape, item, &path.with(Step::Index(i)));
                }
            }
            (Nesting::Map, Node::Object(entries)) => {
                for e in entries {
                    self.object(&shape, e.value, &path.with(Step::Key(e.key)));
                }
            }
            (_, Node::Elements(inner)) => self.object(&shape, *inner, &path.with(Step::Any)),
            _ => {}
        }
    }

    fn object(&mut self, shape: &Shape<'_>, node: Node<'a>, path: &Path) {
        match self.eval.force(node) {
            Node::Object(entries) => {
                for entry in entries {
                    let entry_path = path.attr(&entry.key);
                    match shape {
                        Shape::Attributes(attributes) => {
                            match attributes.iter().find(|a| a.name == entry.key) {
                                Some(a) if holds_objects(a) => self.attribute(a, entry.value, &entry_path),
                                Some(_) => {}
                                None => self.unknown_key(path, &entry.key, entry.at, shape),
                            }
                        }
                        Shape::Fields(fields) => match fields.get(&entry.key) {
                            Some(t) if type_holds_objects(t) => self.typed(t, entry.value, &entry_path),
                            Some(_) => {}
                            None => self.unknown_key(path, &entry.key, entry.at, shape),
                        },
                    }
                }
            }
            Node::OneOf(alternatives) => {
                for a in alternatives {
                    self.object(shape, a, path);
                }
            }
            Node::Unknown(Some(why)) => self.unchecked(path, why),
            _ => {}
        }
    }

    fn unknown_key(&mut self, parent: &Path, key: &str, at: Option<Place>, shape: &Shape<'_>) {
        let path = parent.attr(key);
        let shown = path.shown();
        if !self.seen.insert((
            at.clone(),
            key.to_string(),
            if at.is_some() {
                String::new()
            } else {
                shown.clone()
            },
        )) {
            return;
        }
        let candidates: Vec<Candidate<'_>> = match shape {
            Shape::Attributes(attributes) => attributes
                .iter()
                .filter(|a| a.is_settable())
                .map(|a| Candidate {
                    name: a.name,
                    wire: a.wire_field(),
                })
                .collect(),
            Shape::Fields(fields) => fields
                .keys()
                .map(|k| Candidate {
                    name: k.as_str(),
                    wire: None,
                })
                .collect(),
        };
        let hint = match nearest(key, &candidates) {
            Some(name) => format!("; did you mean \"{name}\"?"),
            None if candidates.is_empty() => ".".to_string(),
            None => format!(
                ". The attributes there are: {}.",
                candidates.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
            ),
        };
        let owner = if parent.0.is_empty() {
            "The block".to_string()
        } else {
            parent.shown()
        };
        let written = at
            .as_ref()
            .map(|p| format!(" Written at {p}."))
            .unwrap_or_default();
        self.out.push(Finding {
            severity: Severity::Error,
            summary: format!("Unsupported attribute \"{key}\""),
            detail: format!(
                "{shown}: {owner} has no attribute \"{key}\"{hint} Terraform drops a key its schema does not \
                 have without a word, so this value would be applied without it.{written}"
            ),
            subject: path.subject(self.schema),
            at,
        });
    }

    fn unchecked(&mut self, path: &Path, why: Rc<str>) {
        let top = path
            .0
            .first()
            .map(|_| Path(path.0[..1].to_vec()).shown())
            .unwrap_or_default();
        if !self.warned.insert((top, why.clone())) {
            return;
        }
        self.out.push(Finding {
            severity: Severity::Warning,
            summary: "Keys not checked".into(),
            detail: format!(
                "{}: the keys of this object come from {why}, so the provider cannot check them before the \
                 plan. Terraform drops a key its schema does not have without a word: a misspelled key in \
                 it would be ignored. Set the value in the configuration or in terraform.tfvars to have its \
                 keys checked.",
                path.shown()
            ),
            subject: path.subject(self.schema),
            at: None,
        });
    }
}
