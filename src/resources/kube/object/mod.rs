//! The generic Terraform resource for one Karpenter custom resource kind. A kind is declared
//! as a [`KubeObjectType`] (its schema, its cross-attribute rules, the kinds that may be owned
//! by it); this module does the rest, the same way for every kind:
//!
//! - **create / update**: wait at the CRD gate, then server-side apply of the whole intent
//!   (`metadata.name`, the managed labels and annotations, and `spec` from the schema), then
//!   optionally wait for `Ready`. The state returned keeps every planned value and fills in
//!   what was unknown (status) from the stored object (read once more after the write when
//!   the answer has no status yet). An object found being deleted is waited for (bounded by
//!   `timeouts.create`) and created again.
//! - **plan**: `status` is planned unknown on create; an update keeps the prior status (a
//!   one-value change reads as one line), except the fields that follow a changed spec
//!   attribute (`status_follows`), and the next refresh reads what Karpenter wrote since.
//! - **read**: only fields of the schema are read back, and only the labels and annotations
//!   Terraform manages, so what Karpenter itself writes never shows as drift. A deleted object
//!   is reported gone; one being deleted (a `deletionTimestamp`) stays in state with a warning
//!   naming its finalizers, and the next plan recreates it; an unreachable cluster or an
//!   unknown provider block keeps the prior state with a warning.
//! - **delete**: foreground deletion, waiting until finalizers and owned objects are gone;
//!   when Karpenter is not running, it fails fast, or with `force_destroy` does Karpenter's
//!   cleanup itself ([`super::teardown`]).
//! - **import**: by object name, or by `namespace/name` for a namespaced kind; by identity,
//!   and listing, in [`identity`].
//!
//! Schema conventions: `name` (the object name), `namespace` for a namespaced kind (its
//! default is [`DEFAULT_NAMESPACE`], as in hashicorp/kubernetes), `metadata = { labels,
//! annotations }`, `status` (computed), off-wire settings (`timeouts`, `wait_for_ready`), and
//! every other attribute is a `spec` field. Namespaced and cluster-scoped kinds go through the
//! same code; only the object's address differs ([`KubeObjectType::namespace_of`]).

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Duration;

use async_trait::async_trait;
use kube::api::DynamicObject;
use serde_json::{Map, Value as Json, json};
use tokio::time::Instant;

use super::availability::{Availability, AvailabilityError, ensure_crd_exists};
use super::moves;
use crate::context::KarpenterContext;
use crate::k8s::{self, Kind, KubeError};
use crate::resources::taken_name::{Marks, Taken};
use crate::terraform::framework::convert::{from_wire, to_wire};
use crate::terraform::framework::schema::{Attribute, Nesting, Schema};
use crate::terraform::framework::values::{get_str, object};
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, IdentitySchema, ListRequest, ListSink, MoveSource, ReadOutcome, Resource,
    timeouts,
};
use crate::terraform::tfvalue::{AttributePath, PathStep, Value};

mod delete;
pub mod identity;
mod references;
mod values;
mod write;
use delete::*;
pub use references::ClassRef;
pub use values::*;

const DEFAULT_CREATE: Duration = Duration::from_secs(10 * 60);
const DEFAULT_UPDATE: Duration = Duration::from_secs(10 * 60);
const DEFAULT_DELETE: Duration = Duration::from_secs(15 * 60);
const READ_TIMEOUT: Duration = Duration::from_secs(2 * 60);
/// How long the read of a new object's status after its write may take, at most (never past
/// the apply's deadline; on failure it is skipped, and the next refresh reads the status).
const STATUS_READ: Duration = Duration::from_secs(5);

/// The namespace of a namespaced kind's object when the configuration names none: `default`,
/// as hashicorp/kubernetes and kubectl do.
pub const DEFAULT_NAMESPACE: &str = "default";

/// What a plan shows of a kind's `status`, appended to each status attribute's description.
pub const STATUS_IN_PLANS: &str = "On create it is known after apply. An update plans the status of the last \
     refresh, so a change shows only the values that change, and the apply keeps it; the next refresh reads \
     what Karpenter wrote since.";

