//! A table of invalid `karpenter_node_pool` / `karpenter_ec2_node_class` configurations, all
//! planned at once through the real terraform CLI: each must fail at plan with a diagnostic on
//! its resource naming the attribute path, and no request may reach the cluster.

use acceptance_tests::Workdir;
use acceptance_tests::kube::Cluster;

const REQ_SPOT: &str = r#"{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }"#;

/// A node pool body: `reqs` is the requirements list, `spec` extra template.spec attributes,
/// `top` extra top-level attributes.
fn pool(reqs: &str, spec: &str, top: &str) -> String {
    format!(
        "  template = {{\n    spec = {{\n      node_class_ref = {{ name = \"default\" }}\n      requirements = [{reqs}]\n      {spec}\n    }}\n  }}\n  {top}\n"
    )
}

fn req(key: &str, op: &str, values: &str) -> String {
    format!("{{ key = \"{key}\", operator = \"{op}\", values = {values} }}")
}

/// A node class body with `extra` attributes; `ami` replaces the AMI terms, `role` the role line.
fn class(role: &str, ami: &str, extra: &str) -> String {
    format!(
        "  {role}\n  ami_selector_terms = {ami}\n  subnet_selector_terms = [{{ tags = {{ \"karpenter.sh/discovery\" = \"demo\" }} }}]\n  security_group_selector_terms = [{{ tags = {{ \"karpenter.sh/discovery\" = \"demo\" }} }}]\n  {extra}\n"
    )
}

const ROLE: &str = "role = \"KarpenterNodeRole-demo\"";
const AL2023: &str = "[{ alias = \"al2023@latest\" }]";

