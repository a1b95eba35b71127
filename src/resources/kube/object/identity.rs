//! Identity, import IDs and listing of the Kubernetes kinds ([`KubeObjectType`]), the same for
//! every kind:
//!
//! - **import ID**: the object's name, or `namespace/name` for a namespaced kind.
//! - **identity**: the object's `name`, plus its `namespace` for a namespaced kind. Nothing
//!   names the cluster: the provider configuration an import or list block uses (its
//!   `provider` argument) picks the cluster, as for every Kubernetes resource in Terraform.
//! - **list** (`list "karpenter_node_pool" "all" { provider = karpenter }`): one paged LIST of
//!   the kind, filtered server-side by `label_selector` and `namespace`, and by `name_prefix`;
//!   results in name order, each with the state an import would give when asked. A cluster
//!   without the kind's CRD lists nothing, with a warning that says so.

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use kube::api::DynamicObject;
use tokio::time::Instant;

use super::values::{valid_namespace, valid_object_name};
use super::{DEFAULT_NAMESPACE, KubeObjectType};
use crate::context::KarpenterContext;
use crate::k8s;
use crate::terraform::framework::list::{name_matches, name_prefix_attribute};
use crate::terraform::framework::schema::{Attribute, Schema};
use crate::terraform::framework::validate as v;
use crate::terraform::framework::{Diagnostics, IdentityAttribute, IdentitySchema, ListRequest, ListSink};
use crate::terraform::tfvalue::Value;

/// How long one listing may take (its pages and their retries).
const LIST_TIMEOUT: Duration = Duration::from_secs(2 * 60);

static CLUSTER_SCOPED_IDENTITY: LazyLock<IdentitySchema> = LazyLock::new(|| {
    IdentitySchema::new(vec![IdentityAttribute::required(
        "name",
        "The object's name (`metadata.name`).",
    )])
});

static NAMESPACED_IDENTITY: LazyLock<IdentitySchema> = LazyLock::new(|| {
    IdentitySchema::new(vec![
        IdentityAttribute::required("name", "The object's name (`metadata.name`)."),
        IdentityAttribute::optional(
            "namespace",
            "The object's namespace (`metadata.namespace`); `default` when left out.",
        ),
    ])
});

fn label_selector_attribute() -> Attribute {
    Attribute::string("label_selector")
        .optional()
        .describe(
            "Only objects whose labels match this Kubernetes label selector, as `kubectl get -l` takes it \
             (e.g. `team=data,karpenter.sh/discovery`); the API server filters.",
        )
        .validate(v::non_empty())
}

/// The list schema of a kind: the filters, and a description naming the kind (for its page).
fn list_schema(kind: &k8s::Kind) -> Schema {
    let mut filters = vec![label_selector_attribute(), name_prefix_attribute("objects")];
    let mut scope = "in the cluster";
    if kind.namespaced {
        scope = "in every namespace of the cluster (or one, with `namespace`)";
        filters.push(
            Attribute::string("namespace")
                .optional()
                .describe("Only objects in this namespace; every namespace when left out.")
                .validate(v::non_empty()),
        );
    }
    Schema::new(
        format!(
            "Finds the {} objects (`{}`) {scope}, in name order. The cluster is the one the provider \
             configuration points at.",
            kind.kind,
            kind.api_version()
        ),
        filters,
    )
}

/// One list schema per kind, built on first use and kept for the process's life (the
/// framework hands out `&Schema`).
static LIST_SCHEMAS: LazyLock<Mutex<BTreeMap<&'static str, &'static Schema>>> =
    LazyLock::new(Default::default);

