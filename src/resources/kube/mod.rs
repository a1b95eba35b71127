//! The Kubernetes kinds: one module per Karpenter kind (by API version: [`v1`], [`v1alpha1`],
//! [`v1alpha5`], and [`capacity_buffer`]), the generic machinery they share ([`object`]: one
//! `KubeObjectType` drives plan, apply, read, import and docs of a kind from its schema), their
//! identity and listing ([`object::identity`]), state moves from `kubectl_manifest` ([`moves`]), the
//! `force_destroy` cleanup ([`teardown`]), the plan's notes stage ([`notes`], each note a
//! [`note::Note`]: what a plan does to the running nodes, [`drift`], among them),
//! the CRD availability checks ([`availability`]) and
//! the Kubernetes data sources ([`data_sources`]). The constructors below are the registry's
//! one line per kind.

pub mod availability;
pub mod capacity_buffer;
pub mod data_sources;
pub mod drift;
pub mod eks;
pub mod health;
pub mod kind;
pub mod moves;
pub mod note;
pub mod notes;
pub mod object;
pub mod teardown;
pub mod v1;
pub mod v1alpha1;
pub mod v1alpha5;

#[cfg(test)]
mod every_minor;

use crate::k8s::kinds;
use object::{ClassRef, KubeObjectType};

/// What a plan reads of the kinds' blocks in the configuration files: their names (the one that
/// says what is said once, `health`), how a pool names its class, and what a class's kubelet
/// expressions are compiled from (`v1::ec2_node_class::kubelet::class_of_pool`).
pub const WRITTEN_PATHS: &[&str] = &[
    "name",
    "template.spec.node_class_ref.name",
    "kubelet",
    "ami_family",
    "ami_selector_terms",
];

/// Every kind, in the registry's order.
pub fn all() -> Vec<KubeObjectType> {
    vec![
        node_pool(),
        ec2_node_class(),
        eks_node_class(),
        provisioner(),
        node_template(),
        node_overlay(),
        capacity_buffer(),
    ]
}

/// A NodePool's node class: `template.spec.node_class_ref`, an EC2NodeClass or (on EKS Auto
/// Mode) a NodeClass.
static NODE_POOL_CLASS: ClassRef = ClassRef {
    path: &["template", "spec", "node_class_ref"],
    kinds: &[kinds::EC2_NODE_CLASS, kinds::EKS_NODE_CLASS],
};

/// A Provisioner's node template: `provider_ref`.
static PROVISIONER_TEMPLATE: ClassRef = ClassRef {
    path: &["provider_ref"],
    kinds: &[kinds::AWS_NODE_TEMPLATE],
};

/// `karpenter_node_pool` ↔ `karpenter.sh/v1` NodePool. Deleting it waits for the NodeClaims
/// it owns (Karpenter drains and terminates their nodes first).
pub fn node_pool() -> KubeObjectType {
    KubeObjectType {
        validate: v1::validate_node_pool,
        replacements: v1::node_pool_replacements,
        dependents: &[kinds::NODE_CLAIM],
        force_destroy_cleanup: Some(v1::node_pool::NODE_POOL_CLEANUP),
        requires: Some(&availability::V1),
        class_ref: Some(&NODE_POOL_CLASS),
        plan_defaults: v1::node_pool::plan_defaults,
        ..KubeObjectType::new("karpenter_node_pool", kinds::NODE_POOL, &v1::NODE_POOL)
    }
}

/// `karpenter_ec2_node_class` ↔ `karpenter.k8s.aws/v1` EC2NodeClass, optionally waiting for
/// `Ready=True` after apply (`wait_for_ready`).
pub fn ec2_node_class() -> KubeObjectType {
    KubeObjectType {
        validate: v1::validate_ec2_node_class,
        wait_for_ready: Some("wait_for_ready"),
        validated_by_karpenter: true,
        // Karpenter makes the instance profile from `role` (or takes the one named).
        status_follows: &[("instance_profile", &["role", "instance_profile"])],
        force_destroy_cleanup: Some(v1::ec2_node_class::EC2_NODE_CLASS_CLEANUP),
        requires: Some(&availability::V1),
        ..KubeObjectType::new(
            "karpenter_ec2_node_class",
            kinds::EC2_NODE_CLASS,
            &v1::EC2_NODE_CLASS,
        )
    }
}

