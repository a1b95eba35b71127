//! An instance type as EC2 describes it (`DescribeInstanceTypes`), turned into the labels and
//! resources Karpenter gives it, restated from aws/karpenter-provider-aws
//! `pkg/providers/instancetype/types.go` (`computeRequirements`, `computeCapacity`, the
//! kube-reserved and eviction defaults) for an `AL2023` node class without block device
//! mappings, as the offline table assumes. Two figures EC2 does not give come from the offline
//! table by name, as Karpenter takes them from tables compiled into it: the network bandwidth
//! label and the `vpc.amazonaws.com/pod-eni` resource.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::{InstanceType, catalog, memory_capacity_bytes};

/// A GPU or accelerator entry of EC2's description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Device {
    pub name: String,
    pub manufacturer: String,
    pub count: i64,
    /// GPU memory (MiB), for GPUs.
    pub memory_mib: Option<i64>,
    /// Cores per device, for Neuron devices.
    pub cores: Option<i64>,
}

/// The fields of EC2's `InstanceTypeInfo` Karpenter reads (filled by the AWS side).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ec2Facts {
    pub name: String,
    /// `ProcessorInfo.SupportedArchitectures` (`x86_64`, `arm64`, …).
    pub architectures: Vec<String>,
    pub vcpus: i64,
    pub memory_mib: i64,
    /// `ProcessorInfo` is present: manufacturer and sustained clock (GHz).
    pub processor: Option<(String, f64)>,
    /// `Hypervisor` (`nitro`, `xen`; empty on bare metal).
    pub hypervisor: String,
    pub encryption_in_transit: bool,
    /// `EbsOptimizedInfo.MaximumBandwidthInMbps`, when EBS optimisation is the default.
    pub ebs_bandwidth_mbps: Option<i64>,
    /// Total instance-store size (GB) when it is NVMe.
    pub local_nvme_gb: Option<i64>,
    pub gpus: Vec<Device>,
    pub inference_accelerators: Vec<Device>,
    /// `NeuronInfo` is present, and its devices.
    pub neuron: Option<Vec<Device>>,
    /// Network interfaces of the default network card, and IPv4 addresses per interface.
    pub max_network_interfaces: Option<i64>,
    pub ipv4_per_interface: Option<i64>,
    pub max_efa_interfaces: Option<i64>,
    /// Zones (of those asked about) that offer the type.
    pub zones: Vec<String>,
}

/// An instance type described from EC2.
#[derive(Debug, Clone, PartialEq)]
pub struct Ec2Type {
    name: String,
    labels: Vec<Option<String>>,
    allocatable: Vec<(String, String)>,
    capacity: BTreeMap<String, f64>,
    price_micros: Option<u32>,
    zones: Vec<String>,
    vcpus: Option<u32>,
    memory_mib: Option<u64>,
    default_enis: Option<u32>,
    ips_per_eni: Option<u32>,
}

/// Karpenter's `instanceTypeScheme`: category, an optional `-<n>tb`, generation.
static SCHEME: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.").ok());

/// Karpenter's `lowerKabobCase`.
fn kebab(s: &str) -> String {
    s.replace(' ', "-").to_lowercase()
}

/// Kube-reserved CPU (millicores) for `millicores` of CPU: 6 % of the first core, 1 % of the
/// second, 0.5 % of the next two, 0.25 % of the rest.
fn kube_reserved_cpu(millicores: i64) -> i64 {
    let ranges: [(i64, i64, f64); 4] = [
        (0, 1000, 0.06),
        (1000, 2000, 0.01),
        (2000, 4000, 0.005),
        (4000, 1 << 31, 0.0025),
    ];
    ranges
        .iter()
        .filter(|(start, _, _)| millicores >= *start)
        .map(|(start, end, share)| {
            let span = if millicores < *end {
                millicores - start
            } else {
                end - start
            };
            (span as f64 * share) as i64
        })
        .sum()
}

/// The ephemeral storage Karpenter leaves of the default 20 GiB root volume: less 1 GiB
/// kube-reserved and the 10 % eviction threshold.
const EPHEMERAL_ALLOCATABLE: &str = "17Gi";

