//! terraform-provider-karpenter: a Terraform provider (tfplugin6) for Karpenter on EKS.

pub mod framework;
pub mod plugin;
pub mod policy;
pub mod provider;
pub mod resources;
pub mod tfvalue;
