//! What the preview knows of an instance type, wherever it comes from (the offline table or
//! EC2), and how Karpenter turns a type's memory into the capacity it counts.

/// An instance type as the preview sees it, from the offline table or from EC2.
pub trait InstanceType {
    /// The instance type name, e.g. `m5.large`.
    fn name(&self) -> &str;
    /// The value of the label at `index` of [`super::catalog::LABEL_KEYS`]; `None` when Karpenter
    /// does not set it on this type (a type without GPUs has no `instance-gpu-count`).
    fn label(&self, index: usize) -> Option<&str>;
    /// The resources Karpenter computes for the type after overhead, as quantities.
    fn allocatable(&self) -> Vec<(String, String)>;
    /// What Karpenter counts against a pool's `limits` for `resource` (the type's capacity), in
    /// base units; `None` when not known here (the resource is left alone).
    fn capacity(&self, resource: &str) -> Option<f64>;
    /// The on-demand price in micro-dollars per hour, where the price table has one.
    fn price_micros(&self) -> Option<u32>;
    /// The vCPU count (`karpenter.k8s.aws/instance-cpu`; `vcpus` of Karpenter's CEL kubelet
    /// expressions).
    fn vcpus(&self) -> Option<u32>;
    /// The memory in MiB (`karpenter.k8s.aws/instance-memory`; the CEL's `memory_mib`).
    fn memory_mib(&self) -> Option<u64>;
    /// The pods Karpenter gives the type when the node class sets no `maxPods` (AL2023: limited
    /// by its ENIs, `default_enis * (ips_per_eni - 1) + 2`); the CEL's `max_pods` then.
    fn pods(&self) -> Option<u32>;
    /// The maximum network interfaces of the type's default network card (the CEL's
    /// `default_enis`); `None` where the data does not say (a type newer than the release's
    /// VPC limits, or EC2 did not describe it).
    fn default_enis(&self) -> Option<u32>;
    /// The IPv4 addresses per network interface (the CEL's `ips_per_eni`); `None` where the data
    /// does not say.
    fn ips_per_eni(&self) -> Option<u32>;
    /// The zones that offer the type (known only when asked of EC2).
    fn zones(&self) -> &[String] {
        &[]
    }
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