/// Annotation prefixes written by tools and controllers, never imported as user intent.
const FOREIGN_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/",
    "karpenter.sh/",
    "karpenter.k8s.aws/",
    // Karpenter 1.0's conversion webhook (`compatibility.karpenter.sh/v1beta1-...`).
    "compatibility.karpenter.sh/",
    // This provider's own marks (the create token, `k8s::ownership::CREATE_TOKEN_ANNOTATION`).
    "terraform-provider-karpenter/",
];

/// A Karpenter kind as a Terraform resource type.
pub struct KubeObjectType {
    pub type_name: &'static str,
    pub kind: Kind,
    pub schema: &'static LazyLock<Schema>,
    pub validate: fn(&Value, &mut Diagnostics),
    pub replacements: fn(&Value, &Value) -> Vec<AttributePath>,
    /// Kinds that may be owned by this one (listed when a delete times out).
    pub dependents: &'static [Kind],
    /// A boolean attribute that, when true, makes create/update wait for `Ready=True`.
    pub wait_for_ready: Option<&'static str>,
    /// Removes from a read state what admission added on its own (given the base the object
    /// was written from), so it is not shown as drift.
    pub drop_admission_defaults: fn(&mut Value, &Value),
    /// For kinds only some installations have: the Karpenter version and feature gate they
    /// need, so an absent CRD fails fast with that instead of waiting the whole timeout.
    pub requires: Option<&'static Availability>,
    /// Status fields that change when Karpenter reacts to a spec attribute, and are
    /// referenced by other resources: `(status field, spec attributes)`. An update that changes
    /// one of those attributes plans the field unknown; the rest of the status keeps its prior
    /// value.
    pub status_follows: &'static [(&'static str, &'static [&'static str])],
    /// What `force_destroy` does for this kind (the text its attribute's docs give), for the
    /// error that suggests it; `None` for a kind without `force_destroy`.
    pub force_destroy_cleanup: Option<&'static str>,
    /// Where the kind refers to its node class, checked after each write ([`ClassRef`]).
    pub class_ref: Option<&'static ClassRef>,
    /// Defaults that depend on other attributes, planned after the schema's (`config`, the prior
    /// state or null, the planned value to adjust, and diagnostics for what the default changes):
    /// e.g. an EKS Auto Mode NodePool's `expire_after`.
    pub plan_defaults: fn(&Value, &Value, &mut Value, &mut Diagnostics),
}

fn no_replacements(_: &Value, _: &Value) -> Vec<AttributePath> {
    Vec::new()
}

impl KubeObjectType {
    pub const fn new(type_name: &'static str, kind: Kind, schema: &'static LazyLock<Schema>) -> Self {
        Self {
            type_name,
            kind,
            schema,
            validate: |_, _| {},
            replacements: no_replacements,
            dependents: &[],
            wait_for_ready: None,
            drop_admission_defaults: |_, _| {},
            requires: None,
            status_follows: &[],
            force_destroy_cleanup: None,
            class_ref: None,
            plan_defaults: |_, _, _, _| {},
        }
    }

