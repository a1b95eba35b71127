//! The tfplugin6 `Provider` service: decodes each request against the schema it concerns,
//! calls the framework (validation, planning) and the provider's resources, and encodes the
//! answer. Every failure, including malformed input, becomes a diagnostic; nothing here panics.
//!
//! This file is the wiring: the service forwards each RPC to the module of its job:
//!
//! - [`state`]: the server struct and the look-ups every handler starts with;
//! - [`codec`]: `DynamicValue` (msgpack/JSON) to and from values and identities;
//! - [`reply`]: the response of a handler body, and the diagnostics the server finds itself;
//! - [`stop`]: `StopProvider`'s cancellation, under which each long call runs
//!   ([`Stop::guard`]), so a Ctrl-C during a long wait returns promptly with a diagnostic;
//! - [`provider`]: metadata, schemas, the provider's configuration, `StopProvider`;
//! - [`resource`]: the managed-resource RPCs; [`data`]: data sources and list resources;
//! - [`key_check`]: every `Validate*Config`'s scan for misspelled keys and schema validation;
//! - [`unsupported`]: ephemeral resources, functions, state stores and actions, which this
//!   provider declares none of.

mod codec;
mod data;
mod key_check;
mod provider;
mod reply;
mod resource;
mod state;
mod stop;
mod unsupported;

use tonic::{Request, Status};

use crate::terraform::framework::Provider;
use crate::terraform::plugin::proto::tfplugin6 as pb;
use reply::Rpc;
pub use state::ProviderServer;
pub use stop::Stop;

#[tonic::async_trait]
impl<P: Provider> pb::provider_server::Provider for ProviderServer<P> {
    async fn get_metadata(&self, req: Request<pb::get_metadata::Request>) -> Rpc<pb::get_metadata::Response> {
        self.get_metadata_rpc(req).await
    }

    async fn get_provider_schema(
        &self,
        req: Request<pb::get_provider_schema::Request>,
    ) -> Rpc<pb::get_provider_schema::Response> {
        self.get_provider_schema_rpc(req).await
    }

    async fn get_resource_identity_schemas(
        &self,
        req: Request<pb::get_resource_identity_schemas::Request>,
    ) -> Rpc<pb::get_resource_identity_schemas::Response> {
        self.get_resource_identity_schemas_rpc(req).await
    }

    async fn get_functions(
        &self,
        _: Request<pb::get_functions::Request>,
    ) -> Rpc<pb::get_functions::Response> {
        unsupported::get_functions()
    }

    async fn validate_provider_config(
        &self,
        req: Request<pb::validate_provider_config::Request>,
    ) -> Rpc<pb::validate_provider_config::Response> {
        self.validate_provider_config_rpc(req).await
    }

    async fn validate_resource_config(
        &self,
        req: Request<pb::validate_resource_config::Request>,
    ) -> Rpc<pb::validate_resource_config::Response> {
        self.validate_resource_config_rpc(req).await
    }

    async fn validate_data_resource_config(
        &self,
        req: Request<pb::validate_data_resource_config::Request>,
    ) -> Rpc<pb::validate_data_resource_config::Response> {
        self.validate_data_resource_config_rpc(req).await
    }

    async fn upgrade_resource_state(
        &self,
        req: Request<pb::upgrade_resource_state::Request>,
    ) -> Rpc<pb::upgrade_resource_state::Response> {
        self.upgrade_resource_state_rpc(req).await
    }

    async fn upgrade_resource_identity(
        &self,
        req: Request<pb::upgrade_resource_identity::Request>,
    ) -> Rpc<pb::upgrade_resource_identity::Response> {
        self.upgrade_resource_identity_rpc(req).await
    }

    async fn configure_provider(
        &self,
        req: Request<pb::configure_provider::Request>,
    ) -> Rpc<pb::configure_provider::Response> {
        self.configure_provider_rpc(req).await
    }

    async fn read_resource(
        &self,
        req: Request<pb::read_resource::Request>,
    ) -> Rpc<pb::read_resource::Response> {
        self.read_resource_rpc(req).await
    }

    async fn plan_resource_change(
        &self,
        req: Request<pb::plan_resource_change::Request>,
    ) -> Rpc<pb::plan_resource_change::Response> {
        self.plan_resource_change_rpc(req).await
    }

    async fn apply_resource_change(
        &self,
        req: Request<pb::apply_resource_change::Request>,
    ) -> Rpc<pb::apply_resource_change::Response> {
        self.apply_resource_change_rpc(req).await
    }

    async fn import_resource_state(
        &self,
        req: Request<pb::import_resource_state::Request>,
    ) -> Rpc<pb::import_resource_state::Response> {
        self.import_resource_state_rpc(req).await
    }

