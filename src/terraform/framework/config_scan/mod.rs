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
//!   (matched by the literal values the block writes), once per process;
//! - [`written`]: the blocks' values as far as the scan follows them, for a plan that must not
//!   depend on the order Terraform plans blocks in.
//!
//! Nothing here knows a provider: the schemas and the provider's local name come in
//! [`Targets`].

mod check;
mod eval;
mod files;
mod finding;
mod index;
mod json;
mod literals;
mod node;
mod report;
mod suggest;
mod targets;
#[cfg(test)]
mod tests;
mod written;
mod yaml;

pub use finding::{Finding, Place};
pub use report::ConfigScan;
pub use targets::{BlockKind, Targets};
pub use written::{Written, WrittenBlock};

/// Terraform's data directory, when not `.terraform`.
const DATA_DIR_ENV: &str = "TF_DATA_DIR";

/// Where the configuration is: the root module (Terraform starts a provider in its working
/// directory, the root module's, also under `-chdir`) and Terraform's data directory
/// (`TF_DATA_DIR`, else `.terraform`; relative to the root). `None` when the working directory
/// cannot be read.
pub fn terraform_dirs() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let root = std::env::current_dir().ok()?;
    let data_dir = std::env::var_os(DATA_DIR_ENV)
        .filter(|d| !d.is_empty())
        .map_or_else(
            || std::path::PathBuf::from(".terraform"),
            std::path::PathBuf::from,
        );
    Some((root, data_dir))
}

/// Whether Terraform could drop a key of a configuration of `schema`: some attribute is, or
/// holds, an object (the scan has nothing to find otherwise).
pub fn may_drop_keys(schema: &Schema) -> bool {
    fn in_block(attributes: &[super::schema::Attribute], blocks: &[super::schema::Block]) -> bool {
        attributes.iter().any(check::holds_objects)
            || blocks.iter().any(|b| in_block(&b.attributes, &b.blocks))
    }
    in_block(&schema.attributes, &schema.blocks)
}

use super::schema::Schema;