    /// The namespace of the object a plan or state describes: its `namespace` attribute for a
    /// namespaced kind (the default when it has none), `None` for a cluster-scoped kind.
    pub fn namespace_of<'a>(&self, state: &'a Value) -> Option<&'a str> {
        self.kind
            .namespaced
            .then(|| get_str(state, "namespace").unwrap_or(DEFAULT_NAMESPACE))
    }

    /// `name`, or `namespace/name` for a namespaced kind, for messages.
    fn label(&self, state: &Value) -> String {
        k8s::apply::object_label(
            self.namespace_of(state),
            get_str(state, "name").unwrap_or_default(),
        )
    }

    fn spec_attributes(&self) -> impl Iterator<Item = &Attribute> {
        self.schema.attributes.iter().filter(|a| a.wire_field().is_some())
    }

    /// The manifest to server-side apply for a planned state.
    fn manifest(&self, planned: &Value) -> Result<Json, Diagnostics> {
        let name = get_str(planned, "name").unwrap_or_default();
        let spec_attrs: Vec<Attribute> = self.spec_attributes().cloned().collect();
        let spec = to_wire(&spec_attrs, planned, &AttributePath::root()).map_err(|e| {
            let mut d = Diagnostics::new();
            d.error_at(&e.path, "Value not known at apply time", e.message);
            d
        })?;
        let mut metadata = Map::new();
        metadata.insert("name".into(), json!(name));
        if let Some(namespace) = self.namespace_of(planned) {
            metadata.insert("namespace".into(), json!(namespace));
        }
        for part in ["labels", "annotations"] {
            if let Some(Value::Map(m)) = planned.get("metadata").and_then(|m| m.get(part)) {
                let entries: Map<String, Json> = m
                    .iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), json!(s))))
                    .collect();
                metadata.insert(part.into(), Json::Object(entries));
            }
        }
        Ok(json!({
            "apiVersion": self.kind.api_version(),
            "kind": self.kind.kind,
            "metadata": metadata,
            "spec": spec,
        }))
    }

    /// The Terraform state of a stored object. `base` supplies off-wire values and says which
    /// labels and annotations Terraform manages. Public for the fuzz targets (`fuzz/`), which
    /// feed it objects as an API server could return them.
    pub fn state_from_object(&self, obj: &DynamicObject, base: &Value) -> Result<Value, Diagnostics> {
        let spec = obj
            .data
            .get("spec")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let mut state =
            from_wire(&self.schema.attributes, &spec, base, &AttributePath::root()).map_err(|e| {
                Diagnostics::from_error(
                    format!("Unexpected {} from the API server", self.kind.kind),
                    format!("{}: {}", e.path, e.message),
                )
            })?;
        keep_defaults_the_cluster_lacks(&self.schema.attributes, &spec, &mut state, base);
        let Value::Object(fields) = &mut state else {
            return Ok(state);
        };
        // Blocks (`timeouts`) are Terraform-only settings: they come from the base state.
        for block in &self.schema.blocks {
            fields.insert(
                block.name.to_string(),
                base.get(block.name).cloned().unwrap_or(Value::Null),
            );
        }
        fields.insert(
            "name".into(),
            Value::string(obj.metadata.name.clone().unwrap_or_default()),
        );
        if self.kind.namespaced {
            let namespace = obj.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
            fields.insert("namespace".into(), Value::string(namespace));
        }
        if fields.contains_key("metadata") {
            fields.insert(
                "metadata".into(),
                managed_metadata(obj, base.get("metadata").unwrap_or(&Value::Null)),
            );
        }
        if let Some((Nesting::Single, status_attrs)) =
            self.schema.attribute("status").and_then(Attribute::nested)
        {
            let status = obj
                .data
                .get("status")
                .and_then(Json::as_object)
                .cloned()
                .unwrap_or_default();
            let value = from_wire(
                status_attrs,
                &status,
                &Value::Null,
                &AttributePath::root().attr("status"),
            )
            .map_err(|e| Diagnostics::from_error("Unexpected status from the API server", e.to_string()))?;
            fields.insert("status".into(), value);
        }
        (self.drop_admission_defaults)(&mut state, base);
        Ok(state)
    }

    async fn client<'a>(&self, ctx: &'a KarpenterContext) -> Result<&'a kube::Client, Diagnostics> {
        ctx.kube()
            .await
            .map_err(|e| self.diagnose(&e, "connecting to the cluster"))
    }

    /// One diagnostic (or one per invalid field) for a Kubernetes error.
    pub(crate) fn diagnose(&self, e: &KubeError, doing: &str) -> Diagnostics {
        let mut d = Diagnostics::new();
        let what = self.kind.kind;
        match e {
            KubeError::Api(_) if e.missing_namespace().is_some() => {
                let namespace = e.missing_namespace().unwrap_or_default();
                d.error_at(
                    &AttributePath::root().attr("namespace"),
                    "Namespace does not exist",
                    format!(
                        "The namespace {namespace:?} does not exist in the cluster, so the {what} cannot be created \
                         there ({e}). Create the namespace first (for example with a kubernetes_namespace resource that \
                         this resource refers to, so Terraform orders them), or set namespace to an existing one."
                    ),
                );
            }
            KubeError::Api(status) if e.is_schema_refusal() => {
                let fields = k8s::skew::undeclared_in_error(&status.message);
                if fields.is_empty() {
                    d.error(
                        format!("The API server cannot take this {what}"),
                        format!(
                            "{e}. The object does not fit the {what} schema of the Karpenter CRDs installed in this \
                             cluster; upgrade them, or remove the settings they do not have."
                        ),
                    );
                }
                for wire in fields {
                    self.undeclared_field(&mut d, &wire);
                }
            }
            KubeError::Api(status) if status.code == 422 => {
                let causes = status.details.as_ref().map(|x| x.causes.as_slice()).unwrap_or_default();
                // One error per problem: the causes when the server names them, its message
                // (which repeats them) only when it does not.
                if causes.is_empty() {
                    d.error(format!("The API server rejected the {what}"), status.message.clone());
                }
                for cause in causes {
                    let detail = format!("{} ({})", cause.message, cause.field);
                    match wire_path_to_attribute(&self.schema.attributes, &cause.field) {
                        Some(path) => d.error_at(&path, format!("Invalid {what} field"), detail),
                        None => d.error(format!("Invalid {what} field"), detail),
                    }
                }
            }
            KubeError::Api(status) if status.code == 401 => d.error(
                "The Kubernetes API server did not accept the provider's credentials",
                format!(
                    "{e}. A 401 means the credential itself is bad or expired, not that permissions are missing: \
                     check the token (an EKS token lasts 15 minutes), the client certificate and key, or what the exec \
                     plugin prints (run it by hand), and that they belong to this cluster."
                ),
            ),
            KubeError::Api(status) if status.code == 403 => {
                let denied = k8s::error::forbidden_action(&status.message);
                let summary = match &denied {
                    Some((verb, resource)) => format!("Not allowed to {verb} {resource}"),
                    None => format!("Not allowed to manage {what} objects"),
                };
                d.error(
                    summary,
                    format!(
                        "{e}. The credentials are valid but lack RBAC permissions: the provider needs {} (see the \
                         permissions table and the least-privilege ClusterRole in the docs).",
                        k8s::permissions::needed_for(&self.kind.crd_name())
                    ),
                )
            }
            KubeError::Unreachable {
                answered_before: true,
                ..
            } => d.error(
                "The Kubernetes API server stopped answering",
                format!(
                    "{e}. The server answered earlier in this run, so the provider waited for it while {doing} {what}, \
                     retrying with backoff until the resource's timeout ran out. A control-plane upgrade or an endpoint \
                     failover can take minutes: raise the resource's timeouts {{}} to wait longer, and run terraform apply \
                     again once the cluster answers. (If a create's write reached the server just before it went away, \
                     that apply finds the {what} and refuses it with the import {{}} block that records it.)"
                ),
            ),
            KubeError::Unreachable { .. } => d.error(
                "Cannot reach the Kubernetes API server",
                format!(
                    "{e}. Nothing answered at that address while {doing} {what}. Check kubernetes.host (or the server of \
                     the kubeconfig context) and that the cluster exists and its endpoint is reachable from here. A server \
                     this provider has not reached yet is retried for {} (so a wrong address fails fast); one that \
                     answered and then went away is waited for until the resource's timeout.",
                    k8s::error::humantime(k8s::retry::UNREACHABLE_FOR)
                ),
            ),
            KubeError::Tls(_) => d.error(
                "TLS connection to the Kubernetes API server failed",
                format!(
                    "{e}. The server's certificate is not trusted or does not match its name. Check \
                     kubernetes.cluster_ca_certificate (or the kubeconfig's certificate-authority-data) and \
                     tls_server_name; this is not retried."
                ),
            ),
            _ => d.error(format!("Failed {doing} {what}"), e.to_string()),
        }
        d
    }
}

