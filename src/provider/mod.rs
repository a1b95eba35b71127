//! The Karpenter provider: its configuration, and the registry of resource and data source
//! types, one line each.

pub mod config;

use async_trait::async_trait;

use crate::framework::{DataSource, Diagnostics, Provider, Resource, Schema};
use crate::k8s::{self, KubeError, gate::CrdGate};
use crate::resources;
use crate::tfvalue::Value;
pub use config::ProviderSettings;

/// What every resource call receives: the resolved configuration, and the clients built from
/// it lazily, on first use, so planning never connects anywhere.
pub struct KarpenterContext {
    pub settings: ProviderSettings,
    kube: tokio::sync::OnceCell<kube::Client>,
    /// The CRD readiness gate, shared by every Kubernetes resource of this provider process.
    pub crd_gate: CrdGate,
}

impl KarpenterContext {
    pub fn new(settings: ProviderSettings) -> Self {
        Self {
            settings,
            kube: tokio::sync::OnceCell::new(),
            crd_gate: CrdGate::new(),
        }
    }

    /// The Kubernetes client, built on first use. Fails when the `kubernetes {}` settings are
    /// still unknown (they depend on something not created yet) or incomplete.
    pub async fn kube(&self) -> Result<&kube::Client, KubeError> {
        let unknown: Vec<String> = self
            .settings
            .unknown
            .iter()
            .map(|p| p.to_string())
            .filter(|p| p.starts_with("kubernetes"))
            .collect();
        if !unknown.is_empty() {
            return Err(KubeError::ConfigUnknown(unknown.join(", ")));
        }
        self.kube
            .get_or_try_init(|| k8s::client::client(&self.settings.kubernetes))
            .await
    }
}

/// The provider, with its registry.
pub struct KarpenterProvider {
    resources: Vec<Box<dyn Resource<KarpenterContext>>>,
    data_sources: Vec<Box<dyn DataSource<KarpenterContext>>>,
}

impl KarpenterProvider {
    pub fn new() -> Self {
        Self {
            resources: vec![
                Box::new(resources::node_pool()),
                Box::new(resources::ec2_node_class()),
                Box::new(resources::provisioner()),
                Box::new(resources::node_template()),
            ],
            data_sources: vec![Box::new(resources::controller_policy::ControllerPolicy)],
        }
    }
}

impl Default for KarpenterProvider {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Provider for KarpenterProvider {
    type Context = KarpenterContext;

    fn schema(&self) -> &Schema {
        &config::SCHEMA
    }

    fn resources(&self) -> &[Box<dyn Resource<KarpenterContext>>] {
        &self.resources
    }

    fn data_sources(&self) -> &[Box<dyn DataSource<KarpenterContext>>] {
        &self.data_sources
    }

    async fn configure(&self, config: &Value) -> Result<KarpenterContext, Diagnostics> {
        let settings = config::parse(config, &config::ProcessEnv);
        if !settings.unknown.is_empty() {
            let names: Vec<String> = settings.unknown.iter().map(|p| p.to_string()).collect();
            tracing::info!(unknown = %names.join(", "), "provider configuration not fully known yet; clients will be built when it is");
        }
        Ok(KarpenterContext::new(settings))
    }
}
