//! What the scan needs of each module, gathered from its parsed files: the provider's blocks,
//! its locals, its variables' defaults and its module calls' arguments.
//!
//! Override files (`override.tf`, `*_override.tf`) are merged in last, as Terraform merges
//! them: an attribute in an override block replaces the attribute of that name; a nested
//! block type in it replaces every block of that type; a local, a variable's default or a
//! module call's argument replaces the one of that name.

use std::collections::HashMap;

use hcl_edit::Span;
use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::structure::{Block, Body};

use super::files::{ModuleFiles, SourceFile};
use super::finding::Place;
use super::targets::{BlockKind, Targets};

/// An expression and the file it is written in.
#[derive(Clone, Copy)]
pub(super) struct Expr<'a> {
    pub expr: &'a Expression,
    pub file: &'a SourceFile,
}

/// A body's attributes and nested blocks, after override merging.
#[derive(Clone, Default)]
pub(super) struct BodyView<'a> {
    pub attributes: Vec<(&'a str, Expr<'a>)>,
    pub blocks: Vec<(&'a Block, &'a SourceFile)>,
}

impl<'a> BodyView<'a> {
    pub fn of(body: &'a Body, file: &'a SourceFile) -> Self {
        Self {
            attributes: body
                .attributes()
                .map(|a| (a.key.value().as_str(), Expr { expr: &a.value, file }))
                .collect(),
            blocks: body.blocks().map(|b| (b, file)).collect(),
        }
    }

    /// A nested block written in Terraform's JSON syntax — an object expression in the
    /// restated text — as a body; `None` for anything but an object.
    pub fn of_json_block(at: Expr<'a>) -> Option<Self> {
        let Expression::Object(object) = at.expr else {
            return None;
        };
        let attributes = object
            .iter()
            .filter_map(|(key, value)| {
                let name = match key {
                    ObjectKey::Ident(name) => name.value().as_str(),
                    ObjectKey::Expression(Expression::String(s)) => s.value().as_str(),
                    ObjectKey::Expression(_) => return None,
                };
                Some((
                    name,
                    Expr {
                        expr: value.expr(),
                        file: at.file,
                    },
                ))
            })
            .collect();
        Some(Self {
            attributes,
            blocks: Vec::new(),
        })
    }

    pub fn attribute(&self, name: &str) -> Option<Expr<'a>> {
        self.attributes.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
    }

    /// Terraform's override rule for one block: `other`'s attributes replace these of the
    /// same name, its nested block types replace all of these of that type.
    fn merge(&mut self, other: BodyView<'a>) {
        for (name, expr) in other.attributes {
            match self.attributes.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = expr,
                None => self.attributes.push((name, expr)),
            }
        }
        let replaced: Vec<&str> = other
            .blocks
            .iter()
            .map(|(b, _)| b.ident.value().as_str())
            .collect();
        self.blocks
            .retain(|(b, _)| !replaced.contains(&b.ident.value().as_str()));
        self.blocks.extend(other.blocks);
    }
}

/// One of the provider's blocks.
pub(super) struct TargetBlock<'a> {
    pub kind: BlockKind,
    pub type_name: String,
    pub name: String,
    /// The body the schema describes (a list block's `config { … }`).
    pub body: BodyView<'a>,
    /// The attribute name the schema's body sits under (`config` for a list block).
    pub prefix: Option<&'static str>,
    pub for_each: Option<Expr<'a>>,
    /// Where the block starts.
    pub header: Option<Place>,
}

impl TargetBlock<'_> {
    /// The block's address in its module (`karpenter_node_pool.p`, `data.x.y`, `provider.x`).
    pub fn local_address(&self) -> String {
        match self.kind {
            BlockKind::Resource => format!("{}.{}", self.type_name, self.name),
            BlockKind::Data => format!("data.{}.{}", self.type_name, self.name),
            BlockKind::List => format!("list.{}.{}", self.type_name, self.name),
            BlockKind::Provider if self.name.is_empty() => format!("provider.{}", self.type_name),
            BlockKind::Provider => format!("provider.{}.{}", self.type_name, self.name),
        }
    }
}

/// A `module "<name>" { … }` call.
#[derive(Default)]
pub(super) struct Call<'a> {
    pub args: HashMap<&'a str, Expr<'a>>,
    pub for_each: Option<Expr<'a>>,
}

/// What the scan knows of one module.
pub(super) struct Module<'a> {
    pub key: &'a str,
    pub dir: &'a str,
    /// The calling module (an index into [`Config::modules`]) and the call's name.
    pub parent: Option<(usize, &'a str)>,
    pub locals: HashMap<&'a str, Expr<'a>>,
    /// Declared variables, with their defaults.
    pub variables: HashMap<&'a str, Option<Expr<'a>>>,
    pub calls: HashMap<&'a str, Call<'a>>,
    pub blocks: Vec<TargetBlock<'a>>,
}

impl Module<'_> {
    /// What a block's address in this module starts with: `module.a.module.b.` (nothing for
    /// the root module).
    pub fn address_prefix(&self) -> String {
        self.key
            .split('.')
            .filter(|k| !k.is_empty())
            .map(|k| format!("module.{k}."))
            .collect()
    }
}

