//! The Kubernetes kinds this provider writes: group, version, kind and plural, from which the
//! CRD name and the `kube` API resource follow.

use kube::core::{ApiResource, GroupVersionKind};

/// One custom resource kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    /// Whether objects of the kind live in a namespace (CapacityBuffer) rather than at the
    /// cluster scope (every Karpenter kind).
    pub namespaced: bool,
}

impl Kind {
    /// `<plural>.<group>`, the CRD's name.
    pub fn crd_name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// The earlier API version the same objects were served as, which the cluster converts to
    /// this one: karpenter.sh/v1beta1 NodePools and karpenter.k8s.aws/v1beta1 EC2NodeClasses
    /// (Karpenter v0.33–v0.37) became v1 with Karpenter 1.0.
    pub fn converted_from(&self) -> Option<String> {
        (self.version == "v1" && matches!(self.kind, "NodePool" | "EC2NodeClass"))
            .then(|| format!("{}/v1beta1", self.group))
    }

    pub fn api_resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(self.group, self.version, self.kind),
            self.plural,
        )
    }
}

pub const NODE_POOL: Kind = Kind {
    group: "karpenter.sh",
    version: "v1",
    kind: "NodePool",
    plural: "nodepools",
    namespaced: false,
};
pub const NODE_CLAIM: Kind = Kind {
    group: "karpenter.sh",
    version: "v1",
    kind: "NodeClaim",
    plural: "nodeclaims",
    namespaced: false,
};
pub const EC2_NODE_CLASS: Kind = Kind {
    group: "karpenter.k8s.aws",
    version: "v1",
    kind: "EC2NodeClass",
    plural: "ec2nodeclasses",
    namespaced: false,
};
pub const PROVISIONER: Kind = Kind {
    group: "karpenter.sh",
    version: "v1alpha5",
    kind: "Provisioner",
    plural: "provisioners",
    namespaced: false,
};
pub const AWS_NODE_TEMPLATE: Kind = Kind {
    group: "karpenter.k8s.aws",
    version: "v1alpha1",
    kind: "AWSNodeTemplate",
    plural: "awsnodetemplates",
    namespaced: false,
};
/// NodeOverlay (Karpenter ≥ v1.7, behind the `NodeOverlay` feature gate).
pub const NODE_OVERLAY: Kind = Kind {
    group: "karpenter.sh",
    version: "v1alpha1",
    kind: "NodeOverlay",
    plural: "nodeoverlays",
    namespaced: false,
};
/// CapacityBuffer (Karpenter ≥ v1.14, behind the `CapacityBuffer` feature gate). Namespaced.
pub const CAPACITY_BUFFER: Kind = Kind {
    group: "autoscaling.x-k8s.io",
    version: "v1beta1",
    kind: "CapacityBuffer",
    plural: "capacitybuffers",
    namespaced: true,
};
/// EKS Auto Mode's NodeClass (`eks.amazonaws.com/v1`): served by every Auto Mode cluster, its
/// CRD installed and its controller run by AWS.
pub const EKS_NODE_CLASS: Kind = Kind {
    group: "eks.amazonaws.com",
    version: "v1",
    kind: "NodeClass",
    plural: "nodeclasses",
    namespaced: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_names() {
        assert_eq!(NODE_POOL.crd_name(), "nodepools.karpenter.sh");
        assert_eq!(EC2_NODE_CLASS.crd_name(), "ec2nodeclasses.karpenter.k8s.aws");
        assert_eq!(EC2_NODE_CLASS.api_version(), "karpenter.k8s.aws/v1");
        assert_eq!(
            EC2_NODE_CLASS.converted_from().as_deref(),
            Some("karpenter.k8s.aws/v1beta1")
        );
        assert_eq!(
            NODE_POOL.converted_from().as_deref(),
            Some("karpenter.sh/v1beta1")
        );
        assert_eq!(NODE_CLAIM.converted_from(), None);
        assert_eq!(PROVISIONER.converted_from(), None);
    }
}
