//! What the expressions see of one instance type ([`TypeFacts`]) and how it is read from an
//! [`InstanceType`] of the offline table or of EC2. The ENI figures (`default_enis`,
//! `ips_per_eni`) come from the caller, which knows where Karpenter's per-type network limits
//! are kept; a type without them still takes part in every expression that does not read them.

use std::sync::LazyLock;

use crate::instance_types::catalog::label_index;
use crate::instance_types::model::InstanceType;

/// One instance type as Karpenter's kubelet expressions see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeFacts<'a> {
    /// `instance_type`: the name, e.g. `m5.large`.
    pub instance_type: &'a str,
    /// `vcpus`: the default vCPU count (label `karpenter.k8s.aws/instance-cpu`).
    pub vcpus: i64,
    /// `memory_mib`: the memory in MiB (label `karpenter.k8s.aws/instance-memory`).
    pub memory_mib: i64,
    /// `default_enis` and `ips_per_eni`; `None` when the data has no figures for the type (an
    /// expression that reads them is then not evaluated for it).
    pub enis: Option<EniFigures>,
    /// Karpenter's pod count for the type when `maxPods` is not set, before `podsPerCore`: the
    /// ENI-limited count (the table's allocatable `pods`, which the reference has for every
    /// type, ENI figures or not) for the AMI families that use it, 110 for the Windows families.
    pub default_pods: i64,
}

/// A type's ENI figures, as Karpenter reads them from EC2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EniFigures {
    /// `default_enis`: the network interfaces of the default network card.
    pub default_enis: i64,
    /// `ips_per_eni`: the IPv4 addresses per interface.
    pub ips_per_eni: i64,
}

/// Where the two labels are in the table's label list, looked up once.
static CPU: LazyLock<Option<usize>> = LazyLock::new(|| label_index("karpenter.k8s.aws/instance-cpu"));
static MEMORY: LazyLock<Option<usize>> = LazyLock::new(|| label_index("karpenter.k8s.aws/instance-memory"));

impl<'a> TypeFacts<'a> {
    /// The facts of `t`: vCPUs and memory from its labels, the default pod count from its
    /// allocatable `pods` (the ENI-limited count), and `enis(t)` = `(default_enis,
    /// ips_per_eni)`, `None` when the caller has no figures for the type. `None` when a label
    /// or the pod count is missing or not a whole number: such a type cannot be evaluated as
    /// Karpenter would.
    pub fn of<T: InstanceType + ?Sized>(
        t: &'a T,
        enis: impl FnOnce(&T) -> Option<(i64, i64)>,
    ) -> Option<Self> {
        let whole = |index: &Option<usize>| -> Option<i64> { t.label((*index)?)?.parse().ok() };
        let pods = t.capacity("pods")?;
        if !(pods.is_finite() && pods.fract() == 0.0 && pods >= 0.0 && pods <= i64::MAX as f64) {
            return None;
        }
        Some(TypeFacts {
            instance_type: t.name(),
            vcpus: whole(&CPU)?,
            memory_mib: whole(&MEMORY)?,
            enis: enis(t).map(|(default_enis, ips_per_eni)| EniFigures {
                default_enis,
                ips_per_eni,
            }),
            default_pods: pods as i64,
        })
    }

    /// The same type with Karpenter's fixed default of the Windows families (110 pods, which do
    /// not limit pods by ENIs).
    pub fn with_default_pods(self, default_pods: i64) -> Self {
        TypeFacts { default_pods, ..self }
    }
}
