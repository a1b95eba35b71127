//! The Kubernetes side: building a `kube` client from the provider block, the CRD readiness
//! gate, server-side apply with retries, reads, and deletion that waits for finalizers. Knows
//! also whether a Karpenter controller is running (its leader-election Lease) and what of
//! Karpenter's holds an object being deleted, and what a plan reads for its previews of what a
//! change does to the running nodes ([`plan_reads`]). Knows
//! `kube`, not Terraform: the resources translate between the two.

pub mod apply;
pub mod client;
pub mod conditions;
pub mod eks;
pub mod error;
pub mod gate;
pub mod karpenter_holds;
pub mod karpenter_liveness;
pub mod kinds;
pub mod ownership;
pub mod permissions;
pub mod plan_reads;
pub mod retry;
pub mod served_labels;
pub mod served_values;
pub mod skew;
pub mod transport;
pub mod validation;
pub mod wait;

pub use error::KubeError;
pub use kinds::Kind;

/// The field manager of every server-side apply this provider makes.
pub const FIELD_MANAGER: &str = "terraform-provider-karpenter";
