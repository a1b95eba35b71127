//! What a plan reads from the cluster: the CRD each kind is served with (its schema, to check
//! a change against the Karpenter installed there), and, to say what a NodePool or node class
//! change does to the running nodes, the NodeClaims (listed once per provider process, that is
//! once per Terraform command, however many pools and classes change), the NodePools'
//! disruption settings (listed once too, only when a node class change needs its pools'
//! budgets), and the hash annotations Karpenter wrote on the objects this process refreshed
//! (kept from the refresh, so the check costs no request for them). A failed read is kept as
//! well: an unreachable cluster is asked once, not once per resource.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::DynamicObject;
use serde_json::Value as Json;
use tokio::sync::OnceCell;
use tokio::time::Instant;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;

use super::apply;
use super::conditions::{Condition, find, of_status};
use super::gate::{Served, served_schema, serves};
use super::kinds::{Kind, NODE_CLAIM, NODE_POOL};

/// How long a plan-time list may take (its retries included). A plan never waits longer on
/// a cluster it only asks for a preview.
pub const PLAN_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// The label Karpenter puts on a NodeClaim naming its NodePool.
pub const NODE_POOL_LABEL: &str = "karpenter.sh/nodepool";

/// The condition Karpenter sets on a NodeClaim it decided to replace for drift.
pub const DRIFTED_CONDITION: &str = "Drifted";

/// The node class a NodeClaim was launched with (`spec.nodeClassRef`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassRef {
    pub group: String,
    pub kind: String,
    pub name: String,
}

/// What the drift preview needs of one NodeClaim.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeClaim {
    pub name: String,
    /// The node's name, once it registered (`status.nodeName`).
    pub node_name: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// Only the annotations whose key ends in `-hash` or `-hash-version` (Karpenter's drift
    /// hashes): the rest is of no use here.
    pub hashes: BTreeMap<String, String>,
    pub class: Option<ClassRef>,
    /// Being deleted (a `deletionTimestamp`): on its way out already.
    pub deleting: bool,
    /// The reason of a `Drifted=True` condition: Karpenter already decided to replace it.
    pub drifted: Option<String>,
    /// Its `Launched` and `Registered` conditions, when Karpenter wrote them.
    pub launched: Option<Condition>,
    pub registered: Option<Condition>,
    /// `metadata.creationTimestamp` (RFC 3339).
    pub created: String,
}

impl NodeClaim {
    /// The NodePool it belongs to (its `karpenter.sh/nodepool` label).
    pub fn pool(&self) -> Option<&str> {
        self.labels.get(NODE_POOL_LABEL).map(String::as_str)
    }

    /// `name` with the node's name, for messages: `general-x7k2p (ip-10-0-1-2.ec2.internal)`.
    pub fn display(&self) -> String {
        match &self.node_name {
            Some(node) => format!("{} ({node})", self.name),
            None => self.name.clone(),
        }
    }
}

/// Whether an annotation is one of Karpenter's drift hashes.
pub fn is_hash_annotation(key: &str) -> bool {
    key.ends_with("-hash") || key.ends_with("-hash-version")
}

fn hashes(obj: &DynamicObject) -> BTreeMap<String, String> {
    obj.metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| is_hash_annotation(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The `Drifted=True` condition's reason (its type when it gives none), `None` when the
/// condition is absent or not True.
pub fn drifted_reason(status: Option<&Json>) -> Option<String> {
    let conditions = status?.get("conditions")?.as_array()?;
    let drifted = conditions
        .iter()
        .find(|c| c.get("type").and_then(Json::as_str) == Some(DRIFTED_CONDITION))?;
    if drifted.get("status").and_then(Json::as_str) != Some("True") {
        return None;
    }
    let reason = drifted
        .get("reason")
        .and_then(Json::as_str)
        .filter(|r| !r.is_empty())
        .unwrap_or(DRIFTED_CONDITION);
    Some(reason.to_string())
}

impl NodeClaim {
    /// The facts of a listed NodeClaim object.
    pub fn from_object(obj: &DynamicObject) -> Self {
        let status = obj.data.get("status");
        let conditions = of_status(status);
        let text = |v: Option<&Json>, key: &str| {
            v.and_then(|v| v.get(key))
                .and_then(Json::as_str)
                .map(str::to_string)
        };
        let class = obj
            .data
            .get("spec")
            .and_then(|s| s.get("nodeClassRef"))
            .map(|r| ClassRef {
                group: text(Some(r), "group").unwrap_or_default(),
                kind: text(Some(r), "kind").unwrap_or_default(),
                name: text(Some(r), "name").unwrap_or_default(),
            });
        Self {
            name: obj.metadata.name.clone().unwrap_or_default(),
            node_name: text(status, "nodeName").filter(|n| !n.is_empty()),
            labels: obj
                .metadata
                .labels
                .clone()
                .unwrap_or_default()
                .into_iter()
                .collect(),
            hashes: hashes(obj),
            class,
            deleting: obj.metadata.deletion_timestamp.is_some(),
            drifted: drifted_reason(status),
            launched: find(&conditions, "Launched").cloned(),
            registered: find(&conditions, "Registered").cloned(),
            created: obj
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string())
                .unwrap_or_default(),
        }
    }
}

/// What a refresh read of one object, kept for the plan that follows: Karpenter's drift hashes
/// and its status conditions, with the generation of the spec they are about.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observed {
    /// Only the annotations whose key ends in `-hash` or `-hash-version`.
    pub hashes: BTreeMap<String, String>,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    pub conditions: Vec<Condition>,
}

