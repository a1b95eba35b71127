//! The server's state: the provider it serves, the context `ConfigureProvider` built, the stop
//! signal and what is built once per process; and the look-ups every handler starts with (the
//! configured context, the type a request names, where its diagnostics go).

use std::sync::{Arc, OnceLock, RwLock};

use super::reply::{internal, unknown_type};
use super::stop::Stop;
use crate::terraform::framework::config_scan::ConfigScan;
use crate::terraform::framework::{Diagnostics, Provider, Resource, Schema};
use crate::terraform::plugin::proto::tfplugin6 as pb;
use crate::terraform::plugin::schema_proto::{diagnostics as pb_diags, diagnostics_in as pb_diags_in};

/// The gRPC face of a [`Provider`].
pub struct ProviderServer<P: Provider> {
    pub(super) provider: Arc<P>,
    pub(super) context: RwLock<Option<Arc<P::Context>>>,
    pub(super) stop: Stop,
    /// Built on the first `GetProviderSchema`: we advertise `get_provider_schema_optional`, so
    /// Terraform asks in one process of a run and reuses the answer in the others, which then
    /// never pay for encoding every schema.
    pub(super) schema_response: OnceLock<pb::get_provider_schema::Response>,
    /// The configuration scan for misspelled keys, built on the first validation that needs it
    /// ([`super::key_check`]).
    pub(super) scan: OnceLock<ConfigScan>,
}

impl<P: Provider> ProviderServer<P> {
    pub fn new(provider: P) -> Self {
        Self {
            provider: Arc::new(provider),
            context: RwLock::new(None),
            stop: Stop::new(),
            schema_response: OnceLock::new(),
            scan: OnceLock::new(),
        }
    }

    pub(super) fn context(&self) -> Result<Arc<P::Context>, Diagnostics> {
        let guard = self
            .context
            .read()
            .map_err(|_| internal("provider state lock poisoned"))?;
        guard.clone().ok_or_else(|| {
            Diagnostics::from_error(
                "Provider not configured",
                "Terraform called the provider before configuring it. This is a bug in Terraform or the provider.",
            )
        })
    }

    /// The resource type a request names, or the diagnostic for a type this provider lacks.
    pub(super) fn resource(&self, type_name: &str) -> Result<&dyn Resource<P::Context>, Diagnostics> {
        self.provider
            .resource(type_name)
            .ok_or_else(|| unknown_type("resource", type_name))
    }

    /// Diagnostics about a resource of `type_name`, placed where Terraform can show them.
    pub(super) fn resource_diags(&self, type_name: &str, d: &Diagnostics) -> Vec<pb::Diagnostic> {
        match self.provider.resource(type_name) {
            Some(r) => pb_diags_in(d, r.schema()),
            None => pb_diags(d),
        }
    }

    /// Diagnostics about a data source of `type_name`, placed where Terraform can show them.
    pub(super) fn data_source_diags(&self, type_name: &str, d: &Diagnostics) -> Vec<pb::Diagnostic> {
        match self.provider.data_source(type_name) {
            Some(ds) => pb_diags_in(d, ds.schema()),
            None => pb_diags(d),
        }
    }

    pub(super) fn resource_schema(&self, type_name: &str) -> Result<&Schema, Diagnostics> {
        self.resource(type_name).map(|r| r.schema())
    }

    /// The list resource type a request names, with its list configuration's schema, or the
    /// diagnostic for a type this provider cannot list.
    pub(super) fn list_resource_type(
        &self,
        type_name: &str,
    ) -> Result<(&dyn Resource<P::Context>, &Schema), Diagnostics> {
        self.provider
            .resource(type_name)
            .and_then(|r| Some((r, r.list_schema()?)))
            .ok_or_else(|| unknown_type("list resource", type_name))
    }
}