impl KubeObjectType {
    pub(crate) fn identity_schema_of_kind(&self) -> &'static IdentitySchema {
        if self.kind.namespaced {
            &NAMESPACED_IDENTITY
        } else {
            &CLUSTER_SCOPED_IDENTITY
        }
    }

    pub(crate) fn list_schema_of_kind(&self) -> &'static Schema {
        let mut schemas = LIST_SCHEMAS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        schemas
            .entry(self.type_name)
            .or_insert_with(|| Box::leak(Box::new(list_schema(&self.kind))))
    }

    /// The identity a state names: null until it has a name (unknown on a create whose name
    /// is not known yet).
    pub(crate) fn identity_of_state(&self, state: &Value) -> Value {
        let name = state.get("name").cloned().unwrap_or(Value::Null);
        if name.is_null() {
            return Value::Null;
        }
        let mut values = vec![("name", name)];
        if self.kind.namespaced {
            let namespace = match state.get("namespace") {
                Some(v) if !v.is_null() => v.clone(),
                _ => Value::string(DEFAULT_NAMESPACE),
            };
            values.push(("namespace", namespace));
        }
        self.identity_schema_of_kind().value(values)
    }

    /// The import ID an identity stands for (`name`, or `namespace/name`).
    pub(crate) fn import_id_of_identity(&self, identity: &Value) -> String {
        let name = IdentitySchema::get(identity, "name").unwrap_or_default();
        if self.kind.namespaced {
            let namespace = IdentitySchema::get(identity, "namespace").unwrap_or(DEFAULT_NAMESPACE);
            format!("{namespace}/{name}")
        } else {
            name.to_string()
        }
    }

    fn display_name(&self, obj: &DynamicObject) -> String {
        k8s::apply::object_label(
            obj.metadata.namespace.as_deref().filter(|_| self.kind.namespaced),
            obj.metadata.name.as_deref().unwrap_or_default(),
        )
    }

    /// The listing behind `list "<type>" …`.
    pub(crate) async fn list_objects(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        let client = match ctx.kube().await {
            Ok(c) => c,
            Err(e) => return sink.fail(self.diagnose(&e, "connecting to the cluster")).await,
        };
        let config = &request.config;
        let namespace = config
            .get("namespace")
            .and_then(Value::as_str)
            .filter(|_| self.kind.namespaced);
        let selector = config.get("label_selector").and_then(Value::as_str);
        let listed = k8s::apply::list(
            client,
            &self.kind,
            namespace,
            selector,
            Instant::now() + LIST_TIMEOUT,
        )
        .await;
        let mut objects = match listed {
            Ok(Some(objects)) => objects,
            Ok(None) => {
                sink.skip(
                    format!("No {} objects in this cluster", self.kind.kind),
                    format!(
                        "The cluster does not serve {} {} (its CRD {} is not installed, or Karpenter there is older \
                         than this kind), so there is nothing to list.",
                        self.kind.api_version(),
                        self.kind.kind,
                        self.kind.crd_name()
                    ),
                )
                .await;
                return;
            }
            Err(e) => return sink.fail(self.diagnose(&e, "listing")).await,
        };
        objects.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name).cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        for obj in objects {
            let name = obj.metadata.name.clone().unwrap_or_default();
            if !name_matches(config, &name) {
                continue;
            }
            if !sink.wants_more() {
                return;
            }
            let display_name = self.display_name(&obj);
            // What an import followed by a refresh would hold.
            let state = match self
                .adopted_state(&obj)
                .and_then(|adopted| self.state_from_object(&obj, &adopted))
            {
                Ok(state) => state,
                Err(d) => {
                    let detail = d.iter().map(|d| d.detail.clone()).collect::<Vec<_>>().join("; ");
                    if !sink
                        .skip(
                            format!("{} {display_name} cannot be listed", self.kind.kind),
                            format!("Its stored object does not fit this provider's schema: {detail}"),
                        )
                        .await
                    {
                        return;
                    }
                    continue;
                }
            };
            let warnings = if obj.metadata.deletion_timestamp.is_some() {
                self.being_deleted_warning(&obj)
            } else {
                Diagnostics::new()
            };
            let identity = self.identity_of_state(&state);
            if !sink.found(identity, display_name, Some(state), warnings).await {
                return;
            }
        }
    }

    /// The object an import ID names: `name` for a cluster-scoped kind, `namespace/name` for a
    /// namespaced one (as hashicorp/kubernetes imports namespaced objects).
    pub(super) fn import_id<'a>(&self, id: &'a str) -> Result<(Option<&'a str>, &'a str), Diagnostics> {
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
}
