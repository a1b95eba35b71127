//! What a node pool's requirements let through: the instance types Karpenter would consider
//! for it, offline. Pure data and logic, below every other layer but the framework:
//!
//! - [`catalog`]: Karpenter's generated instance-type reference and on-demand prices, compiled
//!   into the binary by the build (`build/instance_types.rs`);
//! - [`requirements`]: Karpenter's requirement semantics (In, NotIn, Exists, DoesNotExist, Gt,
//!   Lt, Gte, Lte, intersection per key);
//! - [`selection`]: which types a list of requirements selects, which requirement removed the
//!   last candidates, unmeetable `minValues`, limits no type fits;
//! - [`ec2`]: the same description of a type derived from EC2's `DescribeInstanceTypes`, as
//!   Karpenter derives it;
//! - [`quantity`]: Kubernetes quantities as numbers;
//! - [`kubelet_cel`]: Karpenter's CEL kubelet expressions (`maxPods`, `kubeReserved`,
//!   `systemReserved`), checked and evaluated over a set of types;
//! - `model`: the [`InstanceType`] view both sources give, and Karpenter's memory capacity.
//!
//! Only the label keys the data describes take part ([`described`]): the `karpenter.k8s.aws/…`
//! instance labels (or EKS Auto Mode's `eks.amazonaws.com/…` names for them),
//! `node.kubernetes.io/instance-type` and `kubernetes.io/arch`. Every other key (capacity
//! type, zone, os, custom labels) is left alone: it does not narrow the preview.

pub mod catalog;
pub mod ec2;
pub mod kubelet_cel;
mod model;
pub mod quantity;
pub mod requirements;
pub mod selection;

pub use model::{InstanceType, VM_MEMORY_OVERHEAD, memory_capacity_bytes, price_text};

/// Which label names a pool's requirements use for the instance labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Self-managed Karpenter: `karpenter.k8s.aws/instance-…`.
    SelfManaged,
    /// EKS Auto Mode: `eks.amazonaws.com/instance-…`.
    AutoMode,
    /// Either spelling (the data source).
    Either,
}

/// One of EKS Auto Mode's instance labels, `eks.amazonaws.com/<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoModeLabel {
    /// The name after `eks.amazonaws.com/`.
    pub name: &'static str,
    /// Whether its value is a number (so `Gt`, `Lt`, `Gte`, `Lte` apply).
    pub numeric: bool,
    /// Whether it has the meaning and values of self-managed Karpenter's
    /// `karpenter.k8s.aws/<name>`, so the offline data describes it.
    pub as_karpenter: bool,
}

const fn label(name: &'static str, numeric: bool, as_karpenter: bool) -> AutoModeLabel {
    AutoModeLabel {
        name,
        numeric,
        as_karpenter,
    }
}

/// EKS Auto Mode's instance labels: the one list for the node pool's Auto Mode rules and for
/// the preview. The EKS user guide's Auto Mode label table, then the keys of the
/// `eks.amazonaws.com` domain the live NodePool CRD of an EKS 1.31 Auto Mode cluster allows
/// and the guide's placement group section (2026-05); those, and `compute-type`, have no
/// `karpenter.k8s.aws/` counterpart.
pub const AUTO_MODE_LABELS: &[AutoModeLabel] = &[
    label("instance-category", false, true),
    label("instance-family", false, true),
    label("instance-generation", true, true),
    label("instance-size", false, true),
    label("instance-cpu", true, true),
    label("instance-cpu-manufacturer", false, true),
    label("instance-cpu-sustained-clock-speed-mhz", true, true),
    label("instance-memory", true, true),
    label("instance-ebs-bandwidth", true, true),
    label("instance-network-bandwidth", true, true),
    label("instance-gpu-name", false, true),
    label("instance-gpu-manufacturer", false, true),
    label("instance-gpu-count", true, true),
    label("instance-gpu-memory", true, true),
    label("instance-local-nvme", true, true),
    label("instance-hypervisor", false, true),
    label("instance-encryption-in-transit-supported", false, true),
    label("compute-type", false, false),
    // In the live CRD's list of the domain's keys, not in the guide's table.
    label("instance-accelerator-name", false, false),
    label("instance-accelerator-manufacturer", false, false),
    label("instance-accelerator-count", true, false),
    label("nodeclass", false, false),
    // The guide's placement group section (2026-05).
    label("placement-group-id", false, false),
];

/// The Auto Mode label `eks.amazonaws.com/<name>`, if Auto Mode has one.
pub fn auto_mode_label(name: &str) -> Option<&'static AutoModeLabel> {
    AUTO_MODE_LABELS.iter().find(|l| l.name == name)
}

/// The Kubernetes label keys the preview describes besides the instance labels.
const WELL_KNOWN: &[&str] = &["node.kubernetes.io/instance-type", "kubernetes.io/arch"];

/// The index in [`catalog::LABEL_KEYS`] of the label `key` stands for, when the data describes
/// it for pools of `flavor`; `None` leaves the key alone.
pub fn described(key: &str, flavor: Flavor) -> Option<usize> {
    let key = requirements::normalized_key(key);
    if WELL_KNOWN.contains(&key) {
        return catalog::label_index(key);
    }
    if let Some(rest) = key.strip_prefix("karpenter.k8s.aws/")
        && flavor != Flavor::AutoMode
        && rest.starts_with("instance-")
    {
        return catalog::label_index(key);
    }
    if let Some(rest) = key.strip_prefix("eks.amazonaws.com/")
        && flavor != Flavor::SelfManaged
        && auto_mode_label(rest).is_some_and(|l| l.as_karpenter)
    {
        return catalog::label_index(&format!("karpenter.k8s.aws/{rest}"));
    }
    None
}

#[cfg(test)]
mod tests;
