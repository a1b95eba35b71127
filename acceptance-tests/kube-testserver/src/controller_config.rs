//! The simulated controller's settings (what Karpenter would do, and how fast), apart from the
//! controller itself so the shared server state can hold them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Settings of the simulated controller. Durations are milliseconds in JSON (admin endpoint).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ControllerConfig {
    /// Master switch; nothing happens when false.
    pub enabled: bool,
    /// Kind → finalizer added to every object of that kind (any group).
    pub finalizers: BTreeMap<String, String>,
    /// How long after deletion starts the finalizer is removed.
    #[serde(with = "crate::millis")]
    pub finalizer_removal_delay: Duration,
    /// Fill `EC2NodeClass` status.
    pub node_class_status: bool,
    /// Delay before `EC2NodeClass` status is filled.
    #[serde(with = "crate::millis")]
    pub node_class_status_delay: Duration,
    /// Karpenter v1.15's `NodeClassCEL` AWS feature gate (off by default, as in Karpenter): with
    /// it off, an EC2NodeClass whose kubelet holds a CEL expression (a string `maxPods`, or a
    /// reservation that is no quantity) gets `ValidationSucceeded=False`, reason
    /// `KubeletExpressionsDisabled`, and is not Ready.
    pub node_class_cel: bool,
    /// Mark `NodePool`s Ready (status conditions) when created.
    pub node_pool_status: bool,
    /// NodeClaims created (owned by the NodePool, blockOwnerDeletion) per new NodePool.
    pub node_claims_per_node_pool: u32,
    /// Keep Karpenter's drift-hash annotations (`karpenter.sh/nodepool-hash`,
    /// `karpenter.k8s.aws/ec2nodeclass-hash` and their `-version`) up to date with the spec.
    pub hash_annotations: bool,
    /// Mark `NodeOverlay`s Ready (status conditions), as Karpenter does once it validated one.
    pub node_overlay_status: bool,
    /// Report `CapacityBuffer`s as Karpenter's buffer controller does once it translated one:
    /// `ReadyForProvisioning` and `Provisioning` conditions, the chunk count, the strategy and
    /// the PodTemplate it used.
    pub capacity_buffer_status: bool,
    /// "Launch" every new NodeClaim: instance type, capacity type and zone labels, then
    /// `status.nodeName`, `providerID`, `imageID` and Launched/Registered/Initialized/Ready.
    pub node_claim_status: bool,
    /// Nodes for launched NodeClaims (needs `node_claim_status`): this long after the launch the
    /// simulated kubelet registers the Node (the NodeClaim's labels, its `providerID`, the
    /// `karpenter.sh/unregistered` taint), whatever the controller's state, as long as the
    /// NodeClaim is not being deleted; the controller, while enabled, then registers it as
    /// Karpenter does: its `karpenter.sh/termination` finalizer, an owner reference to the
    /// NodeClaim (`blockOwnerDeletion`), `karpenter.sh/registered`. Deleting a NodeClaim makes
    /// the controller delete its Node, and a Node being deleted loses the finalizer after
    /// `finalizer_removal_delay`. None: no Nodes.
    #[serde(with = "crate::millis::option")]
    pub node_registration: Option<Duration>,
    /// The leader-election Lease held and renewed while enabled (none: no Lease is written).
    pub leader_lease: Option<LeaseConfig>,
    /// How long the controller takes to react to each event: a slow or starved controller.
    /// Reads wait for it all the same ([`caught_up`]).
    #[serde(with = "crate::millis")]
    pub reaction_delay: Duration,
}

/// Karpenter's leader-election Lease as the simulated controller keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LeaseConfig {
    pub namespace: String,
    pub name: String,
    /// `spec.leaseDurationSeconds` (controller-runtime's default is 15).
    pub duration_seconds: u32,
    /// How often the holder renews `spec.renewTime` (controller-runtime retries every 2 s).
    #[serde(with = "crate::millis")]
    pub renew_every: Duration,
    /// `spec.holderIdentity` (`<pod name>_<uid>` as controller-runtime writes it).
    pub holder: String,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        Self {
            namespace: "kube-system".into(),
            name: "karpenter-leader-election".into(),
            duration_seconds: 15,
            renew_every: Duration::from_secs(2),
            holder: "karpenter-5d8f7c9b6d-x2x9q_6a1f0c2e-4b3d-4e8a-9c71-2f5d1a0b7e34".into(),
        }
    }
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            finalizers: BTreeMap::new(),
            finalizer_removal_delay: Duration::from_millis(500),
            node_class_status: false,
            node_class_status_delay: Duration::from_millis(500),
            node_class_cel: false,
            node_pool_status: false,
            node_claims_per_node_pool: 0,
            hash_annotations: false,
            node_overlay_status: false,
            capacity_buffer_status: false,
            node_claim_status: false,
            node_registration: None,
            leader_lease: None,
            reaction_delay: Duration::ZERO,
        }
    }
}

impl ControllerConfig {
    /// Behaves like a running Karpenter: finalizers on NodePool, NodeClaim and EC2NodeClass
    /// (removed 500 ms after deletion starts), EC2NodeClass Ready after 500 ms, NodePool Ready,
    /// one NodeClaim per NodePool, drift-hash annotations.
    pub fn karpenter() -> Self {
        let mut finalizers = BTreeMap::new();
        finalizers.insert("NodePool".to_string(), "karpenter.sh/termination".to_string());
        finalizers.insert("NodeClaim".to_string(), "karpenter.sh/termination".to_string());
        finalizers.insert(
            "EC2NodeClass".to_string(),
            "karpenter.k8s.aws/termination".to_string(),
        );
        Self {
            enabled: true,
            finalizers,
            node_class_status: true,
            node_pool_status: true,
            node_claims_per_node_pool: 1,
            hash_annotations: true,
            node_overlay_status: true,
            capacity_buffer_status: true,
            leader_lease: Some(LeaseConfig::default()),
            ..Self::default()
        }
    }
}