    async fn move_resource_state(
        &self,
        req: Request<pb::move_resource_state::Request>,
    ) -> Rpc<pb::move_resource_state::Response> {
        self.move_resource_state_rpc(req).await
    }

    async fn generate_resource_config(
        &self,
        req: Request<pb::generate_resource_config::Request>,
    ) -> Rpc<pb::generate_resource_config::Response> {
        self.generate_resource_config_rpc(req).await
    }

    async fn read_data_source(
        &self,
        req: Request<pb::read_data_source::Request>,
    ) -> Rpc<pb::read_data_source::Response> {
        self.read_data_source_rpc(req).await
    }

    async fn validate_ephemeral_resource_config(
        &self,
        req: Request<pb::validate_ephemeral_resource_config::Request>,
    ) -> Rpc<pb::validate_ephemeral_resource_config::Response> {
        unsupported::validate_ephemeral_resource_config(req.into_inner())
    }

    async fn open_ephemeral_resource(
        &self,
        req: Request<pb::open_ephemeral_resource::Request>,
    ) -> Rpc<pb::open_ephemeral_resource::Response> {
        unsupported::open_ephemeral_resource(req.into_inner())
    }

    async fn renew_ephemeral_resource(
        &self,
        req: Request<pb::renew_ephemeral_resource::Request>,
    ) -> Rpc<pb::renew_ephemeral_resource::Response> {
        unsupported::renew_ephemeral_resource(req.into_inner())
    }

    async fn close_ephemeral_resource(
        &self,
        req: Request<pb::close_ephemeral_resource::Request>,
    ) -> Rpc<pb::close_ephemeral_resource::Response> {
        unsupported::close_ephemeral_resource(req.into_inner())
    }

    type ListResourceStream =
        tokio_stream::wrappers::ReceiverStream<Result<pb::list_resource::Event, Status>>;

    async fn list_resource(&self, req: Request<pb::list_resource::Request>) -> Rpc<Self::ListResourceStream> {
        self.list_resource_rpc(req).await
    }

    async fn validate_list_resource_config(
        &self,
        req: Request<pb::validate_list_resource_config::Request>,
    ) -> Rpc<pb::validate_list_resource_config::Response> {
        self.validate_list_resource_config_rpc(req).await
    }

    async fn call_function(
        &self,
        req: Request<pb::call_function::Request>,
    ) -> Rpc<pb::call_function::Response> {
        unsupported::call_function(req.into_inner())
    }

    async fn validate_state_store_config(
        &self,
        _: Request<pb::validate_state_store::Request>,
    ) -> Rpc<pb::validate_state_store::Response> {
        unsupported::no_state_stores()
    }

    async fn configure_state_store(
        &self,
        _: Request<pb::configure_state_store::Request>,
    ) -> Rpc<pb::configure_state_store::Response> {
        unsupported::no_state_stores()
    }

    type ReadStateBytesStream = tokio_stream::Empty<Result<pb::read_state_bytes::Response, Status>>;

    async fn read_state_bytes(
        &self,
        _: Request<pb::read_state_bytes::Request>,
    ) -> Rpc<Self::ReadStateBytesStream> {
        unsupported::no_state_stores()
    }

    async fn write_state_bytes(
        &self,
        _: Request<tonic::Streaming<pb::write_state_bytes::RequestChunk>>,
    ) -> Rpc<pb::write_state_bytes::Response> {
        unsupported::no_state_stores()
    }

    async fn lock_state(&self, _: Request<pb::lock_state::Request>) -> Rpc<pb::lock_state::Response> {
        unsupported::no_state_stores()
    }

    async fn unlock_state(&self, _: Request<pb::unlock_state::Request>) -> Rpc<pb::unlock_state::Response> {
        unsupported::no_state_stores()
    }

    async fn get_states(&self, _: Request<pb::get_states::Request>) -> Rpc<pb::get_states::Response> {
        unsupported::no_state_stores()
    }

    async fn delete_state(&self, _: Request<pb::delete_state::Request>) -> Rpc<pb::delete_state::Response> {
        unsupported::no_state_stores()
    }

    async fn plan_action(&self, _: Request<pb::plan_action::Request>) -> Rpc<pb::plan_action::Response> {
        unsupported::no_actions()
    }

    type InvokeActionStream = tokio_stream::Empty<Result<pb::invoke_action::Event, Status>>;

    async fn invoke_action(&self, _: Request<pb::invoke_action::Request>) -> Rpc<Self::InvokeActionStream> {
        unsupported::no_actions()
    }

    async fn validate_action_config(
        &self,
        _: Request<pb::validate_action_config::Request>,
    ) -> Rpc<pb::validate_action_config::Response> {
        unsupported::no_actions()
    }

    async fn stop_provider(
        &self,
        req: Request<pb::stop_provider::Request>,
    ) -> Rpc<pb::stop_provider::Response> {
        self.stop_provider_rpc(req).await
    }
}
