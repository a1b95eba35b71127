//! Typed schemas and offline validation for the legacy Karpenter kinds (Karpenter ≤ 0.32):
//! `karpenter_provisioner` (karpenter.sh/v1alpha5 Provisioner) and `karpenter_node_template`
//! (karpenter.k8s.aws/v1alpha1 AWSNodeTemplate), following the v0.32.10 CRDs field by field.
//!
//! Same shape as the v1 kinds (design.md §1): `name`, `metadata = { labels, annotations }`, every
//! `spec` field at the top level (so the Provisioner's `labels`/`annotations` are its node labels
//! and annotations, `spec.labels`/`spec.annotations`), `status` (computed) and `timeouts {}`.
//!
//! These CRDs declare almost no validation: Karpenter checked specs in admission webhooks. The
//! rules here are the checks those webhooks made, so a user meets them at plan rather than at
//! apply. Where the v0.32 behaviour is not certain, the rule is lenient and says so. The CRDs have
//! no server defaults, so no attribute has a default. This module holds the era's label rules;
//! the generic ones (label keys and values, quantities, requirement value counts) come from
//! [`crate::resources::kube::kind::rules`].

pub mod node_template;
pub mod provisioner;
pub mod webhook_defaults;

pub use node_template::{NODE_TEMPLATE, validate_node_template};
pub use provisioner::{PROVISIONER, validate_provisioner};

use crate::terraform::framework::Attribute;

/// The label Karpenter ≤ 0.32 put on every node with the name of its Provisioner.
pub const PROVISIONER_NAME_LABEL: &str = "karpenter.sh/provisioner-name";
/// Values Karpenter ≤ 0.32 knew for `karpenter.sh/capacity-type` (`reserved` came with v1).
pub const CAPACITY_TYPES: &[&str] = &["spot", "on-demand"];

/// Label domains whose keys a Provisioner may not use, unless the key is well known.
const RESTRICTED_DOMAINS: &[&str] = &["kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws"];
/// Domains inside the restricted ones that are open to users.
const DOMAIN_EXCEPTIONS: &[&str] = &[
    "kops.k8s.io",
    "node.kubernetes.io",
    "node-restriction.kubernetes.io",
];

/// Label keys Karpenter ≤ 0.32 understood (core, their legacy beta spellings, and the AWS
/// provider's instance labels). `karpenter.k8s.aws/instance-ami-id` is included to stay lenient:
/// older releases knew it and it is not certain v0.32 rejected it.
pub const WELL_KNOWN_LABELS: &[&str] = &[
    "karpenter.sh/capacity-type",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "node.kubernetes.io/windows-build",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-pods",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-ami-id",
];

/// Why a label key may not be used in a Provisioner's labels or requirements, if it may not:
/// `karpenter.sh/provisioner-name` is Karpenter's, `kubernetes.io/hostname` is per node, and the
/// restricted domains (`kubernetes.io`, `k8s.io`, `karpenter.sh`, `karpenter.k8s.aws` and their
/// subdomains, except `node.kubernetes.io`, `node-restriction.kubernetes.io`, `kops.k8s.io`)
/// take only the well-known keys.
pub fn restricted_label_problem(key: &str) -> Option<String> {
    if key == PROVISIONER_NAME_LABEL {
        return Some(format!(
            "the label {PROVISIONER_NAME_LABEL:?} is set by Karpenter (the provisioner's name) and cannot be used here"
        ));
    }
    if key == "kubernetes.io/hostname" {
        return Some("the label \"kubernetes.io/hostname\" is restricted and cannot be used here".into());
    }
    if WELL_KNOWN_LABELS.contains(&key) {
        return None;
    }
    let (domain, _) = key.split_once('/')?;
    if DOMAIN_EXCEPTIONS.iter().any(|d| domain.ends_with(d)) {
        return None;
    }
    RESTRICTED_DOMAINS
        .iter()
        .find(|d| domain.ends_with(*d))
        .map(|d| {
            format!(
                "the label domain {d:?} is restricted: use a well-known label ({}) or a key outside the domains {}",
                WELL_KNOWN_LABELS.join(", "),
                RESTRICTED_DOMAINS.join(", ")
            )
        })
}

/// Values Karpenter ≤ 0.32 accepted for a well-known key with a fixed value set.
pub fn well_known_values(key: &str) -> Option<&'static [&'static str]> {
    (key == "karpenter.sh/capacity-type").then_some(CAPACITY_TYPES)
}

/// `status.conditions` in the knative-style shape of the legacy kinds (with `severity`).
pub(crate) fn legacy_conditions() -> Attribute {
    Attribute::list_of_objects(
        "conditions",
        vec![
            Attribute::string("type")
                .computed()
                .describe("Condition type, e.g. `Active`."),
            Attribute::string("status")
                .computed()
                .describe("`True`, `False` or `Unknown`."),
            Attribute::string("severity")
                .computed()
                .describe("How a failure of this condition is treated (`Error` when empty)."),
            Attribute::string("reason")
                .computed()
                .describe("Machine-readable reason for the last transition."),
            Attribute::string("message")
                .computed()
                .describe("Human-readable detail of the last transition."),
            Attribute::string("last_transition_time")
                .computed()
                .describe("When the status last changed."),
        ],
    )
    .computed()
    .describe("Conditions Karpenter reports about the object.")
}