impl Ec2Type {
    /// The type as Karpenter describes it, from EC2's facts.
    pub fn from_facts(f: &Ec2Facts) -> Self {
        let mut labels: Vec<Option<String>> = vec![None; catalog::LABEL_KEYS.len()];
        let mut set = |key: &str, value: String| {
            if let Some(i) = catalog::label_index(key) {
                labels[i] = Some(value);
            }
        };
        let arch = if f.architectures.iter().any(|a| a == "x86_64") {
            "amd64".to_string()
        } else if f.architectures.iter().any(|a| a == "arm64") {
            "arm64".to_string()
        } else {
            format!("[{}]", f.architectures.join(" "))
        };
        let known = catalog::find(&f.name);
        set("node.kubernetes.io/instance-type", f.name.clone());
        set("kubernetes.io/arch", arch.clone());
        set("kubernetes.io/os", "linux".into());
        set("karpenter.k8s.aws/instance-cpu", f.vcpus.to_string());
        set("karpenter.k8s.aws/instance-memory", f.memory_mib.to_string());
        set("karpenter.k8s.aws/instance-hypervisor", f.hypervisor.clone());
        set(
            "karpenter.k8s.aws/instance-encryption-in-transit-supported",
            f.encryption_in_transit.to_string(),
        );
        if let Some(caps) = SCHEME.as_ref().and_then(|re| re.captures(&f.name)) {
            if let Some(c) = caps.get(1) {
                set("karpenter.k8s.aws/instance-category", c.as_str().into());
            }
            if let Some(g) = caps.get(3) {
                set("karpenter.k8s.aws/instance-generation", g.as_str().into());
            }
        }
        let parts: Vec<&str> = f.name.split('.').collect();
        if let [family, size] = parts[..] {
            set("karpenter.k8s.aws/instance-family", family.into());
            set("karpenter.k8s.aws/instance-size", size.into());
        }
        if let Some(gb) = f.local_nvme_gb {
            set("karpenter.k8s.aws/instance-local-nvme", gb.to_string());
        }
        let flex = parts.first().is_some_and(|p| p.contains("-flex"));
        set("karpenter.k8s.aws/instance-capability-flex", flex.to_string());
        if let Some(bandwidth) =
            known.and_then(|r| r.label_named("karpenter.k8s.aws/instance-network-bandwidth"))
        {
            set("karpenter.k8s.aws/instance-network-bandwidth", bandwidth.into());
        }
        if let [gpu] = &f.gpus[..] {
            set("karpenter.k8s.aws/instance-gpu-name", kebab(&gpu.name));
            set(
                "karpenter.k8s.aws/instance-gpu-manufacturer",
                kebab(&gpu.manufacturer),
            );
            set("karpenter.k8s.aws/instance-gpu-count", gpu.count.to_string());
            set(
                "karpenter.k8s.aws/instance-gpu-memory",
                gpu.memory_mib.unwrap_or_default().to_string(),
            );
        }
        if let ([accelerator], None) = (&f.inference_accelerators[..], &f.neuron) {
            set(
                "karpenter.k8s.aws/instance-accelerator-name",
                kebab(&accelerator.name),
            );
            set(
                "karpenter.k8s.aws/instance-accelerator-manufacturer",
                kebab(&accelerator.manufacturer),
            );
            set(
                "karpenter.k8s.aws/instance-accelerator-count",
                accelerator.count.to_string(),
            );
        }
        if let Some([device]) = f.neuron.as_deref() {
            set("karpenter.k8s.aws/instance-accelerator-name", kebab(&device.name));
            set(
                "karpenter.k8s.aws/instance-accelerator-manufacturer",
                "aws".into(),
            );
            set(
                "karpenter.k8s.aws/instance-accelerator-count",
                device.count.to_string(),
            );
        }
        if let Some((manufacturer, ghz)) = &f.processor {
            set("karpenter.k8s.aws/instance-cpu-manufacturer", kebab(manufacturer));
            set(
                "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
                ((ghz * 1000.0).round() as i64).to_string(),
            );
        }
        if let Some(mbps) = f.ebs_bandwidth_mbps {
            set("karpenter.k8s.aws/instance-ebs-bandwidth", mbps.to_string());
        }
        let (allocatable, capacity) = resources(f, arch == "arm64", known);
        Self {
            name: f.name.clone(),
            labels,
            allocatable,
            capacity,
            price_micros: known.and_then(|r| r.price_micros()),
            zones: f.zones.clone(),
            vcpus: u32::try_from(f.vcpus).ok(),
            memory_mib: u64::try_from(f.memory_mib).ok(),
            default_enis: f.max_network_interfaces.and_then(|n| u32::try_from(n).ok()),
            ips_per_eni: f.ipv4_per_interface.and_then(|n| u32::try_from(n).ok()),
        }
    }
}