/// `karpenter_eks_node_class` ↔ `eks.amazonaws.com/v1` NodeClass (EKS Auto Mode), optionally
/// waiting for `Ready=True` after apply. No `force_destroy`: AWS runs the controller, outside the
/// cluster, so there is nothing of Karpenter's to stand in for.
pub fn eks_node_class() -> KubeObjectType {
    KubeObjectType {
        validate: eks::validate_eks_node_class,
        wait_for_ready: Some("wait_for_ready"),
        status_follows: &[("instance_profile", &["role", "instance_profile"])],
        requires: Some(&availability::EKS_AUTO_MODE),
        ..KubeObjectType::new(
            "karpenter_eks_node_class",
            kinds::EKS_NODE_CLASS,
            &eks::EKS_NODE_CLASS,
        )
    }
}

/// `karpenter_provisioner` ↔ `karpenter.sh/v1alpha5` Provisioner (Karpenter ≤ 0.32). No
/// dependents: in that era Karpenter's Machines and nodes carried the provisioner's name as a
/// label, not an owner reference, so there is nothing owned to list on a delete timeout.
pub fn provisioner() -> KubeObjectType {
    KubeObjectType {
        validate: v1alpha5::validate_provisioner,
        drop_admission_defaults: v1alpha5::webhook_defaults::drop_webhook_defaults,
        force_destroy_cleanup: Some(v1alpha5::provisioner::PROVISIONER_CLEANUP),
        requires: Some(&availability::V1ALPHA5),
        class_ref: Some(&PROVISIONER_TEMPLATE),
        ..KubeObjectType::new(
            "karpenter_provisioner",
            kinds::PROVISIONER,
            &v1alpha5::PROVISIONER,
        )
    }
}

/// `karpenter_node_template` ↔ `karpenter.k8s.aws/v1alpha1` AWSNodeTemplate (Karpenter ≤ 0.32).
pub fn node_template() -> KubeObjectType {
    KubeObjectType {
        validate: v1alpha5::validate_node_template,
        force_destroy_cleanup: Some(v1alpha5::node_template::NODE_TEMPLATE_CLEANUP),
        requires: Some(&availability::V1ALPHA5),
        ..KubeObjectType::new(
            "karpenter_node_template",
            kinds::AWS_NODE_TEMPLATE,
            &v1alpha5::NODE_TEMPLATE,
        )
    }
}

/// `karpenter_node_overlay` ↔ `karpenter.sh/v1alpha1` NodeOverlay (Karpenter ≥ v1.7 with the
/// `NodeOverlay` feature gate; an absent CRD fails apply with that, see [`availability`]).
pub fn node_overlay() -> KubeObjectType {
    KubeObjectType {
        validate: v1alpha1::validate_node_overlay,
        requires: Some(&availability::NODE_OVERLAY),
        ..KubeObjectType::new(
            "karpenter_node_overlay",
            kinds::NODE_OVERLAY,
            &v1alpha1::NODE_OVERLAY,
        )
    }
}

/// `karpenter_capacity_buffer` ↔ `autoscaling.x-k8s.io/v1beta1` CapacityBuffer (Karpenter ≥
/// v1.14 with the `CapacityBuffer` feature gate), the one namespaced kind: addressed by
/// `namespace` and `name`, imported by `namespace/name`.
pub fn capacity_buffer() -> KubeObjectType {
    KubeObjectType {
        validate: capacity_buffer::validate_capacity_buffer,
        requires: Some(&availability::CAPACITY_BUFFER),
        ..KubeObjectType::new(
            "karpenter_capacity_buffer",
            kinds::CAPACITY_BUFFER,
            &capacity_buffer::CAPACITY_BUFFER,
        )
    }
}
