//! The data source and list RPCs: validate and read a data source, validate a list
//! configuration, and stream what a resource type's listing finds.

use tonic::{Request, Response};

use super::codec::{decode, decode_config, encode};
use super::key_check::validate_decoded;
use super::reply::{Rpc, internal, respond, unknown_type};
use super::state::ProviderServer;
use super::stop::stopped_diagnostics;
use crate::terraform::framework::config_scan::BlockKind;
use crate::terraform::framework::schema::null_object;
use crate::terraform::framework::{
    Attribute, DataReadOutcome, Diagnostics, ListEvent, ListRequest, ListSink, Provider, Resource, Schema,
};
use crate::terraform::plugin::proto::tfplugin6 as pb;
use crate::terraform::plugin::schema_proto::diagnostics as pb_diags;
use crate::terraform::tfvalue::{AttributePath, Type, Value};

impl<P: Provider> ProviderServer<P> {
    pub(super) async fn validate_data_resource_config_rpc(
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

    pub(super) async fn read_data_source_rpc(
        &self,
        req: Request<pb::read_data_source::Request>,
    ) -> Rpc<pb::read_data_source::Response> {
        let req = req.into_inner();
        let started = std::time::Instant::now();
        let result = async {
            let ds = self
                .provider
                .data_source(&req.type_name)
                .ok_or_else(|| unknown_type("data source", &req.type_name))?;
            let ty = ds.schema().value_type();
            let config = decode_config(req.config.as_ref(), &ty, "data source configuration")?;
            let ctx = self.context()?;
            let outcome = self
                .stop
                .guard(ds.read_or_defer(&ctx, &config), || Err(stopped_diagnostics()))
                .await?;
            let deferral_allowed = req
                .client_capabilities
                .as_ref()
                .is_some_and(|c| c.deferral_allowed);
            match outcome {
                DataReadOutcome::Read(state) => encode(&state, &ty, "data source state").map(|s| (s, None)),
                DataReadOutcome::Encoded(msgpack) => Ok((
                    pb::DynamicValue {
                        msgpack,
                        json: Vec::new(),
                    },
                    None,
                )),
                // Deferred: the computed attributes stay unknown until the read can happen.
                DataReadOutcome::NotYet(_) if deferral_allowed => {
                    let state = unknown_computed(&ds.schema().attributes, &config);
                    encode(&state, &ty, "data source state").map(|s| {
                        (
                            s,
                            Some(pb::Deferred {
                                reason: pb::deferred::Reason::ProviderConfigUnknown as i32,
                            }),
                        )
                    })
                }
                DataReadOutcome::NotYet(d) => Err(d),
            }
        }
        .await;
        // What the bench reads for a data source's answer time: decode, read, encode.
        tracing::debug!(
            data_source = %req.type_name,
            micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            "data source read"
        );
        respond(
            result.map(|(s, deferred)| pb::read_data_source::Response {
                state: Some(s),
                deferred,
                ..Default::default()
            }),
            |d| pb::read_data_source::Response {
                diagnostics: self.data_source_diags(&req.type_name, &d),
                ..Default::default()
            },
        )
    }

    /// Streams what the resource type's listing finds. Failures before the listing starts
    /// (an unknown type, a configuration that does not decode, an unconfigured provider) are
    /// one event with the error, as are failures of the listing itself.
    pub(super) async fn list_resource_rpc(
        &self,
        req: Request<pb::list_resource::Request>,
    ) -> Rpc<<Self as pb::provider_server::Provider>::ListResourceStream> {
        let req = req.into_inner();
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let prepared = (|| {
            let (_, schema) = self.list_resource_type(&req.type_name)?;
            let config =
                decode_list_config(schema, req.config.as_ref()).map_err(|d| d.within(&list_config_path()))?;
            let ctx = self.context()?;
            Ok::<_, Diagnostics>((config, ctx))
        })();
        match prepared {
            Err(d) => {
                let event = pb::list_resource::Event {
                    diagnostic: pb_diags(&d),
                    ..Default::default()
                };
                // The receiver is returned below, so the one event always fits.
                let _ = tx.try_send(Ok(event));
            }
            Ok((config, ctx)) => {
                let provider = self.provider.clone();
                let stop = self.stop.clone();
                let request = ListRequest {
                    config,
                    include_resource_object: req.include_resource_object,
                    limit: req.limit,
                };
                tokio::spawn(async move {
                    let Some(resource) = provider.resource(&req.type_name) else {
                        return;
                    };
                    let (sink, mut events) = ListSink::new(&request);
                    let listing = async {
                        let listed = async {
                            resource.list(&ctx, &request, &sink).await;
                            true
                        };
                        if !stop.guard(listed, || false).await {
                            sink.fail(stopped_diagnostics()).await;
                        }
                        drop(sink);
                    };
                    let forward = async {
                        while let Some(event) = events.recv().await {
                            if tx.send(Ok(list_event(resource, event))).await.is_err() {
                                break;
                            }
                        }
                        // Terraform stopped reading: let the listing see it and stop.
                        drop(events);
                    };
                    tokio::join!(listing, forward);
                });
            }
        }
        Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(rx)))
    }

    pub(super) async fn validate_list_resource_config_rpc(
        &self,
        req: Request<pb::validate_list_resource_config::Request>,
    ) -> Rpc<pb::validate_list_resource_config::Response> {
        let req = req.into_inner();
        let mut scan = Vec::new();
        let mut d = match self.list_resource_type(&req.type_name) {
            Ok((r, schema)) => {
                let config = decode_list_config(schema, req.config.as_ref());
                if let Ok(config) = &config {
                    scan = self.scan_findings(BlockKind::List, &req.type_name, schema, config);
                }
                validate_decoded(schema, config, |c, d| r.validate_list(c, d))
            }
            Err(d) => d,
        }
        .within(&list_config_path());
        // `limit` may come as a value of its own (Terraform validates its type first); it is
        // an argument of the list block itself.
        if let Ok(Value::Number(n)) = decode(req.limit.as_ref(), &Type::Number, "list limit")
            && n.as_i64().is_none_or(|l| l < 0)
        {
            d.error_at(
                &AttributePath::root().attr("limit"),
                "Invalid list limit",
                format!("The list block's limit must be a whole number of at least 0, not {n}."),
            );
        }
        scan.extend(pb_diags(&d));
        Ok(Response::new(pb::validate_list_resource_config::Response {
            diagnostics: scan,
        }))
    }
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
