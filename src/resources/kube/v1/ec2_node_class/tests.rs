use serde_json::{Value as Json, json};

use super::*;
use crate::resources::kube::kind::testing::{UNKNOWN, config, diagnose, error_paths, plan_create, put};
use crate::terraform::framework::plan::plan;
use crate::terraform::tfvalue::Number;

/// A node class with the AL2023 alias, discovery tags and a role.
fn with_alias() -> Json {
    json!({
        "name": "default",
        "role": "KarpenterNodeRole-demo",
        "ami_selector_terms": [{"alias": "al2023@latest"}],
        "subnet_selector_terms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "security_group_selector_terms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "tags": {"team": "platform"}
    })
}

/// A node class with ID and tag selectors, block devices and most optional settings.
fn detailed() -> Json {
    json!({
        "name": "gpu",
        "metadata": {"labels": {"team": "ml"}},
        "instance_profile": "KarpenterNodeInstanceProfile-demo",
        "ami_family": "AL2023",
        "ami_selector_terms": [
            {"id": "ami-0123456789abcdef0"},
            {"name": "my-ami-*", "owner": "self"},
            {"tags": {"team": "ml", "Name": "*"}},
            {"ssm_parameter": "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id"}
        ],
        "subnet_selector_terms": [{"id": "subnet-0123456789abcdef0"}, {"tags": {"Name": "private-*"}}],
        "security_group_selector_terms": [{"id": "sg-0123456789abcdef0"}, {"name": "eks-cluster-sg"}],
        "capacity_reservation_selector_terms": [
            {"id": "cr-0123456789abcdef0"},
            {"tags": {"purpose": "ml"}, "owner_id": "123456789012", "instance_match_criteria": "targeted"}
        ],
        "placement_group_selector": {"name": "ml-cluster"},
        "associate_public_ip_address": false,
        "tags": {"team": "ml", "cost-center": "42"},
        "kubelet": {
            "cluster_dns": ["10.100.0.10"],
            "max_pods": 110,
            "pods_per_core": 0,
            "system_reserved": {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi"},
            "kube_reserved": {"cpu": "200m", "memory": "500Mi", "pid": "1000"},
            "eviction_hard": {"memory.available": "5%", "nodefs.available": "10%"},
            "eviction_soft": {"memory.available": "500Mi"},
            "eviction_soft_grace_period": {"memory.available": "1m30s"},
            "eviction_max_pod_grace_period": 60,
            "image_gc_high_threshold_percent": 85,
            "image_gc_low_threshold_percent": 80,
            "cpu_cfs_quota": true
        },
        "block_device_mappings": [
            {"device_name": "/dev/xvda", "root_volume": true,
             "ebs": {"volume_size": "100Gi", "volume_type": "gp3", "iops": 3000, "throughput": 125,
                     "encrypted": true, "kms_key_id": "arn:aws:kms:us-east-1:123456789012:key/abcd",
                     "delete_on_termination": true}},
            {"device_name": "/dev/xvdb",
             "ebs": {"snapshot_id": "snap-0123456789abcdef0", "volume_initialization_rate": 200}}
        ],
        "instance_store_policy": "RAID0",
        "user_data": "#!/bin/bash\necho hello\n",
        "detailed_monitoring": true,
        "metadata_options": {"http_endpoint": "enabled", "http_protocol_ipv6": "disabled",
                             "http_put_response_hop_limit": 2, "http_tokens": "required"},
        "network_interfaces": [
            {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
            {"network_card_index": 1, "device_index": 0, "interface_type": "efa-only"}
        ],
        "ip_prefix_count": 1,
        "connection_tracking": {"tcp_established_timeout": 3600},
        "cpu_options": {"nested_virtualization": "disabled"},
        "wait_for_ready": true
    })
}

fn check(json: &Json) -> Diagnostics {
    diagnose(
        &EC2_NODE_CLASS,
        validate_ec2_node_class,
        &config(&EC2_NODE_CLASS, json),
    )
}

/// Parity with the API server (issue #16): an empty capacity reservation list and annotations
/// over 256 KiB are refused by the server, so plan must refuse them.
#[test]
fn plan_refuses_what_the_server_refuses() {
    let mut nc = detailed();
    put(&mut nc, "/capacity_reservation_selector_terms", json!([]));
    assert_eq!(
        error_paths(&check(&nc)),
        vec!["capacity_reservation_selector_terms"]
    );
    let mut nc = with_alias();
    put(&mut nc, "/metadata/annotations/a", json!("x".repeat(200 * 1024)));
    put(&mut nc, "/metadata/annotations/b", json!("x".repeat(57 * 1024)));
    assert_eq!(error_paths(&check(&nc)), vec!["metadata.annotations"]);
}

#[test]
fn realistic_node_classes_are_valid() {
    for class in [with_alias(), detailed()] {
        let d = check(&class);
        assert!(d.is_empty(), "{d}");
    }
}

/// (base, what is changed, value, where the error must be). Base `true` is [`with_alias`],
/// `false` is [`detailed`].
fn invalid_cases() -> Vec<(bool, &'static str, Json, &'static str)> {
    vec![
        (true, "/name", json!("Default"), "name"),
        (
            true,
            "/metadata/annotations/bad key!",
            json!("x"),
            "metadata.annotations[\"bad key!\"]",
        ),
        (true, "/instance_profile", json!("profile"), "instance_profile"),
        (false, "/instance_profile", Json::Null, "role"),
        (true, "/role", json!(""), "role"),
        (true, "/ami_family", json!("Ubuntu"), "ami_family"),
        (true, "/ami_family", json!("Bottlerocket"), "ami_family"),
        (false, "/ami_family", Json::Null, "ami_family"),
        (
            true,
            "/ami_selector_terms/0/alias",
            json!("ubuntu@latest"),
            "ami_selector_terms[0].alias",
        ),
        (
            true,
            "/ami_selector_terms/0/alias",
            json!("windows2022@v1"),
            "ami_selector_terms[0].alias",
        ),
        (
            true,
            "/ami_selector_terms/0/alias",
            json!("al2023"),
            "ami_selector_terms[0].alias",
        ),
        (
            true,
            "/ami_selector_terms/0/alias",
            json!("al2023@v20240807-and-a-much-longer-tail"),
            "ami_selector_terms[0].alias",
        ),
        (
            true,
            "/ami_selector_terms/1",
            json!({"id": "ami-0123"}),
            "ami_selector_terms[0].alias",
        ),
        (
            true,
            "/ami_selector_terms/0/tags",
            json!({"a": "b"}),
            "ami_selector_terms[0].alias",
        ),
        (
            false,
            "/ami_selector_terms/0/name",
            json!("x"),
            "ami_selector_terms[0].id",
        ),
        (
            false,
            "/ami_selector_terms/0/alias",
            json!("al2023@latest"),
            "ami_selector_terms[0].id",
        ),
        (
            false,
            "/ami_selector_terms/1/name",
            Json::Null,
            "ami_selector_terms[1]",
        ),
        (
            false,
            "/ami_selector_terms/0/id",
            json!("img-123"),
            "ami_selector_terms[0].id",
        ),
        (true, "/ami_selector_terms", json!([]), "ami_selector_terms"),
        (
            false,
            "/ami_selector_terms/2/tags/",
            json!("x"),
            "ami_selector_terms[2].tags[\"\"]",
        ),
        (
            false,
            "/subnet_selector_terms",
            json!([{"id": "subnet-0123456789abcdef0", "tags": {"Name": "x"}}]),
            "subnet_selector_terms[0].id",
        ),
        (
            false,
            "/subnet_selector_terms/0",
            json!({}),
            "subnet_selector_terms[0]",
        ),
        (
            false,
            "/subnet_selector_terms/0/id",
            json!("sn-123"),
            "subnet_selector_terms[0].id",
        ),
        (
            true,
            "/subnet_selector_terms/0/tags/Name",
            json!(""),
            "subnet_selector_terms[0].tags[\"Name\"]",
        ),
        (true, "/subnet_selector_terms", json!([]), "subnet_selector_terms"),
        (
            false,
            "/security_group_selector_terms",
            json!([{"name": "eks-cluster-sg", "tags": {"a": "b"}}]),
            "security_group_selector_terms[0].name",
        ),
        (
            false,
            "/security_group_selector_terms",
            json!([{"id": "sg-0123456789abcdef0", "name": "x"}]),
            "security_group_selector_terms[0].id",
        ),
        (
            true,
            "/security_group_selector_terms",
            json!([]),
            "security_group_selector_terms",
        ),
        (
            false,
            "/capacity_reservation_selector_terms",
            json!([{"id": "cr-0123456789abcdef0", "owner_id": "123456789012"}]),
            "capacity_reservation_selector_terms[0].id",
        ),
        (
            false,
            "/capacity_reservation_selector_terms/1/owner_id",
            json!("12345"),
            "capacity_reservation_selector_terms[1].owner_id",
        ),
        (
            false,
            "/capacity_reservation_selector_terms/1/instance_match_criteria",
            json!("closed"),
            "capacity_reservation_selector_terms[1].instance_match_criteria",
        ),
        (
            false,
            "/capacity_reservation_selector_terms/0/id",
            json!("cr-ABC"),
            "capacity_reservation_selector_terms[0].id",
        ),
        (
            false,
            "/capacity_reservation_selector_terms/2",
            json!({"owner_id": "123456789012"}),
            "capacity_reservation_selector_terms[2]",
        ),
        (
            false,
            "/placement_group_selector/id",
            json!("pg-0123"),
            "placement_group_selector.id",
        ),
        (
            false,
            "/placement_group_selector/name",
            Json::Null,
            "placement_group_selector",
        ),
        (
            false,
            "/placement_group_selector/name",
            json!(""),
            "placement_group_selector.name",
        ),
        (
            true,
            "/tags/kubernetes.io~cluster~demo",
            json!("owned"),
            "tags[\"kubernetes.io/cluster/demo\"]",
        ),
        (
            true,
            "/tags/karpenter.sh~nodepool",
            json!("x"),
            "tags[\"karpenter.sh/nodepool\"]",
        ),
        (
            true,
            "/tags/eks:eks-cluster-name",
            json!("demo"),
            "tags[\"eks:eks-cluster-name\"]",
        ),
        (
            false,
            "/block_device_mappings/1/root_volume",
            json!(true),
            "block_device_mappings[1].root_volume",
        ),
        (
            false,
            "/block_device_mappings/0/ebs/volume_size",
            Json::Null,
            "block_device_mappings[0].ebs",
        ),
        (
            false,
            "/block_device_mappings/0/ebs/volume_size",
            json!("100GB"),
            "block_device_mappings[0].ebs.volume_size",
        ),
        (
            false,
            "/block_device_mappings/0/ebs/volume_size",
            json!("59001Gi"),
            "block_device_mappings[0].ebs.volume_size",
        ),
        (
            false,
            "/block_device_mappings/0/ebs/volume_type",
            json!("gp4"),
            "block_device_mappings[0].ebs.volume_type",
        ),
        (
            false,
            "/block_device_mappings/0/ebs/volume_initialization_rate",
            json!(150),
            "block_device_mappings[0].ebs.volume_initialization_rate",
        ),
        (
            false,
            "/block_device_mappings/1/ebs/volume_initialization_rate",
            json!(50),
            "block_device_mappings[1].ebs.volume_initialization_rate",
        ),
        (
            false,
            "/block_device_mappings/0/ebs/iops",
            json!(1.5),
            "block_device_mappings[0].ebs.iops",
        ),
        (
            false,
            "/metadata_options/http_tokens",
            json!("sometimes"),
            "metadata_options.http_tokens",
        ),
        (
            false,
            "/metadata_options/http_put_response_hop_limit",
            json!(65),
            "metadata_options.http_put_response_hop_limit",
        ),
        (
            false,
            "/metadata_options/http_endpoint",
            json!("on"),
            "metadata_options.http_endpoint",
        ),
        (
            false,
            "/network_interfaces/0/interface_type",
            json!("efa-only"),
            "network_interfaces",
        ),
        (
            false,
            "/network_interfaces/2",
            json!({"network_card_index": 1, "device_index": 0, "interface_type": "interface"}),
            "network_interfaces[2].device_index",
        ),
        (
            false,
            "/network_interfaces/2",
            json!({"network_card_index": 1, "device_index": 1, "interface_type": "efa-only"}),
            "network_interfaces[2].interface_type",
        ),
        (
            false,
            "/network_interfaces/1/device_index",
            json!(-1),
            "network_interfaces[1].device_index",
        ),
        (false, "/connection_tracking", json!({}), "connection_tracking"),
        (
            false,
            "/connection_tracking/udp_timeout",
            json!(10),
            "connection_tracking.udp_timeout",
        ),
        (
            false,
            "/connection_tracking/tcp_established_timeout",
            json!(432001),
            "connection_tracking.tcp_established_timeout",
        ),
        (
            false,
            "/kubelet/image_gc_low_threshold_percent",
            json!(90),
            "kubelet.image_gc_high_threshold_percent",
        ),
        (
            false,
            "/kubelet/image_gc_high_threshold_percent",
            json!(101),
            "kubelet.image_gc_high_threshold_percent",
        ),
        (
            false,
            "/kubelet/eviction_soft_grace_period",
            Json::Null,
            "kubelet.eviction_soft[\"memory.available\"]",
        ),
        (
            false,
            "/kubelet/eviction_soft_grace_period/nodefs.available",
            json!("1m"),
            "kubelet.eviction_soft_grace_period[\"nodefs.available\"]",
        ),
        (
            false,
            "/kubelet/eviction_soft_grace_period/memory.available",
            json!("90 seconds"),
            "kubelet.eviction_soft_grace_period[\"memory.available\"]",
        ),
        (
            false,
            "/kubelet/system_reserved/gpu",
            json!("1"),
            "kubelet.system_reserved[\"gpu\"]",
        ),
        (
            false,
            "/kubelet/kube_reserved/cpu",
            json!("-1"),
            "kubelet.kube_reserved[\"cpu\"]",
        ),
        (
            false,
            "/kubelet/kube_reserved/memory",
            json!("lots"),
            "kubelet.kube_reserved[\"memory\"]",
        ),
        (
            false,
            "/kubelet/eviction_hard/memory.available",
            json!("101%"),
            "kubelet.eviction_hard[\"memory.available\"]",
        ),
        (
            false,
            "/kubelet/eviction_hard/disk.available",
            json!("10%"),
            "kubelet.eviction_hard[\"disk.available\"]",
        ),
        (false, "/kubelet/max_pods", json!(-1), "kubelet.max_pods"),
        (
            false,
            "/kubelet/max_pods",
            json!(3_000_000_000_i64),
            "kubelet.max_pods",
        ),
        (false, "/ip_prefix_count", json!(1.5), "ip_prefix_count"),
        (
            false,
            "/instance_store_policy",
            json!("RAID1"),
            "instance_store_policy",
        ),
        (
            false,
            "/cpu_options/nested_virtualization",
            json!("on"),
            "cpu_options.nested_virtualization",
        ),
    ]
}

#[test]
fn invalid_inputs_fail_at_their_attribute() {
    let cases = invalid_cases();
    assert!(cases.len() >= 45, "{} cases", cases.len());
    for (alias_base, pointer, value, expected) in cases {
        let mut class = if alias_base { with_alias() } else { detailed() };
        put(&mut class, pointer, value.clone());
        let d = check(&class);
        let paths = error_paths(&d);
        assert!(
            paths.iter().any(|p| p == expected),
            "{pointer} = {value}: expected an error at {expected}, got {paths:?}"
        );
    }
}

#[test]
fn alias_families_and_ami_family() {
    for (alias, family, ok) in [
        ("al2@latest", "AL2", true),
        ("al2@latest", "Custom", true),
        ("bottlerocket@v1.20.0", "Bottlerocket", true),
        ("windows2025@latest", "Windows2025", true),
        ("windows2019@latest", "Windows2022", false),
        ("al2023@latest", "AL2", false),
    ] {
        let mut class = with_alias();
        put(&mut class, "/ami_selector_terms/0/alias", json!(alias));
        put(&mut class, "/ami_family", json!(family));
        let d = check(&class);
        assert_eq!(d.is_empty(), ok, "{alias} with {family}: {d}");
    }
}

/// X1 is stricter than the CRD: one offending term is enough (the CRD's `!self.all` form
/// only rejects a list where every term offends).
#[test]
fn selector_exclusivity_follows_the_crd() {
    // The CRD refuses `id` combined with another field only when every term does so
    // (`!self.all(...)`); one clean term makes the list acceptable to the API server.
    let mut class = detailed();
    put(&mut class, "/subnet_selector_terms/0/tags", json!({"Name": "x"}));
    let d = check(&class);
    assert!(d.is_empty(), "{d}");
    put(
        &mut class,
        "/subnet_selector_terms/1/id",
        json!("subnet-0123456789abcdef1"),
    );
    assert_eq!(
        error_paths(&check(&class)),
        vec!["subnet_selector_terms[0].id", "subnet_selector_terms[1].id"]
    );
}

#[test]
fn unknown_values_are_not_judged() {
    let mut class = detailed();
    put(&mut class, "/role", json!(UNKNOWN));
    put(&mut class, "/ami_family", json!(UNKNOWN));
    put(&mut class, "/ami_selector_terms/0", json!(UNKNOWN));
    put(&mut class, "/subnet_selector_terms/0/id", json!(UNKNOWN));
    put(
        &mut class,
        "/block_device_mappings/1/ebs/snapshot_id",
        json!(UNKNOWN),
    );
    put(&mut class, "/network_interfaces/0/device_index", json!(UNKNOWN));
    put(&mut class, "/kubelet/eviction_soft_grace_period", json!(UNKNOWN));
    put(
        &mut class,
        "/connection_tracking/tcp_established_timeout",
        json!(UNKNOWN),
    );
    put(&mut class, "/placement_group_selector/name", json!(UNKNOWN));
    let d = check(&class);
    assert!(d.is_empty(), "{d}");

    // No alias known yet: ami_family cannot be demanded.
    let mut class = with_alias();
    put(&mut class, "/ami_selector_terms/0/alias", json!(UNKNOWN));
    assert!(check(&class).is_empty());
    let mut class = with_alias();
    put(&mut class, "/ami_selector_terms", json!(UNKNOWN));
    put(&mut class, "/role", json!(UNKNOWN));
    assert!(check(&class).is_empty());
}

#[test]
fn create_plans_the_server_defaults() {
    let planned = plan_create(&EC2_NODE_CLASS, &config(&EC2_NODE_CLASS, &with_alias()));
    let m = planned.get("metadata_options").expect("metadata_options");
    assert_eq!(m.get("http_endpoint"), Some(&Value::string("enabled")));
    assert_eq!(m.get("http_protocol_ipv6"), Some(&Value::string("disabled")));
    assert_eq!(
        m.get("http_put_response_hop_limit"),
        Some(&Value::Number(Number::from_i64(1)))
    );
    assert_eq!(m.get("http_tokens"), Some(&Value::string("required")));
    assert_eq!(planned.get("wait_for_ready"), Some(&Value::Bool(false)));
    assert!(planned.get("status").is_some_and(Value::is_unknown));
    assert_eq!(planned.get("kubelet"), Some(&Value::Null));
    assert!(planned.conforms_to(&EC2_NODE_CLASS.value_type()).is_ok());

    // A partial metadata_options gets the other fields' defaults, as the API server does.
    let mut class = with_alias();
    class["metadata_options"] = json!({"http_put_response_hop_limit": 2});
    let planned = plan_create(&EC2_NODE_CLASS, &config(&EC2_NODE_CLASS, &class));
    let m = planned.get("metadata_options").expect("metadata_options");
    assert_eq!(
        m.get("http_put_response_hop_limit"),
        Some(&Value::Number(Number::from_i64(2)))
    );
    assert_eq!(m.get("http_tokens"), Some(&Value::string("required")));
    assert_eq!(m.get("http_endpoint"), Some(&Value::string("enabled")));
}

#[test]
fn second_plan_is_empty_and_name_replaces() {
    let cfg = config(&EC2_NODE_CLASS, &detailed());
    let mut state = plan_create(&EC2_NODE_CLASS, &cfg);
    if let Value::Object(fields) = &mut state {
        let status = crate::resources::kube::kind::testing::typed(
            EC2_NODE_CLASS
                .attribute("status")
                .and_then(|a| a.nested())
                .map(|(_, n)| n)
                .expect("status"),
            &json!({"instance_profile": "KarpenterNodeInstanceProfile-demo",
                    "subnets": [{"id": "subnet-0123456789abcdef0", "zone": "us-east-1a", "zone_id": "use1-az1"}]}),
        );
        fields.insert("status".into(), status);
    }
    let again = plan(&EC2_NODE_CLASS.attributes, &EC2_NODE_CLASS.blocks, &cfg, &state);
    assert_eq!(again.planned, state);

    let mut renamed = detailed();
    renamed["name"] = json!("gpu-2");
    let p = plan(
        &EC2_NODE_CLASS.attributes,
        &EC2_NODE_CLASS.blocks,
        &config(&EC2_NODE_CLASS, &renamed),
        &state,
    );
    assert_eq!(p.requires_replace, vec![AttributePath::root().attr("name")]);
}

// ----- Karpenter v1.15's kubelet (#50) -----

/// The docs' CEL example and common expressions: clean at plan, and they evaluate over the
/// table.
#[test]
fn the_documented_kubelet_expressions_check_clean_and_evaluate() {
    for kubelet in [
        json!({"max_pods": "((default_enis - 1) * (ips_per_eni - 1)) + 2",
               "kube_reserved": {"cpu": "max(60, vcpus * 30)", "memory": "11 * max_pods + 255"},
               "system_reserved": {"cpu": "max(20, vcpus * 10)", "memory": "max(100, memory_mib / 64)"}}),
        json!({"max_pods": "min(250, ((default_enis - 1) * (ips_per_eni - 1)) * 16 + 2)"}),
        json!({"max_pods": "min(110, max_pods)"}),
    ] {
        let mut class = with_alias();
        put(&mut class, "/kubelet", kubelet.clone());
        let d = check(&class);
        assert!(!d.has_errors(), "{kubelet}: {d}");
        let compiled = kubelet::plan::compiled(None, &config(&EC2_NODE_CLASS, &class)).expect("expressions");
        let evaluation = kubelet::plan::over_the_table(None, &compiled);
        assert!(evaluation.types > 1000, "{}", evaluation.types);
        assert!(evaluation.succeeded(), "{evaluation:?}");
    }
}

/// What Karpenter refuses after the apply is a plan error on the attribute: an expression that
/// does not compile, names an unknown variable, calls max with three arguments, mixes int and
/// double, or goes negative for some type of the table; a reservation neither quantity nor
/// expression.
#[test]
fn kubelet_expressions_karpenter_refuses_fail_at_plan_on_their_attribute() {
    for (pointer, value, expected) in [
        ("/kubelet/max_pods", json!("min(110,"), "kubelet.max_pods"),
        (
            "/kubelet/max_pods",
            json!("undefined_var + 1"),
            "kubelet.max_pods",
        ),
        (
            "/kubelet/max_pods",
            json!("max(vcpus, 8, 16)"),
            "kubelet.max_pods",
        ),
        ("/kubelet/max_pods", json!("vcpus * 1.5"), "kubelet.max_pods"),
        ("/kubelet/max_pods", json!(-1), "kubelet.max_pods"),
        (
            "/kubelet/kube_reserved/cpu",
            json!("0 - 1"),
            "kubelet.kube_reserved[\"cpu\"]",
        ),
        (
            "/kubelet/kube_reserved/cpu",
            json!("vcpus * 100 - 400"),
            "kubelet.kube_reserved[\"cpu\"]",
        ),
        (
            "/kubelet/system_reserved/memory",
            json!("1048576 / (vcpus - vcpus)"),
            "kubelet.system_reserved[\"memory\"]",
        ),
        (
            "/kubelet/kube_reserved/memory",
            json!("lots"),
            "kubelet.kube_reserved[\"memory\"]",
        ),
    ] {
        let mut class = with_alias();
        put(&mut class, pointer, value.clone());
        let paths = error_paths(&check(&class));
        assert!(
            paths.iter().any(|p| p == expected),
            "{pointer} = {value}: {paths:?}"
        );
    }
}

/// Karpenter's structural rules come before any CEL (InvalidKubeletConfiguration): a
/// reservation that starts with `-` is refused, an expression too (one error, which says how to
/// write it; it is not evaluated), and the reservable resources are cpu, memory,
/// ephemeral-storage and pid.
#[test]
fn reservations_starting_with_minus_or_of_other_resources_are_refused_before_cel() {
    for (pointer, value, said) in [
        ("/kubelet/kube_reserved/cpu", "-100m", "is negative"),
        ("/kubelet/kube_reserved/cpu", "-1 + vcpus", "starts with `-`"),
        ("/kubelet/system_reserved/memory", "-vcpus", "starts with `-`"),
        ("/kubelet/system_reserved/memory", "-x", "starts with `-`"),
    ] {
        let mut class = with_alias();
        put(&mut class, pointer, json!(value));
        let d = check(&class);
        let errors: Vec<String> = d
            .iter()
            .filter(|d| d.severity == crate::terraform::framework::Severity::Error)
            .map(|d| d.detail.clone())
            .collect();
        assert_eq!(errors.len(), 1, "{value}: {d}");
        assert!(errors[0].contains(said), "{value}: {d}");
    }
    for key in ["gpu", "nvidia.com/gpu", "hugepages-2Mi"] {
        let mut class = with_alias();
        put(
            &mut class,
            &format!("/kubelet/kube_reserved/{}", key.replace('/', "~")),
            json!("vcpus * 10"),
        );
        assert!(check(&class).has_errors(), "{key}");
    }
}

/// A string max_pods that is a plain number works only with Karpenter's NodeClassCEL gate: a
/// warning, which says how to write the number.
#[test]
fn a_quoted_max_pods_warns_that_it_is_an_expression() {
    let mut class = with_alias();
    put(&mut class, "/kubelet/max_pods", json!("110"));
    let d = check(&class);
    assert!(!d.has_errors(), "{d}");
    assert!(d.to_string().contains("max_pods = 110"), "{d}");
}

/// The AMI families other than AL2023 and Custom apply only the 12 fields Karpenter reads.
#[test]
fn upstream_kubelet_fields_need_al2023_or_custom() {
    for (alias, family, ok) in [
        ("al2023@latest", None, true),
        ("bottlerocket@latest", None, false),
        ("al2@latest", None, false),
        ("windows2022@latest", None, false),
        ("al2023@latest", Some("Custom"), true),
    ] {
        let mut class = with_alias();
        put(&mut class, "/ami_selector_terms/0/alias", json!(alias));
        if let Some(f) = family {
            put(&mut class, "/ami_family", json!(f));
        }
        put(&mut class, "/kubelet/registry_pull_qps", json!(10));
        let paths = error_paths(&check(&class));
        assert_eq!(paths.is_empty(), ok, "{alias} {family:?}: {paths:?}");
        if !ok {
            assert_eq!(paths, ["kubelet.registry_pull_qps"], "{alias}");
        }
    }
    // An unknown ami_family may still be Custom (which applies anything): nothing to judge yet.
    let mut class = with_alias();
    put(&mut class, "/ami_selector_terms/0/alias", json!("al2@latest"));
    put(&mut class, "/ami_family", json!(UNKNOWN));
    put(&mut class, "/kubelet/registry_pull_qps", json!(10));
    assert!(check(&class).is_empty());
    let mut class = with_alias();
    put(
        &mut class,
        "/ami_selector_terms/0/alias",
        json!("bottlerocket@latest"),
    );
    put(&mut class, "/kubelet/pods_per_core", json!(2));
    let d = check(&class);
    assert!(
        !d.has_errors()
            && d.to_string()
                .contains("Bottlerocket does not apply pods_per_core"),
        "{d}"
    );
}

/// register_with_taints is Karpenter's: any value is refused, with its reason.
#[test]
fn register_with_taints_is_refused_with_karpenters_reason() {
    let mut class = with_alias();
    put(
        &mut class,
        "/kubelet/register_with_taints",
        json!([{"key": "a", "effect": "NoSchedule"}]),
    );
    let d = check(&class);
    assert_eq!(error_paths(&d), ["kubelet.register_with_taints"]);
    assert!(
        d.to_string()
            .contains("Karpenter sets it from the node pool's taints"),
        "{d}"
    );
}

/// Stored state of 0.1.x (a number max_pods) reads back in the dynamic form, the same value.
#[test]
fn a_stored_number_max_pods_becomes_a_dynamic_number() {
    let stored = json!({"name": "default", "kubelet": {"max_pods": 110, "pods_per_core": 2}});
    let upgraded = max_pods_to_dynamic(stored.as_object().cloned().expect("object")).expect("upgrades");
    assert_eq!(
        upgraded["kubelet"]["max_pods"],
        json!({"value": 110, "type": "number"})
    );
    assert_eq!(upgraded["kubelet"]["pods_per_core"], json!(2));
    let none = max_pods_to_dynamic(json!({"kubelet": null}).as_object().cloned().expect("object"))
        .expect("upgrades");
    assert_eq!(none["kubelet"], Json::Null);
}
