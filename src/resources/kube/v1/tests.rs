//! The v1 schemas against the upstream v1.14.1 CRDs ([`crate::resources::kube::kind::crd_coverage`]),
//! the defaults against every v1 minor, and every attribute described.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::{EC2_NODE_CLASS, NODE_POOL};
use crate::resources::kube::kind::crd_coverage::{compare_root, crd_fields, load_version, our_fields};
use crate::terraform::framework::Schema;
use crate::terraform::tfvalue::Value;

/// CRD `spec` fields deliberately not in our schemas, with the reason. Empty: the v1.14.1
/// CRDs have no free-form or deprecated spec fields we leave out.
const EXCLUDED: &[(&str, &str)] = &[];

fn load(file: &str) -> Json {
    load_version("v1", "v1", file)
}

fn compare(schema: &Schema, file: &str, kind: &str) -> Vec<String> {
    compare_root(schema, &load(file), kind, EXCLUDED)
}

#[test]
fn node_pool_covers_the_crd() {
    let problems = compare(&NODE_POOL, "karpenter.sh_nodepools.yaml", "NodePool");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Fields of Karpenter v1.15 that the v1.14.1 CRD does not have: the upstream kubelet fields of
/// its open `spec.kubelet` (free-form in its CRD, typed here from the upstream kubelet type) and
/// `enclaveOptions` (whose shape comes from the v1.15 docs).
const V1_15_ONLY: &[&str] = &["spec.kubelet.", "spec.enclaveOptions"];

#[test]
fn ec2_node_class_covers_the_crd() {
    let problems: Vec<String> = compare(
        &EC2_NODE_CLASS,
        "karpenter.k8s.aws_ec2nodeclasses.yaml",
        "EC2NodeClass",
    )
    .into_iter()
    .filter(|p| !(p.ends_with("is not a CRD field") && V1_15_ONLY.iter().any(|prefix| p.contains(prefix))))
    .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The comparison finds what it should: a dropped attribute, a wrong wire name and a
/// changed default are each reported.
#[test]
fn coverage_check_detects_gaps() {
    let mut schema = EC2_NODE_CLASS.clone();
    schema.attributes.retain(|a| a.name != "user_data");
    let problems = compare(&schema, "karpenter.k8s.aws_ec2nodeclasses.yaml", "EC2NodeClass");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("spec.userData has no attribute")),
        "{problems:?}"
    );

    let mut schema = EC2_NODE_CLASS.clone();
    for a in &mut schema.attributes {
        if a.name == "associate_public_ip_address" {
            *a = a.clone().wire_name("associatePublicIpAddress");
        }
        if a.name == "metadata_options" {
            a.default = Some(Value::Null);
        }
    }
    let problems = compare(&schema, "karpenter.k8s.aws_ec2nodeclasses.yaml", "EC2NodeClass");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("spec.associatePublicIpAddress is not a CRD field")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("spec.metadataOptions defaults to")),
        "{problems:?}"
    );

    let mut crd = BTreeMap::new();
    crd_fields(
        &load("karpenter.sh_nodepools.yaml")["properties"]["spec"],
        "",
        &mut crd,
    );
    assert!(crd.contains_key("template.spec.requirements[].minValues"));
    assert!(crd["disruption.budgets[].nodes"].required);
}

/// #16, defaults that exist in one cluster only: every default this provider plans (at
/// any depth) is a field of the v1 CRDs of every Karpenter minor in `versions/`, so no
/// supported cluster is sent a default it does not have, nor expected to return one.
/// (Should a future default be newer than the oldest minor, the apply leaves it out of the
/// body on clusters without it: `KubeObjectType::fit_to_cluster`.)
#[test]
fn every_planned_default_exists_in_every_v1_minor() {
    let minors = crate::k8s::skew::tests::all_minor_schemas();
    assert!(minors.len() >= 15, "{}", minors.len());
    let mut problems = Vec::new();
    let mut checked = 0;
    for (schema, crd) in [
        (&*NODE_POOL, "nodepools.karpenter.sh"),
        (&*EC2_NODE_CLASS, "ec2nodeclasses.karpenter.k8s.aws"),
    ] {
        let mut ours = BTreeMap::new();
        our_fields(&schema.attributes, "", &mut ours);
        for (release, schemas) in &minors {
            let mut theirs = BTreeMap::new();
            crd_fields(&schemas[crd]["properties"]["spec"], "", &mut theirs);
            for (path, field) in ours.iter().filter(|(_, f)| f.default.is_some()) {
                checked += 1;
                if !theirs.contains_key(path) {
                    problems.push(format!(
                        "{release}: {crd} has no spec.{path}, default {:?}",
                        field.default
                    ));
                }
            }
        }
    }
    assert!(checked >= 15 * 8, "only {checked} default checks");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
