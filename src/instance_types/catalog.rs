//! The offline instance-type table: Karpenter's generated instance-type reference (the label
//! values Karpenter gives each type and the resources it computes for it after overhead, with
//! an `AL2023` AMI and no block device mappings), its built-in on-demand prices and its ENI
//! limits, as committed in `data/karpenter/instance-types.tsv` and compiled into the binary by
//! `build/instance_types.rs`. Rows are static and only indexes; nothing is allocated until a
//! caller asks for strings.

use std::sync::LazyLock;

use super::model::{InstanceType, memory_capacity_bytes};
use super::quantity;

/// One instance type: an index into [`STRINGS`] per label key ([`LABEL_KEYS`]) and per
/// resource ([`RESOURCE_NAMES`]), `u16::MAX` where the type has none; its on-demand price in
/// micro-dollars per hour, `u32::MAX` where the table has none; the interfaces of its default
/// network card and the IPv4 addresses per interface, `u16::MAX` where the release's VPC
/// limits do not list the type.
#[derive(Debug)]
pub struct Row {
    pub labels: [u16; LABELS],
    pub resources: [u16; RESOURCES],
    pub price_micros: u32,
    pub default_enis: u16,
    pub ips_per_eni: u16,
}

include!(concat!(env!("OUT_DIR"), "/instance_types_table.rs"));

const NONE: u16 = u16::MAX;

fn string(index: u16) -> Option<&'static str> {
    if index == NONE {
        return None;
    }
    STRINGS.get(usize::from(index)).copied()
}

/// The index of a label key in [`LABEL_KEYS`] (which the build writes sorted).
pub fn label_index(key: &str) -> Option<usize> {
    LABEL_KEYS.binary_search(&key).ok()
}

/// The index of a resource in [`RESOURCE_NAMES`].
pub fn resource_index(name: &str) -> Option<usize> {
    RESOURCE_NAMES.iter().position(|r| *r == name)
}

/// Whether some type of the table has `value` for the label at `index` of [`LABEL_KEYS`]. A
/// value no type has (a family or type released after the data was generated, or a typo)
/// cannot be told apart from an impossible one offline.
pub fn has_value(index: usize, value: &str) -> bool {
    ROWS.iter().any(|r| r.label_at(index) == Some(value))
}

/// Every row of the table, as [`InstanceType`]s.
pub fn all() -> &'static [Row] {
    &ROWS
}

/// The row of the instance type `name`.
pub fn find(name: &str) -> Option<&'static Row> {
    let key = label_index("node.kubernetes.io/instance-type")?;
    ROWS.iter().find(|r| string(r.labels[key]) == Some(name))
}

impl Row {
    /// The value of the label at `index` of [`LABEL_KEYS`].
    pub fn label_at(&self, index: usize) -> Option<&'static str> {
        self.labels.get(index).copied().and_then(string)
    }

    /// The value of the label `key`.
    pub fn label_named(&self, key: &str) -> Option<&'static str> {
        label_index(key).and_then(|i| self.label_at(i))
    }

    /// The quantity Karpenter computed for `resource` after overhead, as it writes it (`940m`).
    pub fn allocatable_of(&self, resource: &str) -> Option<&'static str> {
        resource_index(resource).and_then(|i| self.resources.get(i).copied().and_then(string))
    }
}

/// The index of `node.kubernetes.io/instance-type` in [`LABEL_KEYS`], looked up once: sorting
/// and listing types asks for their names thousands of times.
static NAME_LABEL: LazyLock<Option<usize>> =
    LazyLock::new(|| label_index("node.kubernetes.io/instance-type"));

impl InstanceType for Row {
    fn name(&self) -> &str {
        NAME_LABEL.and_then(|i| self.label_at(i)).unwrap_or_default()
    }

    fn label(&self, index: usize) -> Option<&str> {
        self.label_at(index)
    }

    fn allocatable(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = RESOURCE_NAMES
            .iter()
            .zip(self.resources)
            .filter_map(|(name, q)| Some((name.to_string(), string(q)?.to_string())))
            .collect();
        out.sort();
        out
    }

    /// What Karpenter counts against a pool's limits: the capacity. `cpu` is the vCPU count,
    /// `memory` the memory less Karpenter's default VM overhead (7.5 %, and 64 MiB on Graviton),
    /// `pods` and the extended resources as computed (no overhead is taken from them).
    /// `ephemeral-storage` depends on the node class's volumes and is not known here.
    fn capacity(&self, resource: &str) -> Option<f64> {
        match resource {
            "cpu" => self.label_named("karpenter.k8s.aws/instance-cpu")?.parse().ok(),
            "memory" => {
                let mib: u64 = self
                    .label_named("karpenter.k8s.aws/instance-memory")?
                    .parse()
                    .ok()?;
                let arm64 = self.label_named("kubernetes.io/arch") == Some("arm64");
                Some(memory_capacity_bytes(mib, arm64) as f64)
            }
            "ephemeral-storage" => None,
            other => {
                resource_index(other)?;
                Some(
                    self.allocatable_of(other)
                        .and_then(quantity::parse)
                        .unwrap_or(0.0),
                )
            }
        }
    }

    fn price_micros(&self) -> Option<u32> {
        (self.price_micros != u32::MAX).then_some(self.price_micros)
    }

    fn vcpus(&self) -> Option<u32> {
        self.label_named("karpenter.k8s.aws/instance-cpu")?.parse().ok()
    }

    fn memory_mib(&self) -> Option<u64> {
        self.label_named("karpenter.k8s.aws/instance-memory")?
            .parse()
            .ok()
    }

    fn pods(&self) -> Option<u32> {
        self.allocatable_of("pods")?.parse().ok()
    }

    fn default_enis(&self) -> Option<u32> {
        (self.default_enis != NONE).then_some(u32::from(self.default_enis))
    }

    fn ips_per_eni(&self) -> Option<u32> {
        (self.ips_per_eni != NONE).then_some(u32::from(self.ips_per_eni))
    }
}