#[async_trait]
impl Resource<KarpenterContext> for KubeObjectType {
    fn type_name(&self) -> &'static str {
        self.type_name
    }

    fn schema(&self) -> &Schema {
        self.schema
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        (self.validate)(config, diags);
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
            Ok(Some(obj)) => self.state_from_object(&obj, current).map(ReadOutcome::Found),
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

impl KubeObjectType {
    /// The object an import ID names: `name` for a cluster-scoped kind, `namespace/name` for a
    /// namespaced one (as hashicorp/kubernetes imports namespaced objects).
    fn import_id<'a>(&self, id: &'a str) -> Result<(Option<&'a str>, &'a str), Diagnostics> {
        let invalid = |detail: String| Err(Diagnostics::from_error("Invalid import ID", detail));
        if !self.kind.namespaced {
            if !valid_object_name(id) {
                return invalid(format!(
                    "{id:?} is not a {} name. Import by the object's name: terraform import {}.<name> <object name>",
                    self.kind.kind, self.type_name
                ));
            }
            return Ok((None, id));
        }
        match id.split_once('/') {
            Some((namespace, name)) if valid_namespace(namespace) && valid_object_name(name) => {
                Ok((Some(namespace), name))
            }
            _ => invalid(format!(
                "{id:?} is not the namespace and name of a {kind}. {kind} objects live in a namespace: import by \
                 <namespace>/<name>, e.g. terraform import {ty}.<name> default/<object name>",
                kind = self.kind.kind,
                ty = self.type_name
            )),
        }
    }

    /// The state of an object Terraform takes over (import, or a move from another provider):
    /// off-wire settings at their defaults, so the adopted state plans empty, and the labels
    /// and annotations a user would have written.
    pub(crate) fn adopted_state(&self, obj: &DynamicObject) -> Result<Value, Diagnostics> {
        let base = Value::Object(
            self.schema
                .attributes
                .iter()
                .map(|a| {
                    let v = if a.wire_field().is_none() {
                        a.default.clone().unwrap_or(Value::Null)
                    } else {
                        Value::Null
                    };
                    (a.name.to_string(), v)
                })
                .chain(
                    self.schema
                        .blocks
                        .iter()
                        .map(|b| (b.name.to_string(), Value::Null)),
                )
                .collect(),
        );
        let mut state = self.state_from_object(obj, &base)?;
        if let Value::Object(fields) = &mut state
            && fields.contains_key("metadata")
        {
            fields.insert("metadata".into(), adopted_metadata(obj));
        }
        Ok(state)
    }
}

