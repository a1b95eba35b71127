//! The AWS side: one lazily built SDK configuration (from the provider's `aws {}` block),
//! per-service clients with their endpoint overrides, error classification into diagnostics,
//! the IAM wrappers of the role resources ([`iam`]),
//! the account guards ([`account`]),
//! and thin wrappers over the SQS, EventBridge, EKS access-entry and EC2 (teardown, and the
//! instance-type preview's `DescribeInstanceType*`) calls the resources make.
//!
//! The clients are built on first use ([`crate::context::KarpenterContext::aws`]), never while
//! the `aws {}` block is unknown. At plan, AWS is called only to refresh what exists, for data
//! sources, for `karpenter_node_role`'s Auto Mode check, and for the EKS token (and, without
//! `host`, the cluster lookup) of `kubernetes { eks {} }` when the plan reads the cluster.

pub mod account;
pub mod assume;
pub mod config;
#[cfg(feature = "ec2")]
pub mod ec2;
#[cfg(feature = "ec2")]
pub mod ec2_instance_types;
pub mod eks_access;
pub mod error;
pub mod eventbridge;
pub mod iam;
pub mod ownership;
pub mod sqs;
pub mod tags;

pub use config::AwsClients;
pub use error::{AwsError, AwsErrorKind};
pub use eventbridge::EventBridge;
pub use sqs::Sqs;
