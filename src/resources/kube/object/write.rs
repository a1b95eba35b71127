//! Create and update of a kind's object: the server-side apply of the whole intent, the one
//! GET before the first write that refuses an object this state does not hold, the wait for an
//! object being deleted before it is created again, and the checks of what the cluster's CRD
//! accepts.

use std::time::Duration;

use kube::api::DynamicObject;
use serde_json::Value as Json;
use tokio::time::Instant;

use super::KubeObjectType;
use super::delete::FORCE_DESTROY;
use super::values::{
    attribute_at, has_status, merge_known, unknowns_to_null, value_at, wire_path_to_attribute,
};
use crate::context::KarpenterContext;
use crate::k8s::{self, KubeError};
use crate::resources::kube::availability::{AvailabilityError, ensure_crd_exists};
use crate::resources::taken_name::{Marks, Taken};
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{ApplyOutcome, Diagnostics, timeouts};
use crate::terraform::tfvalue::{AttributePath, Value};

/// How long a create may take, unless `timeouts.create` says.
pub(super) const DEFAULT_CREATE: Duration = Duration::from_secs(10 * 60);
/// How long an update may take, unless `timeouts.update` says.
pub(super) const DEFAULT_UPDATE: Duration = Duration::from_secs(10 * 60);
/// How long the read of a new object's status after its write may take, at most (never past
/// the apply's deadline; on failure it is skipped, and the next refresh reads the status).
const STATUS_READ: Duration = Duration::from_secs(5);

/// Where the refusals send the user to upgrade the CRDs: the `karpenter` chart never upgrades
/// the CRDs it carries (Helm installs a chart's `crds/` once), only the `karpenter-crd` chart does.
const CRD_CHART: &str = "The karpenter chart installs its CRDs only when it is first installed and never \
     upgrades them; a cluster that has only that chart needs the karpenter-crd chart to take them over (the \
     provider's guide \"Upgrading Karpenter\", docs/guides/upgrading-karpenter.md, shows how).";

