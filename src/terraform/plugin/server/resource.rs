//! The managed-resource RPCs: validation of a resource configuration, read, plan, apply,
//! import, move, upgrade of state and identity, and config generation. The service in `mod.rs`
//! forwards each to the method of the same name (with `_rpc`) here.

use std::sync::Arc;

use tonic::{Request, Response};

use super::codec::{decode, decode_identity, encode, identity_data};
use super::reply::{Rpc, malformed, respond, unknown_type};
use super::state::ProviderServer;
use super::stop::stopped_diagnostics;
use crate::terraform::framework::config_scan::BlockKind;
use crate::terraform::framework::identity::check_unchanged;
use crate::terraform::framework::plan::{plan, plan_recreate};
use crate::terraform::framework::upgrade::upgrade_state;
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, MoveSource, PlanToCheck, Provider, ReadOutcome, Resource, private,
};
use crate::terraform::plugin::proto::tfplugin6 as pb;
use crate::terraform::plugin::schema_proto::{diagnostics as pb_diags, path as pb_path};
use crate::terraform::tfvalue::{Type, Value};

/// What planning settles before the remote checks: the planned state, the prior it was
/// adjusted from (null for a create or a recreation), the attribute paths that force a
/// replacement, the diagnostics so far, the planned identity, and the configured context
/// (absent while the provider is not configured).
struct PlannedChange<C> {
    planned: Value,
    adjust_from: Value,
    ty: Type,
    replace: Vec<pb::AttributePath>,
    diagnostics: Diagnostics,
    identity: Option<pb::ResourceIdentityData>,
    ctx: Option<Arc<C>>,
}

impl<P: Provider> ProviderServer<P> {
    pub(super) async fn validate_resource_config_rpc(
        &self,
        req: Request<pb::validate_resource_config::Request>,
    ) -> Rpc<pb::validate_resource_config::Response> {
        let req = req.into_inner();
        // Terraform validates each instance again once the provider is configured (the plan
        // and apply walks): the type's rules then see the configured provider's context.
        let ctx = self.context().ok();
        let diagnostics = match self.provider.resource(&req.type_name) {
            Some(r) => self.validate_block(
                (BlockKind::Resource, &req.type_name),
                r.schema(),
                req.config.as_ref(),
                "resource configuration",
                |c, d| r.validate_in(ctx.as_deref(), c, d),
            ),
            None => pb_diags(&unknown_type("resource", &req.type_name)),
        };
        Ok(Response::new(pb::validate_resource_config::Response {
            diagnostics,
        }))
    }

    pub(super) async fn upgrade_resource_state_rpc(
        &self,
        req: Request<pb::upgrade_resource_state::Request>,
    ) -> Rpc<pb::upgrade_resource_state::Response> {
        let req = req.into_inner();
        let result = (|| {
            let schema = self.resource_schema(&req.type_name)?;
            let raw = req.raw_state.unwrap_or_default();
            if raw.json.is_empty() && !raw.flatmap.is_empty() {
                return Err(Diagnostics::from_error(
                    "Unsupported state format",
                    "This state is in the pre-0.12 flatmap format, which this provider never wrote.",
                ));
            }
            let state = upgrade_state(&req.type_name, schema, req.version, &raw.json)?;
            let ty = schema.value_type();
            encode(&state, &ty, "upgraded state")
        })();
        respond(
            result.map(|s| pb::upgrade_resource_state::Response {
                upgraded_state: Some(s),
                diagnostics: vec![],
            }),
            |d| pb::upgrade_resource_state::Response {
                upgraded_state: None,
                diagnostics: self.resource_diags(&req.type_name, &d),
            },
        )
    }

    pub(super) async fn upgrade_resource_identity_rpc(
        &self,
        req: Request<pb::upgrade_resource_identity::Request>,
    ) -> Rpc<pb::upgrade_resource_identity::Response> {
        let req = req.into_inner();
        let result = (|| {
            let resource = self.resource(&req.type_name)?;
            let schema = resource.identity_schema().ok_or_else(|| {
                Diagnostics::from_error(
                    "Resource identity is not supported",
                    format!("{} declares no resource identity.", req.type_name),
                )
            })?;
            let raw = req.raw_identity.unwrap_or_default();
            let identity = schema.upgrade(req.version, &raw.json)?;
            encode(&identity, &schema.value_type(), "upgraded identity")
        })();
        respond(
            result.map(|i| pb::upgrade_resource_identity::Response {
                upgraded_identity: Some(pb::ResourceIdentityData {
                    identity_data: Some(i),
                }),
                diagnostics: vec![],
            }),
            |d| pb::upgrade_resource_identity::Response {
                upgraded_identity: None,
                diagnostics: self.resource_diags(&req.type_name, &d),
            },
        )
    }

