//! `examples/quick-start` applies against the local test environment (kube-testserver + moto),
//! re-plans empty and destroys: the stack the README's first command runs.

use acceptance_tests::kube::Cluster;
use acceptance_tests::moto::Moto;
use acceptance_tests::{Workdir, repo_file};

#[test]
fn quick_start_applies_replans_empty_and_destroys() {
    let cluster = Cluster::with_v1_crds();
    let moto = Moto::start();
    let mut work = Workdir::new(&repo_file("examples/quick-start/main.tf"));
    moto.configure(&mut work);
    work.write(
        "local.auto.tfvars",
        &format!(
            "kubeconfig_path = \"{}\"\naws_endpoint = \"{}\"\n",
            cluster.server.kubeconfig_path().display(),
            moto.endpoint()
        ),
    );
    work.apply().ok();
    let outputs = work.outputs();
    assert_eq!(outputs["node_class_ready"]["value"], serde_json::json!(["True"]));
    assert_eq!(
        outputs["helm_values"]["value"]["settings.interruptionQueue"],
        "quick-start"
    );
    assert!(cluster.node_pool("default").is_some() && cluster.node_class("default").is_some());
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
    assert!(cluster.node_pool("default").is_none() && cluster.node_class("default").is_none());
}
