//! terraform-provider-karpenter: a Terraform provider (tfplugin6) for Karpenter on EKS.

pub mod aws;
pub mod aws_names;
pub mod context;
pub mod instance_types;
pub mod k8s;
pub mod policy;
pub mod provider;
pub mod resources;
pub mod settings;
pub mod terraform;

/// The provider's source address: the key in `TF_REATTACH_PROVIDERS` and in `dev_overrides`.
pub const PROVIDER_ADDRESS: &str = "registry.terraform.io/karpenter/karpenter";

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
