//! The alpha Karpenter kinds that ship beside the v1 API behind feature gates:
//! `karpenter_node_overlay` (karpenter.sh/v1alpha1 NodeOverlay). They share the v1 kinds' shape
//! (`name`, `metadata`, spec fields at the top level, `status`, `timeouts {}`) and helpers.

pub mod node_overlay;

pub use node_overlay::{NODE_OVERLAY, validate_node_overlay};