/// (resource type, body without `name`, the attribute path the error must name)
fn cases() -> Vec<(&'static str, String, &'static str)> {
    let np = "karpenter_node_pool";
    let nc = "karpenter_ec2_node_class";
    vec![
        (
            np,
            pool(&req("kubernetes.io/arch", "Maybe", "[\"amd64\"]"), "", ""),
            "template.spec.requirements[0].operator",
        ),
        (
            np,
            pool(&req("kubernetes.io/arch", "In", "[]"), "", ""),
            "template.spec.requirements[0].values",
        ),
        (
            np,
            pool(
                &req("karpenter.k8s.aws/instance-cpu", "Gt", "[\"2\", \"4\"]"),
                "",
                "",
            ),
            "template.spec.requirements[0].values",
        ),
        (
            np,
            pool(&req("karpenter.k8s.aws/instance-cpu", "Gt", "[\"many\"]"), "", ""),
            "template.spec.requirements[0].values[0]",
        ),
        (
            np,
            pool(&req("karpenter.k8s.aws/instance-cpu", "Lt", "[\"-1\"]"), "", ""),
            "template.spec.requirements[0].values[0]",
        ),
        (
            np,
            pool(&req("karpenter.sh/nodepool", "In", "[\"x\"]"), "", ""),
            "template.spec.requirements[0].key",
        ),
        (
            np,
            pool(&req("kubernetes.io/hostname", "In", "[\"x\"]"), "", ""),
            "template.spec.requirements[0].key",
        ),
        (
            np,
            pool(&req("karpenter.sh/unknown", "In", "[\"x\"]"), "", ""),
            "template.spec.requirements[0].key",
        ),
        (
            np,
            pool(&req("karpenter.k8s.aws/not-a-label", "In", "[\"x\"]"), "", ""),
            "template.spec.requirements[0].key",
        ),
        (
            np,
            pool(
                &req("karpenter.sh/capacity-type", "In", "[\"preemptible\"]"),
                "",
                "",
            ),
            "template.spec.requirements[0].values[0]",
        ),
        (
            np,
            pool(
                "{ key = \"kubernetes.io/arch\", operator = \"In\", values = [\"amd64\"], min_values = 0 }",
                "",
                "",
            ),
            "template.spec.requirements[0].min_values",
        ),
        (
            np,
            pool(
                "{ key = \"kubernetes.io/arch\", operator = \"In\", values = [\"amd64\"], min_values = 2 }",
                "",
                "",
            ),
            "template.spec.requirements[0].values",
        ),
        (
            np,
            pool(&req("bad key!", "In", "[\"x\"]"), "", ""),
            "template.spec.requirements[0].key",
        ),
        (
            np,
            pool(REQ_SPOT, "expire_after = \"30d\"", ""),
            "template.spec.expire_after",
        ),
        (
            np,
            pool(REQ_SPOT, "termination_grace_period = \"Never\"", ""),
            "template.spec.termination_grace_period",
        ),
        (
            np,
            pool(
                REQ_SPOT,
                "taints = [{ key = \"dedicated\", effect = \"Sometimes\" }]",
                "",
            ),
            "template.spec.taints[0].effect",
        ),
        (
            np,
            pool(
                REQ_SPOT,
                "startup_taints = [{ key = \"\", effect = \"NoSchedule\" }]",
                "",
            ),
            "template.spec.startup_taints[0].key",
        ),
        (
            np,
            pool(
                REQ_SPOT,
                "node_class_ref = { name = \"default\", group = \"a/b\" }",
                "",
            ),
            "template.spec.node_class_ref.group",
        ),
        (
            np,
            pool(
                REQ_SPOT,
                "",
                "disruption = { consolidate_after = \"1m\", consolidation_policy = \"Always\" }",
            ),
            "disruption.consolidation_policy",
        ),
        (
            np,
            pool(REQ_SPOT, "", "disruption = { consolidate_after = \"soon\" }"),
            "disruption.consolidate_after",
        ),
        (
            np,
            pool(
                REQ_SPOT,
                "",
                "disruption = { consolidate_after = \"0s\", budgets = [{ nodes = \"110%\" }] }",
            ),
            "disruption.budgets[0].nodes",
        ),
        (
            np,
            pool(
                REQ_SPOT,
                "",
                "disruption = { consolidate_after = \"0s\", budgets = [{ nodes = \"1\", schedule = \"@daily\" }] }",
            ),
            "disruption.budgets[0]",
        ),
        (
            np,
            pool(
                REQ_SPOT,
                "",
                "disruption = { consolidate_after = \"0s\", budgets = [{ nodes = \"1\", schedule = \"every day\", duration = \"1h\" }] }",
            ),
            "disruption.budgets[0].schedule",
        ),
        (
            np,
            pool(
                REQ_SPOT,
                "",
                "disruption = { consolidate_after = \"0s\", budgets = [{ nodes = \"1\", reasons = [\"Bored\"] }] }",
            ),
            "disruption.budgets[0].reasons",
        ),
        (np, pool(REQ_SPOT, "", "weight = 0"), "weight"),
        (np, pool(REQ_SPOT, "", "weight = 101"), "weight"),
        (np, pool(REQ_SPOT, "", "limits = { cpu = \"lots\" }"), "limits"),
        (np, pool(REQ_SPOT, "", "replicas = 3\n  weight = 10"), "weight"),
        (
            np,
            pool(REQ_SPOT, "", "replicas = 3\n  limits = { cpu = \"10\" }"),
            "limits",
        ),
        (
            np,
            format!(
                "  metadata = {{ labels = {{ \"bad key!\" = \"x\" }} }}\n{}",
                pool(REQ_SPOT, "", "")
            ),
            "metadata.labels",
        ),
        (
            nc,
            class("role = \"r\"\n  instance_profile = \"p\"", AL2023, ""),
            "instance_profile",
        ),
        (nc, class("", AL2023, ""), "role"),
        (nc, class(ROLE, AL2023, "ami_family = \"Ubuntu\""), "ami_family"),
        (
            nc,
            class(ROLE, "[{ alias = \"ubuntu@latest\" }]", ""),
            "ami_selector_terms[0].alias",
        ),
        (
            nc,
            class(ROLE, "[{ alias = \"windows2022@v20240101\" }]", ""),
            "ami_selector_terms[0].alias",
        ),
        (
            nc,
            class(ROLE, "[{ alias = \"al2023@latest\", id = \"ami-123\" }]", ""),
            "ami_selector_terms[0]",
        ),
        (
            nc,
            class(ROLE, "[{ alias = \"al2023@latest\" }, { id = \"ami-123\" }]", ""),
            "ami_selector_terms",
        ),
        (
            nc,
            class(ROLE, "[{}]", "ami_family = \"AL2023\""),
            "ami_selector_terms[0]",
        ),
        (nc, class(ROLE, AL2023, "ami_family = \"AL2\""), "ami_family"),
        (nc, class(ROLE, "[{ id = \"ami-123\" }]", ""), "ami_family"),
        (
            nc,
            class(ROLE, "[]", "ami_family = \"AL2023\""),
            "ami_selector_terms",
        ),
        (
            nc,
            format!(
                "{}  subnet_selector_terms = [{{ id = \"vpc-123\" }}]\n",
                class(ROLE, AL2023, "").replace(
                    "  subnet_selector_terms = [{ tags = { \"karpenter.sh/discovery\" = \"demo\" } }]\n",
                    ""
                )
            ),
            "subnet_selector_terms[0].id",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "tags = { \"kubernetes.io/cluster/demo\" = \"owned\" }",
            ),
            "tags",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "block_device_mappings = [{ device_name = \"/dev/xvda\", root_volume = true, ebs = { volume_size = \"20Gi\" } }, { device_name = \"/dev/xvdb\", root_volume = true, ebs = { volume_size = \"20Gi\" } }]",
            ),
            "block_device_mappings[1].root_volume",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "block_device_mappings = [{ device_name = \"/dev/xvda\", ebs = { volume_size = \"20Gi\", volume_type = \"fast\" } }]",
            ),
            "block_device_mappings[0].ebs.volume_type",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "block_device_mappings = [{ device_name = \"/dev/xvda\", ebs = { volume_size = \"1PB\" } }]",
            ),
            "block_device_mappings[0].ebs.volume_size",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "block_device_mappings = [{ device_name = \"/dev/xvda\", ebs = { encrypted = true } }]",
            ),
            "block_device_mappings[0].ebs",
        ),
        (
            nc,
            class(ROLE, AL2023, "metadata_options = { http_tokens = \"sometimes\" }"),
            "metadata_options.http_tokens",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "metadata_options = { http_put_response_hop_limit = 65 }",
            ),
            "metadata_options.http_put_response_hop_limit",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "kubelet = { image_gc_high_threshold_percent = 50, image_gc_low_threshold_percent = 60 }",
            ),
            "kubelet.image_gc_high_threshold_percent",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "kubelet = { eviction_soft = { \"memory.available\" = \"5%\" } }",
            ),
            "kubelet.eviction_soft",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "placement_group_selector = { name = \"pg\", id = \"pg-123\" }",
            ),
            "placement_group_selector.id",
        ),
        (
            nc,
            class(ROLE, AL2023, "instance_store_policy = \"RAID5\""),
            "instance_store_policy",
        ),
        (
            nc,
            class(
                ROLE,
                AL2023,
                "network_interfaces = [{ network_card_index = 1, device_index = 1, interface_type = \"efa-only\" }]",
            ),
            "network_interfaces",
        ),
        (
            nc,
            class(ROLE, AL2023, "connection_tracking = { udp_timeout = 5 }"),
            "connection_tracking.udp_timeout",
        ),
    ]
}

