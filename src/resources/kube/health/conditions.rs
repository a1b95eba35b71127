//! Which of an object's status conditions fail, in Karpenter's words, and where in the
//! configuration their cause is. A condition fails when Karpenter wrote it `False` for the
//! generation of the spec the cluster has now (`observedGeneration`): one Karpenter has not
//! observed for the current spec says nothing about it yet. `Ready` is said only when no other
//! condition says why (Karpenter derives it from the others: `UnhealthyDependents`).
//!
//! The types, reasons and messages are Karpenter's (aws/karpenter-provider-aws
//! `pkg/apis/v1/ec2nodeclass_status.go` and `pkg/controllers/nodeclass/`, kubernetes-sigs/karpenter
//! `pkg/apis/v1/nodepool_status.go` and `pkg/controllers/nodepool/`, v1.14.1 and `main`).

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use crate::k8s::conditions::Condition;
use crate::k8s::kinds::{self, Kind};
use crate::k8s::plan_reads::Observed;

/// What a failing condition's cause is in the configuration: the attribute (dotted), when one
/// is, and what to look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hint {
    pub attribute: Option<&'static str>,
    pub advice: &'static str,
}

const fn at(attribute: &'static str, advice: &'static str) -> Hint {
    Hint {
        attribute: Some(attribute),
        advice,
    }
}

const fn only(advice: &'static str) -> Hint {
    Hint {
        attribute: None,
        advice,
    }
}

/// The conditions that fail for the current generation (see the module docs).
pub(super) fn failing(observed: &Observed) -> Vec<&Condition> {
    let current = |c: &&Condition| match (c.observed_generation, observed.generation) {
        (Some(seen), Some(now)) => seen == now,
        _ => true,
    };
    let failing: Vec<&Condition> = observed
        .conditions
        .iter()
        .filter(|c| c.is_false())
        .filter(current)
        .collect();
    if failing.iter().any(|c| c.kind != "Ready") {
        failing.into_iter().filter(|c| c.kind != "Ready").collect()
    } else {
        failing
    }
}

/// Where the cause of `condition` is, for a kind Karpenter documents.
pub(super) fn hint(kind: &Kind, condition: &Condition) -> Option<Hint> {
    let reason = condition.reason.as_str();
    if *kind == kinds::EC2_NODE_CLASS || *kind == kinds::EKS_NODE_CLASS {
        return Some(match condition.kind.as_str() {
            "SubnetsReady" => at(
                "subnet_selector_terms",
                "Check the terms' tags or IDs: Karpenter finds no subnet they select.",
            ),
            "SecurityGroupsReady" => at(
                "security_group_selector_terms",
                "Check the terms' tags, IDs or names: Karpenter finds no security group they select.",
            ),
            "AMIsReady" if reason == "UnsupportedAlias" => at(
                "ami_selector_terms",
                "The alias's AMI family has no AMI for this cluster's Kubernetes version (AL2 ends with 1.32): use \
                 al2023@latest or bottlerocket@latest.",
            ),
            "AMIsReady" => at(
                "ami_selector_terms",
                "Check the alias (family@version) or the terms' IDs, names, tags or owners: no AMI matches them.",
            ),
            "InstanceProfileReady" => at(
                "role",
                "Check that the role exists and that the controller's policy lets Karpenter create its instance \
                 profile.",
            ),
            "CapacityReservationsReady" => at(
                "capacity_reservation_selector_terms",
                "Check the terms: Karpenter cannot resolve the capacity reservations they select.",
            ),
            "PlacementGroupReady" => at(
                "placement_group_selector",
                "Check the placement group's name or ID: Karpenter finds no such group.",
            ),
            "ValidationSucceeded" => validation_hint(reason)?,
            _ => return None,
        });
    }
    if *kind == kinds::NODE_POOL {
        return Some(match condition.kind.as_str() {
            "ValidationSucceeded" => at(
                "template",
                "Karpenter refuses the pool's labels, taints or requirements as written (the message says which).",
            ),
            "NodeClassReady" if reason == "NodeClassNotFound" => at(
                "template.spec.node_class_ref",
                "The node class it names does not exist: check the name, or create the class.",
            ),
            "NodeClassReady" => at(
                "template.spec.node_class_ref",
                "The node class it names is not Ready, so Karpenter launches nothing for this pool: the class's own \
                 warning says why.",
            ),
            "NodeRegistrationHealthy" if reason == "RegistrationFailed" => only(
                "Its nodes launch but do not join the cluster: check the node role's access to the cluster \
                 (karpenter_node_role's eks_access_entry, or aws-auth), and that the node class's subnets and \
                 security groups reach the cluster's API server.",
            ),
            "NodeRegistrationHealthy" => only(
                "Its nodes fail to launch (the reason is the last launch's): the NodeClaims warning says more.",
            ),
            _ => return None,
        });
    }
    None
}