impl Observed {
    fn of(obj: &DynamicObject) -> Self {
        Self {
            hashes: hashes(obj),
            generation: obj.metadata.generation,
            conditions: of_status(obj.data.get("status")),
        }
    }
}

/// A NodePool as a node class change needs it: its name and `spec.disruption` (budgets).
#[derive(Debug, Clone, PartialEq)]
pub struct PoolDisruption {
    pub name: String,
    pub disruption: Json,
}

type Shared<T> = OnceCell<Result<Arc<T>, String>>;

/// One read of a CRD, shared by every caller.
type ServedOnce = Arc<OnceCell<Option<Arc<Served>>>>;

/// The reads of one provider process for plan-time previews (see the module docs).
#[derive(Default)]
pub struct PlanReads {
    node_claims: Shared<Vec<NodeClaim>>,
    node_pools: Shared<Vec<PoolDisruption>>,
    /// `<plural>.<group>/<name>` (`<plural>.<group>/<namespace>/<name>` for a namespaced
    /// kind) → what the refresh read of the object.
    observed: Mutex<HashMap<String, Observed>>,
    /// Per CRD: what one read of it found.
    served: Mutex<HashMap<String, ServedOnce>>,
    /// How many lists this process made (for tests).
    lists: std::sync::atomic::AtomicUsize,
}

fn observed_key(kind: &Kind, namespace: Option<&str>, name: &str) -> String {
    match namespace.filter(|_| kind.namespaced) {
        Some(namespace) => format!("{}/{namespace}/{name}", kind.crd_name()),
        None => format!("{}/{name}", kind.crd_name()),
    }
}

