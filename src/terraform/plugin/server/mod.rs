//! The tfplugin6 `Provider` service: decodes each request against the schema it concerns,
//! calls the framework (validation, planning) and the provider's resources, and encodes the
//! answer. Every failure, including malformed input, becomes a diagnostic; nothing here panics.
//!
//! `StopProvider` cancels whatever is in flight: each long call runs under [`Stop::guard`],
//! so a Ctrl-C during a long wait returns promptly with a diagnostic.

use std::sync::{Arc, OnceLock, RwLock};

use tonic::{Request, Response, Status};

use super::proto::tfplugin6 as pb;
use super::schema_proto::{
    diagnostics as pb_diags, diagnostics_in as pb_diags_in, identity_schema as pb_identity_schema,
    schema as pb_schema,
};
use crate::terraform::framework::config_scan::{BlockKind, ConfigScan};
use crate::terraform::framework::identity::check_unchanged;
use crate::terraform::framework::plan::{plan, plan_recreate};
use crate::terraform::framework::private;
use crate::terraform::framework::schema::null_object;
use crate::terraform::framework::schema::validate_attributes;
use crate::terraform::framework::upgrade::upgrade_state;
use crate::terraform::framework::{
    Attribute, DataReadOutcome, Diagnostics, ListEvent, ListRequest, ListSink, MoveSource, Provider,
    ReadOutcome, Resource, Schema,
};
use crate::terraform::tfvalue::{AttributePath, Type, Value, json, msgpack};

type Rpc<T> = Result<Response<T>, Status>;

/// The gRPC face of a [`Provider`].
pub struct ProviderServer<P: Provider> {
    provider: Arc<P>,
    context: RwLock<Option<Arc<P::Context>>>,
    stop: Stop,
    /// Built on the first `GetProviderSchema`: we advertise `get_provider_schema_optional`, so
    /// Terraform asks in one process of a run and reuses the answer in the others, which then
    /// never pay for encoding every schema.
    schema_response: OnceLock<pb::get_provider_schema::Response>,
    /// The configuration scan for misspelled keys, built on the first validation that needs it
    /// ([`key_check`]).
    scan: OnceLock<ConfigScan>,
}