impl KubeObjectType {
    /// Create and update are the same server-side apply of the whole intent, which also takes
    /// over from other field managers what the prior state and the plan manage
    /// ([`k8s::apply::apply_owning`]).
    pub(super) async fn apply(
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
        // The gate's watch reacts the moment the CRD is established; beside it, the CRD is
        // looked for, so that one nothing creates fails after a minute, not at the deadline.
        let absent = async {
            match self.requires {
                Some(requires) => {
                    match ensure_crd_exists(&ctx.crd_gate, client, &self.kind, requires, deadline).await {
                        Ok(()) => std::future::pending().await,
                        Err(e) => e,
                    }
                }
                None => std::future::pending().await,
            }
        };
        let served = tokio::select! {
            biased;
            served = ctx.crd_gate.ensure(client, &self.kind, deadline) => match served {
                Ok(served) => served,
                Err(e) => return ApplyOutcome::failed(None, self.diagnose(&e, "waiting for the CRD")),
            },
            e = absent => {
                let d = match e {
                    AvailabilityError::Kube(k) => self.diagnose(&k, "looking for the CRD"),
                    not_installed => Diagnostics::from_error(
                        format!("{} is not installed in this cluster", self.kind.kind),
                        not_installed.to_string(),
                    ),
                };
                return ApplyOutcome::failed(None, d);
            }
        };
        let manifest = match self.fit_to_cluster(manifest, planned, &served) {
            Ok(m) => m,
            Err(d) => return ApplyOutcome::failed(None, d),
        };
        if prior.is_none()
            && let Err(d) = self.refuse_existing(client, namespace, &name, deadline).await
        {
            return ApplyOutcome::failed(None, d);
        }
        // A create stamps its object, so that a write whose answer is lost is recognised as
        // its own when the server answers again (and another writer's object is not).
        let create = prior.is_none().then(k8s::ownership::CreateToken::new);
        let mut manifest = manifest;
        if let Some(token) = &create {
            token.stamp(&mut manifest);
        }
        let prior_manifest = prior.and_then(|p| self.manifest(p).ok());
        let mut fields = k8s::ownership::stated_fields(&manifest);
        fields.extend(prior_manifest.iter().flat_map(k8s::ownership::stated_fields));
        let target = k8s::apply::Target {
            kind: &self.kind,
            namespace,
            name: &name,
        };
        let stored =
            match k8s::apply::apply_owning(client, target, &manifest, &fields, create.as_ref(), deadline)
                .await
            {
                Ok(obj) => obj,
                Err(KubeError::TakenMeanwhile { object, .. }) => {
                    return ApplyOutcome::failed(None, self.refusal(&object, namespace, &name));
                }
                Err(e) => return ApplyOutcome::failed(None, self.diagnose(&e, "applying")),
            };
        // The object was already being deleted (a delete that timed out on a finalizer, or
        // someone else's): what was just written goes with it, so wait until it is gone and
        // write it again.
        let stored = if stored.metadata.deletion_timestamp.is_some() {
            match self
                .recreate(
                    ctx,
                    client,
                    planned,
                    namespace,
                    &name,
                    &manifest,
                    &fields,
                    create.as_ref(),
                    &stored,
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
        self.check_class_reference(ctx, client, planned, deadline, &mut diags)
            .await;
        let mut latest = stored;
        let wants_ready = self
            .wait_for_ready
            .is_some_and(|attr| planned.get(attr).and_then(Value::as_bool) == Some(true));
        if wants_ready {
            match k8s::wait::wait_ready(client, &self.kind, namespace, &name, deadline).await {
                Ok(obj) => latest = obj,
                Err(e) => diags.extend(self.diagnose(&e, "waiting for Ready")),
            }
        } else {
            let waited = self
                .check_karpenter_verdict(client, &latest, deadline, &mut diags)
                .await;
            if waited || (planned.get("status").is_some_and(Value::is_unknown) && !has_status(&latest)) {
                // A new object has no status in the answer to its write; Karpenter usually fills
                // it at once (and has, after a verdict). One read (never a wait, and within the
                // apply's timeout) puts in state what the server has by now, instead of an
                // empty status until the next refresh.
                let read_by = (Instant::now() + STATUS_READ).min(deadline);
                if read_by > Instant::now()
                    && let Ok(Some(obj)) =
                        k8s::apply::get(client, &self.kind, namespace, &name, read_by).await
                {
                    latest = obj;
                }
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
    pub(super) async fn refuse_existing(
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
        Err(self.refusal(&obj, namespace, name))
    }

    /// The refusal of a create that found `obj` under its name: what it is, whose marks it
    /// carries, and the `import {}` that takes it over on purpose.
    pub(super) fn refusal(&self, obj: &DynamicObject, namespace: Option<&str>, name: &str) -> Diagnostics {
        let managers = k8s::ownership::managers(obj);
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
        .refuse_as(
            &AttributePath::root().attr("name"),
            crate::terraform::framework::address::in_root_module(self.type_name, &[("name", name)])
                .as_deref(),
            &mut d,
        );
        d
    }

    /// Waits until the object that `stored` shows being deleted is gone (bounded by
    /// `timeouts.create`, with the delete wait's progress lines and its check that Karpenter
    /// is running), then writes `manifest` again, creating the object anew. With Karpenter
    /// gone, `force_destroy` does Karpenter's cleanup first; without it, this fails fast on
    /// `force_destroy`, saying what holds the object and what to do.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn recreate(
        &self,
        ctx: &KarpenterContext,
        client: &kube::Client,
        planned: &Value,
        namespace: Option<&str>,
        name: &str,
        manifest: &Json,
        fields: &[k8s::ownership::FieldPath],
        create: Option<&k8s::ownership::CreateToken>,
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
        let object = k8s::wait::Incarnation {
            namespace,
            name,
            uid: &uid,
        };
        let waited = k8s::wait::wait_gone(
            client,
            &self.kind,
            object,
            self.dependents,
            deadline,
            k8s::wait::Waiting::Recreate,
        )
        .await;
        let force = planned.get(FORCE_DESTROY).and_then(Value::as_bool) == Some(true);
        match waited {
            Ok(_) => {}
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
                let help = self.karpenter_gone_help(true);
                let detail = format!(
                    "{stuck}, but Karpenter is not running: {why} (noticed after {}). Only Karpenter's controller \
                     removes those finalizers. {help} Nothing was created.",
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
        let target = k8s::apply::Target {
            kind: &self.kind,
            namespace,
            name,
        };
        match k8s::apply::apply_owning(client, target, manifest, fields, create, deadline).await {
            Ok(obj) => Ok(obj),
            Err(KubeError::TakenMeanwhile { object, .. }) => Err(self.refusal(&object, namespace, name)),
            Err(e) => Err(self.diagnose(&e, "applying")),
        }
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
        let holding = k8s::wait::waiting_for(&finalizers);
        let karpenter = if k8s::wait::waits_on_karpenter(&finalizers) {
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
    pub(super) fn check_removals(
        &self,
        stored: &DynamicObject,
        prior: &Json,
        planned: &Json,
        d: &mut Diagnostics,
    ) {
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
    pub(super) fn fit_to_cluster(
        &self,
        mut manifest: Json,
        planned: &Value,
        served: &k8s::gate::Served,
    ) -> Result<Json, Diagnostics> {
        let Some(schema) = served.schema.as_ref() else {
            return Ok(manifest);
        };
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
        for refusal in k8s::served_values::refused(schema, &served.patterns, &manifest) {
            self.refused_value(&mut d, &refusal);
        }
        if let Some(rules) = served.label_rules() {
            for refusal in k8s::served_labels::refused(schema, rules, &manifest) {
                self.refused_label(&mut d, &refusal);
            }
        }
        if d.has_errors() { Err(d) } else { Ok(manifest) }
    }

    /// The error for a configured value the cluster's CRD refuses (an enum value an older
    /// Karpenter lacks, a stricter pattern or bound).
    fn refused_value(&self, d: &mut Diagnostics, refusal: &k8s::served_values::Refusal) {
        let crd = self.kind.crd_name();
        let what = self.kind.kind;
        let wire = &refusal.path;
        let shown = match &refusal.value {
            Json::String(s) => format!("{s:?}"),
            other => other.to_string(),
        };
        let since = refusal
            .enum_value
            .as_deref()
            .and_then(|v| k8s::served_values::first_value_release(&crd, wire, v));
        let advice = match since {
            Some(release) => format!(
                "Karpenter added {shown} in {release}. Upgrade the Karpenter CRDs in this cluster to {release} or \
                 later with the karpenter-crd chart, or use one of the values it allows. {CRD_CHART}"
            ),
            None => format!(
                "This provider's schema follows Karpenter {}; upgrade the Karpenter CRDs in this cluster with the \
                 karpenter-crd chart, or use a value they allow. {CRD_CHART}",
                k8s::skew::SCHEMA_RELEASE
            ),
        };
        let summary = "Not supported by the Karpenter installed in this cluster";
        let detail = format!(
            "{shown} ({wire}) {} in the {what} schema of the Karpenter CRDs installed in this cluster ({crd}). {advice}",
            refusal.problem
        );
        match wire_path_to_attribute(&self.schema.attributes, wire) {
            Some(path) => d.error_at(&path, summary, detail),
            None => d.error(summary, detail),
        }
    }

    /// The error for a label key the cluster's CRD forbids (a key of a domain Karpenter
    /// restricts that the installed release does not allow yet).
    fn refused_label(&self, d: &mut Diagnostics, refusal: &k8s::served_labels::LabelRefusal) {
        let crd = self.kind.crd_name();
        let what = self.kind.kind;
        let key = &refusal.key;
        let advice = match k8s::served_labels::first_label_release(key) {
            Some(release) => format!(
                "Karpenter allows it from {release}: upgrade the Karpenter CRDs in this cluster to {release} or later \
                 (the karpenter-crd chart; the karpenter chart never upgrades them), or remove it."
            ),
            None => "Karpenter reserves it: remove it.".to_string(),
        };
        let summary = "Not supported by the Karpenter installed in this cluster";
        let detail = format!(
            "The label key {key:?} ({}) is refused by the {what} schema of the Karpenter CRDs installed in this cluster \
             ({crd}): {}. {advice}",
            refusal.path, refusal.message
        );
        let at = wire_path_to_attribute(&self.schema.attributes, &refusal.path).map(|path| {
            if refusal.path.ends_with(".labels") {
                path.key(key.clone())
            } else {
                path
            }
        });
        match at {
            Some(path) => d.error_at(&path, summary, detail),
            None => d.error(summary, detail),
        }
    }

    /// The error for a configured field (`spec.x[0].y`) that the cluster's CRD does not have.
    pub(super) fn undeclared_field(&self, d: &mut Diagnostics, wire: &str) {
        let crd = self.kind.crd_name();
        let what = self.kind.kind;
        let since = match k8s::skew::first_release(&crd, wire) {
            Some(release) => format!(
                "Karpenter added it in {release}. Upgrade the Karpenter CRDs in this cluster to {release} or later \
                 with the karpenter-crd chart, or remove this setting. {CRD_CHART}"
            ),
            None => format!(
                "This provider's schema follows Karpenter {}; upgrade the Karpenter CRDs in this cluster with the \
                 karpenter-crd chart, or remove this setting. {CRD_CHART}",
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
}
