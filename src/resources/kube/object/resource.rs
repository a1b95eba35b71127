//! The framework's [`Resource`] for a kind: each call of plan, create, read, update, delete,
//! import, list and move, dispatched to the job's file of this module.

use async_trait::async_trait;
use kube::api::DynamicObject;
use serde_json::Value as Json;
use tokio::time::Instant;

use super::values::keep_prior_status;
use super::write::{DEFAULT_CREATE, DEFAULT_UPDATE};
use super::{KubeObjectType, READ_TIMEOUT};
use crate::context::KarpenterContext;
use crate::k8s::{self, KubeError};
use crate::resources::kube::note::Planned;
use crate::resources::kube::{moves, notes};
use crate::terraform::framework::schema::Schema;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, IdentitySchema, ListRequest, ListSink, MoveSource, PlanToCheck, ReadOutcome,
    Resource, timeouts,
};
use crate::terraform::tfvalue::{AttributePath, Value};

#[async_trait]
impl Resource<KarpenterContext> for KubeObjectType {
    fn type_name(&self) -> &'static str {
        self.type_name
    }

    fn schema(&self) -> &Schema {
        self.schema
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        (self.validate)(config, None, diags);
    }

    fn validate_in(&self, ctx: Option<&KarpenterContext>, config: &Value, diags: &mut Diagnostics) {
        (self.validate)(config, ctx.map(|c| &c.plan), diags);
    }

    fn extra_replacements(&self, prior: &Value, planned: &Value) -> Vec<AttributePath> {
        (self.replacements)(prior, planned)
    }

    /// `status` is what Karpenter reports about the `spec`. An update keeps the prior status
    /// in the plan, so a one-value change reads as one line; the apply returns it as planned
    /// ([`merge_known`]) and the next refresh reads what Karpenter wrote since. Only the
    /// status fields of `status_follows` whose spec attributes change are planned unknown.
    /// Defaults that depend on other attributes come first (`plan_defaults`).
    fn modify_plan(&self, config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
        if !planned.is_null() {
            (self.plan_defaults)(config, prior, planned, diags);
        }
        keep_prior_status(prior, planned, self.status_follows);
    }

    /// The plan's checks (what the Karpenter installed in a readable cluster refuses:
    /// [`super::installed`]), then its notes stage ([`notes`]).
    async fn check_plan_remotely(&self, ctx: &KarpenterContext, change: &PlanToCheck<'_>) -> Diagnostics {
        let mut d = self
            .check_installed_release(ctx, change.prior, change.planned)
            .await;
        if d.has_errors() {
            return d;
        }
        let planned = Planned {
            type_name: self.type_name,
            kind: &self.kind,
            schema: self.schema,
            change,
        };
        d.extend(notes::say(ctx, &planned).await);
        d
    }

    async fn create(&self, ctx: &KarpenterContext, planned: &Value) -> ApplyOutcome {
        let timeout = timeouts::get(planned, "create", DEFAULT_CREATE);
        let (mut outcome, notes) = k8s::retry::noting(self.apply(ctx, None, planned, timeout)).await;
        outcome
            .diagnostics
            .extend(self.waits_report(&notes, "create", planned));
        outcome
    }

    async fn update(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
        let timeout = timeouts::get(planned, "update", DEFAULT_UPDATE);
        let (mut outcome, notes) = k8s::retry::noting(self.apply(ctx, Some(prior), planned, timeout)).await;
        outcome
            .diagnostics
            .extend(self.waits_report(&notes, "update", planned));
        outcome
    }

    async fn read(&self, ctx: &KarpenterContext, current: &Value) -> Result<ReadOutcome, Diagnostics> {
        let name = get_str(current, "name").unwrap_or_default().to_string();
        let namespace = self.namespace_of(current);
        let label = self.label(current);
        let client = match ctx.kube().await {
            Ok(c) => c,
            Err(e @ (KubeError::ConfigUnknown(_) | KubeError::NotConfigured(_))) => {
                return Ok(ReadOutcome::KeptPrior(keep_prior_warning(
                    self.kind.kind,
                    &label,
                    &e,
                )));
            }
            Err(e) => return Err(self.diagnose(&e, "connecting to the cluster")),
        };
        match k8s::apply::get(
            client,
            &self.kind,
            namespace,
            &name,
            Instant::now() + READ_TIMEOUT,
        )
        .await
        {
            Ok(None) => Ok(ReadOutcome::Gone),
            Ok(Some(obj)) if obj.metadata.deletion_timestamp.is_some() => {
                let state = self.state_from_object(&obj, current)?;
                Ok(ReadOutcome::BeingDeleted(state, self.being_deleted_warning(&obj)))
            }
            Ok(Some(obj)) => {
                // what the plan's notes read of it: drift hashes, health
                ctx.plan.reads.observe(&self.kind, &obj);
                self.state_from_object(&obj, current).map(ReadOutcome::Found)
            }
            Err(
                e @ (KubeError::Transport(_) | KubeError::Unreachable { .. } | KubeError::Timeout { .. }),
            ) => Ok(ReadOutcome::KeptPrior(keep_prior_warning(
                self.kind.kind,
                &label,
                &e,
            ))),
            Err(e) => Err(self.diagnose(&e, "reading")),
        }
    }

    async fn delete(&self, ctx: &KarpenterContext, prior: &Value) -> Diagnostics {
        let (mut d, notes) = k8s::retry::noting(self.delete_and_wait(ctx, prior)).await;
        d.extend(self.waits_report(&notes, "delete", prior));
        d
    }

    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
        let (namespace, name) = self.import_id(id)?;
        let client = self.client(ctx).await?;
        let obj = k8s::apply::get(client, &self.kind, namespace, name, Instant::now() + READ_TIMEOUT)
            .await
            .map_err(|e| self.diagnose(&e, "reading"))?
            .ok_or_else(|| {
                let place = match namespace {
                    Some(ns) => format!("in the namespace {ns:?}"),
                    None => "in the cluster".to_string(),
                };
                Diagnostics::from_error(
                    "Cannot import a non-existent object",
                    format!("There is no {} named {name:?} {place}.", self.kind.kind),
                )
            })?;
        self.adopted_state(&obj)
    }

    fn identity_schema(&self) -> Option<&IdentitySchema> {
        Some(self.identity_schema_of_kind())
    }

    fn identity(&self, state: &Value) -> Value {
        self.identity_of_state(state)
    }

    async fn import_by_identity(
        &self,
        ctx: &KarpenterContext,
        identity: &Value,
    ) -> Result<Value, Diagnostics> {
        self.import(ctx, &self.import_id_of_identity(identity)).await
    }

    fn list_schema(&self) -> Option<&Schema> {
        Some(self.list_schema_of_kind())
    }

    async fn list(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        self.list_objects(ctx, request, sink).await
    }

    fn move_state(&self, source: &MoveSource<'_>) -> Result<Value, Diagnostics> {
        let manifest = moves::source_manifest(source.provider_address, source.type_name, source.state_json)
            .map_err(|e| Diagnostics::from_error("Cannot move this resource", e.to_string()))?;
        let field = |name: &str| {
            manifest
                .get(name)
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        // A v1beta1 manifest of a kind Karpenter 1.0 converted to v1: the cluster serves the
        // same object as v1, so only its identity and metadata are taken from the manifest (the
        // v1beta1 spec has another shape); the read that follows the move fills in the rest.
        let converted =
            kind == self.kind.kind && self.kind.converted_from().as_deref() == Some(api_version.as_str());
        let manifest = if converted {
            serde_json::json!({
                "apiVersion": self.kind.api_version(),
                "kind": kind,
                "metadata": manifest.get("metadata").cloned().unwrap_or(Json::Null),
            })
        } else {
            manifest
        };
        if !converted && (api_version != self.kind.api_version() || kind != self.kind.kind) {
            return Err(Diagnostics::from_error(
                "Cannot move this resource",
                format!(
                    "The {} holds a {api_version} {kind}, but {} manages {} {}. Move it to the resource type for its kind (karpenter_node_pool, karpenter_ec2_node_class, karpenter_node_overlay, karpenter_capacity_buffer, karpenter_provisioner or karpenter_node_template).",
                    source.type_name,
                    self.type_name,
                    self.kind.api_version(),
                    self.kind.kind
                ),
            ));
        }
        let obj: DynamicObject = serde_json::from_value(manifest).map_err(|e| {
            Diagnostics::from_error(
                "Cannot move this resource",
                format!(
                    "The manifest in the {} is not a Kubernetes object: {e}",
                    source.type_name
                ),
            )
        })?;
        if obj.metadata.name.as_deref().is_none_or(str::is_empty) {
            return Err(Diagnostics::from_error(
                "Cannot move this resource",
                format!("The manifest in the {} has no metadata.name.", source.type_name),
            ));
        }
        self.adopted_state(&obj)
    }
}

fn keep_prior_warning(kind: &str, name: &str, e: &KubeError) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.warning(
        format!("Could not refresh {kind} {name}"),
        format!("{e}. The last known state is kept; it is refreshed once the cluster can be reached."),
    );
    d
}