/// Cancellation for in-flight calls, triggered by `StopProvider`.
#[derive(Clone)]
pub struct Stop {
    tx: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Stop {
    fn new() -> Self {
        Self {
            tx: Arc::new(tokio::sync::watch::channel(false).0),
        }
    }

    fn trigger(&self) {
        self.tx.send_replace(true);
    }

    /// Runs `work` unless and until the provider is asked to stop.
    pub async fn guard<T>(&self, work: impl Future<Output = T>, stopped: impl FnOnce() -> T) -> T {
        let mut rx = self.tx.subscribe();
        tokio::select! {
            out = work => out,
            _ = rx.wait_for(|stopped| *stopped) => stopped(),
        }
    }
}

fn stopped_diagnostics() -> Diagnostics {
    Diagnostics::from_error(
        "Interrupted",
        "Terraform asked the provider to stop (e.g. Ctrl-C) before this operation finished. \
         Whatever was already created is recorded; run the command again to finish.",
    )
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

    fn context(&self) -> Result<Arc<P::Context>, Diagnostics> {
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
    fn resource(&self, type_name: &str) -> Result<&dyn Resource<P::Context>, Diagnostics> {
        self.provider
            .resource(type_name)
            .ok_or_else(|| unknown_type("resource", type_name))
    }

    /// Diagnostics about a resource of `type_name`, placed where Terraform can show them.
    fn resource_diags(&self, type_name: &str, d: &Diagnostics) -> Vec<pb::Diagnostic> {
        match self.provider.resource(type_name) {
            Some(r) => pb_diags_in(d, r.schema()),
            None => pb_diags(d),
        }
    }

    /// Diagnostics about a data source of `type_name`, placed where Terraform can show them.
    fn data_source_diags(&self, type_name: &str, d: &Diagnostics) -> Vec<pb::Diagnostic> {
        match self.provider.data_source(type_name) {
            Some(ds) => pb_diags_in(d, ds.schema()),
            None => pb_diags(d),
        }
    }

    fn resource_schema(&self, type_name: &str) -> Result<&Schema, Diagnostics> {
        self.resource(type_name).map(|r| r.schema())
    }

    /// The list resource type a request names, with its list configuration's schema, or the
    /// diagnostic for a type this provider cannot list.
    fn list_resource_type(
        &self,
        type_name: &str,
    ) -> Result<(&dyn Resource<P::Context>, &Schema), Diagnostics> {
        self.provider
            .resource(type_name)
            .and_then(|r| Some((r, r.list_schema()?)))
            .ok_or_else(|| unknown_type("list resource", type_name))
    }
}

fn internal(what: &str) -> Diagnostics {
    Diagnostics::from_error("Internal provider error", what.to_string())
}

fn unknown_type(kind: &str, type_name: &str) -> Diagnostics {
    Diagnostics::from_error(
        format!("Unknown {kind} type"),
        format!(
            "This provider has no {kind} type {type_name:?}. Check the spelling, or upgrade the provider."
        ),
    )
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

/// The identity of the object `state` describes: null when the type has no identity or the
/// state names no object yet.
fn identity_value<C: Send + Sync>(resource: &dyn Resource<C>, state: &Value) -> Value {
    if resource.identity_schema().is_none() || state.is_null() {
        return Value::Null;
    }
    resource.identity(state)
}

/// An identity ready to send (`None` for a null one).
fn identity_data<C: Send + Sync>(
    resource: &dyn Resource<C>,
    identity: &Value,
) -> Result<Option<pb::ResourceIdentityData>, Diagnostics> {
    match resource.identity_schema() {
        Some(schema) if !identity.is_null() => Ok(Some(pb::ResourceIdentityData {
            identity_data: Some(encode(identity, &schema.value_type(), "resource identity")?),
        })),
        _ => Ok(None),
    }
}

/// An identity Terraform sent (null when absent, or when the type has none).
fn decode_identity<C: Send + Sync>(
    resource: &dyn Resource<C>,
    data: Option<&pb::ResourceIdentityData>,
) -> Result<Value, Diagnostics> {
    let (Some(schema), Some(data)) = (resource.identity_schema(), data) else {
        return Ok(Value::Null);
    };
    decode(
        data.identity_data.as_ref(),
        &schema.value_type(),
        "resource identity",
    )
}

/// Where a list resource's configuration sits in the list block Terraform resolves diagnostic
/// paths against: the provider sees only the `config {}` block's value, so the paths of
/// diagnostics about that value are made relative to the block. (The listing's own
/// diagnostics are about what it found, not about the configuration, and carry no such path.)
fn list_config_path() -> AttributePath {
    AttributePath::root().attr("config")
}

/// A list configuration: the list block's `config { … }`, an object of nulls when the block
/// is left out (Terraform then sends null).
fn decode_list_config(schema: &Schema, value: Option<&pb::DynamicValue>) -> Result<Value, Diagnostics> {
    let ty = schema.value_type();
    let config = decode(value, &ty, "list configuration")?;
    Ok(if config.is_null() {
        null_object(&ty)
    } else {
        config
    })
}

/// One listing result as a stream event.
fn list_event<C: Send + Sync>(resource: &dyn Resource<C>, event: ListEvent) -> pb::list_resource::Event {
    match event {
        ListEvent::Diagnostics(d) => pb::list_resource::Event {
            diagnostic: pb_diags(&d),
            ..Default::default()
        },
        ListEvent::Found {
            identity,
            display_name,
            state,
            diagnostics,
        } => {
            let encoded = (|| {
                let schema = resource
                    .identity_schema()
                    .ok_or_else(|| internal("a listed type has no identity schema"))?;
                let identity = encode(&identity, &schema.value_type(), "listed identity")?;
                let state = state
                    .map(|s| encode(&s, &resource.schema().value_type(), "listed state"))
                    .transpose()?;
                Ok::<_, Diagnostics>((identity, state))
            })();
            match encoded {
                Ok((identity, resource_object)) => pb::list_resource::Event {
                    identity: Some(pb::ResourceIdentityData {
                        identity_data: Some(identity),
                    }),
                    display_name,
                    resource_object,
                    diagnostic: pb_diags(&diagnostics),
                },
                Err(d) => pb::list_resource::Event {
                    diagnostic: pb_diags(&d),
                    ..Default::default()
                },
            }
        }
    }
}

/// Decodes a DynamicValue (msgpack, or JSON when only that is set; absent means null).
fn decode(value: Option<&pb::DynamicValue>, ty: &Type, what: &str) -> Result<Value, Diagnostics> {
    let Some(v) = value else { return Ok(Value::Null) };
    let decoded = if !v.msgpack.is_empty() {
        msgpack::decode(&v.msgpack, ty).map_err(|e| e.to_string())
    } else if !v.json.is_empty() {
        json::decode(&v.json, ty).map_err(|e| e.to_string())
    } else {
        return Ok(Value::Null);
    };
    let value = decoded.map_err(|e| malformed(what, &e))?;
    // Terraform never sends a wholly unknown state or configuration (only attributes in it may be
    // unknown): one at the root would reach the resources' code as a value of no shape.
    if value.is_unknown() {
        return Err(malformed(what, "the whole value is unknown"));
    }
    Ok(value)
}

fn malformed(what: &str, why: &str) -> Diagnostics {
    Diagnostics::from_error(
        format!("Malformed {what}"),
        format!(
            "Terraform sent a {what} the provider could not decode: {why}. This is a bug in Terraform or the provider."
        ),
    )
}

/// Decodes a configuration. Terraform always sends one as an object (validation, configure,
/// data source reads): a missing or null configuration is malformed rather than "nothing set".
fn decode_config(value: Option<&pb::DynamicValue>, ty: &Type, what: &str) -> Result<Value, Diagnostics> {
    let value = decode(value, ty, what)?;
    if value.is_null() {
        return Err(malformed(what, "it is missing or null"));
    }
    Ok(value)
}

/// The data source state of a deferred read: the configuration, with every computed
/// attribute the configuration leaves null unknown.
fn unknown_computed(attributes: &[Attribute], config: &Value) -> Value {
    let Value::Object(fields) = config else {
        return config.clone();
    };
    let mut out = fields.clone();
    for a in attributes.iter().filter(|a| a.is_computed()) {
        if out.get(a.name).is_none_or(Value::is_null) {
            out.insert(a.name.to_string(), Value::unknown());
        }
    }
    Value::Object(out)
}

fn encode(value: &Value, ty: &Type, what: &str) -> Result<pb::DynamicValue, Diagnostics> {
    msgpack::encode(value, ty)
        .map(|msgpack| pb::DynamicValue {
            msgpack,
            json: Vec::new(),
        })
        .map_err(|e| internal(&format!("could not encode the {what}: {e}")))
}

/// The schema's validators, then the type's own rules, on a decoded configuration.
fn validate_decoded(
    schema: &Schema,
    config: Result<Value, Diagnostics>,
    rules: impl FnOnce(&Value, &mut Diagnostics),
) -> Diagnostics {
    match config {
        Ok(config) => {
            let mut d = Diagnostics::new();
            validate_attributes(
                &schema.attributes,
                &schema.blocks,
                &config,
                &AttributePath::root(),
                &mut d,
            );
            rules(&config, &mut d);
            d
        }
        Err(d) => d,
    }
}

/// Runs a fallible handler body and turns its diagnostics into the response's.
macro_rules! respond {
    ($body:expr, |$d:ident| $on_err:expr) => {
        match $body {
            Ok(resp) => Ok(Response::new(resp)),
            Err($d) => Ok(Response::new($on_err)),
        }
    };
}

// After `respond!`: macro_rules are in scope only below their definition.
mod data;
mod key_check;
mod resource;

#[tonic::async_trait]
impl<P: Provider> pb::provider_server::Provider for ProviderServer<P> {
    async fn get_metadata(&self, _: Request<pb::get_metadata::Request>) -> Rpc<pb::get_metadata::Response> {
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

    async fn get_provider_schema(
        &self,
        _: Request<pb::get_provider_schema::Request>,
    ) -> Rpc<pb::get_provider_schema::Response> {
        let response = self
            .schema_response
            .get_or_init(|| schema_response(self.provider.as_ref()));
        Ok(Response::new(response.clone()))
    }

    async fn get_resource_identity_schemas(
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

    async fn get_functions(
        &self,
        _: Request<pb::get_functions::Request>,
    ) -> Rpc<pb::get_functions::Response> {
        Ok(Response::new(Default::default()))
    }

    async fn validate_provider_config(
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

    async fn validate_resource_config(
        &self,
        req: Request<pb::validate_resource_config::Request>,
    ) -> Rpc<pb::validate_resource_config::Response> {
        let req = req.into_inner();
        let diagnostics = match self.provider.resource(&req.type_name) {
            Some(r) => self.validate_block(
                (BlockKind::Resource, &req.type_name),
                r.schema(),
                req.config.as_ref(),
                "resource configuration",
                |c, d| r.validate(c, d),
            ),
            None => pb_diags(&unknown_type("resource", &req.type_name)),
        };
        Ok(Response::new(pb::validate_resource_config::Response {
            diagnostics,
        }))
    }

    async fn validate_data_resource_config(
        &self,
        req: Request<pb::validate_data_resource_config::Request>,
    ) -> Rpc<pb::validate_data_resource_config::Response> {
        let req = req.into_inner();
        let diagnostics = match self.provider.data_source(&req.type_name) {
            Some(ds) => self.validate_block(
                (BlockKind::Data, &req.type_name),
                ds.schema(),
                req.config.as_ref(),
                "data source configuration",
                |c, d| ds.validate(c, d),
            ),
            None => pb_diags(&unknown_type("data source", &req.type_name)),
        };
        Ok(Response::new(pb::validate_data_resource_config::Response {
            diagnostics,
        }))
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
        let d = unknown_type("ephemeral resource", &req.into_inner().type_name);
        Ok(Response::new(pb::validate_ephemeral_resource_config::Response {
            diagnostics: pb_diags(&d),
        }))
    }

    async fn open_ephemeral_resource(
        &self,
        req: Request<pb::open_ephemeral_resource::Request>,
    ) -> Rpc<pb::open_ephemeral_resource::Response> {
        let d = unknown_type("ephemeral resource", &req.into_inner().type_name);
        Ok(Response::new(pb::open_ephemeral_resource::Response {
            diagnostics: pb_diags(&d),
            ..Default::default()
        }))
    }

    async fn renew_ephemeral_resource(
        &self,
        req: Request<pb::renew_ephemeral_resource::Request>,
    ) -> Rpc<pb::renew_ephemeral_resource::Response> {
        let d = unknown_type("ephemeral resource", &req.into_inner().type_name);
        Ok(Response::new(pb::renew_ephemeral_resource::Response {
            diagnostics: pb_diags(&d),
            ..Default::default()
        }))
    }

    async fn close_ephemeral_resource(
        &self,
        req: Request<pb::close_ephemeral_resource::Request>,
    ) -> Rpc<pb::close_ephemeral_resource::Response> {
        let d = unknown_type("ephemeral resource", &req.into_inner().type_name);
        Ok(Response::new(pb::close_ephemeral_resource::Response {
            diagnostics: pb_diags(&d),
        }))
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
        let name = req.into_inner().name;
        Ok(Response::new(pb::call_function::Response {
            error: Some(pb::FunctionError {
                text: format!("this provider has no function {name:?}"),
                function_argument: None,
            }),
            ..Default::default()
        }))
    }

    async fn validate_state_store_config(
        &self,
        _: Request<pb::validate_state_store::Request>,
    ) -> Rpc<pb::validate_state_store::Response> {
        Err(Status::unimplemented("this provider declares no state stores"))
    }

    async fn configure_state_store(
        &self,
        _: Request<pb::configure_state_store::Request>,
    ) -> Rpc<pb::configure_state_store::Response> {
        Err(Status::unimplemented("this provider declares no state stores"))
    }

    type ReadStateBytesStream = tokio_stream::Empty<Result<pb::read_state_bytes::Response, Status>>;

    async fn read_state_bytes(
        &self,
        _: Request<pb::read_state_bytes::Request>,
    ) -> Rpc<Self::ReadStateBytesStream> {
        Err(Status::unimplemented("this provider declares no state stores"))
    }

    async fn write_state_bytes(
        &self,
        _: Request<tonic::Streaming<pb::write_state_bytes::RequestChunk>>,
    ) -> Rpc<pb::write_state_bytes::Response> {
        Err(Status::unimplemented("this provider declares no state stores"))
    }

    async fn lock_state(&self, _: Request<pb::lock_state::Request>) -> Rpc<pb::lock_state::Response> {
        Err(Status::unimplemented("this provider declares no state stores"))
    }

    async fn unlock_state(&self, _: Request<pb::unlock_state::Request>) -> Rpc<pb::unlock_state::Response> {
        Err(Status::unimplemented("this provider declares no state stores"))
    }

    async fn get_states(&self, _: Request<pb::get_states::Request>) -> Rpc<pb::get_states::Response> {
        Err(Status::unimplemented("this provider declares no state stores"))
    }

    async fn delete_state(&self, _: Request<pb::delete_state::Request>) -> Rpc<pb::delete_state::Response> {
        Err(Status::unimplemented("this provider declares no state stores"))
    }

    async fn plan_action(&self, _: Request<pb::plan_action::Request>) -> Rpc<pb::plan_action::Response> {
        Err(Status::unimplemented("this provider declares no actions"))
    }

    type InvokeActionStream = tokio_stream::Empty<Result<pb::invoke_action::Event, Status>>;

    async fn invoke_action(&self, _: Request<pb::invoke_action::Request>) -> Rpc<Self::InvokeActionStream> {
        Err(Status::unimplemented("this provider declares no actions"))
    }

    async fn validate_action_config(
        &self,
        _: Request<pb::validate_action_config::Request>,
    ) -> Rpc<pb::validate_action_config::Response> {
        Err(Status::unimplemented("this provider declares no actions"))
    }

    async fn stop_provider(
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
