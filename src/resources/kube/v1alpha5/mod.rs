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
//! no server defaults, so no attribute has a default. The era's label rules are in [`labels`];
//! the generic ones (label keys and values, quantities, requirement value counts) come from
//! [`crate::resources::kube::kind::rules`].

pub mod labels;
pub mod node_template;
pub mod provisioner;
pub mod status;
pub mod webhook_defaults;

pub use node_template::{NODE_TEMPLATE, validate_node_template};
pub use provisioner::{PROVISIONER, validate_provisioner};

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
}