    pub(super) async fn read_resource_rpc(
        &self,
        req: Request<pb::read_resource::Request>,
    ) -> Rpc<pb::read_resource::Response> {
        let req = req.into_inner();
        let private = req.private.clone();
        let result = async {
            let resource = self.resource(&req.type_name)?;
            let ty = resource.schema().value_type();
            let current = decode(req.current_state.as_ref(), &ty, "resource state")?;
            if current.is_null() {
                return encode(&Value::Null, &ty, "state")
                    .map(|s| (s, Diagnostics::new(), None, private.clone(), None));
            }
            let current_identity = decode_identity(resource, req.current_identity.as_ref())?;
            let ctx = self.context()?;
            let outcome = self
                .stop
                .guard(resource.read(&ctx, &current), || Err(stopped_diagnostics()))
                .await?;
            let deferral_allowed = req
                .client_capabilities
                .as_ref()
                .is_some_and(|c| c.deferral_allowed);
            // The private state says whether this refresh found the object being deleted (for
            // the plan that follows); a refresh that could not look keeps what it had.
            let (new_state, diags, deferred, private) = match outcome {
                ReadOutcome::Found(v) => (v, Diagnostics::new(), None, private::cleared()),
                ReadOutcome::BeingDeleted(v, d) => (v, d, None, private::being_deleted()),
                ReadOutcome::Gone => (Value::Null, Diagnostics::new(), None, private::cleared()),
                // Where Terraform allows it, defer rather than keep the prior state with a warning.
                ReadOutcome::KeptPrior(_) if deferral_allowed => (
                    current,
                    Diagnostics::new(),
                    Some(pb::Deferred {
                        reason: pb::deferred::Reason::ProviderConfigUnknown as i32,
                    }),
                    private.clone(),
                ),
                ReadOutcome::KeptPrior(d) => (current, d, None, private.clone()),
            };
            let mut diags = diags;
            let identity = identity_value(resource, &new_state);
            if let Err(d) = check_unchanged(&req.type_name, "refresh", &current_identity, &identity) {
                diags.extend(d);
            }
            let identity = identity_data(resource, &identity)?;
            encode(&new_state, &ty, "state").map(|s| (s, diags, deferred, private, identity))
        }
        .await;
        respond(
            result.map(
                |(s, d, deferred, private, new_identity)| pb::read_resource::Response {
                    new_state: Some(s),
                    diagnostics: self.resource_diags(&req.type_name, &d),
                    private,
                    deferred,
                    new_identity,
                },
            ),
            |d| pb::read_resource::Response {
                // Keep what Terraform had: a failed refresh must not drop the object from state.
                new_state: req.current_state.clone(),
                diagnostics: self.resource_diags(&req.type_name, &d),
                private: private.clone(),
                new_identity: req.current_identity.clone(),
                ..Default::default()
            },
        )
    }

