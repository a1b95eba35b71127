//! Typed schemas and offline validation for the Karpenter v1 kinds: `karpenter_node_pool`
//! (karpenter.sh/v1 NodePool) and `karpenter_ec2_node_class` (karpenter.k8s.aws/v1 EC2NodeClass),
//! following the released v1.14.1 CRDs field by field.
//!
//! Shape (design.md §1): `name`, `metadata = { labels, annotations }` (the object's own metadata,
//! mapped by the resource, not part of `spec`), every `spec` field as a top-level attribute
//! (snake_case of the CRD's camelCase name; explicit wire names where that rule would not give
//! the CRD name), `status` (computed), and a `timeouts {}` block. What every kind shares (those
//! attributes, the validation rules, the test helpers) is in [`crate::resources::kube::kind`].

pub mod ec2_node_class;
pub mod node_pool;

pub use ec2_node_class::{EC2_NODE_CLASS, validate_ec2_node_class};
pub use node_pool::{NODE_POOL, node_pool_replacements, validate_node_pool};

#[cfg(test)]
mod tests;
