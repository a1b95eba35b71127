//! The configuration as written, as far as the scan can follow it without Terraform: for each
//! block of the types asked for (root module and child modules), its address and the values at
//! the attribute paths asked for (`template.spec.node_class_ref.name`) — a [`Value`] when the
//! scan follows it to constants all the way down (literals, locals, variables given literally,
//! `merge`, `yamldecode` of a file, …; see [`eval`](super::eval)), [`Value::unknown`] where it
//! cannot (another resource's attribute, a function it does not evaluate, a variable given with
//! `-var`). Only what lies on those paths is evaluated (the scan is lazy), so reading a name out
//! of a large configuration costs its parse and little more.
//!
//! A plan uses it where Terraform's scheduling must not decide what it says: a resource can
//! learn from the configuration what another block writes, whether or not Terraform planned
//! that block first.

use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use super::eval::Evaluator;
use super::files::{load_modules, root_variable_files};
use super::index::{Config, TargetBlock};
use super::node::{Node, Scalar, Scope};
use super::targets::{BlockKind, Targets};
use crate::terraform::tfvalue::{Number, Value};

/// One block of the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenBlock {
    /// `module.pools.karpenter_node_pool.p`.
    pub address: String,
    /// Whether it has `count` or `for_each` (one block, any number of instances).
    pub repeated: bool,
    /// The values at the paths asked for (an object holding only those paths), as far as the
    /// scan follows them: one per element of a `for_each` the scan can read (`each.value` bound
    /// to it), else one.
    pub instances: Vec<Value>,
}

/// The blocks of a configuration, by kind and type.
#[derive(Debug, Default)]
pub struct Written {
    blocks: BTreeMap<(BlockKind, String), Vec<WrittenBlock>>,
    /// Whether any configuration file was found (the provider runs in the root module).
    pub found: bool,
}

impl Written {
    /// Reads the configuration whose root module is `root` (relative `data_dir` as in
    /// [`super::ConfigScan::load`]): the blocks of the types `targets` names, their values at
    /// `paths` (dotted attribute paths; a path's last attribute is read whole).
    pub fn load(root: &Path, data_dir: &Path, targets: &Targets<'_>, paths: &[&str]) -> Written {
        let modules = load_modules(root, data_dir, &targets.provider_name);
        if modules.iter().all(|m| m.files.is_empty()) {
            return Written::default();
        }
        let tfvars = root_variable_files(root);
        let config = Config::build(&modules, &tfvars, targets);
        let eval = Evaluator::new(&config, root);
        let mut blocks: BTreeMap<(BlockKind, String), Vec<WrittenBlock>> = BTreeMap::new();
        for (index, module) in config.modules.iter().enumerate() {
            let prefix = module.address_prefix();
            for block in &module.blocks {
                if !targets
                    .schemas
                    .contains_key(&(block.kind, block.type_name.clone()))
                {
                    continue;
                }
                eval.reset_budget();
                blocks
                    .entry((block.kind, block.type_name.clone()))
                    .or_default()
                    .push(WrittenBlock {
                        address: format!("{prefix}{}", block.local_address()),
                        repeated: block.for_each.is_some() || block.body.attribute("count").is_some(),
                        instances: instances(&eval, index, block, paths),
                    });
            }
        }
        Written { blocks, found: true }
    }

    /// The blocks of one type, in the order the scan read them.
    pub fn blocks(&self, kind: BlockKind, type_name: &str) -> &[WrittenBlock] {
        self.blocks
            .get(&(kind, type_name.to_string()))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// A block's attributes, once per element of its `for_each` when the scan reads them.
fn instances<'a>(
    eval: &Evaluator<'_, 'a>,
    module: usize,
    block: &TargetBlock<'a>,
    paths: &[&str],
) -> Vec<Value> {
    let each = block
        .for_each
        .map(|fe| eval.elements(Node::Lazy(fe, Scope::module(module))));
    let elements = match each {
        Some(Node::OneOf(elements)) => elements.into_iter().map(Some).collect(),
        Some(other) => vec![Some(other)],
        None => vec![None],
    };
    elements
        .into_iter()
        .map(|each| {
            let scope = Rc::new(Scope {
                module,
                each: each.map(Rc::new),
                bindings: Vec::new(),
            });
            let mut out = Value::Object(Default::default());
            for path in paths {
                let mut steps = path.split('.');
                let Some(first) = steps.next() else { continue };
                let Some(expr) = block.body.attribute(first) else {
                    continue;
                };
                let rest: Vec<&str> = steps.collect();
                let at = along(eval, Node::Lazy(expr, scope.clone()), &rest);
                put(&mut out, first, &rest, at);
            }
            out
        })
        .collect()
}

/// The value at `rest` under `node`, evaluating only what lies on the way; `None` when the
/// path is not there.
fn along<'a>(eval: &Evaluator<'_, 'a>, node: Node<'a>, rest: &[&str]) -> Option<Value> {
    let Some((key, deeper)) = rest.split_first() else {
        return Some(value(eval, node));
    };
    match eval.force(node) {
        Node::Object(entries) => {
            let entry = entries.into_iter().find(|e| e.key == *key)?;
            along(eval, entry.value, deeper)
        }
        Node::Scalar(Scalar::Null) => None,
        _ => Some(Value::unknown()),
    }
}

/// Writes `at` (when some) into `out` at `first.rest…`, making the objects on the way.
fn put(out: &mut Value, first: &str, rest: &[&str], at: Option<Value>) {
    let Some(at) = at else { return };
    let Value::Object(fields) = out else { return };
    match rest.split_first() {
        None => {
            fields.insert(first.to_string(), at);
        }
        Some((next, deeper)) => {
            let child = fields
                .entry(first.to_string())
                .or_insert_with(|| Value::Object(Default::default()));
            if child.is_unknown() {
                return;
            }
            put(child, next, deeper, Some(at));
        }
    }
}

/// What a node comes to, unknown where the scan could not follow it.
fn value<'a>(eval: &Evaluator<'_, 'a>, node: Node<'a>) -> Value {
    match eval.force(node) {
        Node::Scalar(Scalar::Str(s)) => Value::String(s),
        Node::Scalar(Scalar::Num(n)) => Number::parse(&n).map_or_else(Value::unknown, Value::Number),
        Node::Scalar(Scalar::Bool(b)) => Value::Bool(b),
        Node::Scalar(Scalar::Null) => Value::Null,
        Node::Object(entries) => Value::Object(
            entries
                .into_iter()
                .map(|e| (e.key, value(eval, e.value)))
                .collect(),
        ),
        Node::Tuple(items) => Value::Tuple(items.into_iter().map(|n| value(eval, n)).collect()),
        // Several alternatives (a conditional's branches, `each.value`): known only when they
        // all come to the same.
        Node::OneOf(alternatives) => {
            let mut values = alternatives.into_iter().map(|n| value(eval, n));
            let first = values.next().unwrap_or_else(Value::unknown);
            if values.all(|v| v == first) {
                first
            } else {
                Value::unknown()
            }
        }
        Node::Elements(_) | Node::Unknown(_) | Node::Lazy(..) => Value::unknown(),
    }
}
