//! `karpenter_node_pool` and `karpenter_ec2_node_class` through the real terraform CLI against
//! the Kubernetes API test server (the real Karpenter v1.14.1 CRDs, a simulated controller).

use std::time::Duration;

use acceptance_tests::kube::{Cluster, FaultKind, FaultSpec};
use acceptance_tests::{Workdir, repo_file};
use serde_json::json;

fn examples() -> String {
    format!(
        "{}\n{}",
        repo_file("examples/resources/karpenter_ec2_node_class/resource.tf"),
        repo_file("examples/resources/karpenter_node_pool/resource.tf")
    )
}

#[test]
fn examples_apply_replan_empty_and_destroy() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), examples()));
    work.apply().ok();

    let pool = cluster.node_pool("default").expect("NodePool on the server");
    let spec = &pool["spec"];
    assert_eq!(spec["limits"], json!({"cpu": "1000"}));
    assert_eq!(spec["template"]["spec"]["nodeClassRef"], json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}));
    assert_eq!(spec["template"]["spec"]["requirements"][2], json!({"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]}));
    assert_eq!(spec["disruption"]["budgets"][1], json!({"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}));
    assert_eq!(pool["metadata"]["managedFields"][0]["manager"], "terraform-provider-karpenter");

    let class = cluster.node_class("default").expect("EC2NodeClass on the server");
    assert_eq!(class["spec"]["amiSelectorTerms"], json!([{"alias": "al2023@latest"}]));
    assert_eq!(class["spec"]["metadataOptions"]["httpTokens"], "required", "server default, planned by us too");

    // wait_for_ready: the class was Ready when apply returned, and status is in state.
    let state = work.state();
    let resources = state["values"]["root_module"]["resources"].as_array().expect("resources");
    let class_state = resources.iter().find(|r| r["type"] == "karpenter_ec2_node_class").expect("class in state");
    let conditions = class_state["values"]["status"]["conditions"].as_array().expect("status conditions");
    assert!(conditions.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"), "{conditions:?}");

    assert!(work.plan_is_empty(), "second plan must be empty:\n{}", work.plan().output());
    work.destroy().ok();
    assert!(cluster.node_pool("default").is_none());
    assert!(cluster.node_class("default").is_none());
}
