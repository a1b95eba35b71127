//! What the scan looks for: the kinds of block a provider's schemas describe, and the
//! provider's local name with the schema of each block type it serves.

use std::collections::BTreeMap;

use crate::terraform::framework::schema::Schema;

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
