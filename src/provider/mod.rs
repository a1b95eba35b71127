//! The Karpenter provider: its configuration, and the registry of resource and data source
//! types, one line each.

pub mod config;

use async_trait::async_trait;

use crate::framework::{DataSource, Diagnostics, Provider, Resource, Schema};
use crate::resources;
use crate::tfvalue::Value;
pub use config::ProviderSettings;

/// What every resource call receives: the resolved configuration. Clients are built from it
/// lazily, on first use, so planning never connects anywhere.
#[derive(Debug)]
pub struct KarpenterContext {
    pub settings: ProviderSettings,
}

/// The provider, with its registry.
pub struct KarpenterProvider {
    resources: Vec<Box<dyn Resource<KarpenterContext>>>,
    data_sources: Vec<Box<dyn DataSource<KarpenterContext>>>,
}

impl KarpenterProvider {
    pub fn new() -> Self {
        Self {
            resources: vec![],
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
        Ok(KarpenterContext { settings })
    }
}
