//! The six variables Karpenter declares for its kubelet expressions, and which of them an
//! expression reads: found once, when it is checked, so the evaluation knows whether a type
//! whose ENI figures the table lacks can take part.

/// A variable of Karpenter's CEL environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variable {
    /// `instance_type`, a string.
    InstanceType,
    /// `vcpus`, an int.
    Vcpus,
    /// `memory_mib`, an int.
    MemoryMib,
    /// `default_enis`, an int: an ENI figure.
    DefaultEnis,
    /// `ips_per_eni`, an int: an ENI figure.
    IpsPerEni,
    /// `max_pods`, an int.
    MaxPods,
}

impl Variable {
    /// Every variable, in the order Karpenter's documentation lists them.
    pub const ALL: [Variable; 6] = [
        Variable::InstanceType,
        Variable::Vcpus,
        Variable::MemoryMib,
        Variable::DefaultEnis,
        Variable::IpsPerEni,
        Variable::MaxPods,
    ];

    /// The variable of that name, if Karpenter declares one.
    pub fn named(name: &str) -> Option<Variable> {
        Variable::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The name an expression uses.
    pub fn name(self) -> &'static str {
        match self {
            Variable::InstanceType => "instance_type",
            Variable::Vcpus => "vcpus",
            Variable::MemoryMib => "memory_mib",
            Variable::DefaultEnis => "default_enis",
            Variable::IpsPerEni => "ips_per_eni",
            Variable::MaxPods => "max_pods",
        }
    }

    /// Whether it is one of the ENI figures (`default_enis`, `ips_per_eni`), which the offline
    /// table lacks for a few types.
    pub fn is_eni_figure(self) -> bool {
        matches!(self, Variable::DefaultEnis | Variable::IpsPerEni)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// The variables an expression reads (a comprehension variable of the same name shadows one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    bits: u8,
}

impl Reads {
    /// Notes that `v` is read.
    pub fn add(&mut self, v: Variable) {
        self.bits |= v.bit();
    }

    /// Whether `v` is read.
    pub fn contains(self, v: Variable) -> bool {
        self.bits & v.bit() != 0
    }

    /// Whether `default_enis` or `ips_per_eni` is read.
    pub fn eni_figures(self) -> bool {
        Variable::ALL
            .into_iter()
            .any(|v| v.is_eni_figure() && self.contains(v))
    }
}
