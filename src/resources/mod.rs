//! The provider's Terraform types, in two families: [`kube`], the Karpenter custom resources
//! (one generic machinery, one schema per kind), and [`aws`], the composites of AWS objects
//! Karpenter needs (interruption queue, IAM roles). [`taken_name`] is what both share: create
//! never adopts, and says whose an existing object is.

pub mod aws;
pub mod kube;
pub mod taken_name;
