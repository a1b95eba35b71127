//! CRD coverage for every Karpenter minor (#50): each property of each release's CRDs
//! (`data/karpenter/crds/<minor>.tsv`, v1.0 to v1.15, written by `scripts/karpenter-release.sh`)
//! is an attribute of our schema for that kind, of a compatible shape, or is in [`LEFT_OUT`]
//! with the reason. A new release's inventory fails here, naming the property and the minor,
//! until the schema has it or the list says why not.

use crate::resources::kube::capacity_buffer::CAPACITY_BUFFER;
use crate::resources::kube::kind::crd_coverage::{inventories, uncovered};
use crate::resources::kube::v1::{EC2_NODE_CLASS, NODE_POOL};
use crate::resources::kube::v1alpha1::NODE_OVERLAY;
use crate::terraform::framework::Schema;

/// The CRDs our resources write, with their schemas. NodeClaims are Karpenter's own: no
/// resource writes them.
fn kinds() -> [(&'static str, &'static Schema); 4] {
    [
        ("nodepools.karpenter.sh", &NODE_POOL),
        ("ec2nodeclasses.karpenter.k8s.aws", &EC2_NODE_CLASS),
        ("nodeoverlays.karpenter.sh", &NODE_OVERLAY),
        ("capacitybuffers.autoscaling.x-k8s.io", &CAPACITY_BUFFER),
    ]
}

/// CRD properties deliberately not attributes: (CRD, path as in the inventory, reason). One list
/// for every minor: a property is listed once, whichever releases have it. Empty today: every
/// property of every minor's CRDs, v1.0 to v1.15 (main's as v1.15's stand-in), is an attribute.
/// A change of shape between releases (a typed field becoming an expression string) belongs
/// here too, with the releases it concerns in the reason.
const LEFT_OUT: &[(&str, &str, &str)] = &[];

fn left_out(crd: &str) -> Vec<(&'static str, &'static str)> {
    LEFT_OUT
        .iter()
        .filter(|(c, _, _)| *c == crd)
        .map(|(_, p, why)| (*p, *why))
        .collect()
}

#[test]
fn every_property_of_every_minor_is_an_attribute_or_left_out_on_purpose() {
    let releases = inventories();
    let minors: Vec<&str> = releases.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(minors.first(), Some(&"v1.0"));
    assert!(minors.len() >= 16, "v1.0 to v1.15: {minors:?}");
    let mut problems = Vec::new();
    let mut checked = 0;
    for (minor, crds) in &releases {
        for (crd, schema) in kinds() {
            let Some(properties) = crds.get(crd) else {
                continue;
            };
            checked += properties.len();
            problems.extend(uncovered(
                schema,
                properties,
                &left_out(crd),
                &format!("{minor} {crd}"),
            ));
        }
    }
    assert!(checked > 2000, "only {checked} properties checked");
    assert!(
        problems.is_empty(),
        "{} uncovered:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // Every entry of the list is still needed by some minor (none outlives its property).
    for (crd, path, _) in LEFT_OUT {
        assert!(
            releases
                .iter()
                .any(|(_, crds)| crds.get(*crd).is_some_and(|p| p.contains_key(*path))),
            "{crd} {path} is left out, but no release has it"
        );
    }
}

/// The check finds what it should: a property of an older minor dropped from the schema, and a
/// property whose shape the attribute does not have, each named with its minor; a free-form CRD
/// property (v1.15's `kubelet`) is covered by a typed object attribute.
#[test]
fn the_check_names_the_property_and_the_minor() {
    let releases = inventories();
    let (_, v10) = releases.iter().find(|(m, _)| m == "v1.0").expect("v1.0");
    let crd = "ec2nodeclasses.karpenter.k8s.aws";
    let mut schema = EC2_NODE_CLASS.clone();
    schema.attributes.retain(|a| a.name != "user_data");
    let problems = uncovered(&schema, &v10[crd], &[], "v1.0 EC2NodeClass");
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("v1.0 EC2NodeClass: CRD property spec.userData (string)")),
        "{problems:?}"
    );
    let mut wrong = v10[crd].clone();
    wrong.insert("spec.role".into(), "bool".into());
    let problems = uncovered(&EC2_NODE_CLASS, &wrong, &[], "v1.0 EC2NodeClass");
    assert_eq!(
        problems,
        ["v1.0 EC2NodeClass: CRD property spec.role is bool, the attribute string"]
    );
    let (_, v115) = releases.iter().find(|(m, _)| m == "v1.15").expect("v1.15");
    assert_eq!(
        v115[crd].get("spec.kubelet").map(String::as_str),
        Some("free-form")
    );
    assert!(uncovered(&EC2_NODE_CLASS, &v115[crd], &left_out(crd), "v1.15").is_empty());
}
