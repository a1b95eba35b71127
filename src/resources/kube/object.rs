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
//! - **plan**: `status` is planned unknown only when `name` or a `spec` field changes, not for
//!   labels, annotations or provider-side settings.
//! - **read**: only fields of the schema are read back, and only the labels and annotations
//!   Terraform manages, so what Karpenter itself writes never shows as drift. A deleted object
//!   is reported gone; one being deleted (a `deletionTimestamp`) stays in state with a warning
//!   naming its finalizers, and the next plan recreates it; an unreachable cluster or an
//!   unknown provider block keeps the prior state with a warning.
//! - **delete**: foreground deletion, waiting until finalizers and owned objects are gone;
//!   when Karpenter is not running, it fails fast, or with `force_destroy` does Karpenter's
//!   cleanup itself ([`super::teardown`]).
//! - **import**: by object name, or by `namespace/name` for a namespaced kind; by identity,
//!   and listing, in [`super::identity`].
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

/// Annotation prefixes written by tools and controllers, never imported as user intent.
const FOREIGN_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/",
    "karpenter.sh/",
    "karpenter.k8s.aws/",
    // Karpenter 1.0's conversion webhook (`compatibility.karpenter.sh/v1beta1-...`).
    "compatibility.karpenter.sh/",
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

    /// Create and update are the same server-side apply of the whole intent, which also takes
    /// over from other field managers what the prior state and the plan manage
    /// ([`k8s::apply::apply_owning`]).
    async fn apply(
        &self,
        ctx: &KarpenterContext,
        prior: Option<&Value>,
        planned: &Value,
        timeout: Duration,
    ) -> ApplyOutcome {
        let deadline = Instant::now() + timeout;
        let name = get_str(planned, "name").unwrap_or_default().to_string();
        let namespace = self.namespace_of(planned);
        let manifest = match self.manifest(planned) {
            Ok(m) => m,
            Err(d) => return ApplyOutcome::failed(None, d),
        };
        let client = match self.client(ctx).await {
            Ok(c) => c,
            Err(d) => return ApplyOutcome::failed(None, d),
        };
        if let Some(requires) = self.requires
            && let Err(e) = ensure_crd_exists(client, &self.kind, requires, deadline).await
        {
            let d = match e {
                AvailabilityError::Kube(k) => self.diagnose(&k, "looking for the CRD"),
                not_installed => Diagnostics::from_error(
                    format!("{} is not installed in this cluster", self.kind.kind),
                    not_installed.to_string(),
                ),
            };
            return ApplyOutcome::failed(None, d);
        }
        let served = match ctx.crd_gate.ensure(client, &self.kind, deadline).await {
            Ok(served) => served,
            Err(e) => return ApplyOutcome::failed(None, self.diagnose(&e, "waiting for the CRD")),
        };
        let manifest = match served.schema.as_ref() {
            Some(schema) => match self.fit_to_cluster(manifest, planned, schema) {
                Ok(m) => m,
                Err(d) => return ApplyOutcome::failed(None, d),
            },
            None => manifest,
        };
        if prior.is_none()
            && let Err(d) = self.refuse_existing(client, namespace, &name, deadline).await
        {
            return ApplyOutcome::failed(None, d);
        }
        let prior_manifest = prior.and_then(|p| self.manifest(p).ok());
        let mut fields = k8s::ownership::stated_fields(&manifest);
        fields.extend(prior_manifest.iter().flat_map(k8s::ownership::stated_fields));
        let stored = match k8s::apply::apply_owning(
            client, &self.kind, namespace, &name, &manifest, &fields, deadline,
        )
        .await
        {
            Ok(obj) => obj,
            Err(e) => return ApplyOutcome::failed(None, self.diagnose(&e, "applying")),
        };
        // The object was already being deleted (a delete that timed out on a finalizer, or
        // someone else's): what was just written goes with it, so wait until it is gone and
        // write it again.
        let stored = if stored.metadata.deletion_timestamp.is_some() {
            match self
                .recreate(
                    ctx, client, planned, namespace, &name, &manifest, &fields, &stored,
                )
                .await
            {
                Ok(obj) => obj,
                Err(d) => return ApplyOutcome::failed(None, d),
            }
        } else {
            stored
        };
        let mut diags = Diagnostics::new();
        if let Some(prior_manifest) = &prior_manifest {
            self.check_removals(&stored, prior_manifest, &manifest, &mut diags);
        }
        let mut latest = stored;
        let wants_ready = self
            .wait_for_ready
            .is_some_and(|attr| planned.get(attr).and_then(Value::as_bool) == Some(true));
        if wants_ready {
            match k8s::apply::wait_ready(client, &self.kind, namespace, &name, deadline).await {
                Ok(obj) => latest = obj,
                Err(e) => diags.extend(self.diagnose(&e, "waiting for Ready")),
            }
        } else if planned.get("status").is_some_and(Value::is_unknown) && !has_status(&latest) {
            // A new object has no status in the answer to its write; Karpenter usually fills
            // it at once. One read (never a wait, and within the apply's timeout) puts in
            // state what the server has by now, instead of an empty status until the next
            // refresh.
            let read_by = (Instant::now() + STATUS_READ).min(deadline);
            if read_by > Instant::now()
                && let Ok(Some(obj)) = k8s::apply::get(client, &self.kind, namespace, &name, read_by).await
            {
                latest = obj;
            }
        }
        match self.state_from_object(&latest, planned) {
            Ok(actual) => ApplyOutcome::failed(Some(merge_known(planned, &actual)), diags),
            Err(d) => {
                diags.extend(d);
                ApplyOutcome::failed(Some(unknowns_to_null(planned)), diags)
            }
        }
    }

    /// Create never adopts: an object of this kind and name that exists (and is not being
    /// deleted) refuses the create before anything is written, whoever made it — kubectl, Helm,
    /// another Terraform state or an apply of this configuration killed before Terraform
    /// recorded it ([`crate::resources::taken_name`]). One that is being deleted is left to the
    /// write that follows, which waits until it is gone and creates the object anew.
    async fn refuse_existing(
        &self,
        client: &kube::Client,
        namespace: Option<&str>,
        name: &str,
        deadline: Instant,
    ) -> Result<(), Diagnostics> {
        let existing = k8s::apply::get(client, &self.kind, namespace, name, deadline)
            .await
            .map_err(|e| self.diagnose(&e, "looking for an existing"))?;
        let Some(obj) = existing.filter(|o| o.metadata.deletion_timestamp.is_none()) else {
            return Ok(());
        };
        let managers = k8s::ownership::managers(&obj);
        let marks = if managers.iter().any(|m| m == k8s::FIELD_MANAGER) {
            Marks::Ours
        } else if managers.is_empty() {
            Marks::Others(String::new())
        } else {
            Marks::Others(format!("its fields are managed by {}", managers.join(", ")))
        };
        let label = k8s::apply::object_label(namespace, name);
        let place = match namespace {
            Some(ns) => format!("in the namespace {ns:?} of the cluster"),
            None => "in the cluster".to_string(),
        };
        let our_mark = format!("the field manager `{}`", k8s::FIELD_MANAGER);
        let uid = obj.metadata.uid.as_deref().map(|u| format!("uid {u}"));
        let mut d = Diagnostics::new();
        Taken {
            resource_type: self.type_name,
            what: self.kind.kind,
            name,
            id_detail: uid.as_deref(),
            place: &place,
            our_mark,
            marks,
            import_id: Some(&label),
            otherwise: "choose another name",
        }
        .refuse(&AttributePath::root().attr("name"), &mut d);
        Err(d)
    }

    /// Waits until the object that `stored` shows being deleted is gone (bounded by
    /// `timeouts.create`, with the delete wait's progress lines and its check that Karpenter
    /// is running), then writes `manifest` again, creating the object anew. With Karpenter
    /// gone, `force_destroy` does Karpenter's cleanup first; without it, this fails fast on
    /// `force_destroy`, saying what holds the object and what to do.
    #[allow(clippy::too_many_arguments)]
    async fn recreate(
        &self,
        ctx: &KarpenterContext,
        client: &kube::Client,
        planned: &Value,
        namespace: Option<&str>,
        name: &str,
        manifest: &Json,
        fields: &[k8s::ownership::FieldPath],
        stored: &DynamicObject,
    ) -> Result<DynamicObject, Diagnostics> {
        let what = self.kind.kind;
        let deadline = Instant::now() + timeouts::get(planned, "create", DEFAULT_CREATE);
        let uid = stored.metadata.uid.clone().unwrap_or_default();
        tracing::info!(
            kind = what,
            name,
            "{what} {name} is being deleted; waiting until it is gone to create it again"
        );
        let object = k8s::apply::Incarnation {
            namespace,
            name,
            uid: &uid,
        };
        let waited = k8s::apply::wait_gone(
            client,
            &self.kind,
            object,
            self.dependents,
            deadline,
            k8s::apply::Waiting::Recreate,
        )
        .await;
        let force = planned.get(FORCE_DESTROY).and_then(Value::as_bool) == Some(true);
        match waited {
            Ok(()) => {}
            Err(KubeError::KarpenterGone { why, .. }) if force => {
                let d = self.force_destroy(ctx, client, name, &why, deadline).await;
                if d.has_errors() {
                    return Err(d);
                }
            }
            Err(KubeError::KarpenterGone {
                what: stuck,
                why,
                waited,
            }) => {
                let mut d = Diagnostics::new();
                let summary = format!(
                    "Karpenter is not running: {what} {name} cannot finish deleting, so it cannot be created again"
                );
                let help = match self.schema.attribute(FORCE_DESTROY) {
                    Some(_) => format!(
                        "Either start Karpenter again (its Helm release, its controller's IAM role and the nodes it runs on \
                         must exist; it then finishes the deletion and the next apply creates the {what}), or set \
                         force_destroy = true on this resource and apply again: the provider then does Karpenter's cleanup \
                         itself (terminates the EC2 instances, deletes the launch templates and instance profiles Karpenter \
                         created for it, tagged for this cluster), removes the finalizers and creates the {what} anew."
                    ),
                    None => format!(
                        "Start Karpenter again (its Helm release, its controller's IAM role and the nodes it runs on must \
                         exist); it then finishes the deletion and the next apply creates the {what}."
                    ),
                };
                let detail = format!(
                    "{stuck}, but Karpenter is not running: {why} (noticed after {}). Only Karpenter removes these \
                     finalizers. {help} Nothing was created.",
                    k8s::error::humantime(waited)
                );
                match self.schema.attribute(FORCE_DESTROY) {
                    Some(_) => d.error_at(&AttributePath::root().attr(FORCE_DESTROY), summary, detail),
                    None => d.error(summary, detail),
                }
                return Err(d);
            }
            Err(e) => return Err(self.diagnose(&e, "waiting for the earlier deletion of")),
        }
        k8s::apply::apply_owning(client, &self.kind, namespace, name, manifest, fields, deadline)
            .await
            .map_err(|e| self.diagnose(&e, "applying"))
    }

    /// The warning of a refresh that finds the object being deleted: since when, what holds
    /// it and whose that is, and what apply and destroy do about it.
    pub(crate) fn being_deleted_warning(&self, obj: &DynamicObject) -> Diagnostics {
        let what = self.kind.kind;
        let name = obj.metadata.name.as_deref().unwrap_or_default();
        let since = obj
            .metadata
            .deletion_timestamp
            .as_ref()
            .and_then(|t| serde_json::to_value(t).ok())
            .and_then(|t| t.as_str().map(str::to_string))
            .map(|t| format!(" at {t}"))
            .unwrap_or_default();
        let finalizers = obj.metadata.finalizers.clone().unwrap_or_default();
        let holding = k8s::apply::waiting_for(&finalizers);
        let karpenter = if k8s::apply::waits_on_karpenter(&finalizers) {
            match self.schema.attribute(FORCE_DESTROY) {
                Some(_) => {
                    " If Karpenter is not running, the deletion cannot finish: start Karpenter again, or set \
                            force_destroy = true (the apply then does Karpenter's cleanup itself)."
                }
                None => " If Karpenter is not running, the deletion cannot finish: start Karpenter again.",
            }
        } else {
            ""
        };
        let mut d = Diagnostics::new();
        d.warning(
            format!("{what} {name} is being deleted"),
            format!(
                "The {what} was marked for deletion{since} and is still in the cluster, {holding}. (A delete that \
                 timed out, or one made outside Terraform, leaves it so.) Terraform plans to create it again: terraform \
                 apply waits until the deletion finishes (up to timeouts.create), then creates the {what} anew; \
                 terraform destroy waits for the deletion instead.{karpenter}"
            ),
        );
        d
    }

    /// Apply never reports a change the server did not make: a field the configuration
    /// removed that the stored object still has (another manager kept it, e.g. one writing
    /// between our takeover and our apply) is an error on its attribute naming who holds it.
    fn check_removals(&self, stored: &DynamicObject, prior: &Json, planned: &Json, d: &mut Diagnostics) {
        let Ok(stored_json) = serde_json::to_value(stored) else {
            return;
        };
        let entries: Vec<Json> = stored_json
            .pointer("/metadata/managedFields")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        for field in k8s::ownership::not_removed(&stored_json, prior, planned) {
            let wire = field.join(".");
            let owners = k8s::ownership::other_owners(&entries, &field, k8s::FIELD_MANAGER);
            let held = if owners.is_empty() {
                "no field manager claims it".to_string()
            } else {
                format!("it is also managed by {}", owners.join(", "))
            };
            let detail = format!(
                "The configuration no longer sets {wire}, but the {} {:?} in the cluster still has it: {held}, \
                 so server-side apply kept it. Remove it with the tool that set it (e.g. `kubectl edit` or \
                 `kubectl patch --type json` with a remove op), or stop that tool from managing it, then run \
                 terraform apply again.",
                self.kind.kind,
                stored.metadata.name.as_deref().unwrap_or_default()
            );
            let summary = "Field not removed from the cluster";
            match wire_path_to_attribute(&self.schema.attributes, &wire) {
                Some(path) => d.error_at(&path, summary, detail),
                None => d.error(summary, detail),
            }
        }
    }

    /// The manifest as the cluster's CRD (`schema`, the served `openAPIV3Schema`) can take it.
    /// A field the CRD does not declare is either a default this provider plans (left out of
    /// the write: the cluster's Karpenter has no such setting, and the planned value stays in
    /// state) or something the user configured, which fails at once on that attribute with
    /// the Karpenter release that added it.
    fn fit_to_cluster(
        &self,
        mut manifest: Json,
        planned: &Value,
        schema: &Json,
    ) -> Result<Json, Diagnostics> {
        let mut d = Diagnostics::new();
        for wire in k8s::skew::undeclared(schema, &manifest) {
            let at = wire_path_to_attribute(&self.schema.attributes, &wire);
            let is_default = at.as_ref().is_some_and(|path| {
                let default = attribute_at(&self.schema.attributes, path).and_then(|a| a.default.as_ref());
                default.is_some() && default == value_at(planned, path)
            });
            if is_default {
                tracing::debug!(
                    kind = self.kind.kind,
                    field = %wire,
                    "the installed CRD has no {wire}; its default is not sent"
                );
                k8s::skew::remove(&mut manifest, &wire);
            } else {
                self.undeclared_field(&mut d, &wire);
            }
        }
        if d.has_errors() { Err(d) } else { Ok(manifest) }
    }

    /// The error for a configured field (`spec.x[0].y`) that the cluster's CRD does not have.
    fn undeclared_field(&self, d: &mut Diagnostics, wire: &str) {
        let crd = self.kind.crd_name();
        let what = self.kind.kind;
        let since = match k8s::skew::first_release(&crd, wire) {
            Some(release) => format!(
                "Karpenter added it in {release}. Upgrade the Karpenter CRDs in this cluster (the karpenter-crd chart, \
                 or the karpenter chart) to {release} or later, or remove this setting."
            ),
            None => format!(
                "This provider's schema follows Karpenter {}; upgrade the Karpenter CRDs in this cluster, or remove \
                 this setting.",
                k8s::skew::SCHEMA_RELEASE
            ),
        };
        let summary = "Not supported by the Karpenter installed in this cluster";
        match wire_path_to_attribute(&self.schema.attributes, wire) {
            Some(path) => d.error_at(
                &path,
                summary,
                format!(
                    "`{path}` ({wire}) is not in the {what} schema of the Karpenter CRDs installed in this cluster \
                     ({crd}). {since}"
                ),
            ),
            None => d.error(
                summary,
                format!("{wire} is not in the {what} schema of the Karpenter CRDs installed in this cluster ({crd}). {since}"),
            ),
        }
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
                d.error(format!("The API server rejected the {what}"), status.message.clone());
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
                        "{e}. The credentials are valid but lack RBAC permissions: the provider needs get, list, watch, \
                         create, patch and delete on {} and get, list and watch on customresourcedefinitions \
                         (see the least-privilege ClusterRole in the docs).",
                        self.kind.crd_name()
                    ),
                )
            }
            KubeError::Unreachable(_) => d.error(
                "Cannot reach the Kubernetes API server",
                format!(
                    "{e}. Nothing answered at that address while {doing} {what}. Check kubernetes.host (or the server of \
                     the kubeconfig context) and that the cluster exists and its endpoint is reachable from here. An \
                     unreachable server is retried for {} at most.",
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

/// Labels and annotations of the object that Terraform manages: the keys in `prior` (the
/// prior state or the plan). Keys it never set are someone else's (another tool's label,
/// Karpenter's annotations) and never show as drift; with no `metadata` in `prior` none are.
fn managed_metadata(obj: &DynamicObject, prior: &Value) -> Value {
    if prior.is_null() {
        return Value::Null;
    }
    let pick = |part: &str, actual: &Option<BTreeMap<String, String>>| -> Value {
        let actual = actual.clone().unwrap_or_default();
        match prior.get(part) {
            Some(Value::Map(managed)) => Value::Map(
                actual
                    .into_iter()
                    .filter(|(k, _)| managed.contains_key(k))
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            ),
            _ => Value::Null,
        }
    };
    object([
        ("labels", pick("labels", &obj.metadata.labels)),
        ("annotations", pick("annotations", &obj.metadata.annotations)),
    ])
}

/// On import or move: the labels and annotations a user would have written (everything but
/// what tools and controllers write), `null` when there are none.
fn adopted_metadata(obj: &DynamicObject) -> Value {
    let pick = |actual: &Option<BTreeMap<String, String>>| -> Value {
        let kept: BTreeMap<String, Value> = actual
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| !FOREIGN_ANNOTATIONS.iter().any(|p| k.starts_with(p)))
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        if kept.is_empty() {
            Value::Null
        } else {
            Value::Map(kept)
        }
    };
    let labels = pick(&obj.metadata.labels);
    let annotations = pick(&obj.metadata.annotations);
    if labels.is_null() && annotations.is_null() {
        return Value::Null;
    }
    object([("labels", labels), ("annotations", annotations)])
}

/// A defaulted attribute whose field the stored object does not have keeps the default the
/// base (prior state) holds. Every default of our schemas is a CRD server default or belongs
/// to a required field, so a cluster whose CRD has the field always returns it; its absence
/// means the installed Karpenter is older than the field, the apply left the default out
/// ([`KubeObjectType::fit_to_cluster`]), and showing `default → null` on every plan would be
/// a perpetual diff. Walks nested single objects; the legacy kinds declare no defaults.
fn keep_defaults_the_cluster_lacks(
    attributes: &[Attribute],
    wire: &Map<String, Json>,
    state: &mut Value,
    base: &Value,
) {
    let Value::Object(fields) = state else { return };
    for a in attributes {
        let Some(field) = a.wire_field() else { continue };
        let prior = base.get(a.name);
        match (wire.get(&field), a.nested()) {
            (None, _) => {
                if let Some(default) = a.default.as_ref()
                    && prior == Some(default)
                    && fields.get(a.name).is_none_or(Value::is_null)
                {
                    fields.insert(a.name.to_string(), default.clone());
                }
            }
            (Some(Json::Object(inner)), Some((Nesting::Single, nested))) => {
                if let (Some(here), Some(prior)) = (fields.get_mut(a.name), prior) {
                    keep_defaults_the_cluster_lacks(nested, inner, here, prior);
                }
            }
            _ => {}
        }
    }
}

/// See [`KubeObjectType`]'s `modify_plan`: the prior `status` where the planner made it
/// unknown although neither `name` nor any `spec` attribute (one with a wire field) changed.
fn keep_status_unless_spec_changed(schema: &Schema, prior: &Value, planned: &mut Value) {
    if prior.is_null() {
        return;
    }
    let changed = schema
        .attributes
        .iter()
        .filter(|a| a.name == "name" || a.wire_field().is_some())
        .any(|a| planned.get(a.name) != prior.get(a.name));
    if changed {
        return;
    }
    if let (Value::Object(fields), Some(status)) = (planned, prior.get("status"))
        && fields.get("status").is_some_and(Value::is_unknown)
    {
        fields.insert("status".into(), status.clone());
    }
}

/// Whether a stored object has a non-empty `status`.
fn has_status(obj: &DynamicObject) -> bool {
    obj.data
        .get("status")
        .and_then(Json::as_object)
        .is_some_and(|s| !s.is_empty())
}

/// The value at an attribute path (attributes, map keys and list indexes).
fn value_at<'a>(value: &'a Value, path: &AttributePath) -> Option<&'a Value> {
    path.steps
        .iter()
        .try_fold(value, |here, step| match (step, here) {
            (PathStep::Attribute(n) | PathStep::ElementKeyString(n), v) => v.get(n),
            (PathStep::ElementKeyInt(i), Value::List(items) | Value::Set(items)) => {
                items.get(usize::try_from(*i).ok()?)
            }
            _ => None,
        })
}