/// Every module the scan read, the root first.
pub(super) struct Config<'a> {
    pub modules: Vec<Module<'a>>,
    /// Root variables set in `terraform.tfvars` / `*.auto.tfvars` (the last file wins).
    pub root_values: HashMap<&'a str, Expr<'a>>,
}

impl<'a> Config<'a> {
    pub fn build(modules: &'a [ModuleFiles], tfvars: &'a [SourceFile], targets: &Targets<'_>) -> Self {
        let mut out: Vec<Module<'a>> = modules.iter().map(|m| index_module(m, targets)).collect();
        for i in 0..out.len() {
            let key = out[i].key;
            if key.is_empty() {
                continue;
            }
            let (parent_key, call) = key.rsplit_once('.').unwrap_or(("", key));
            out[i].parent = out.iter().position(|m| m.key == parent_key).map(|p| (p, call));
        }
        let mut root_values = HashMap::new();
        for file in tfvars {
            for a in file.body.attributes() {
                root_values.insert(a.key.value().as_str(), Expr { expr: &a.value, file });
            }
        }
        Config {
            modules: out,
            root_values,
        }
    }
}

fn label(block: &Block, i: usize) -> Option<&str> {
    block.labels.get(i).map(|l| l.as_str())
}

fn index_module<'a>(m: &'a ModuleFiles, targets: &Targets<'_>) -> Module<'a> {
    let mut module = Module {
        key: &m.key,
        dir: &m.dir,
        parent: None,
        locals: HashMap::new(),
        variables: HashMap::new(),
        calls: HashMap::new(),
        blocks: Vec::new(),
    };
    // Terraform merges override files after all the others, in name order.
    let ordered = m
        .files
        .iter()
        .filter(|f| !f.is_override)
        .chain(m.files.iter().filter(|f| f.is_override));
    for file in ordered {
        for block in file.body.blocks() {
            index_block(&mut module, block, file, targets);
        }
    }
    module
}

fn index_block<'a>(module: &mut Module<'a>, block: &'a Block, file: &'a SourceFile, targets: &Targets<'_>) {
    let view = BodyView::of(&block.body, file);
    match block.ident.value().as_str() {
        "locals" => {
            for (name, expr) in view.attributes {
                module.locals.insert(name, expr);
            }
        }
        "variable" => {
            if let Some(name) = label(block, 0) {
                let default = view.attribute("default");
                let slot = module.variables.entry(name).or_insert(None);
                if default.is_some() || !file.is_override {
                    *slot = default.or(*slot);
                }
            }
        }
        "module" => {
            if let Some(name) = label(block, 0) {
                let call = module.calls.entry(name).or_default();
                for (arg, expr) in view.attributes {
                    match arg {
                        "for_each" => call.for_each = Some(expr),
                        "source" | "version" | "count" | "providers" | "depends_on" => {}
                        _ => {
                            call.args.insert(arg, expr);
                        }
                    }
                }
            }
        }
        keyword => {
            let Some((kind, type_name, name)) = target_of(keyword, block, targets) else {
                return;
            };
            let (body, prefix) = if kind == BlockKind::List {
                let config = view
                    .blocks
                    .iter()
                    .find(|(b, _)| b.ident.value().as_str() == "config")
                    .map(|(b, f)| BodyView::of(&b.body, f))
                    .unwrap_or_default();
                (config, Some("config"))
            } else {
                (view.clone(), None)
            };
            if file.is_override
                && let Some(existing) = module
                    .blocks
                    .iter_mut()
                    .find(|b| b.kind == kind && b.type_name == type_name && b.name == name)
            {
                existing.body.merge(body);
                if let Some(for_each) = view.attribute("for_each") {
                    existing.for_each = Some(for_each);
                }
                return;
            }
            module.blocks.push(TargetBlock {
                kind,
                type_name,
                name,
                body,
                prefix,
                for_each: view.attribute("for_each"),
                header: file.place(block.ident.span()),
            });
        }
    }
}

/// The kind, type and name of a block the provider serves; `None` for any other block.
fn target_of(keyword: &str, block: &Block, targets: &Targets<'_>) -> Option<(BlockKind, String, String)> {
    let kind = match keyword {
        "resource" => BlockKind::Resource,
        "data" => BlockKind::Data,
        "list" => BlockKind::List,
        "provider" => BlockKind::Provider,
        _ => return None,
    };
    let type_name = label(block, 0)?.to_string();
    if kind == BlockKind::Provider {
        if type_name != targets.provider_name {
            return None;
        }
        // Aliases are told apart by their `alias` attribute, not by a label.
        let alias = block
            .body
            .get_attribute("alias")
            .and_then(|a| a.value.as_str())
            .unwrap_or_default()
            .to_string();
        return Some((kind, type_name, alias));
    }
    if !targets.schemas.contains_key(&(kind, type_name.clone())) {
        return None;
    }
    Some((kind, type_name, label(block, 1)?.to_string()))
}
