//! Each kind's drift rules: the annotations Karpenter keeps its hash in, the reason it gives a
//! static drift, and what of a node class's spec it does not hash. Shared by the files of
//! [`super`]; [`of`] finds a kind's.

use crate::k8s::kinds::{self, Kind};

/// How a kind's changes drift nodes.
#[derive(Debug)]
pub struct DriftRules {
    pub kind: Kind,
    /// The annotation holding the hash Karpenter compares, on the object and each NodeClaim.
    pub hash: &'static str,
    pub hash_version: &'static str,
    /// The reason Karpenter gives a NodeClaim a static change drifts.
    pub static_reason: &'static str,
    pub scope: Scope,
}

/// Pool or node class.
#[derive(Debug)]
pub enum Scope {
    /// A NodePool: its NodeClaims carry its name in `karpenter.sh/nodepool`.
    Pool,
    /// A node class: its NodeClaims name it in `spec.nodeClassRef`.
    Class(ClassRules),
}

/// What of a node class's spec Karpenter does not hash.
#[derive(Debug)]
pub struct ClassRules {
    /// API fields never hashed (besides the `…SelectorTerms`, which are resolved).
    pub ignored: &'static [&'static str],
    /// Whether the AMI family as resolved (`amiFamily`, else the first alias's) is hashed.
    pub resolved_ami_family: bool,
    /// Said after every warning when the rules are not confirmed from source.
    pub caveat: Option<&'static str>,
}

/// The drift rules of `kind`, for a kind whose changes drift nodes.
pub fn of(kind: &Kind) -> Option<&'static DriftRules> {
    [&NODE_POOL, &EC2_NODE_CLASS, &EKS_NODE_CLASS]
        .into_iter()
        .find(|rules| rules.kind == *kind)
}

/// `karpenter_node_pool`.
pub static NODE_POOL: DriftRules = DriftRules {
    kind: kinds::NODE_POOL,
    hash: "karpenter.sh/nodepool-hash",
    hash_version: "karpenter.sh/nodepool-hash-version",
    static_reason: "NodePoolDrifted",
    scope: Scope::Pool,
};

/// `karpenter_ec2_node_class`: Karpenter's exclusion list (aws provider v1.14, `hash:"ignore"`).
pub static EC2_NODE_CLASS: DriftRules = DriftRules {
    kind: kinds::EC2_NODE_CLASS,
    hash: "karpenter.k8s.aws/ec2nodeclass-hash",
    hash_version: "karpenter.k8s.aws/ec2nodeclass-hash-version",
    static_reason: "NodeClassDrift",
    scope: Scope::Class(ClassRules {
        ignored: &["amiFamily", "ipPrefixCount"],
        resolved_ami_family: true,
        caveat: None,
    }),
};

/// `karpenter_eks_node_class`: EKS Auto Mode runs Karpenter closed source; its annotation names
/// are those its objects carry, and the rules are assumed to be the EC2NodeClass's.
pub static EKS_NODE_CLASS: DriftRules = DriftRules {
    kind: kinds::EKS_NODE_CLASS,
    hash: "eks.amazonaws.com/nodeclass-hash",
    hash_version: "eks.amazonaws.com/nodeclass-hash-version",
    static_reason: "NodeClassDrift",
    scope: Scope::Class(ClassRules {
        ignored: &[],
        resolved_ami_family: false,
        caveat: Some(
            " (EKS Auto Mode's controller is not open source: this assumes it drifts nodes as open-source \
             Karpenter does, selector terms resolved and every other field hashed.)",
        ),
    }),
};