/// The diagnostics terraform printed, one string each.
fn diagnostics(output: &str) -> Vec<String> {
    output.split("Error: ").skip(1).map(str::to_string).collect()
}

#[test]
fn every_invalid_input_fails_at_plan_on_its_attribute_and_nothing_reaches_the_cluster() {
    let cases = cases();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let cluster = Cluster::with_v1_crds();
    cluster.server.clear_request_log();
    let (missing, output) = plan_cases(&cluster, &cases);
    assert!(
        missing.is_empty(),
        "{} cases without their diagnostic:\n{}\n\nterraform said:\n{output}",
        missing.len(),
        missing.join("\n")
    );
    assert!(
        cluster.server.request_log().is_empty(),
        "plan-time validation contacted the cluster: {:?}",
        cluster.server.request_log()
    );
}

const NT_OK: &str = "  subnet_selector = { \"karpenter.sh/discovery\" = \"demo\" }\n  security_group_selector = { \"karpenter.sh/discovery\" = \"demo\" }\n";

/// (resource type, body without `name`, path) for the legacy kinds' webhook-era rules.
fn legacy_cases() -> Vec<(&'static str, String, &'static str)> {
    let p = "karpenter_provisioner";
    let t = "karpenter_node_template";
    let r = |key: &str, op: &str, values: &str| format!("  requirements = [{}]\n", req(key, op, values));
    vec![
        (p, "  labels = { \"karpenter.sh/provisioner-name\" = \"x\" }\n".into(), "labels"),
        (p, "  labels = { \"kubernetes.io/hostname\" = \"x\" }\n".into(), "labels"),
        (p, r("kubernetes.io/arch", "Gte", "[\"1\"]"), "requirements[0].operator"),
        (p, r("kubernetes.io/arch", "In", "[]"), "requirements[0].values"),
        (p, r("karpenter.k8s.aws/instance-cpu", "Gt", "[\"1\", \"2\"]"), "requirements[0].values"),
        (p, r("karpenter.k8s.aws/instance-cpu", "Lt", "[\"many\"]"), "requirements[0].values[0]"),
        (p, r("karpenter.sh/capacity-type", "In", "[\"preemptible\"]"), "requirements[0].values[0]"),
        (p, r("kubernetes.io/hostname", "In", "[\"a\"]"), "requirements[0].key"),
        (p, "  taints = [{ key = \"dedicated\", effect = \"Sometimes\" }]\n".into(), "taints[0].effect"),
        (p, "  startup_taints = [{ key = \"\", effect = \"NoSchedule\" }]\n".into(), "startup_taints[0].key"),
        (p, "  provider_ref = { name = \"\" }\n".into(), "provider_ref.name"),
        (p, "  provider_json = \"not json\"\n".into(), "provider_json"),
        (p, "  ttl_seconds_after_empty = -1\n".into(), "ttl_seconds_after_empty"),
        (p, "  ttl_seconds_until_expired = -5\n".into(), "ttl_seconds_until_expired"),
        (p, "  consolidation = { enabled = true }\n  ttl_seconds_after_empty = 30\n".into(), "ttl_seconds_after_empty"),
        (p, "  weight = 0\n".into(), "weight"),
        (p, "  limits = { resources = { cpu = \"lots\" } }\n".into(), "limits.resources"),
        (p, "  kubelet_configuration = { image_gc_high_threshold_percent = 10, image_gc_low_threshold_percent = 20 }\n".into(), "kubelet_configuration.image_gc_high_threshold_percent"),
        (p, "  kubelet_configuration = { max_pods = -1 }\n".into(), "kubelet_configuration.max_pods"),
        (t, "  security_group_selector = { \"karpenter.sh/discovery\" = \"demo\" }\n".into(), "subnet_selector"),
        (t, "  subnet_selector = { \"karpenter.sh/discovery\" = \"demo\" }\n".into(), "security_group_selector"),
        (t, format!("{NT_OK}  ami_family = \"Ubuntu2\"\n"), "ami_family"),
        (t, format!("{NT_OK}  tags = {{ \"kubernetes.io/cluster/demo\" = \"owned\" }}\n"), "tags"),
        (t, format!("{NT_OK}  metadata_options = {{ http_tokens = \"maybe\" }}\n"), "metadata_options.http_tokens"),
        (t, format!("{NT_OK}  metadata_options = {{ http_put_response_hop_limit = 0 }}\n"), "metadata_options.http_put_response_hop_limit"),
        (t, format!("{NT_OK}  block_device_mappings = [{{ device_name = \"/dev/xvda\", ebs = {{ volume_size = \"20Gi\", volume_type = \"fast\" }} }}]\n"), "block_device_mappings[0].ebs.volume_type"),
        (t, format!("{NT_OK}  block_device_mappings = [{{ device_name = \"/dev/xvda\", ebs = {{ volume_size = \"100TB\" }} }}]\n"), "block_device_mappings[0].ebs.volume_size"),
        (t, "  subnet_selector = { \"karpenter.sh/discovery\" = \"demo\" }\n  launch_template = \"lt\"\n  user_data = \"#!/bin/sh\"\n".into(), "user_data"),
        (t, "  subnet_selector = { \"karpenter.sh/discovery\" = \"demo\" }\n  launch_template = \"lt\"\n  metadata_options = { http_tokens = \"required\" }\n".into(), "metadata_options"),
        (t, "  subnet_selector = { \"aws-ids\" = \"subnet-1\", team = \"x\" }\n  security_group_selector = { \"karpenter.sh/discovery\" = \"demo\" }\n".into(), "subnet_selector"),
    ]
}