/// An EC2NodeClass's `ValidationSucceeded=False`, by reason.
fn validation_hint(reason: &str) -> Option<Hint> {
    Some(match reason {
        "KubeletExpressionsDisabled" => at(
            "kubelet",
            "Turn on Karpenter's NodeClassCEL feature gate (the karpenter chart's settings.awsFeatureGates.nodeClassCEL), \
             or write numbers and quantities.",
        ),
        "InvalidKubeletConfiguration"
        | "KubeletExpressionInvalid"
        | "KubeletExpressionEvaluationFailed"
        | "UnsupportedKubeletConfiguration" => at(
            "kubelet",
            "Karpenter refuses the kubelet settings (the message says which).",
        ),
        "TagValidationFailed" => at(
            "tags",
            "Karpenter reserves some tag keys (kubernetes.io/cluster/…, karpenter.sh/…, eks:eks-cluster-name): remove \
             them from tags.",
        ),
        "UserDataSizeLimitExceeded" => at("user_data", "EC2 takes at most 16 KiB of user data: shorten it."),
        "CreateFleetAuthCheckFailed"
        | "CreateLaunchTemplateAuthCheckFailed"
        | "RunInstancesAuthCheckFailed" => only(
            "Karpenter's controller role may not launch nodes for this class: check its policy \
             (karpenter_controller_role, whose karpenter_version must be the Karpenter you run), and any permission \
             boundary or service control policy.",
        ),
        "ClusterCIDRResolutionFailed" => only(
            "Karpenter could not read the cluster's service CIDR: the controller's policy must allow eks:DescribeCluster.",
        ),
        _ => return None,
    })
}

/// How long ago `since` (RFC 3339) was, in words (`2h13m`), when it can be read.
pub(super) fn ago(since: &str, now: Timestamp) -> Option<String> {
    let then: Timestamp = since.parse().ok()?;
    let d = Duration::try_from(now.duration_since(then)).ok()?;
    let (days, hours, minutes, seconds) = (
        d.as_secs() / 86_400,
        d.as_secs() / 3600 % 24,
        d.as_secs() / 60 % 60,
        d.as_secs() % 60,
    );
    Some(match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, m) => format!("{h}h{m}m"),
        (d, h, _) => format!("{d}d{h}h"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(kind: &str, status: &str, reason: &str, generation: Option<i64>) -> Condition {
        Condition {
            kind: kind.into(),
            status: status.into(),
            reason: reason.into(),
            message: String::new(),
            since: "2026-11-28T10:00:00Z".into(),
            observed_generation: generation,
        }
    }

    #[test]
    fn only_conditions_observed_for_the_current_spec_fail_and_ready_only_alone() {
        let observed = Observed {
            generation: Some(3),
            conditions: vec![
                condition("SubnetsReady", "False", "SubnetsNotFound", Some(3)),
                condition("AMIsReady", "False", "AMINotFound", Some(2)),
                condition("SecurityGroupsReady", "True", "SecurityGroupsReady", Some(3)),
                condition("Ready", "False", "UnhealthyDependents", Some(3)),
            ],
            ..Observed::default()
        };
        let kinds: Vec<&str> = failing(&observed).iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(kinds, ["SubnetsReady"]);
        let only_ready = Observed {
            generation: Some(3),
            conditions: vec![condition("Ready", "False", "NodeClassNotReady", Some(3))],
            ..Observed::default()
        };
        assert_eq!(failing(&only_ready).len(), 1);
        let stale = Observed {
            generation: Some(4),
            conditions: vec![condition("SubnetsReady", "False", "SubnetsNotFound", Some(3))],
            ..Observed::default()
        };
        assert!(failing(&stale).is_empty(), "not observed for generation 4 yet");
    }

    #[test]
    fn each_cause_in_the_configuration_names_its_attribute() {
        let h = |kind: &Kind, c: &str, r: &str| {
            hint(kind, &condition(c, "False", r, None)).and_then(|h| h.attribute)
        };
        assert_eq!(
            h(&kinds::EC2_NODE_CLASS, "SubnetsReady", "SubnetsNotFound"),
            Some("subnet_selector_terms")
        );
        assert_eq!(
            h(&kinds::EC2_NODE_CLASS, "AMIsReady", "UnsupportedAlias"),
            Some("ami_selector_terms")
        );
        assert_eq!(
            h(
                &kinds::EC2_NODE_CLASS,
                "ValidationSucceeded",
                "KubeletExpressionInvalid"
            ),
            Some("kubelet")
        );
        assert_eq!(
            h(
                &kinds::EC2_NODE_CLASS,
                "ValidationSucceeded",
                "RunInstancesAuthCheckFailed"
            ),
            None
        );
        assert_eq!(
            h(&kinds::NODE_POOL, "NodeClassReady", "UnhealthyDependents"),
            Some("template.spec.node_class_ref")
        );
        assert_eq!(
            h(&kinds::NODE_POOL, "NodeRegistrationHealthy", "RegistrationFailed"),
            None
        );
    }

    #[test]
    fn how_long_ago_in_words() {
        let now: Timestamp = "2026-11-28T12:13:05Z".parse().expect("time");
        assert_eq!(ago("2026-11-28T10:00:00Z", now).as_deref(), Some("2h13m"));
        assert_eq!(ago("2026-11-28T12:13:00Z", now).as_deref(), Some("5s"));
        assert_eq!(ago("2026-11-25T09:00:00Z", now).as_deref(), Some("3d3h"));
        assert_eq!(ago("yesterday", now), None);
    }
}
