//! The configuration as written, as far as the scan can follow it without Terraform: for each
//! block of the types asked for (root module and child modules), its address and the value of
//! each attribute — a [`Value`] when the scan follows it to constants all the way down
//! (literals, locals, variables given literally, `merge`, `yamldecode` of a file, …; see
//! [`eval`](super::eval)), [`Value::unknown`] where it cannot (another resource's attribute, a
//! function it does not evaluate, a variable given with `-var`). Nested blocks (`timeouts {}`)
//! are left out.
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
    /// Its attributes, as far as the scan follows them (an object): one value per element of a
    /// `for_each` the scan can read (`each.value` bound to it), else one.
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
    /// [`super::ConfigScan::load`]): the blocks of the types `targets` names.
    pub fn load(root: &Path, data_dir: &Path, targets: &Targets<'_>) -> Written {
        let modules = load_modules(root, data_dir, &targets.provider_name);
        if modules.iter().all(|m| m.files.is_empty()) {
            return Written::default();
        }
        let tfvars = root_variable_files(root);
        let config = Config::build(&modules, &tfvars, targets);
        let eval = Evaluator::new(&config, root);
        let mut blocks: BTreeMap<(BlockKind, String), Vec<WrittenBlock>> = BTreeMap::new();
        for (index, module) in config.modules.iter().enumerate() {
            let prefix: String = module
                .key
                .split('.')
                .filter(|k| !k.is_empty())
                .map(|k| format!("module.{k}."))
                .collect();
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
                        instances: instances(&eval, index, block),
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
fn instances<'a>(eval: &Evaluator<'_, 'a>, module: usize, block: &TargetBlock<'a>) -> Vec<Value> {
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
            attributes(eval, block, &scope)
        })
        .collect()
}

/// A block's attributes as an object, in `scope`.
fn attributes<'a>(eval: &Evaluator<'_, 'a>, block: &TargetBlock<'a>, scope: &Rc<Scope<'a>>) -> Value {
    Value::Object(
        block
            .body
            .attributes
            .iter()
            .filter(|(name, _)| {
                !matches!(
                    *name,
                    "count" | "for_each" | "depends_on" | "provider" | "lifecycle"
                )
            })
            .map(|(name, expr)| (name.to_string(), value(eval, Node::Lazy(*expr, scope.clone()))))
            .collect(),
    )
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