/// Plans all `cases` as one configuration against `cluster`; returns the cases whose
/// diagnostic (on the resource, naming the path) is missing, and terraform's output.
fn plan_cases(cluster: &Cluster, cases: &[(&str, String, &str)]) -> (Vec<String>, String) {
    let mut config = cluster.provider_block();
    for (i, (ty, body, _)) in cases.iter().enumerate() {
        config.push_str(&format!(
            "resource \"{ty}\" \"case_{i}\" {{\n  name = \"case-{i}\"\n{body}}}\n\n"
        ));
    }
    let work = Workdir::new(&config);
    let run = work.plan().failed();
    let diags = diagnostics(&run.stderr);
    let mut missing = Vec::new();
    for (i, (ty, _, path)) in cases.iter().enumerate() {
        let address = format!("with {ty}.case_{i},");
        let at_path = regex::Regex::new(&format!(r"(?m)^{}[:.\[]", regex::escape(path)));
        if !diags
            .iter()
            .any(|d| d.contains(&address) && at_path.as_ref().is_ok_and(|r| r.is_match(d)))
        {
            missing.push(format!("case_{i} ({ty}) expected an error at {path}"));
        }
    }
    (missing, run.stderr)
}

#[test]
fn every_invalid_legacy_input_fails_at_plan_on_its_attribute() {
    let cases = legacy_cases();
    assert!(cases.len() >= 25, "{} cases", cases.len());
    let cluster = Cluster::start(acceptance_tests::kube::Config {
        crd_dirs: vec![acceptance_tests::kube::TestServer::shared_crds_dir("v1alpha5")],
        ..Default::default()
    });
    cluster.server.clear_request_log();
    let (missing, output) = plan_cases(&cluster, &cases);
    assert!(
        missing.is_empty(),
        "{} cases without their diagnostic:\n{}\n\nterraform said:\n{output}",
        missing.len(),
        missing.join("\n")
    );
    assert!(
        cluster.server.request_log().is_empty(),
        "plan-time validation contacted the cluster"
    );
}
