//! terraform-provider-karpenter: a Terraform provider (tfplugin6) for Karpenter on EKS.

pub mod plugin;
pub mod tfvalue;
