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
//! - [`quantity`]: Kubernetes quantities as numbers.
//!
//! Only the label keys the data describes take part ([`described`]): the `karpenter.k8s.aws/…`
//! instance labels (or EKS Auto Mode's `eks.amazonaws.com/…` names for them),
//! `node.kubernetes.io/instance-type` and `kubernetes.io/arch`. Every other key (capacity
//! type, zone, os, custom labels) is left alone: it does not narrow the preview.

pub mod catalog;
pub mod ec2;
pub mod quantity;
pub mod requirements;
pub mod selection;

/// An instance type as the preview sees it, from the offline table or from EC2.
pub trait InstanceType {
    /// The instance type name, e.g. `m5.large`.
    fn name(&self) -> &str;
    /// The value of the label at `index` of [`catalog::LABEL_KEYS`]; `None` when Karpenter
    /// does not set it on this type (a type without GPUs has no `instance-gpu-count`).
    fn label(&self, index: usize) -> Option<&str>;
    /// The resources Karpenter computes for the type after overhead, as quantities.
    fn allocatable(&self) -> Vec<(String, String)>;
    /// What Karpenter counts against a pool's `limits` for `resource` (the type's capacity), in
    /// base units; `None` when not known here (the resource is left alone).
    fn capacity(&self, resource: &str) -> Option<f64>;
    /// The on-demand price in micro-dollars per hour, where the price table has one.
    fn price_micros(&self) -> Option<u32>;
    /// The zones that offer the type (known only when asked of EC2).
    fn zones(&self) -> &[String] {
        &[]
    }
}

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

/// The instance labels EKS Auto Mode sets under `eks.amazonaws.com/` with the same meaning and
/// values as self-managed Karpenter's `karpenter.k8s.aws/` ones (the EKS user guide's Auto Mode
/// label table; `compute-type` has no counterpart).
pub const AUTO_MODE_LABELS: &[&str] = &[
    "instance-category",
    "instance-family",
    "instance-generation",
    "instance-size",
    "instance-cpu",
    "instance-cpu-manufacturer",
    "instance-cpu-sustained-clock-speed-mhz",
    "instance-memory",
    "instance-ebs-bandwidth",
    "instance-network-bandwidth",
    "instance-gpu-name",
    "instance-gpu-manufacturer",
    "instance-gpu-count",
    "instance-gpu-memory",
    "instance-local-nvme",
    "instance-hypervisor",
    "instance-encryption-in-transit-supported",
];

/// The Kubernetes label keys the preview describes besides the instance labels.
const WELL_KNOWN: &[&str] = &["node.kubernetes.io/instance-type", "kubernetes.io/arch"];

/// Karpenter's key aliases (`NormalizedLabels`) that the preview describes.
fn normalised(key: &str) -> &str {
    match key {
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        other => other,
    }
}

/// The index in [`catalog::LABEL_KEYS`] of the label `key` stands for, when the data describes
/// it for pools of `flavor`; `None` leaves the key alone.
pub fn described(key: &str, flavor: Flavor) -> Option<usize> {
    let key = normalised(key);
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
        && AUTO_MODE_LABELS.contains(&rest)
    {
        return catalog::label_index(&format!("karpenter.k8s.aws/{rest}"));
    }
    None
}

/// Karpenter's default share of an instance's memory kept for the hypervisor
/// (`--vm-memory-overhead-percent`, 0.075).
pub const VM_MEMORY_OVERHEAD: f64 = 0.075;

/// The memory capacity Karpenter gives a type of `mib` MiB: less 64 MiB on Graviton (arm64),
/// then less the VM overhead, rounded up to whole MiB.
pub fn memory_capacity_bytes(mib: u64, arm64: bool) -> u64 {
    let mib = if arm64 { mib.saturating_sub(64) } else { mib };
    let overhead = (mib as f64 * VM_MEMORY_OVERHEAD).ceil() as u64;
    mib.saturating_sub(overhead) * 1024 * 1024
}

/// A price in micro-dollars as a decimal string (`25500` → `0.0255`).
pub fn price_text(micros: u32) -> String {
    let text = format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests;
