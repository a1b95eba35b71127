//! Unit tests of `karpenter_eks_node_class`: the guide's rules on their attributes, and the schema
//! against the test CRD.

use serde_json::{Value as Json, json};

use super::{EKS_NODE_CLASS, validate_eks_node_class};
use crate::resources::kube::kind::testing::{config, diagnose, error_paths};

fn check(json: &Json) -> Vec<String> {
    error_paths(&diagnose(
        &EKS_NODE_CLASS,
        validate_eks_node_class,
        &config(&EKS_NODE_CLASS, json),
    ))
}

fn base() -> Json {
    json!({
        "name": "private",
        "role": "eks-auto-nodes",
        "subnet_selector_terms": [{"tags": {"kubernetes.io/role/internal-elb": "1"}}],
        "security_group_selector_terms": [{"id": "sg-0123456789abcdef0"}],
    })
}

fn with(patch: Json) -> Json {
    let mut j = base();
    for (k, val) in patch.as_object().into_iter().flatten() {
        if val.is_null() {
            j.as_object_mut().map(|o| o.remove(k));
        } else {
            j[k] = val.clone();
        }
    }
    j
}

#[test]
fn the_guides_examples_are_valid() {
    for ok in [
        base(),
        with(json!({
            "pod_subnet_selector_terms": [{"tags": {"kubernetes.io/role/pod": "1"}}],
            "pod_security_group_selector_terms": [{"id": "sg-0987654321fedcba0"}],
            "capacity_reservation_selector_terms": [{"id": "cr-56fac701cc1951b03"}, {"tags": {"app": "my-app"}, "owner": "012345678901"}],
            "snat_policy": "Disabled",
            "network_policy": "DefaultDeny",
            "network_policy_event_logs": "Enabled",
            "ephemeral_storage": {"size": "160Gi", "iops": 6000, "throughput": 250, "kms_key_id": "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"},
            "advanced_networking": {"associate_public_ip_address": false, "https_proxy": "http://192.0.2.4:3128", "no_proxy": ["localhost", "169.254.169.254", ".internal"], "ipv4_prefix_size": "32", "enable_v4_egress": false},
            "advanced_security": {"fips": true, "kernel_lockdown": "integrity"},
            "placement_group_selector": {"name": "ml-training-pg"},
            "certificate_bundles": [{"name": "corp", "data": "LS0tLS1CRUdJTg=="}],
            "tags": {"team": "platform"},
        })),
        with(json!({"role": null, "instance_profile": "eks-us-west-2-demo-nodes"})),
        // Neither: the cluster's node role (the guide's basic example, AWS's blueprints).
        with(json!({"role": null})),
        with(json!({"role": "r".repeat(64)})),
        with(json!({"advanced_security": {"kernel_lockdown": "none"}})),
        with(json!({"placement_group_selector": {"id": "pg-02465754522cda020"}})),
        // The guide's EFA example: one ENA interface with a prefix for pods, EFA-only on four cards.
        with(json!({"advanced_networking": {"network_interfaces": [
            {"network_card_index": 0, "device_index": 0, "interface_type": "interface", "secondary_ipv4_prefix_count": 1},
            {"network_card_index": 0, "device_index": 1, "interface_type": "efa-only"},
            {"network_card_index": 1, "device_index": 0, "interface_type": "efa-only"},
            {"network_card_index": 2, "device_index": 0, "interface_type": "efa-only"},
            {"network_card_index": 3, "device_index": 0, "interface_type": "efa-only"},
        ]}})),
        with(
            json!({"advanced_networking": {"associate_public_ip_address": true, "network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "interface", "secondary_ipv4_count": 8},
            ]}}),
        ),
        // Keys the live CRD does not restrict.
        with(json!({"tags": {"eks:eks-cluster-name": "demo", "kubernetes.io/role/elb": "1"}})),
        with(json!({"ephemeral_storage": {"size": "18Ti"}})),
        with(json!({"ephemeral_storage": {"kms_key_id": "alias/ebs"}})),
    ] {
        assert!(check(&ok).is_empty(), "{ok}: {:?}", check(&ok));
    }
}