    pub(super) async fn plan_resource_change_rpc(
        &self,
        req: Request<pb::plan_resource_change::Request>,
    ) -> Rpc<pb::plan_resource_change::Response> {
        let req = req.into_inner();
        let result = (|| {
            let resource = self.resource(&req.type_name)?;
            let schema = resource.schema();
            let ty = schema.value_type();
            let prior = decode(req.prior_state.as_ref(), &ty, "prior state")?;
            let proposed = decode(req.proposed_new_state.as_ref(), &ty, "proposed new state")?;
            let config = decode(req.config.as_ref(), &ty, "configuration")?;
            if proposed.is_null() {
                // Destroy: nothing to plan; the identity stays what it was. The remote checks
                // still see it (what the destroy will take with it).
                return Ok(PlannedChange {
                    planned: Value::Null,
                    adjust_from: prior,
                    ty,
                    replace: vec![],
                    diagnostics: Diagnostics::new(),
                    identity: req.prior_identity.clone(),
                    ctx: self.context().ok(),
                });
            }
            let prior_identity = decode_identity(resource, req.prior_identity.as_ref())?;
            if config.is_null() {
                return Err(malformed(
                    "configuration",
                    "it is missing or null in a plan that is not a destroy",
                ));
            }
            // The last refresh found the object being deleted: plan its recreation, which the
            // resource adjusts as it would a create.
            let recreate = !prior.is_null() && private::is_being_deleted(&req.prior_private);
            let (mut planned, adjust_from) = if recreate {
                let p = plan_recreate(&schema.attributes, &schema.blocks, &config, &prior);
                (p, Value::Null)
            } else {
                (
                    plan(&schema.attributes, &schema.blocks, &config, &prior),
                    prior.clone(),
                )
            };
            let mut d = Diagnostics::new();
            let ctx = self.context().ok();
            resource.modify_plan_in(
                ctx.as_deref(),
                &config,
                &adjust_from,
                &mut planned.planned,
                &mut d,
            );
            if !prior.is_null() {
                for path in resource.extra_replacements(&prior, &planned.planned) {
                    if !planned.requires_replace.contains(&path) {
                        planned.requires_replace.push(path);
                    }
                }
            }
            let replace: Vec<_> = planned.requires_replace.iter().map(pb_path).collect();
            // The identity contract: an update keeps the identity (known); a create or a
            // replacement plans the new object's, unknown where its name is.
            let identity = identity_value(resource, &planned.planned);
            if !prior.is_null() && replace.is_empty() {
                if !identity.is_null() && !identity.is_wholly_known() {
                    d.error(
                        "Provider planned an unknown identity",
                        format!(
                            "The update of this {} plans an identity with unknown values. This is a bug in the provider.",
                            req.type_name
                        ),
                    );
                }
                if let Err(e) =
                    check_unchanged(&req.type_name, "planning an update", &prior_identity, &identity)
                {
                    d.extend(e);
                }
            }
            let identity = identity_data(resource, &identity)?;
            Ok::<_, Diagnostics>(PlannedChange {
                planned: planned.planned,
                adjust_from,
                ty,
                replace,
                diagnostics: d,
                identity,
                ctx,
            })
        })();
        // Checks that ask the remote side (best effort, never failing on its absence) run after
        // the plan is settled, and only for a plan without errors; they see the prior the plan
        // was adjusted from (null for a create or a recreation), and a null plan for a destroy.
        let result = async {
            let PlannedChange {
                planned,
                adjust_from,
                ty,
                replace,
                diagnostics: mut d,
                identity,
                ctx,
            } = result?;
            if !d.has_errors()
                && let Some(ctx) = ctx
            {
                let resource = self.resource(&req.type_name)?;
                let change = PlanToCheck {
                    prior: &adjust_from,
                    planned: &planned,
                    replaces: !replace.is_empty(),
                };
                d.extend(resource.check_plan_remotely(&ctx, &change).await);
            }
            Ok::<_, Diagnostics>((encode(&planned, &ty, "plan")?, replace, d, identity))
        }
        .await;
        respond(
            result.map(
                |(planned, replace, d, planned_identity)| pb::plan_resource_change::Response {
                    planned_state: Some(planned),
                    requires_replace: replace,
                    // The mark has done its work: the apply finds the deletion itself, and the
                    // state it writes must not plan another recreation.
                    planned_private: if private::is_being_deleted(&req.prior_private) {
                        private::cleared()
                    } else {
                        req.prior_private.clone()
                    },
                    diagnostics: self.resource_diags(&req.type_name, &d),
                    planned_identity,
                    ..Default::default()
                },
            ),
            |d| pb::plan_resource_change::Response {
                diagnostics: self.resource_diags(&req.type_name, &d),
                ..Default::default()
            },
        )
    }

    pub(super) async fn apply_resource_change_rpc(
        &self,
        req: Request<pb::apply_resource_change::Request>,
    ) -> Rpc<pb::apply_resource_change::Response> {
        let req = req.into_inner();
        let private = req.planned_private.clone();
        let result = async {
            let resource = self.resource(&req.type_name)?;
            let ty = resource.schema().value_type();
            let prior = decode(req.prior_state.as_ref(), &ty, "prior state")?;
            let planned = decode(req.planned_state.as_ref(), &ty, "planned state")?;
            // Not used (the plan has it all), but a configuration that does not decode means
            // the request is not what Terraform planned.
            decode(req.config.as_ref(), &ty, "configuration")?;
            let ctx = self.context()?;
            let planned_identity = decode_identity(resource, req.planned_identity.as_ref())?;
            let (state, mut diags) = if planned.is_null() {
                let d = self
                    .stop
                    .guard(resource.delete(&ctx, &prior), stopped_diagnostics)
                    .await;
                // A failed delete keeps the object in state.
                (
                    if d.has_errors() {
                        prior.clone()
                    } else {
                        Value::Null
                    },
                    d,
                )
            } else if prior.is_null() {
                let out = self
                    .stop
                    .guard(resource.create(&ctx, &planned), || {
                        ApplyOutcome::failed(None, stopped_diagnostics())
                    })
                    .await;
                (out.state.unwrap_or(Value::Null), out.diagnostics)
            } else {
                let out = self
                    .stop
                    .guard(resource.update(&ctx, &prior, &planned), || {
                        ApplyOutcome::failed(None, stopped_diagnostics())
                    })
                    .await;
                // A failed update without a better answer keeps the prior state.
                (out.state.unwrap_or(prior.clone()), out.diagnostics)
            };
            let identity = identity_value(resource, &state);
            // An update applies the identity it planned (a create's planned one may have
            // been partly unknown, and a replacement's is a new object's).
            if !prior.is_null()
                && !planned.is_null()
                && let Err(d) = check_unchanged(&req.type_name, "an update", &planned_identity, &identity)
            {
                diags.extend(d);
            }
            let identity = identity_data(resource, &identity)?;
            Ok::<_, Diagnostics>((encode(&state, &ty, "new state")?, diags, identity))
        }
        .await;
        respond(
            result.map(|(s, d, new_identity)| pb::apply_resource_change::Response {
                new_state: Some(s),
                private: private.clone(),
                diagnostics: self.resource_diags(&req.type_name, &d),
                new_identity,
                ..Default::default()
            }),
            |d| pb::apply_resource_change::Response {
                new_state: req.prior_state.clone(),
                private: private.clone(),
                diagnostics: self.resource_diags(&req.type_name, &d),
                ..Default::default()
            },
        )
    }