/// The schema attribute an attribute path ends on.
fn attribute_at<'a>(attributes: &'a [Attribute], path: &AttributePath) -> Option<&'a Attribute> {
    let mut attrs = attributes;
    let mut found = None;
    for step in &path.steps {
        if let PathStep::Attribute(name) = step {
            let a = attrs.iter().find(|a| a.name == name)?;
            attrs = a.nested().map(|(_, n)| n).unwrap_or_default();
            found = Some(a);
        }
    }
    found
}

/// The planned value wherever it is known; the actual value where the plan had an unknown.
pub fn merge_known(planned: &Value, actual: &Value) -> Value {
    match (planned, actual) {
        (Value::Unknown(_), a) => a.clone(),
        (Value::Object(p), Value::Object(a)) => Value::Object(
            p.iter()
                .map(|(k, pv)| (k.clone(), merge_known(pv, a.get(k).unwrap_or(&Value::Null))))
                .collect(),
        ),
        (Value::List(p), Value::List(a)) if p.len() == a.len() => {
            Value::List(p.iter().zip(a).map(|(x, y)| merge_known(x, y)).collect())
        }
        (Value::Set(p), Value::Set(a)) if p.len() == a.len() => {
            Value::Set(p.iter().zip(a).map(|(x, y)| merge_known(x, y)).collect())
        }
        (Value::Map(p), Value::Map(a)) => Value::Map(
            p.iter()
                .map(|(k, pv)| (k.clone(), merge_known(pv, a.get(k).unwrap_or(&Value::Null))))
                .collect(),
        ),
        (p, _) => unknowns_to_null(p),
    }
}

