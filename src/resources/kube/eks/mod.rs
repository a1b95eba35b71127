//! EKS Auto Mode's kinds: the Karpenter that AWS runs outside the cluster serves
//! `karpenter.sh/v1` NodePools (the [`super::v1`] schema, with the Auto Mode rules of
//! [`super::v1::node_pool::auto_mode`]) and its own node class, `eks.amazonaws.com/v1`
//! NodeClass ([`node_class`]). Neither the CRD nor its controller comes from a Karpenter release:
//! EKS installs both when Auto Mode is enabled on a cluster.

pub mod node_class;

pub use node_class::{EKS_NODE_CLASS, validate_eks_node_class};