/// Allocatable quantities (as Karpenter writes them, zero extended resources left out) and
/// capacity in base units.
fn resources(
    f: &Ec2Facts,
    arm64: bool,
    known: Option<&catalog::Row>,
) -> (Vec<(String, String)>, BTreeMap<String, f64>) {
    let pods = match (f.max_network_interfaces, f.ipv4_per_interface) {
        (Some(enis), Some(ips)) if enis > 0 => enis * (ips - 1) + 2,
        (Some(_), Some(_)) => 0,
        _ => 110,
    };
    let millicores = f.vcpus * 1000;
    let cpu = millicores - kube_reserved_cpu(millicores);
    let memory_capacity = memory_capacity_bytes(u64::try_from(f.memory_mib).unwrap_or(0), arm64);
    let memory_mib = i64::try_from(memory_capacity / (1024 * 1024)).unwrap_or(0) - (11 * pods + 255) - 100;
    let by_maker = |maker: &str| -> i64 {
        f.gpus
            .iter()
            .filter(|g| g.manufacturer == maker)
            .map(|g| g.count)
            .sum()
    };
    let neuron = f.neuron.as_deref().unwrap_or_default();
    let neuron_cores = neuron.first().map_or(0, |d| d.count * d.cores.unwrap_or(0));
    let pod_eni = known
        .and_then(|r| r.allocatable_of("vpc.amazonaws.com/pod-eni"))
        .and_then(|q| q.parse::<i64>().ok())
        .unwrap_or(0);
    let extended: [(&str, i64); 7] = [
        ("amd.com/gpu", by_maker("AMD")),
        ("aws.amazon.com/neuron", neuron.iter().map(|d| d.count).sum()),
        ("aws.amazon.com/neuroncore", neuron_cores),
        ("habana.ai/gaudi", by_maker("Habana")),
        ("nvidia.com/gpu", by_maker("NVIDIA")),
        ("vpc.amazonaws.com/efa", f.max_efa_interfaces.unwrap_or(0)),
        ("vpc.amazonaws.com/pod-eni", pod_eni),
    ];
    let mut allocatable = vec![
        ("cpu".to_string(), format!("{cpu}m")),
        ("ephemeral-storage".to_string(), EPHEMERAL_ALLOCATABLE.to_string()),
        ("memory".to_string(), format!("{memory_mib}Mi")),
        ("pods".to_string(), pods.to_string()),
    ];
    let mut capacity = BTreeMap::from([
        ("cpu".to_string(), f.vcpus as f64),
        ("memory".to_string(), memory_capacity as f64),
        ("pods".to_string(), pods as f64),
    ]);
    for (name, count) in extended {
        capacity.insert(name.to_string(), count as f64);
        if count > 0 {
            allocatable.push((name.to_string(), count.to_string()));
        }
    }
    allocatable.sort();
    (allocatable, capacity)
}

impl InstanceType for Ec2Type {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self, index: usize) -> Option<&str> {
        self.labels.get(index).and_then(|v| v.as_deref())
    }

    fn allocatable(&self) -> Vec<(String, String)> {
        self.allocatable.clone()
    }

    fn capacity(&self, resource: &str) -> Option<f64> {
        self.capacity.get(resource).copied()
    }

    fn price_micros(&self) -> Option<u32> {
        self.price_micros
    }

    fn zones(&self) -> &[String] {
        &self.zones
    }

    fn vcpus(&self) -> Option<u32> {
        self.vcpus
    }

    fn memory_mib(&self) -> Option<u64> {
        self.memory_mib
    }

    fn pods(&self) -> Option<u32> {
        self.capacity.get("pods").map(|p| *p as u32)
    }

    fn default_enis(&self) -> Option<u32> {
        self.default_enis
    }

    fn ips_per_eni(&self) -> Option<u32> {
        self.ips_per_eni
    }
}