fn unknowns_to_null(v: &Value) -> Value {
    match v {
        Value::Unknown(_) => Value::Null,
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), unknowns_to_null(x))).collect()),
        Value::Map(m) => Value::Map(m.iter().map(|(k, x)| (k.clone(), unknowns_to_null(x))).collect()),
        Value::List(l) => Value::List(l.iter().map(unknowns_to_null).collect()),
        Value::Set(l) => Value::Set(l.iter().map(unknowns_to_null).collect()),
        other => other.clone(),
    }
}

/// Maps an API field path (`spec.template.spec.requirements[0].operator`,
/// `metadata.labels`) to the Terraform attribute path, through the schema's wire names.
pub fn wire_path_to_attribute(attributes: &[Attribute], field: &str) -> Option<AttributePath> {
    let (mut rest, mut path) = if let Some(r) = field.strip_prefix("spec.") {
        (r, AttributePath::root())
    } else if let Some(r) = field.strip_prefix("metadata.") {
        let part = r.split(['.', '[']).next()?;
        return matches!(part, "labels" | "annotations")
            .then(|| AttributePath::root().attr("metadata").attr(part));
    } else {
        return None;
    };
    let mut attrs = attributes;
    loop {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let segment = &rest[..end];
        let attribute = attrs
            .iter()
            .find(|a| a.wire_field().as_deref() == Some(segment))?;
        path = path.attr(attribute.name);
        rest = &rest[end..];
        while let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']')?;
            let index = &r[..close];
            path = match index.parse::<usize>() {
                Ok(i) => path.index(i),
                Err(_) => path.key(index.trim_matches('"').to_string()),
            };
            rest = &r[close + 1..];
        }
        rest = match rest.strip_prefix('.') {
            Some(r) => r,
            None => return Some(path),
        };
        attrs = match attribute.nested() {
            Some((_, nested)) => nested,
            None => return Some(path),
        };
    }
}

