//! Keys the schema does not have, found in the configuration files themselves (#37).
//!
//! Terraform core converts a nested attribute's value to the attribute's object type before a
//! provider sees it, and that conversion drops every key the type does not declare
//! (hashicorp/terraform#33570): `expireAfter = "24h"` inside `template.spec` reaches the
//! provider as "expire_after not set", and the default is applied. The provider cannot see the
//! mistake in the value it is given, so this module reads what the user *wrote*:
//!
//! - [`files`]: the `*.tf` and `*.tf.json` (and, for list blocks, `*.tfquery.hcl`) files of the
//!   root module — the plugin's working directory, which Terraform starts it in — and of every
//!   module listed in `${TF_DATA_DIR:-.terraform}/modules/modules.json`, parsed with hcl-edit,
//!   which keeps each key's position ([`json`] restates the JSON syntax in the native one,
//!   keeping each key's position);
//! - [`index`]: per module, the provider's blocks (override files merged in as Terraform
//!   merges them), its locals, variables and module calls;
//! - [`eval`]: follows what can be followed to the text that wrote it — locals, a variable's
//!   value given literally by the calling `module` block (or its default, or a root
//!   variable's `*.tfvars` or `*.tfvars.json`), `each.value` of a literal `for_each`, `merge()`, conditionals, `for`
//!   expressions, and `yamldecode`/`jsondecode` of a file whose path it can work out;
//! - [`check`]: walks each block's attributes against its [`Schema`] and records a [`Finding`]
//!   for each key the schema does not have at that path (with the nearest valid name), and a
//!   warning where an object's keys come from somewhere the scan cannot read;
//! - [`report`]: hands each block's findings to the `Validate*Config` call about that block
//!   (matched by the literal values the block writes), once per process.
//!
//! Nothing here knows a provider: the schemas and the provider's local name come in
//! [`Targets`].

mod check;
mod eval;
mod files;
mod index;
mod json;
mod literals;
mod node;
mod report;
mod suggest;
#[cfg(test)]
mod tests;
mod yaml;

use std::collections::BTreeMap;
use std::fmt;

pub use report::ConfigScan;

/// Whether Terraform could drop a key of a configuration of `schema`: some attribute is, or
/// holds, an object (the scan has nothing to find otherwise).
pub fn may_drop_keys(schema: &Schema) -> bool {
    fn in_block(attributes: &[super::schema::Attribute], blocks: &[super::schema::Block]) -> bool {
        attributes.iter().any(check::holds_objects)
            || blocks.iter().any(|b| in_block(&b.attributes, &b.blocks))
    }
    in_block(&schema.attributes, &schema.blocks)
}

use super::diagnostics::Severity;
use super::schema::Schema;
use crate::terraform::tfvalue::AttributePath;

/// The kinds of configuration block a provider's schemas describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BlockKind {
    /// `provider "<name>" { … }`
    Provider,
    /// `resource "<type>" "<name>" { … }`
    Resource,
    /// `data "<type>" "<name>" { … }`
    Data,
    /// `list "<type>" "<name>" { config { … } }` in `*.tfquery.hcl` (Terraform 1.14+)
    List,
}

impl BlockKind {
    /// The block type as written in the configuration.
    pub fn keyword(self) -> &'static str {
        match self {
            BlockKind::Provider => "provider",
            BlockKind::Resource => "resource",
            BlockKind::Data => "data",
            BlockKind::List => "list",
        }
    }
}

/// What the scan looks for: the provider's local name (its `provider "…"` blocks, and the
/// word a file must mention to be worth parsing) and the schema of each block type it serves.
/// A list type's schema is that of its `config { … }` block.
pub struct Targets<'s> {
    pub provider_name: String,
    pub schemas: BTreeMap<(BlockKind, String), &'s Schema>,
}

impl<'s> Targets<'s> {
    pub fn new(provider_name: impl Into<String>) -> Self {
        Self {
            provider_name: provider_name.into(),
            schemas: BTreeMap::new(),
        }
    }

    pub fn with(mut self, kind: BlockKind, type_name: impl Into<String>, schema: &'s Schema) -> Self {
        self.schemas.insert((kind, type_name.into()), schema);
        self
    }
}

/// Where a piece of configuration is written: file (relative to the root module), line and
/// column, both from 1; a line of 0 means "somewhere in this file" (JSON has no positions).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        }
    }
}

/// One thing the scan found in a block: a key the schema does not have (an error), or an
/// object whose keys it could not read (a warning).
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub severity: Severity,
    pub summary: String,
    /// Starts with the full path (`template.spec.expireAfter: …`) and names where the key is
    /// written.
    pub detail: String,
    /// The part of the path Terraform can show the source line of: the top-level attribute
    /// (after any blocks), then the next step as an element key, which Terraform resolves
    /// inside the attribute's object or tuple constructor (one level deeper than an attribute
    /// path; Terraform 1.15 follows it further, older releases stop there).
    pub subject: AttributePath,
    /// Where the key (or the unreadable value) is written.
    pub at: Option<Place>,
}
