//! TEMPORARY placeholder provider so the plugin layer can be built and tested end to end
//! before the real provider exists: an empty provider schema, no resources, no data sources.
//! The integrator replaces it in `crate::provider()` and then deletes this file.

use tonic::{Request, Response, Status, Streaming};

use super::proto::tfplugin6::provider_server::Provider;
use super::proto::tfplugin6::*;

/// A response stream that never yields (the stub has no streaming RPCs).
type Empty<T> = tokio_stream::Empty<Result<T, Status>>;

/// The placeholder provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct StubProvider;

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        plan_destroy: true,
        get_provider_schema_optional: true,
        ..Default::default()
    }
}

fn unimplemented<T>(rpc: &str) -> Result<T, Status> {
    Err(Status::unimplemented(format!(
        "{rpc} is not implemented by the placeholder provider"
    )))
}

#[tonic::async_trait]
impl Provider for StubProvider {
    async fn get_metadata(
        &self,
        _request: Request<get_metadata::Request>,
    ) -> Result<Response<get_metadata::Response>, Status> {
        Ok(Response::new(get_metadata::Response {
            server_capabilities: Some(capabilities()),
            ..Default::default()
        }))
    }

    async fn get_resource_identity_schemas(
        &self,
        _request: Request<get_resource_identity_schemas::Request>,
    ) -> Result<Response<get_resource_identity_schemas::Response>, Status> {
        Ok(Response::new(
            get_resource_identity_schemas::Response::default(),
        ))
    }

    async fn get_functions(
        &self,
        _request: Request<get_functions::Request>,
    ) -> Result<Response<get_functions::Response>, Status> {
        Ok(Response::new(get_functions::Response::default()))
    }

    async fn validate_provider_config(
        &self,
        _request: Request<validate_provider_config::Request>,
    ) -> Result<Response<validate_provider_config::Response>, Status> {
        Ok(Response::new(validate_provider_config::Response::default()))
    }

    async fn configure_provider(
        &self,
        request: Request<configure_provider::Request>,
    ) -> Result<Response<configure_provider::Response>, Status> {
        tracing::debug!(terraform_version = %request.get_ref().terraform_version, "ConfigureProvider: nothing to configure in the stub");
        Ok(Response::new(configure_provider::Response::default()))
    }

    async fn stop_provider(
        &self,
        _request: Request<stop_provider::Request>,
    ) -> Result<Response<stop_provider::Response>, Status> {
        Ok(Response::new(stop_provider::Response::default()))
    }

    async fn get_provider_schema(
        &self,
        _request: Request<get_provider_schema::Request>,
    ) -> Result<Response<get_provider_schema::Response>, Status> {
        tracing::debug!("GetProviderSchema: serving the stub's empty schema");
        Ok(Response::new(get_provider_schema::Response {
            provider: Some(Schema {
                version: 0,
                block: Some(schema::Block::default()),
            }),
            server_capabilities: Some(capabilities()),
            ..Default::default()
        }))
    }

    async fn validate_resource_config(
        &self,
        _request: Request<validate_resource_config::Request>,
    ) -> Result<Response<validate_resource_config::Response>, Status> {
        unimplemented("ValidateResourceConfig")
    }

    async fn validate_data_resource_config(
        &self,
        _request: Request<validate_data_resource_config::Request>,
    ) -> Result<Response<validate_data_resource_config::Response>, Status> {
        unimplemented("ValidateDataResourceConfig")
    }

    async fn upgrade_resource_state(
        &self,
        _request: Request<upgrade_resource_state::Request>,
    ) -> Result<Response<upgrade_resource_state::Response>, Status> {
        unimplemented("UpgradeResourceState")
    }

    async fn upgrade_resource_identity(
        &self,
        _request: Request<upgrade_resource_identity::Request>,
    ) -> Result<Response<upgrade_resource_identity::Response>, Status> {
        unimplemented("UpgradeResourceIdentity")
    }

    async fn read_resource(
        &self,
        _request: Request<read_resource::Request>,
    ) -> Result<Response<read_resource::Response>, Status> {
        unimplemented("ReadResource")
    }

    async fn plan_resource_change(
        &self,
        _request: Request<plan_resource_change::Request>,
    ) -> Result<Response<plan_resource_change::Response>, Status> {
        unimplemented("PlanResourceChange")
    }

    async fn apply_resource_change(
        &self,
        _request: Request<apply_resource_change::Request>,
    ) -> Result<Response<apply_resource_change::Response>, Status> {
        unimplemented("ApplyResourceChange")
    }

    async fn import_resource_state(
        &self,
        _request: Request<import_resource_state::Request>,
    ) -> Result<Response<import_resource_state::Response>, Status> {
        unimplemented("ImportResourceState")
    }