impl KubeObjectType {
    /// Warnings about what the waits of one operation (`op`: create, update, delete) sat out:
    /// an API server that did not answer for a while, a lost answer found to be a done write.
    pub(crate) fn waits_report(&self, notes: &k8s::retry::Notes, op: &str, state: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        let what = self.kind.kind;
        let label = self.label(state);
        for outage in notes
            .outages
            .iter()
            .filter(|o| o.lasted >= OUTAGE_WORTH_A_WARNING)
        {
            d.warning(
                "The Kubernetes API server did not answer for a while",
                format!(
                    "While the {op} of {what} {label} ran, the Kubernetes API server did not answer for {} (from {}). It \
                     had answered earlier in this run, so the provider waited and retried with backoff (up to \
                     timeouts.{op}), and the {op} went on once it answered again.",
                    k8s::error::humantime(outage.lasted),
                    k8s::error::utc_clock(outage.since)
                ),
            );
        }
        for recovered in &notes.recovered {
            d.warning(
                "An answer of the Kubernetes API server was lost",
                format!(
                    "{}. The provider recognised its own write by the token the create wrote on the object \
                     (annotation {}) and by its field manager, so the object is in the state and no import is needed.",
                    upper_first(recovered),
                    k8s::ownership::CREATE_TOKEN_ANNOTATION
                ),
            );
        }
        d
    }
}

/// Outages shorter than this are not worth a warning (a dropped connection retried at once).
const OUTAGE_WORTH_A_WARNING: Duration = Duration::from_secs(5);

fn upper_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
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

#[cfg(test)]
mod tests;
