//! The AWS side: one lazily built SDK configuration (from the provider's `aws {}` block),
//! per-service clients with their endpoint overrides, error classification into diagnostics,
//! the IAM wrappers of the role resources ([`iam`]),
//! the account guards ([`account`]),
//! and thin wrappers over the SQS, EventBridge, EKS access-entry and EC2 (teardown, and the
//! instance-type preview's `DescribeInstanceType*`) calls the resources make.
//!
//! Nothing here runs during plan: [`crate::context::KarpenterContext::aws`] builds the
//! clients on first use.

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
