//! The provider-level RPCs: metadata, the provider schema (built once, see
//! [`ProviderServer::schema_response`]), the identity schemas, the provider configuration's
//! validation and `ConfigureProvider`, and `StopProvider`.

use std::sync::Arc;

use tonic::{Request, Response};

use super::codec::decode_config;
use super::reply::{Rpc, internal};
use super::state::ProviderServer;
use crate::terraform::framework::config_scan::BlockKind;
use crate::terraform::framework::{Diagnostics, Provider};
use crate::terraform::plugin::proto::tfplugin6 as pb;
use crate::terraform::plugin::schema_proto::{
    diagnostics_in as pb_diags_in, identity_schema as pb_identity_schema, schema as pb_schema,
};

impl<P: Provider> ProviderServer<P> {
    pub(super) async fn get_metadata_rpc(
        &self,
        _: Request<pb::get_metadata::Request>,
    ) -> Rpc<pb::get_metadata::Response> {
        use pb::get_metadata as m;
        Ok(Response::new(m::Response {
            server_capabilities: Some(capabilities()),
            resources: self
                .provider
                .resources()
                .iter()
                .map(|r| m::ResourceMetadata {
                    type_name: r.type_name().into(),
                })
                .collect(),
            data_sources: self
                .provider
                .data_sources()
                .iter()
                .map(|d| m::DataSourceMetadata {
                    type_name: d.type_name().into(),
                })
                .collect(),
            list_resources: self
                .provider
                .resources()
                .iter()
                .filter(|r| r.list_schema().is_some())
                .map(|r| m::ListResourceMetadata {
                    type_name: r.type_name().into(),
                })
                .collect(),
            ..Default::default()
        }))
    }

    pub(super) async fn get_provider_schema_rpc(
        &self,
        _: Request<pb::get_provider_schema::Request>,
    ) -> Rpc<pb::get_provider_schema::Response> {
        let response = self
            .schema_response
            .get_or_init(|| schema_response(self.provider.as_ref()));
        Ok(Response::new(response.clone()))
    }

    pub(super) async fn get_resource_identity_schemas_rpc(
        &self,
        _: Request<pb::get_resource_identity_schemas::Request>,
    ) -> Rpc<pb::get_resource_identity_schemas::Response> {
        Ok(Response::new(pb::get_resource_identity_schemas::Response {
            identity_schemas: self
                .provider
                .resources()
                .iter()
                .filter_map(|r| {
                    Some((
                        r.type_name().to_string(),
                        pb_identity_schema(r.identity_schema()?),
                    ))
                })
                .collect(),
            diagnostics: vec![],
        }))
    }

    pub(super) async fn validate_provider_config_rpc(
        &self,
        req: Request<pb::validate_provider_config::Request>,
    ) -> Rpc<pb::validate_provider_config::Response> {
        let req = req.into_inner();
        let schema = self.provider.schema();
        let name = self.provider_name();
        Ok(Response::new(pb::validate_provider_config::Response {
            diagnostics: self.validate_block(
                (BlockKind::Provider, &name),
                schema,
                req.config.as_ref(),
                "provider configuration",
                |c, d| self.provider.validate(c, d),
            ),
        }))
    }

    pub(super) async fn configure_provider_rpc(
        &self,
        req: Request<pb::configure_provider::Request>,
    ) -> Rpc<pb::configure_provider::Response> {
        let req = req.into_inner();
        let schema = self.provider.schema();
        let result = async {
            let config = decode_config(
                req.config.as_ref(),
                &schema.value_type(),
                "provider configuration",
            )?;
            let context = self.provider.configure(&config).await?;
            let mut slot = self
                .context
                .write()
                .map_err(|_| internal("provider state lock poisoned"))?;
            *slot = Some(Arc::new(context));
            Ok::<_, Diagnostics>(())
        }
        .await;
        let diags = result.err().unwrap_or_default();
        tracing::debug!(terraform_version = %req.terraform_version, "provider configured");
        Ok(Response::new(pb::configure_provider::Response {
            diagnostics: pb_diags_in(&diags, schema),
        }))
    }

    pub(super) async fn stop_provider_rpc(
        &self,
        _: Request<pb::stop_provider::Request>,
    ) -> Rpc<pb::stop_provider::Response> {
        tracing::info!("stop requested: cancelling in-flight operations");
        self.stop.trigger();
        Ok(Response::new(pb::stop_provider::Response {
            error: String::new(),
        }))
    }
}

fn schema_response<P: Provider>(provider: &P) -> pb::get_provider_schema::Response {
    pb::get_provider_schema::Response {
        provider: Some(pb_schema(provider.schema())),
        resource_schemas: provider
            .resources()
            .iter()
            .map(|r| (r.type_name().to_string(), pb_schema(r.schema())))
            .collect(),
        data_source_schemas: provider
            .data_sources()
            .iter()
            .map(|d| (d.type_name().to_string(), pb_schema(d.schema())))
            .collect(),
        list_resource_schemas: provider
            .resources()
            .iter()
            .filter_map(|r| Some((r.type_name().to_string(), pb_schema(r.list_schema()?))))
            .collect(),
        server_capabilities: Some(capabilities()),
        ..Default::default()
    }
}

fn capabilities() -> pb::ServerCapabilities {
    pb::ServerCapabilities {
        plan_destroy: true,
        get_provider_schema_optional: true,
        move_resource_state: true,
        generate_resource_config: true,
    }
}
