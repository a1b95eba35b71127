//! The AWS side (IAM wrappers for the role resources). The shared client layer lands from the `aws` branch.

pub mod iam;