#[test]
fn each_rule_of_the_guide_fails_on_its_attribute() {
    let cases: Vec<(Json, &str)> = vec![
        (json!({"instance_profile": "eks-x"}), "instance_profile"),
        (json!({"role": "r".repeat(65)}), "role"),
        (json!({"role": ""}), "role"),
        (
            json!({"role": null, "instance_profile": "KarpenterNodes"}),
            "instance_profile",
        ),
        (json!({"name": "default"}), "name"),
        (
            json!({"pod_subnet_selector_terms": [{"id": "subnet-1"}]}),
            "pod_subnet_selector_terms",
        ),
        (json!({"snat_policy": "random"}), "snat_policy"),
        (json!({"network_policy": "Deny"}), "network_policy"),
        (
            json!({"network_policy_event_logs": "On"}),
            "network_policy_event_logs",
        ),
        (
            json!({"ephemeral_storage": {"iops": 2999}}),
            "ephemeral_storage.iops",
        ),
        (
            json!({"ephemeral_storage": {"iops": 16001}}),
            "ephemeral_storage.iops",
        ),
        (
            json!({"ephemeral_storage": {"throughput": 1001}}),
            "ephemeral_storage.throughput",
        ),
        (
            json!({"ephemeral_storage": {"size": "59Ti"}}),
            "ephemeral_storage.size",
        ),
        (
            json!({"ephemeral_storage": {"size": "Ti"}}),
            "ephemeral_storage.size",
        ),
        (
            json!({"ephemeral_storage": {"kms_key_id": "my key"}}),
            "ephemeral_storage.kms_key_id",
        ),
        (json!({"subnet_selector_terms": []}), "subnet_selector_terms"),
        (
            json!({"subnet_selector_terms": [{"id": "sn-1"}]}),
            "subnet_selector_terms[0].id",
        ),
        (
            json!({"subnet_selector_terms": [{"id": "subnet-1", "tags": {"a": "b"}}]}),
            "subnet_selector_terms[0].id",
        ),
        (
            json!({"security_group_selector_terms": [{"name": "n", "tags": {"a": "b"}}]}),
            "security_group_selector_terms[0].name",
        ),
        (
            json!({"capacity_reservation_selector_terms": [{"id": "cr-1", "owner": "012345678901"}]}),
            "capacity_reservation_selector_terms[0].id",
        ),
        (
            json!({"capacity_reservation_selector_terms": [{"tags": {"a": "b"}, "owner": "1234"}]}),
            "capacity_reservation_selector_terms[0].owner",
        ),
        (
            json!({"advanced_networking": {"https_proxy": "192.0.2.4:3128"}}),
            "advanced_networking.https_proxy",
        ),
        (
            json!({"advanced_networking": {"no_proxy": vec!["x"; 51]}}),
            "advanced_networking.no_proxy",
        ),
        (
            json!({"advanced_security": {"kernel_lockdown": "Integrity"}}),
            "advanced_security.kernel_lockdown",
        ),
        (
            json!({"advanced_networking": {"ipv4_prefix_size": "28"}}),
            "advanced_networking.ipv4_prefix_size",
        ),
        (
            json!({"placement_group_selector": {"name": "pg", "id": "pg-1"}}),
            "placement_group_selector.id",
        ),
        (
            json!({"placement_group_selector": {}}),
            "placement_group_selector",
        ),
        (
            json!({"tags": {"kubernetes.io/clusterx": "owned"}}),
            "tags[\"kubernetes.io/clusterx\"]",
        ),
        (
            json!({"advanced_networking": {"network_interfaces": [
                {"network_card_index": 0, "device_index": 1, "interface_type": "interface"},
            ]}}),
            "advanced_networking.network_interfaces",
        ),
        (
            json!({"advanced_networking": {"network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "efa-only"},
            ]}}),
            "advanced_networking.network_interfaces[0].interface_type",
        ),
        (
            json!({"advanced_networking": {"network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
                {"network_card_index": 0, "device_index": 0, "interface_type": "efa-only"},
            ]}}),
            "advanced_networking.network_interfaces[1].device_index",
        ),
        (
            json!({"advanced_networking": {"network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "interface", "secondary_ipv4_count": 2, "secondary_ipv4_prefix_count": 1},
            ]}}),
            "advanced_networking.network_interfaces[0].secondary_ipv4_prefix_count",
        ),
        (
            json!({"advanced_networking": {"network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
                {"network_card_index": 1, "device_index": 0, "interface_type": "interface", "secondary_ipv4_count": 2},
            ]}}),
            "advanced_networking.network_interfaces[1].secondary_ipv4_count",
        ),
        (
            json!({"advanced_networking": {"network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
                {"network_card_index": 0, "device_index": 1, "interface_type": "efa-only", "secondary_ipv4_prefix_count": 1},
            ]}}),
            "advanced_networking.network_interfaces[1].secondary_ipv4_prefix_count",
        ),
        (
            json!({"advanced_networking": {"network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
                {"network_card_index": 1, "device_index": -1, "interface_type": "efa-only"},
            ]}}),
            "advanced_networking.network_interfaces[1].device_index",
        ),
        (
            json!({"advanced_networking": {"associate_public_ip_address": true, "network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
                {"network_card_index": 1, "device_index": 0, "interface_type": "efa-only"},
            ]}}),
            "advanced_networking.associate_public_ip_address",
        ),
        (
            json!({"tags": {"eks.amazonaws.com/nodeclass": "x"}}),
            "tags[\"eks.amazonaws.com/nodeclass\"]",
        ),
        (
            json!({"tags": {"kubernetes.io/cluster/demo": "owned"}}),
            "tags[\"kubernetes.io/cluster/demo\"]",
        ),
    ];
    for (patch, path) in cases {
        let j = with(patch);
        assert_eq!(check(&j), vec![path.to_string()], "{j}");
    }
}

#[test]
fn unknown_values_decide_nothing() {
    let j = with(
        json!({"role": "<unknown>", "instance_profile": "eks-x", "pod_subnet_selector_terms": "<unknown>"}),
    );
    assert!(check(&j).is_empty(), "{:?}", check(&j));
}

/// The schema and the test CRD written from the guide agree field by field, defaults and
/// required fields included, in both directions.
#[test]
fn the_schema_covers_the_test_crd() {
    use crate::resources::kube::kind::crd_coverage::{compare_root, openapi_schema};
    let path = format!(
        "{}/acceptance-tests/crds/eks-auto-mode/eks.amazonaws.com_nodeclasses.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let root = openapi_schema(&path, "v1");
    let problems = compare_root(&EKS_NODE_CLASS, &root, "NodeClass", &[]);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
