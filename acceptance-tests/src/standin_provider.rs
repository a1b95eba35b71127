//! A provider that takes no configuration and serves a fixed list of resources: the frame of
//! the test-only plugins built on this project's framework (the legacy-provider stand-in of the
//! `moved {}` tests, the bench's yardstick provider), whose own code is their resources.

use async_trait::async_trait;
use terraform_provider_karpenter::terraform::framework::schema::Schema;
use terraform_provider_karpenter::terraform::framework::{DataSource, Diagnostics, Provider, Resource};
use terraform_provider_karpenter::terraform::tfvalue::Value;

/// The provider: its (empty) provider schema and its resources; no data sources.
pub struct Unconfigured {
    schema: &'static Schema,
    resources: Vec<Box<dyn Resource<()>>>,
    data_sources: Vec<Box<dyn DataSource<()>>>,
}

impl Unconfigured {
    pub fn new(schema: &'static Schema, resources: Vec<Box<dyn Resource<()>>>) -> Self {
        Unconfigured {
            schema,
            resources,
            data_sources: Vec::new(),
        }
    }
}

#[async_trait]
impl Provider for Unconfigured {
    type Context = ();
    fn schema(&self) -> &Schema {
        self.schema
    }
    fn resources(&self) -> &[Box<dyn Resource<()>>] {
        &self.resources
    }
    fn data_sources(&self) -> &[Box<dyn DataSource<()>>] {
        &self.data_sources
    }
    async fn configure(&self, _: &Value) -> Result<(), Diagnostics> {
        Ok(())
    }
}