    async fn move_resource_state(
        &self,
        _request: Request<move_resource_state::Request>,
    ) -> Result<Response<move_resource_state::Response>, Status> {
        unimplemented("MoveResourceState")
    }

    async fn generate_resource_config(
        &self,
        _request: Request<generate_resource_config::Request>,
    ) -> Result<Response<generate_resource_config::Response>, Status> {
        unimplemented("GenerateResourceConfig")
    }

    async fn read_data_source(
        &self,
        _request: Request<read_data_source::Request>,
    ) -> Result<Response<read_data_source::Response>, Status> {
        unimplemented("ReadDataSource")
    }

    async fn validate_ephemeral_resource_config(
        &self,
        _request: Request<validate_ephemeral_resource_config::Request>,
    ) -> Result<Response<validate_ephemeral_resource_config::Response>, Status> {
        unimplemented("ValidateEphemeralResourceConfig")
    }

    async fn open_ephemeral_resource(
        &self,
        _request: Request<open_ephemeral_resource::Request>,
    ) -> Result<Response<open_ephemeral_resource::Response>, Status> {
        unimplemented("OpenEphemeralResource")
    }

    async fn renew_ephemeral_resource(
        &self,
        _request: Request<renew_ephemeral_resource::Request>,
    ) -> Result<Response<renew_ephemeral_resource::Response>, Status> {
        unimplemented("RenewEphemeralResource")
    }

    async fn close_ephemeral_resource(
        &self,
        _request: Request<close_ephemeral_resource::Request>,
    ) -> Result<Response<close_ephemeral_resource::Response>, Status> {
        unimplemented("CloseEphemeralResource")
    }

    async fn validate_list_resource_config(
        &self,
        _request: Request<validate_list_resource_config::Request>,
    ) -> Result<Response<validate_list_resource_config::Response>, Status> {
        unimplemented("ValidateListResourceConfig")
    }

    async fn call_function(
        &self,
        _request: Request<call_function::Request>,
    ) -> Result<Response<call_function::Response>, Status> {
        unimplemented("CallFunction")
    }

    async fn validate_state_store_config(
        &self,
        _request: Request<validate_state_store::Request>,
    ) -> Result<Response<validate_state_store::Response>, Status> {
        unimplemented("ValidateStateStoreConfig")
    }

    async fn configure_state_store(
        &self,
        _request: Request<configure_state_store::Request>,
    ) -> Result<Response<configure_state_store::Response>, Status> {
        unimplemented("ConfigureStateStore")
    }

    async fn lock_state(
        &self,
        _request: Request<lock_state::Request>,
    ) -> Result<Response<lock_state::Response>, Status> {
        unimplemented("LockState")
    }

    async fn unlock_state(
        &self,
        _request: Request<unlock_state::Request>,
    ) -> Result<Response<unlock_state::Response>, Status> {
        unimplemented("UnlockState")
    }

    async fn get_states(
        &self,
        _request: Request<get_states::Request>,
    ) -> Result<Response<get_states::Response>, Status> {
        unimplemented("GetStates")
    }

    async fn delete_state(
        &self,
        _request: Request<delete_state::Request>,
    ) -> Result<Response<delete_state::Response>, Status> {
        unimplemented("DeleteState")
    }

    async fn plan_action(
        &self,
        _request: Request<plan_action::Request>,
    ) -> Result<Response<plan_action::Response>, Status> {
        unimplemented("PlanAction")
    }

    async fn validate_action_config(
        &self,
        _request: Request<validate_action_config::Request>,
    ) -> Result<Response<validate_action_config::Response>, Status> {
        unimplemented("ValidateActionConfig")
    }

    type ListResourceStream = Empty<list_resource::Event>;

    async fn list_resource(
        &self,
        _request: Request<list_resource::Request>,
    ) -> Result<Response<Self::ListResourceStream>, Status> {
        unimplemented("ListResource")
    }

    type ReadStateBytesStream = Empty<read_state_bytes::Response>;

    async fn read_state_bytes(
        &self,
        _request: Request<read_state_bytes::Request>,
    ) -> Result<Response<Self::ReadStateBytesStream>, Status> {
        unimplemented("ReadStateBytes")
    }

    async fn write_state_bytes(
        &self,
        _request: Request<Streaming<write_state_bytes::RequestChunk>>,
    ) -> Result<Response<write_state_bytes::Response>, Status> {
        unimplemented("WriteStateBytes")
    }

    type InvokeActionStream = Empty<invoke_action::Event>;

    async fn invoke_action(
        &self,
        _request: Request<invoke_action::Request>,
    ) -> Result<Response<Self::InvokeActionStream>, Status> {
        unimplemented("InvokeAction")
    }
}