#[cfg(test)]
mod tests {
    use super::{Device, Ec2Facts, Ec2Type, kube_reserved_cpu};
    use crate::instance_types::{InstanceType, catalog};

    fn m5_large() -> Ec2Facts {
        Ec2Facts {
            name: "m5.large".into(),
            architectures: vec!["x86_64".into()],
            vcpus: 2,
            memory_mib: 8192,
            processor: Some(("Intel".into(), 3.1)),
            hypervisor: "nitro".into(),
            encryption_in_transit: false,
            ebs_bandwidth_mbps: Some(4750),
            max_network_interfaces: Some(3),
            ipv4_per_interface: Some(10),
            ..Ec2Facts::default()
        }
    }

    /// The same type from EC2's facts and from the offline table: same labels, same resources.
    fn same_as_table(facts: &Ec2Facts) {
        let from_ec2 = Ec2Type::from_facts(facts);
        let row = catalog::find(&facts.name).expect("in the table");
        for (i, key) in catalog::LABEL_KEYS.iter().enumerate() {
            assert_eq!(from_ec2.label(i), row.label(i), "{} label {key}", facts.name);
        }
        assert_eq!(from_ec2.allocatable(), row.allocatable(), "{}", facts.name);
        for r in ["cpu", "memory", "pods", "nvidia.com/gpu"] {
            assert_eq!(
                from_ec2.capacity(r),
                row.capacity(r),
                "{} capacity {r}",
                facts.name
            );
        }
        assert_eq!(from_ec2.price_micros(), row.price_micros());
        for (what, ec2, table) in [
            ("vcpus", from_ec2.vcpus(), row.vcpus()),
            ("pods", from_ec2.pods(), row.pods()),
            ("default_enis", from_ec2.default_enis(), row.default_enis()),
            ("ips_per_eni", from_ec2.ips_per_eni(), row.ips_per_eni()),
        ] {
            assert_eq!(ec2, table, "{} {what}", facts.name);
        }
        assert_eq!(from_ec2.memory_mib(), row.memory_mib(), "{}", facts.name);
    }

    #[test]
    fn ec2_facts_give_what_the_table_says() {
        same_as_table(&m5_large());
        let g5 = Ec2Facts {
            name: "g5.xlarge".into(),
            vcpus: 4,
            memory_mib: 16384,
            processor: Some(("AMD".into(), 3.3)),
            ebs_bandwidth_mbps: Some(3500),
            local_nvme_gb: Some(250),
            encryption_in_transit: true,
            max_network_interfaces: Some(4),
            ipv4_per_interface: Some(15),
            gpus: vec![Device {
                name: "A10G".into(),
                manufacturer: "NVIDIA".into(),
                count: 1,
                memory_mib: Some(22888),
                cores: None,
            }],
            ..m5_large()
        };
        same_as_table(&g5);
        let a1 = Ec2Facts {
            name: "a1.medium".into(),
            architectures: vec!["arm64".into()],
            vcpus: 1,
            memory_mib: 2048,
            processor: Some(("AWS".into(), 2.3)),
            ebs_bandwidth_mbps: Some(3500),
            max_network_interfaces: Some(2),
            ipv4_per_interface: Some(4),
            ..m5_large()
        };
        same_as_table(&a1);
    }

    #[test]
    fn kube_reserved_cpu_follows_karpenters_ranges() {
        assert_eq!(kube_reserved_cpu(1000), 60);
        assert_eq!(kube_reserved_cpu(2000), 70);
        assert_eq!(kube_reserved_cpu(4000), 80);
        assert_eq!(kube_reserved_cpu(96000), 310);
    }
}
