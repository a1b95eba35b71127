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
//! - **plan, checks and notes**: with the cluster readable, what the installed Karpenter refuses
//!   is a plan error ([`installed`]); then the plan's notes stage ([`super::notes`]) says what
//!   the change does beyond the plan (the running nodes it replaces, what kubelet expressions
//!   come to).
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
//! One file per job: [`resource`] (the framework's `Resource`: plan, create, read, update,
//! delete, import, list, move), [`state`] (manifest and state of an object), [`write`] (create
//! and update), [`validation`] (Karpenter's verdict after a write), [`installed`] (what the
//! installed Karpenter refuses, at plan), [`delete`], [`references`]
//! (the node class a pool names), [`identity`] (identity,
//! import IDs and listing), [`diagnostics`] (Kubernetes errors and waits as diagnostics) and
//! [`values`] (value helpers those share).
//!
//! Schema conventions: `name` (the object name), `namespace` for a namespaced kind (its
//! default is [`DEFAULT_NAMESPACE`], as in hashicorp/kubernetes), `metadata = { labels,
//! annotations }`, `status` (computed), off-wire settings (`timeouts`, `wait_for_ready`), and
//! every other attribute is a `spec` field. Namespaced and cluster-scoped kinds go through the
//! same code; only the object's address differs ([`KubeObjectType::namespace_of`]).

use std::sync::LazyLock;
use std::time::Duration;

use super::availability::Availability;
use crate::context::plan_memory::PlanMemory;
use crate::k8s::{self, Kind};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::schema::Schema;
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

mod delete;
mod diagnostics;
pub mod identity;
mod installed;
mod references;
mod resource;
mod state;
mod validation;
mod values;
mod write;

/// How long one read of an object may take (its retries included).
const READ_TIMEOUT: Duration = Duration::from_secs(2 * 60);

/// The namespace of a namespaced kind's object when the configuration names none: `default`,
/// as hashicorp/kubernetes and kubectl do.
pub const DEFAULT_NAMESPACE: &str = "default";

/// What a plan shows of a kind's `status`, appended to each status attribute's description.
pub const STATUS_IN_PLANS: &str = "On create it is known after apply. An update plans the status of the last \
     refresh, so a change shows only the values that change, and the apply keeps it; the next refresh reads \
     what Karpenter wrote since.";

/// A Karpenter kind as a Terraform resource type.
pub struct KubeObjectType {
    pub type_name: &'static str,
    pub kind: Kind,
    pub schema: &'static LazyLock<Schema>,
    /// The kind's cross-attribute rules, with the plan's memory once the provider is
    /// configured (the plan and apply walks), to keep what they compute for the plan.
    pub validate: fn(&Value, Option<&PlanMemory>, &mut Diagnostics),
    pub replacements: fn(&Value, &Value) -> Vec<AttributePath>,
    /// Kinds that may be owned by this one (listed when a delete times out).
    pub dependents: &'static [Kind],
    /// A boolean attribute that, when true, makes create/update wait for `Ready=True`.
    pub wait_for_ready: Option<&'static str>,
    /// Karpenter validates the object after it is written (`ValidationSucceeded`): when a
    /// Karpenter runs, create/update wait for its verdict and fail on a refusal ([`validation`]).
    pub validated_by_karpenter: bool,
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

/// Where a kind refers to its node class, checked after each write (see [`references`]).
pub struct ClassRef {
    /// The attribute path of the reference object (`name`, and optionally `group`/`kind` or
    /// `api_version`/`kind`).
    pub path: &'static [&'static str],
    /// The kinds it may name; the first is what a reference without group or kind names.
    pub kinds: &'static [Kind],
}

impl KubeObjectType {
    pub const fn new(type_name: &'static str, kind: Kind, schema: &'static LazyLock<Schema>) -> Self {
        Self {
            type_name,
            kind,
            schema,
            validate: |_, _, _| {},
            replacements: no_replacements,
            dependents: &[],
            wait_for_ready: None,
            validated_by_karpenter: false,
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
}

#[cfg(test)]
mod tests;