/// A namespace name: a DNS-1123 label (at most 63 characters, no dots).
fn valid_namespace(name: &str) -> bool {
    name.len() <= 63 && !name.contains('.') && valid_object_name(name)
}

fn valid_object_name(name: &str) -> bool {
    (1..=253).contains(&name.len())
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
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

    /// `status` is what Karpenter reports about the `spec`: it is planned unknown only when
    /// the name or a `spec` field changes. A change of what Karpenter does not react to (the
    /// object's labels and annotations, `timeouts`, `wait_for_ready`, `force_destroy`) keeps
    /// the prior status in the plan, and the apply returns it as planned ([`merge_known`]).
    fn modify_plan(&self, _config: &Value, prior: &Value, planned: &mut Value, _diags: &mut Diagnostics) {
        keep_status_unless_spec_changed(self.schema, prior, planned);
    }

    async fn create(&self, ctx: &KarpenterContext, planned: &Value) -> ApplyOutcome {
        self.apply(
            ctx,
            None,
            planned,
            timeouts::get(planned, "create", DEFAULT_CREATE),
        )
        .await
    }

    async fn update(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
        self.apply(
            ctx,
            Some(prior),
            planned,
            timeouts::get(planned, "update", DEFAULT_UPDATE),
        )
        .await
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
            Err(e @ (KubeError::Transport(_) | KubeError::Unreachable(_) | KubeError::Timeout { .. })) => Ok(
                ReadOutcome::KeptPrior(keep_prior_warning(self.kind.kind, &label, &e)),
            ),
            Err(e) => Err(self.diagnose(&e, "reading")),
        }
    }

    async fn delete(&self, ctx: &KarpenterContext, prior: &Value) -> Diagnostics {
        let name = get_str(prior, "name").unwrap_or_default().to_string();
        let deadline = Instant::now() + timeouts::get(prior, "delete", DEFAULT_DELETE);
        let client = match self.client(ctx).await {
            Ok(c) => c,
            Err(d) => return d,
        };
        let force = prior.get("force_destroy").and_then(Value::as_bool) == Some(true);
        let namespace = self.namespace_of(prior);
        match k8s::apply::delete_and_wait(client, &self.kind, namespace, &name, self.dependents, deadline)
            .await
        {
            Ok(()) => Diagnostics::new(),
            Err(KubeError::KarpenterGone { why, .. }) if force => {
                self.force_destroy(ctx, client, &name, &why, deadline).await
            }
            Err(e @ KubeError::KarpenterGone { .. }) => {
                let mut d = Diagnostics::new();
                let summary = format!(
                    "Karpenter is not running: {} {} cannot finish deleting",
                    self.kind.kind,
                    self.label(prior)
                );
                match self.schema.attribute(FORCE_DESTROY) {
                    Some(_) => d.error_at(&AttributePath::root().attr(FORCE_DESTROY), summary, e.to_string()),
                    None => d.error(summary, e.to_string()),
                }
                d
            }
            Err(e) => self.diagnose(&e, "deleting"),
        }
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

/// The attribute that opts into [`super::teardown`].
const FORCE_DESTROY: &str = "force_destroy";

impl KubeObjectType {
    /// `force_destroy` with Karpenter gone (`why`): Karpenter's cleanup, scoped by the cluster
    /// name of the provider (`cluster_name`, else `kubernetes { eks { cluster_name } }`), then the
    /// delete again.
    async fn force_destroy(
        &self,
        ctx: &KarpenterContext,
        client: &kube::Client,
        name: &str,
        why: &str,
        deadline: Instant,
    ) -> Diagnostics {
        let path = AttributePath::root().attr(FORCE_DESTROY);
        let what = self.kind.kind;
        let Some(cluster) = ctx.settings.cluster_name.clone() else {
            let mut d = Diagnostics::new();
            d.error_at(
                &path,
                "force_destroy needs the cluster's name",
                format!(
                    "Karpenter is not running ({why}), so force_destroy would clean up {what} {name} itself, scoped by \
                     the tags Karpenter puts on what it creates, which include the cluster's name. The cluster's name \
                     is not known: set cluster_name = \"...\" in the provider block (or use kubernetes {{ eks {{ cluster_name }} }}), \
                     then run the destroy again. Nothing was deleted in AWS."
                ),
            );
            return d;
        };
        tracing::warn!(
            kind = what,
            name,
            cluster = %cluster,
            "Karpenter is not running ({why}); force_destroy: doing its cleanup of {what} {name}"
        );
        if let Err(e) = super::teardown::run(ctx, client, &self.kind, name, &cluster, deadline).await {
            let mut d = Diagnostics::new();
            d.error_at(
                &path,
                format!("force_destroy could not finish Karpenter's cleanup of {what} {name}"),
                format!(
                    "{e}. What was already cleaned up stays cleaned up; run the destroy again to continue (every step \
                     is repeatable). Karpenter is not running: {why}."
                ),
            );
            return d;
        }
        // Only cluster-scoped kinds offer force_destroy (Karpenter's own cleanup).
        match k8s::apply::delete_and_wait(client, &self.kind, None, name, self.dependents, deadline).await {
            Ok(()) => Diagnostics::new(),
            Err(e) => self.diagnose(&e, "deleting"),
        }
    }

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

fn keep_prior_warning(kind: &str, name: &str, e: &KubeError) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.warning(
        format!("Could not refresh {kind} {name}"),
        format!("{e}. The last known state is kept; it is refreshed once the cluster can be reached."),
    );
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::tfvalue::Type;

    fn attrs() -> Vec<Attribute> {
        vec![
            Attribute::string("name").not_on_wire(),
            Attribute::object(
                "template",
                vec![Attribute::object(
                    "spec",
                    vec![Attribute::list_of_objects(
                        "requirements",
                        vec![
                            Attribute::string("operator"),
                            Attribute::list_of("values", Type::String),
                        ],
                    )],
                )],
            ),
            Attribute::map_of("limits", Type::String),
        ]
    }

    #[test]
    fn maps_api_field_paths_to_attributes() {
        let a = attrs();
        let p = wire_path_to_attribute(&a, "spec.template.spec.requirements[1].operator").expect("path");
        assert_eq!(p.to_string(), "template.spec.requirements[1].operator");
        assert_eq!(
            wire_path_to_attribute(&a, "spec.limits[cpu]")
                .map(|p| p.to_string())
                .as_deref(),
            Some("limits[\"cpu\"]")
        );
        assert_eq!(
            wire_path_to_attribute(&a, "metadata.labels")
                .map(|p| p.to_string())
                .as_deref(),
            Some("metadata.labels")
        );
        assert_eq!(wire_path_to_attribute(&a, "spec.unknownField"), None);
        assert_eq!(wire_path_to_attribute(&a, "status.conditions"), None);
    }

    #[test]
    fn merge_keeps_known_plan_values() {
        let planned = object([("a", Value::string("x")), ("s", Value::unknown())]);
        let actual = object([("a", Value::string("X")), ("s", Value::string("ready"))]);
        assert_eq!(
            merge_known(&planned, &actual),
            object([("a", Value::string("x")), ("s", Value::string("ready"))])
        );
    }

    /// #16 point 2: a default the cluster's CRD lacks was left out of the write; reading the
    /// object back keeps the planned default instead of showing `default → null` forever. A
    /// field the object has, or a prior without the default, is read as stored.
    #[test]
    fn a_default_the_cluster_lacks_is_kept_from_the_prior_state() {
        let attrs = vec![
            Attribute::string("name").not_on_wire(),
            Attribute::string("expire_after").default_value(Value::string("720h")),
            Attribute::object(
                "disruption",
                vec![Attribute::string("consolidate_after").default_value(Value::string("0s"))],
            ),
        ];
        let base = object([
            ("name", Value::string("a")),
            ("expire_after", Value::string("720h")),
            ("disruption", object([("consolidate_after", Value::string("0s"))])),
        ]);
        let read = |spec: Json, base: &Value| {
            let spec = spec.as_object().cloned().unwrap_or_default();
            let mut state = from_wire(&attrs, &spec, base, &AttributePath::root()).expect("from_wire");
            keep_defaults_the_cluster_lacks(&attrs, &spec, &mut state, base);
            state
        };
        // The cluster's CRD has neither field: both defaults are kept.
        let state = read(json!({"disruption": {}}), &base);
        assert_eq!(state.get("expire_after"), Some(&Value::string("720h")));
        assert_eq!(
            state.get("disruption").and_then(|d| d.get("consolidate_after")),
            Some(&Value::string("0s"))
        );
        // Stored values win; a prior without the default (import) reads as stored.
        let state = read(
            json!({"expireAfter": "24h", "disruption": {"consolidateAfter": "5m"}}),
            &base,
        );
        assert_eq!(state.get("expire_after"), Some(&Value::string("24h")));
        let state = read(json!({}), &object([("expire_after", Value::Null)]));
        assert!(state.get("expire_after").is_none_or(Value::is_null));
    }

    /// The apply body against a cluster CRD that lacks fields: a planned default the CRD does
    /// not have is left out (nothing to fail on), a configured field the CRD does not have is
    /// an error on its attribute naming the release that added it.
    #[test]
    fn writes_fit_the_served_schema() {
        use crate::resources::kube::v1::testing::{config, plan_create};
        use crate::resources::kube::v1::{NODE_POOL, crd_coverage::load_version};
        let resource = KubeObjectType::new("karpenter_node_pool", k8s::kinds::NODE_POOL, &NODE_POOL);
        let mut served = load_version("versions/v1.0.14", "v1", "karpenter.sh_nodepools.yaml");
        // A cluster whose CRD has no `expireAfter` (as if it were newer than v1.0).
        served["properties"]["spec"]["properties"]["template"]["properties"]["spec"]["properties"]
            .as_object_mut()
            .expect("template.spec")
            .remove("expireAfter");
        let minimal = json!({"name": "a", "template": {"spec": {
            "node_class_ref": {"name": "default"},
            "requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
        }}});
        let planned = plan_create(&NODE_POOL, &config(&NODE_POOL, &minimal));
        let manifest = resource.manifest(&planned).expect("manifest");
        assert_eq!(
            manifest.pointer("/spec/template/spec/expireAfter"),
            Some(&json!("720h"))
        );
        let fitted = resource
            .fit_to_cluster(manifest, &planned, &served)
            .expect("a default is not an error");
        assert_eq!(fitted.pointer("/spec/template/spec/expireAfter"), None);
        assert!(fitted.pointer("/spec/disruption/consolidateAfter").is_some());

        // Configured: expire_after set to a non-default value, and replicas (v1.8).
        let mut configured = minimal.clone();
        configured["template"]["spec"]["expire_after"] = json!("24h");
        configured["replicas"] = json!(2);
        let planned = plan_create(&NODE_POOL, &config(&NODE_POOL, &configured));
        let manifest = resource.manifest(&planned).expect("manifest");
        let d = resource
            .fit_to_cluster(manifest, &planned, &served)
            .expect_err("configured fields the CRD lacks");
        let errors: Vec<(String, String)> = d
            .iter()
            .map(|x| {
                (
                    x.path.as_ref().map(ToString::to_string).unwrap_or_default(),
                    x.detail.clone(),
                )
            })
            .collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        let replicas = errors
            .iter()
            .find(|(p, _)| p == "replicas")
            .expect("replicas error");
        assert!(
            replicas.1.contains("Karpenter added it in v1.8"),
            "{}",
            replicas.1
        );
        assert!(
            errors.iter().any(|(p, _)| p == "template.spec.expire_after"),
            "{errors:?}"
        );
    }

    /// #18: a change of labels only (or of provider-side settings) keeps the prior status in
    /// the plan; a spec change, a rename or a create plans it unknown.
    #[test]
    fn status_is_unknown_only_when_the_spec_changes() {
        use crate::resources::kube::v1::NODE_POOL;
        use crate::resources::kube::v1::testing::config;
        use crate::terraform::framework::plan::plan;
        let base = json!({"name": "a", "template": {"spec": {
            "node_class_ref": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
        }}});
        let created = plan(
            &NODE_POOL.attributes,
            &NODE_POOL.blocks,
            &config(&NODE_POOL, &base),
            &Value::Null,
        );
        let status = object([
            ("conditions", Value::Null),
            ("resources", Value::Null),
            ("nodes", Value::number(3)),
            ("node_class_observed_generation", Value::Null),
        ]);
        let prior = match created.planned {
            Value::Object(mut m) => {
                m.insert("status".into(), status.clone());
                Value::Object(m)
            }
            other => other,
        };
        let planned_for = |json: &Json| {
            let cfg = config(&NODE_POOL, json);
            let mut p = plan(&NODE_POOL.attributes, &NODE_POOL.blocks, &cfg, &prior).planned;
            keep_status_unless_spec_changed(&NODE_POOL, &prior, &mut p);
            p
        };
        let mut labels = base.clone();
        labels["metadata"] = json!({"labels": {"team": "a"}});
        labels["force_destroy"] = json!(true);
        let p = planned_for(&labels);
        assert_ne!(p, prior);
        assert_eq!(p.get("status"), Some(&status));

        let mut spec = base.clone();
        spec["weight"] = json!(5);
        assert!(planned_for(&spec).get("status").is_some_and(Value::is_unknown));
        let mut renamed = base.clone();
        renamed["name"] = json!("b");
        assert!(planned_for(&renamed).get("status").is_some_and(Value::is_unknown));
        let mut create = created_planned_status(&base);
        keep_status_unless_spec_changed(&NODE_POOL, &Value::Null, &mut create);
        assert!(create.get("status").is_some_and(Value::is_unknown));
    }

    fn created_planned_status(json: &Json) -> Value {
        use crate::resources::kube::v1::NODE_POOL;
        use crate::resources::kube::v1::testing::config;
        use crate::terraform::framework::plan::plan;
        plan(
            &NODE_POOL.attributes,
            &NODE_POOL.blocks,
            &config(&NODE_POOL, json),
            &Value::Null,
        )
        .planned
    }

    #[test]
    fn object_names() {
        assert!(valid_object_name("default") && valid_object_name("a.b-c"));
        assert!(!valid_object_name("Default") && !valid_object_name("-a") && !valid_object_name(""));
        assert!(
            valid_namespace("kube-system") && !valid_namespace("a.b") && !valid_namespace(&"a".repeat(64))
        );
    }

    fn capacity_buffer() -> KubeObjectType {
        KubeObjectType::new(
            "karpenter_capacity_buffer",
            k8s::kinds::CAPACITY_BUFFER,
            &crate::resources::kube::capacity_buffer::CAPACITY_BUFFER,
        )
    }

    /// A namespaced kind is imported by `namespace/name`; a cluster-scoped one by its name.
    #[test]
    fn import_ids_follow_the_scope() {
        let buffer = capacity_buffer();
        assert!(matches!(
            buffer.import_id("ci/runners"),
            Ok((Some("ci"), "runners"))
        ));
        for bad in [
            "runners",
            "ci/",
            "/runners",
            "Ci/runners",
            "a.b/runners",
            "ci/runners/x",
        ] {
            let d = buffer.import_id(bad).expect_err(bad);
            let text = d.iter().map(|x| x.detail.clone()).collect::<String>();
            assert!(text.contains("<namespace>/<name>"), "{bad}: {text}");
        }
        let pool = KubeObjectType::new(
            "karpenter_node_pool",
            k8s::kinds::NODE_POOL,
            &crate::resources::kube::v1::NODE_POOL,
        );
        assert!(matches!(pool.import_id("default"), Ok((None, "default"))));
        assert!(pool.import_id("ci/default").is_err());
    }

    /// The manifest of a namespaced kind carries `metadata.namespace` (the default when the
    /// configuration names none) and no `namespace` in `spec`; reading the object back takes
    /// the namespace from its metadata.
    #[test]
    fn namespaced_objects_are_addressed_by_their_namespace() {
        use crate::resources::kube::capacity_buffer::CAPACITY_BUFFER;
        use crate::resources::kube::v1::testing::{config, plan_create};
        let buffer = capacity_buffer();
        let planned = plan_create(
            &CAPACITY_BUFFER,
            &config(
                &CAPACITY_BUFFER,
                &json!({"name": "b", "pod_template_ref": {"name": "t"}, "replicas": 2}),
            ),
        );
        assert_eq!(buffer.namespace_of(&planned), Some("default"));
        let manifest = buffer.manifest(&planned).expect("manifest");
        assert_eq!(manifest["metadata"], json!({"name": "b", "namespace": "default"}));
        assert_eq!(manifest["apiVersion"], "autoscaling.x-k8s.io/v1beta1");
        assert!(manifest["spec"].get("namespace").is_none(), "{manifest}");

        let stored: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
            "metadata": {"name": "b", "namespace": "ci"},
            "spec": {"podTemplateRef": {"name": "t"}, "replicas": 2, "provisioningStrategy": "buffer.x-k8s.io/active-capacity"}
        }))
        .expect("object");
        let state = buffer.adopted_state(&stored).expect("state");
        assert_eq!(state.get("namespace"), Some(&Value::string("ci")));
        assert_eq!(buffer.label(&state), "ci/b");
        let pool = KubeObjectType::new(
            "karpenter_node_pool",
            k8s::kinds::NODE_POOL,
            &crate::resources::kube::v1::NODE_POOL,
        );
        assert_eq!(pool.namespace_of(&state), None);
    }
}