    pub(super) async fn import_resource_state_rpc(
        &self,
        req: Request<pb::import_resource_state::Request>,
    ) -> Rpc<pb::import_resource_state::Response> {
        let req = req.into_inner();
        let result = async {
            let resource = self.resource(&req.type_name)?;
            let ty = resource.schema().value_type();
            let by_identity = decode_identity(resource, req.identity.as_ref())?;
            if req.identity.is_some() && resource.identity_schema().is_none() {
                return Err(Diagnostics::from_error(
                    "Import by identity is not supported",
                    format!("{} has no resource identity; import it by ID.", req.type_name),
                ));
            }
            let ctx = self.context()?;
            let state = if by_identity.is_null() {
                self.stop
                    .guard(resource.import(&ctx, &req.id), || Err(stopped_diagnostics()))
                    .await?
            } else {
                if let Some(schema) = resource.identity_schema() {
                    schema.check_import(&by_identity, &req.type_name)?;
                }
                self.stop
                    .guard(resource.import_by_identity(&ctx, &by_identity), || {
                        Err(stopped_diagnostics())
                    })
                    .await?
            };
            let identity = identity_data(resource, &identity_value(resource, &state))?;
            Ok((encode(&state, &ty, "imported state")?, identity))
        }
        .await;
        respond(
            result.map(|(s, identity)| pb::import_resource_state::Response {
                imported_resources: vec![pb::import_resource_state::ImportedResource {
                    type_name: req.type_name.clone(),
                    state: Some(s),
                    identity,
                    ..Default::default()
                }],
                ..Default::default()
            }),
            |d| pb::import_resource_state::Response {
                diagnostics: self.resource_diags(&req.type_name, &d),
                ..Default::default()
            },
        )
    }

    pub(super) async fn move_resource_state_rpc(
        &self,
        req: Request<pb::move_resource_state::Request>,
    ) -> Rpc<pb::move_resource_state::Response> {
        let req = req.into_inner();
        let result = (|| {
            let resource = self.resource(&req.target_type_name)?;
            let json = req
                .source_state
                .as_ref()
                .map(|s| s.json.as_slice())
                .unwrap_or_default();
            let source = MoveSource {
                provider_address: &req.source_provider_address,
                type_name: &req.source_type_name,
                schema_version: req.source_schema_version,
                state_json: json,
            };
            let state = resource.move_state(&source)?;
            let identity = identity_data(resource, &identity_value(resource, &state))?;
            Ok::<_, Diagnostics>((
                encode(&state, &resource.schema().value_type(), "moved state")?,
                identity,
            ))
        })();
        respond(
            result.map(|(s, target_identity)| pb::move_resource_state::Response {
                target_state: Some(s),
                target_identity,
                ..Default::default()
            }),
            |d| pb::move_resource_state::Response {
                diagnostics: self.resource_diags(&req.target_type_name, &d),
                ..Default::default()
            },
        )
    }

    pub(super) async fn generate_resource_config_rpc(
        &self,
        req: Request<pb::generate_resource_config::Request>,
    ) -> Rpc<pb::generate_resource_config::Response> {
        let req = req.into_inner();
        let result = (|| {
            let resource = self.resource(&req.type_name)?;
            let ty = resource.schema().value_type();
            let state = decode(req.state.as_ref(), &ty, "resource state")?;
            encode(&resource.generate_config(&state), &ty, "generated configuration")
        })();
        respond(
            result.map(|c| pb::generate_resource_config::Response {
                config: Some(c),
                diagnostics: vec![],
            }),
            |d| pb::generate_resource_config::Response {
                config: None,
                diagnostics: self.resource_diags(&req.type_name, &d),
            },
        )
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
