//! Following an expression to the text that wrote its value, as far as that can be done
//! without Terraform: the result is a [`Node`], an object or tuple whose keys carry the place
//! they are written at, down to scalars; or a set of alternatives (a conditional's branches,
//! the elements `each.value` may be); or "unknown", with the reason when the keys of a value
//! the user wrote elsewhere cannot be read (for a warning).
//!
//! Followed: literals and string templates; `local.*`; `var.*` (the calling `module` block's
//! argument, else the default; for the root module `terraform.tfvars`/`*.auto.tfvars`, else
//! the default); `each.value` of a `for_each` it can follow; `path.module`/`path.root`/
//! `path.cwd`; attribute and index access; `merge`, `try`, `coalesce`, `lookup`, `tomap`,
//! `tolist`, `toset`; `yamldecode`/`jsondecode` of text or of `file(…)` whose path it can work
//! out; conditionals (both branches) and `for` expressions (their element). Not followed:
//! resource, data source and module output references, other functions, operators, splats.
//!
//! Evaluation is lazy (an object's entries are evaluated only when the schema wants an object
//! there), bounded in depth and in steps, so a cycle or a huge configuration ends as "unknown".

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use hcl_edit::Span;
use hcl_edit::expr::{Expression, FuncCall, ObjectKey, TraversalOperator};
use hcl_edit::template::{Element, Template};

use super::files::read_text;
use super::index::{Config, Expr};
use super::node::{Entry, Node, Scalar, Scope};
use super::yaml;

/// Deepest chain of references followed.
const MAX_DEPTH: usize = 64;
/// Most evaluation steps spent on one block.
pub(super) const MAX_STEPS: usize = 200_000;

/// A key of an attribute or index access.
#[derive(Clone)]
enum Key {
    Name(String),
    Index(usize),
    Unknown,
}

/// Evaluates expressions of one configuration.
pub(super) struct Evaluator<'c, 'a> {
    config: &'c Config<'a>,
    root: &'c Path,
    depth: Cell<usize>,
    steps: Cell<usize>,
    decoded: RefCell<HashMap<PathBuf, Node<'static>>>,
}

impl<'c, 'a> Evaluator<'c, 'a> {
    pub fn new(config: &'c Config<'a>, root: &'c Path) -> Self {
        Self {
            config,
            root,
            depth: Cell::new(0),
            steps: Cell::new(0),
            decoded: RefCell::new(HashMap::new()),
        }
    }

    /// Starts a new block's step budget.
    pub fn reset_budget(&self) {
        self.steps.set(0);
    }

