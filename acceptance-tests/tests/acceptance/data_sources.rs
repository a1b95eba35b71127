//! The read-only data sources `karpenter_ec2_node_class`, `karpenter_node_pool` and
//! `karpenter_node_claims` through the real terraform CLI, reading the status the simulated
//! Karpenter wrote (resolved subnets, security groups, AMIs and instance profile; pool node
//! counts; launched NodeClaims); and what a plan says when they cannot be read.

use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::{Workdir, repo_file};
use serde_json::Value;

fn cluster() -> Cluster {
    Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller: ControllerConfig {
            node_claim_status: true,
            ..ControllerConfig::karpenter()
        },
        ..Config::default()
    })
}

fn data_source_examples() -> String {
    [
        "karpenter_ec2_node_class",
        "karpenter_node_pool",
        "karpenter_node_claims",
    ]
    .iter()
    .map(|t| repo_file(&format!("examples/data-sources/{t}/data-source.tf")))
    .collect::<Vec<_>>()
    .join("\n")
}

#[test]
fn data_sources_read_what_karpenter_resolved() {
    let cluster = cluster();
    let creator = Workdir::new(&format!(
        "{}\n{}\n{}",
        cluster.provider_block(),
        repo_file("examples/resources/karpenter_ec2_node_class/resource.tf"),
        repo_file("examples/resources/karpenter_node_pool/resource.tf")
    ));
    creator.apply().ok();
    cluster.eventually("the pool's status", || {
        cluster
            .node_pool("default")
            .is_some_and(|p| p["status"]["nodes"] == 1)
    });

    // The simulated Karpenter launches the NodeClaim right after creating it; read until the
    // launch is visible (bounded).
    let reader = Workdir::new(&format!(
        "{}\n{}",
        cluster.provider_block(),
        data_source_examples()
    ));
    let mut launched = false;
    for _ in 0..10 {
        reader.apply().ok();
        let out = reader.outputs();
        launched = out["default_pool_instances"]["value"]
            .as_object()
            .and_then(|m| m.values().next())
            .is_some_and(|c| c["provider_id"].is_string());
        if launched {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    assert!(launched, "the NodeClaim never showed as launched");
    let out = reader.outputs();
    let value = |name: &str| -> Value { out[name]["value"].clone() };
    assert_eq!(
        value("node_subnet_ids"),
        serde_json::json!(["subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"])
    );
    assert_eq!(
        value("node_security_group_ids"),
        serde_json::json!(["sg-0a1b2c3d4e5f60001"])
    );
    assert_eq!(
        value("node_ami_ids"),
        serde_json::json!(["ami-0a1b2c3d4e5f60001"])
    );
    assert!(
        value("node_instance_profile")
            .as_str()
            .is_some_and(|p| !p.is_empty()),
        "{out}"
    );
    assert_eq!(value("default_pool_nodes"), 1);
    assert_eq!(value("default_pool_ready"), "True");
    let instances = value("default_pool_instances");
    let instances = instances.as_object().expect("map of NodeClaims");
    assert_eq!(instances.len(), 1, "{instances:?}");
    let claim = instances.values().next().expect("one");
    assert_eq!(claim["instance_type"], "m5.large");
    assert_eq!(claim["capacity_type"], "on-demand");
    assert_eq!(claim["zone"], "us-east-1a");
    assert!(
        claim["provider_id"]
            .as_str()
            .is_some_and(|p| p.starts_with("aws:///us-east-1a/i-")),
        "{claim}"
    );
    assert!(
        claim["node"]
            .as_str()
            .is_some_and(|n| n.ends_with(".ec2.internal")),
        "{claim}"
    );

    // The spec is there too, under the resource's attribute names.
    let state = reader.state();
    let resources = state["values"]["root_module"]["resources"]
        .as_array()
        .expect("resources");
    let class = resources
        .iter()
        .find(|r| r["address"] == "data.karpenter_ec2_node_class.default")
        .expect("data source in state");
    assert_eq!(class["values"]["ami_selector_terms"][0]["alias"], "al2023@latest");
    assert!(reader.plan_is_empty(), "{}", reader.plan().output());
}

#[test]
fn a_missing_object_and_an_unknown_provider_configuration_are_errors_that_say_why() {
    let cluster = cluster();
    let work = Workdir::new(&format!(
        "{}\ndata \"karpenter_node_pool\" \"x\" {{\n  name = \"absent\"\n}}\n",
        cluster.provider_block()
    ));
    let run = work.plan().failed();
    assert!(
        run.output().contains("No NodePool named \"absent\""),
        "{}",
        run.output()
    );

    let unknown = Workdir::new(
        r#"
resource "terraform_data" "cluster" {
  input = { host = "https://cluster.example:6443", token = "t" }
}
provider "karpenter" {
  kubernetes {
    host  = terraform_data.cluster.output.host
    token = terraform_data.cluster.output.token
  }
}
data "karpenter_node_claims" "all" {}
"#,
    );
    let run = unknown.plan().failed();
    let text = run.output().replace('\n', " ");
    assert!(
        text.contains("Cannot read the NodeClaims yet"),
        "{}",
        run.output()
    );
    assert!(text.contains("-target"), "{}", run.output());
}