impl PlanReads {
    /// Every NodeClaim of the cluster, listed on the first call only; the error (said as a
    /// sentence) is kept too. A cluster without the NodeClaim kind has none.
    pub async fn node_claims(&self, client: &kube::Client) -> Result<Arc<Vec<NodeClaim>>, String> {
        self.node_claims
            .get_or_init(|| async {
                self.lists.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let listed = apply::list(
                    client,
                    &NODE_CLAIM,
                    None,
                    None,
                    Instant::now() + PLAN_READ_TIMEOUT,
                )
                .await;
                match listed {
                    Ok(objects) => {
                        let claims = objects
                            .unwrap_or_default()
                            .iter()
                            .map(NodeClaim::from_object)
                            .collect();
                        tracing::debug!("listed the NodeClaims for the plan's drift preview");
                        Ok(Arc::new(claims))
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "could not list the NodeClaims at plan");
                        Err(e.to_string())
                    }
                }
            })
            .await
            .clone()
    }

    /// Every NodePool's name and disruption settings, listed on the first call only.
    pub async fn node_pools(&self, client: &kube::Client) -> Result<Arc<Vec<PoolDisruption>>, String> {
        self.node_pools
            .get_or_init(|| async {
                self.lists.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let listed =
                    apply::list(client, &NODE_POOL, None, None, Instant::now() + PLAN_READ_TIMEOUT).await;
                match listed {
                    Ok(objects) => Ok(Arc::new(
                        objects
                            .unwrap_or_default()
                            .iter()
                            .map(|o| PoolDisruption {
                                name: o.metadata.name.clone().unwrap_or_default(),
                                disruption: o
                                    .data
                                    .get("spec")
                                    .and_then(|s| s.get("disruption"))
                                    .cloned()
                                    .unwrap_or(Json::Null),
                            })
                            .collect(),
                    )),
                    Err(e) => Err(e.to_string()),
                }
            })
            .await
            .clone()
    }

    /// Keeps what a refresh read of an object (its hashes, status conditions and generation),
    /// for the plan that follows.
    pub fn observe(&self, kind: &Kind, obj: &DynamicObject) {
        let name = obj.metadata.name.as_deref().unwrap_or_default();
        let namespace = obj.metadata.namespace.as_deref();
        if let Ok(mut seen) = self.observed.lock() {
            seen.insert(observed_key(kind, namespace, name), Observed::of(obj));
        }
    }

    /// What this process last read of `kind`/`name` (in `namespace`, for a namespaced kind), if
    /// it did (a plan with `-refresh=false` reads nothing).
    pub fn observed(&self, kind: &Kind, namespace: Option<&str>, name: &str) -> Option<Observed> {
        self.observed
            .lock()
            .ok()
            .and_then(|seen| seen.get(&observed_key(kind, namespace, name)).cloned())
    }

    /// Reads `kind`/`name` (a cluster-scoped kind: the node pools and classes drift is about)
    /// for its hash annotations when this process has not (a plan with `-refresh=false`);
    /// `None` when it cannot be read or does not exist.
    pub async fn hashes_of(
        &self,
        client: &kube::Client,
        kind: &Kind,
        name: &str,
    ) -> Option<BTreeMap<String, String>> {
        if let Some(seen) = self.observed(kind, None, name) {
            return Some(seen.hashes);
        }
        match apply::get(client, kind, None, name, Instant::now() + PLAN_READ_TIMEOUT).await {
            Ok(Some(obj)) => Some(hashes(&obj)),
            Ok(None) => None,
            Err(e) => {
                tracing::debug!(error = %e, kind = kind.kind, name, "could not read the object's hash annotations at plan");
                None
            }
        }
    }

    /// What the cluster serves for `kind` right now, without waiting: one read of its CRD per
    /// kind and process (a plan's checks against the installed Karpenter), `None` when the CRD
    /// is absent, not established, does not serve our version, or could not be read by
    /// `deadline`. Never an error: a plan does not depend on it.
    pub async fn served_crd(
        &self,
        client: &kube::Client,
        kind: &Kind,
        deadline: Instant,
    ) -> Option<Arc<Served>> {
        let cell = {
            let mut served = self.served.lock().ok()?;
            served.entry(kind.crd_name()).or_default().clone()
        };
        cell.get_or_init(|| async {
            let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
            let found = tokio::time::timeout_at(deadline, crds.get_opt(&kind.crd_name())).await;
            match found {
                Ok(Ok(Some(crd))) if serves(kind)(Some(&crd)) => {
                    Some(Arc::new(Served::new(served_schema(&crd, kind.version))))
                }
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, crd = %kind.crd_name(), "the CRD could not be read while planning");
                    None
                }
                _ => None,
            }
        })
        .await
        .clone()
    }

    /// How many lists this process made so far.
    pub fn lists_made(&self) -> usize {
        self.lists.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{NodeClaim, PlanReads, drifted_reason};
    use crate::k8s::kinds::{CAPACITY_BUFFER, NODE_POOL};

    #[test]
    fn objects_of_one_name_in_two_namespaces_are_kept_apart() {
        let buffer = |namespace: &str, generation: i64| {
            serde_json::from_value(json!({
                "apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
                "metadata": {"name": "spare", "namespace": namespace, "generation": generation}
            }))
            .expect("object")
        };
        let reads = PlanReads::default();
        reads.observe(&CAPACITY_BUFFER, &buffer("ci", 1));
        reads.observe(&CAPACITY_BUFFER, &buffer("web", 2));
        let generation = |namespace| {
            reads
                .observed(&CAPACITY_BUFFER, Some(namespace), "spare")?
                .generation
        };
        assert_eq!(generation("ci"), Some(1));
        assert_eq!(generation("web"), Some(2));
        assert_eq!(generation("other"), None);

        // A cluster-scoped kind ignores a namespace it was asked with.
        let pool = serde_json::from_value(json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "general", "generation": 3}
        }))
        .expect("object");
        reads.observe(&NODE_POOL, &pool);
        assert_eq!(
            reads
                .observed(&NODE_POOL, None, "general")
                .and_then(|o| o.generation),
            Some(3)
        );
        assert_eq!(
            reads
                .observed(&NODE_POOL, Some("default"), "general")
                .and_then(|o| o.generation),
            Some(3)
        );
    }

    #[test]
    fn a_claim_is_read_from_labels_annotations_spec_and_status() {
        let obj = serde_json::from_value(json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": "general-abc", "labels": {"karpenter.sh/nodepool": "general"},
                "annotations": {"karpenter.sh/nodepool-hash": "123", "karpenter.sh/nodepool-hash-version": "v3",
                    "karpenter.k8s.aws/tagged": "true"}},
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
            "status": {"nodeName": "ip-10-0-0-1.ec2.internal", "conditions": [
                {"type": "Drifted", "status": "True", "reason": "NodePoolDrifted"}]}
        }))
        .expect("object");
        let claim = NodeClaim::from_object(&obj);
        assert_eq!(claim.pool(), Some("general"));
        assert_eq!(claim.hashes.len(), 2, "{:?}", claim.hashes);
        assert_eq!(claim.class.as_ref().map(|c| c.name.as_str()), Some("default"));
        assert_eq!(claim.drifted.as_deref(), Some("NodePoolDrifted"));
        assert_eq!(claim.display(), "general-abc (ip-10-0-0-1.ec2.internal)");
        assert!(!claim.deleting);
    }

    #[test]
    fn only_a_true_drifted_condition_counts() {
        let status = |s: &str| json!({"conditions": [{"type": "Drifted", "status": s, "reason": "RequirementsDrifted"}]});
        assert_eq!(
            drifted_reason(Some(&status("True"))).as_deref(),
            Some("RequirementsDrifted")
        );
        assert_eq!(drifted_reason(Some(&status("False"))), None);
        assert_eq!(drifted_reason(Some(&json!({"conditions": []}))), None);
        assert_eq!(drifted_reason(None), None);
    }
}