    /// The node itself, evaluated until it is no longer [`Node::Lazy`].
    pub fn force(&self, mut node: Node<'a>) -> Node<'a> {
        while let Node::Lazy(expr, scope) = node {
            let steps = self.steps.get() + 1;
            self.steps.set(steps);
            if steps > MAX_STEPS || self.depth.get() >= MAX_DEPTH {
                return Node::unknown();
            }
            self.depth.set(self.depth.get() + 1);
            node = self.eval(expr, &scope);
            self.depth.set(self.depth.get() - 1);
        }
        node
    }

    /// The elements `each.value` (or a `for` variable) may be, for a collection node.
    pub fn elements(&self, collection: Node<'a>) -> Node<'a> {
        match self.force(collection) {
            Node::Tuple(items) => Node::OneOf(items),
            Node::Object(entries) => Node::OneOf(entries.into_iter().map(|e| e.value).collect()),
            Node::Elements(inner) => *inner,
            Node::OneOf(alternatives) => {
                Node::OneOf(alternatives.into_iter().map(|a| self.elements(a)).collect())
            }
            Node::Unknown(why) => Node::Unknown(why),
            Node::Scalar(_) | Node::Lazy(..) => Node::unknown(),
        }
    }

    fn lazy(&self, expr: &'a Expression, file: Expr<'a>, scope: &Rc<Scope<'a>>) -> Node<'a> {
        Node::Lazy(
            Expr {
                expr,
                file: file.file,
            },
            scope.clone(),
        )
    }

    fn eval(&self, at: Expr<'a>, scope: &Rc<Scope<'a>>) -> Node<'a> {
        match at.expr {
            Expression::Null(_) => Node::Scalar(Scalar::Null),
            Expression::Bool(b) => Node::Scalar(Scalar::Bool(*b.value())),
            Expression::Number(n) => Node::Scalar(Scalar::Num(n.value().to_string())),
            Expression::String(s) => Node::Scalar(Scalar::Str(s.value().clone())),
            Expression::Array(items) => Node::Tuple(items.iter().map(|e| self.lazy(e, at, scope)).collect()),
            Expression::Object(object) => Node::Object(
                object
                    .iter()
                    .filter_map(|(key, value)| {
                        Some(Entry {
                            key: self.object_key(key, at, scope)?,
                            at: at.file.place(key.span()),
                            value: self.lazy(value.expr(), at, scope),
                        })
                    })
                    .collect(),
            ),
            Expression::StringTemplate(t) => self.template(t, at, scope),
            Expression::HeredocTemplate(h) => self.template(&h.template, at, scope),
            Expression::Parenthesis(p) => self.eval(
                Expr {
                    expr: p.inner(),
                    ..at
                },
                scope,
            ),
            Expression::Variable(name) => self.variable(name.value().as_str(), &[], at, scope),
            Expression::Traversal(t) => match &t.expr {
                Expression::Variable(name) => {
                    let ops: Vec<&TraversalOperator> = t.operators.iter().map(|o| o.value()).collect();
                    self.variable(name.value().as_str(), &ops, at, scope)
                }
                inner => {
                    let base = self.lazy(inner, at, scope);
                    let ops: Vec<&TraversalOperator> = t.operators.iter().map(|o| o.value()).collect();
                    self.traverse(base, &ops, at, scope)
                }
            },
            Expression::Conditional(c) => Node::OneOf(vec![
                self.lazy(&c.true_expr, at, scope),
                self.lazy(&c.false_expr, at, scope),
            ]),
            Expression::FuncCall(f) => self.call(f, at, scope),
            Expression::ForExpr(f) => {
                if f.grouping {
                    return Node::unknown();
                }
                let collection = self.lazy(&f.intro.collection_expr, at, scope);
                let element = Rc::new(self.elements(collection));
                let mut bindings = scope.bindings.clone();
                bindings.push((f.intro.value_var.value().as_str(), element));
                if let Some(key_var) = &f.intro.key_var {
                    bindings.push((key_var.value().as_str(), Rc::new(Node::unknown())));
                }
                let inner = Rc::new(Scope {
                    module: scope.module,
                    each: scope.each.clone(),
                    bindings,
                });
                Node::Elements(Box::new(self.lazy(&f.value_expr, at, &inner)))
            }
            Expression::UnaryOp(_) | Expression::BinaryOp(_) => Node::unknown(),
        }
    }

    /// An object key as a string: a bare name, a string, or an expression that evaluates to
    /// one; `None` when it cannot be known (the entry is then left unchecked).
    fn object_key(&self, key: &'a ObjectKey, at: Expr<'a>, scope: &Rc<Scope<'a>>) -> Option<String> {
        match key {
            ObjectKey::Ident(name) => Some(name.value().as_str().to_string()),
            ObjectKey::Expression(e) => match self.force(self.lazy(e, at, scope)) {
                Node::Scalar(Scalar::Str(s)) => Some(s),
                _ => None,
            },
        }
    }

    fn template(&self, t: &'a Template, at: Expr<'a>, scope: &Rc<Scope<'a>>) -> Node<'a> {
        let mut text = String::new();
        for element in t.iter() {
            match element {
                Element::Literal(s) => text.push_str(s.value()),
                Element::Interpolation(i) => match self.force(self.lazy(&i.expr, at, scope)) {
                    Node::Scalar(Scalar::Str(s) | Scalar::Num(s)) => text.push_str(&s),
                    Node::Scalar(Scalar::Bool(b)) => text.push_str(if b { "true" } else { "false" }),
                    _ => return Node::unknown(),
                },
                Element::Directive(_) => return Node::unknown(),
            }
        }
        Node::Scalar(Scalar::Str(text))
    }

    /// A traversal that starts at a name: `local.x…`, `var.x…`, `each.value…`, `path.module`,
    /// a `for` variable; anything else (resources, data sources, modules) is not followed.
    fn variable(
        &self,
        name: &str,
        ops: &[&'a TraversalOperator],
        at: Expr<'a>,
        scope: &Rc<Scope<'a>>,
    ) -> Node<'a> {
        if let Some((_, bound)) = scope.bindings.iter().rev().find(|(n, _)| *n == name) {
            return self.traverse(bound.as_ref().clone(), ops, at, scope);
        }
        let (first, rest) = match ops.split_first() {
            Some((TraversalOperator::GetAttr(attr), rest)) => (attr.value().as_str(), rest),
            _ => return Node::unknown(),
        };
        let module = &self.config.modules[scope.module];
        let base = match name {
            "local" => match module.locals.get(first) {
                Some(e) => Node::Lazy(*e, Scope::module(scope.module)),
                None => Node::unknown(),
            },
            "var" => self.input_variable(scope.module, first),
            "each" if first == "value" => match &scope.each {
                Some(each) => each.as_ref().clone(),
                None => Node::unknown(),
            },
            "path" => match first {
                "module" => Node::Scalar(Scalar::Str(module.dir.to_string())),
                "root" => Node::Scalar(Scalar::Str(".".into())),
                "cwd" => Node::Scalar(Scalar::Str(self.root.display().to_string())),
                _ => Node::unknown(),
            },
            _ => Node::unknown(),
        };
        self.traverse(base, rest, at, scope)
    }

    /// The value of `var.<name>` in module `module`.
    fn input_variable(&self, module: usize, name: &str) -> Node<'a> {
        let m = &self.config.modules[module];
        if let Some((parent, call_name)) = m.parent {
            let call = self.config.modules[parent].calls.get(call_name);
            if let Some(arg) = call.and_then(|c| c.args.get(name)) {
                let each = call
                    .and_then(|c| c.for_each)
                    .map(|fe| Rc::new(self.elements(Node::Lazy(fe, Scope::module(parent)))));
                return Node::Lazy(
                    *arg,
                    Rc::new(Scope {
                        module: parent,
                        each,
                        bindings: Vec::new(),
                    }),
                );
            }
        } else if let Some(value) = self.config.root_values.get(name) {
            return Node::Lazy(*value, Scope::module(module));
        }
        match m.variables.get(name).copied().flatten() {
            // A root variable's default may still be replaced by -var or -var-file, which the
            // scan cannot see; it is what the files leave in force, so it is followed.
            Some(default) => Node::Lazy(default, Scope::module(module)),
            None if m.parent.is_none() && m.variables.contains_key(name) => Node::Unknown(Some(
                format!(
                    "var.{name}, a root module variable whose value is given outside the configuration \
                     files (-var, -var-file or TF_VAR_{name})"
                )
                .into(),
            )),
            None => Node::unknown(),
        }
    }

    fn traverse(
        &self,
        mut node: Node<'a>,
        ops: &[&'a TraversalOperator],
        at: Expr<'a>,
        scope: &Rc<Scope<'a>>,
    ) -> Node<'a> {
        for op in ops {
            let key = match op {
                TraversalOperator::GetAttr(name) => Key::Name(name.value().as_str().to_string()),
                TraversalOperator::LegacyIndex(i) => {
                    usize::try_from(*i.value()).map_or(Key::Unknown, Key::Index)
                }
                TraversalOperator::Index(e) => match self.force(self.lazy(e, at, scope)) {
                    Node::Scalar(Scalar::Str(s)) => Key::Name(s),
                    Node::Scalar(Scalar::Num(n)) => n.parse::<usize>().map_or(Key::Unknown, Key::Index),
                    _ => Key::Unknown,
                },
                TraversalOperator::AttrSplat(_) | TraversalOperator::FullSplat(_) => return Node::unknown(),
            };
            node = self.get(node, &key);
        }
        node
    }

    fn get(&self, node: Node<'a>, key: &Key) -> Node<'a> {
        match self.force(node) {
            Node::Object(entries) => match key {
                Key::Name(name) => entries
                    .into_iter()
                    .find(|e| &e.key == name)
                    .map_or_else(Node::unknown, |e| e.value),
                Key::Index(i) => {
                    let name = i.to_string();
                    entries
                        .into_iter()
                        .find(|e| e.key == name)
                        .map_or_else(Node::unknown, |e| e.value)
                }
                Key::Unknown => Node::OneOf(entries.into_iter().map(|e| e.value).collect()),
            },
            Node::Tuple(mut items) => match key {
                Key::Index(i) if *i < items.len() => items.swap_remove(*i),
                Key::Name(n) => match n.parse::<usize>() {
                    Ok(i) if i < items.len() => items.swap_remove(i),
                    _ => Node::unknown(),
                },
                Key::Unknown => Node::OneOf(items),
                Key::Index(_) => Node::unknown(),
            },
            Node::OneOf(alternatives) => {
                Node::OneOf(alternatives.into_iter().map(|a| self.get(a, key)).collect())
            }
            Node::Elements(inner) => *inner,
            Node::Unknown(why) => Node::Unknown(why),
            Node::Scalar(_) | Node::Lazy(..) => Node::unknown(),
        }
    }

    fn call(&self, f: &'a FuncCall, at: Expr<'a>, scope: &Rc<Scope<'a>>) -> Node<'a> {
        if f.name.is_namespaced() {
            return Node::unknown();
        }
        let args: Vec<Node<'a>> = f.args.iter().map(|e| self.lazy(e, at, scope)).collect();
        match f.name.name.value().as_str() {
            "merge" => self.merge(args),
            "yamldecode" => self.decode(f, at, scope, yaml::Syntax::Yaml),
            "jsondecode" => self.decode(f, at, scope, yaml::Syntax::Json),
            "tomap" | "tolist" | "toset" => args.into_iter().next().unwrap_or_else(Node::unknown),
            "try" | "coalesce" => Node::OneOf(args),
            "lookup" => {
                let mut args = args.into_iter();
                match (args.next(), args.next(), args.next()) {
                    (Some(map), Some(key), default) => {
                        let key = match self.force(key) {
                            Node::Scalar(Scalar::Str(s)) => Key::Name(s),
                            _ => Key::Unknown,
                        };
                        let found = self.get(map, &key);
                        Node::OneOf(std::iter::once(found).chain(default).collect())
                    }
                    _ => Node::unknown(),
                }
            }
            _ => Node::unknown(),
        }
    }

    /// `merge(…)`: when every argument is an object the scan followed, their union, a later
    /// entry replacing an earlier one of the same key. Otherwise (an argument that is one of
    /// several objects, or one the scan cannot see) each argument stands for itself: every key
    /// of each still ends up in the result (or is replaced by a later argument's), so checking
    /// each argument checks every key written.
    fn merge(&self, args: Vec<Node<'a>>) -> Node<'a> {
        let forced: Vec<Node<'a>> = args.into_iter().map(|a| self.force(a)).collect();
        if !forced.iter().all(|a| matches!(a, Node::Object(_))) {
            return Node::OneOf(forced);
        }
        let mut merged: Vec<Entry<'a>> = Vec::new();
        for arg in forced {
            if let Node::Object(entries) = arg {
                for entry in entries {
                    merged.retain(|e| e.key != entry.key);
                    merged.push(entry);
                }
            }
        }
        Node::Object(merged)
    }

    /// `yamldecode(…)`/`jsondecode(…)` of `file(<path>)` or of a string the scan can follow.
    fn decode(&self, f: &'a FuncCall, at: Expr<'a>, scope: &Rc<Scope<'a>>, syntax: yaml::Syntax) -> Node<'a> {
        let function = syntax.function();
        let Some(arg) = f.args.iter().next() else {
            return Node::unknown();
        };
        if let Expression::FuncCall(inner) = arg
            && !inner.name.is_namespaced()
            && inner.name.name.value().as_str() == "file"
        {
            let path = inner
                .args
                .iter()
                .next()
                .map(|p| self.force(self.lazy(p, at, scope)));
            let Some(Node::Scalar(Scalar::Str(path))) = path else {
                return Node::Unknown(Some(
                    format!("{function}(file(…)) of a path the provider cannot work out before the plan")
                        .into(),
                ));
            };
            return self.decode_file(&path, syntax);
        }
        match self.force(self.lazy(arg, at, scope)) {
            Node::Scalar(Scalar::Str(text)) => {
                let place = at.file.place(f.span());
                yaml::parse(&text, syntax, place.as_ref()).unwrap_or_else(Node::unknown)
            }
            _ => Node::Unknown(Some(
                format!("{function}() of text the provider cannot read before the plan").into(),
            )),
        }
    }

    /// A decoded file, read once per scan. Relative paths are relative to the working
    /// directory (the root module), as Terraform's `file()` takes them.
    fn decode_file(&self, path: &str, syntax: yaml::Syntax) -> Node<'a> {
        let full = self.root.join(path);
        if let Some(node) = self.decoded.borrow().get(&full) {
            return node.clone();
        }
        let shown = display_path(path);
        let node = read_text(&full)
            .and_then(|text| yaml::parse_file(&text, syntax, &shown))
            .unwrap_or_else(Node::unknown);
        self.decoded.borrow_mut().insert(full, node.clone());
        node
    }
}

/// A path as the user would recognise it: `./x/../y.yaml` → `y.yaml`.
fn display_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}
