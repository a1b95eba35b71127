//! terraform-provider-karpenter: a Terraform provider (tfplugin6) for Karpenter on EKS.
//!
//! The map (CONTRIBUTING.md has the long one): each layer uses only those below it, and the
//! crate root wires the top one into the plugin.
//!
//! - [`terraform`]: a generic Terraform provider framework (plugin, protocol, schemas, values);
//!   nothing of Karpenter in it.
//! - [`aws_names`]: AWS naming rules (names, account IDs, regions, partitions).
//! - [`settings`], [`policy`], [`instance_types`]: the provider block resolved, IAM policies
//!   and ARNs, the offline instance-type data; pure.
//! - [`aws`]: the AWS client side (SDK config, credentials, IAM, SQS, EventBridge, EC2, EKS).
//! - [`k8s`]: the Kubernetes client side (clients, apply, waits, the CRD gate, kinds).
//! - [`context`]: what every call receives: settings and lazily built clients.
//! - [`resources`]: the Terraform types: `kube/` (Karpenter's custom resources) and `aws/`
//!   (the AWS composites), which do not use each other.
//! - [`provider`]: the provider block's schema, the registry of types, the docs' inputs.
//! - this root: [`run`], the binary's `main`.

pub mod terraform;

pub mod aws_names;

pub mod instance_types;
pub mod policy;
pub mod settings;

pub mod aws;

pub mod k8s;

pub mod context;

pub mod resources;

pub mod provider;

pub use provider::PROVIDER_ADDRESS;

/// `@module` on every log line the provider writes.
pub const LOG_MODULE: &str = "karpenter";

/// The provider this binary serves. The one place to swap in the real provider.
pub fn provider() -> impl terraform::plugin::proto::tfplugin6::provider_server::Provider {
    terraform::plugin::server::ProviderServer::new(provider::KarpenterProvider::new())
}

/// Runs this crate's provider as a Terraform plugin (the binary's `main`).
pub fn run() -> std::process::ExitCode {
    terraform::plugin::run_with(
        terraform::plugin::PluginInfo {
            address: PROVIDER_ADDRESS,
            log_module: LOG_MODULE,
            program: "terraform-provider-karpenter",
        },
        provider,
    )
}