/// Checks the legacy schemas against the v0.32.10 CRDs, with the comparison the v1 kinds use.
#[cfg(test)]
mod crd_coverage {
    use super::{NODE_TEMPLATE, PROVISIONER};
    use crate::resources::kube::kind::crd_coverage::{compare_root, load_version};
    use crate::terraform::framework::Attribute;

    /// CRD `spec` fields deliberately not typed on the wire here, with the reason.
    const EXCLUDED: &[(&str, &str)] = &[
        (
            "apiVersion",
            "stray field of the AWSNodeTemplate CRD inside spec (type metadata), not a setting",
        ),
        (
            "kind",
            "stray field of the AWSNodeTemplate CRD inside spec (type metadata), not a setting",
        ),
    ];

    #[test]
    fn provisioner_covers_the_crd() {
        let root = load_version("v1alpha5", "v1alpha5", "karpenter.sh_provisioners.yaml");
        let problems = compare_root(&PROVISIONER, &root, "Provisioner", EXCLUDED);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn node_template_covers_the_crd() {
        let root = load_version("v1alpha5", "v1alpha1", "karpenter.k8s.aws_awsnodetemplates.yaml");
        let problems = compare_root(&NODE_TEMPLATE, &root, "AWSNodeTemplate", EXCLUDED);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// The comparison works both ways here too: a dropped attribute, a stray one and a wrong
    /// wire name are each reported.
    #[test]
    fn coverage_check_detects_gaps() {
        let root = load_version("v1alpha5", "v1alpha5", "karpenter.sh_provisioners.yaml");
        let mut schema = PROVISIONER.clone();
        schema.attributes.retain(|a| a.name != "ttl_seconds_after_empty");
        schema
            .attributes
            .push(Attribute::string("ttl_after_empty").describe("x"));
        let problems = compare_root(&schema, &root, "Provisioner", EXCLUDED);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("spec.ttlSecondsAfterEmpty has no attribute")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("spec.ttlAfterEmpty is not a CRD field")),
            "{problems:?}"
        );
        let root = load_version("v1alpha5", "v1alpha1", "karpenter.k8s.aws_awsnodetemplates.yaml");
        let mut schema = NODE_TEMPLATE.clone();
        for a in &mut schema.attributes {
            if a.name == "instance_profile" {
                *a = a.clone().wire_name("instanceProfileName");
            }
        }
        let problems = compare_root(&schema, &root, "AWSNodeTemplate", EXCLUDED);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("spec.instanceProfile has no attribute")),
            "{problems:?}"
        );
        // The excluded fields are really in the CRDs (the list is not stale).
        let spec = &root["properties"]["spec"]["properties"];
        assert!(spec.get("apiVersion").is_some() && spec.get("kind").is_some());
    }

    /// Every attribute, at every depth, says what it is for, and so does every validator.
    #[test]
    fn every_attribute_is_described() {
        fn walk(attributes: &[Attribute], prefix: &str, missing: &mut Vec<String>) {
            for a in attributes {
                let path = format!("{prefix}{}", a.name);
                if a.description.trim().is_empty() {
                    missing.push(path.clone());
                }
                if a.validators.iter().any(|v| v.description().trim().is_empty()) {
                    missing.push(format!("{path} (a validator)"));
                }
                if let Some((_, nested)) = a.nested() {
                    walk(nested, &format!("{path}."), missing);
                }
            }
        }
        let mut missing = Vec::new();
        walk(&PROVISIONER.attributes, "provisioner.", &mut missing);
        walk(&NODE_TEMPLATE.attributes, "node_template.", &mut missing);
        assert!(missing.is_empty(), "undescribed: {missing:?}");
        assert_eq!(PROVISIONER.blocks.len(), 1);
        assert_eq!(NODE_TEMPLATE.blocks.len(), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restricted_keys_of_the_era() {
        for allowed in [
            "karpenter.sh/capacity-type",
            "karpenter.k8s.aws/instance-family",
            "karpenter.k8s.aws/instance-pods",
            "topology.kubernetes.io/zone",
            "node.kubernetes.io/instance-type",
            "node.kubernetes.io/lifecycle",
            "sub.node-restriction.kubernetes.io/x",
            "kops.k8s.io/instancegroup",
            "beta.kubernetes.io/arch",
            "topology.k8s.aws/zone-id",
            "example.com/team",
            "team",
        ] {
            assert_eq!(restricted_label_problem(allowed), None, "{allowed}");
        }
        for restricted in [
            "karpenter.sh/provisioner-name",
            "kubernetes.io/hostname",
            "karpenter.sh/anything",
            "karpenter.k8s.aws/nitro",
            "kubernetes.io/team",
            "example.k8s.io/x",
            "sub.karpenter.sh/x",
        ] {
            assert!(restricted_label_problem(restricted).is_some(), "{restricted}");
        }
    }
}
