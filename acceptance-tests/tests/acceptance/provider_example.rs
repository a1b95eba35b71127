//! `examples/provider/provider.tf`, applied as written: its `eks {}` block makes the EKS bearer
//! token itself from the AWS credentials (dummy ones here, with no AWS configuration of the
//! machine's), which the test server, in EKS-token mode, checks for the shape `aws eks
//! get-token` gives it; the test feeds the example's variables (endpoint, base64 CA data) the
//! way an EKS module's outputs would. The configuration has no other credential, so every
//! request the server accepts carried the provider's EKS token. The resource examples then apply
//! through it. (The `exec {}` way is tested by `secrets.rs`.)

use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::{Workdir, moto, repo_file};
use base64::Engine;

#[test]
fn the_provider_example_configures_eks_auth_and_applies_the_resource_examples() {
    let cluster = Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller: ControllerConfig::karpenter(),
        eks_tokens: true,
        ..Config::default()
    });
    let example = repo_file("examples/provider/provider.tf");
    assert!(
        example.contains("eks {") && !example.contains("exec {"),
        "the provider example authenticates with eks {{}}:\n{example}"
    );
    let config = format!(
        "{example}\n{}\n{}",
        repo_file("examples/resources/karpenter_ec2_node_class/resource.tf"),
        repo_file("examples/resources/karpenter_node_pool/resource.tf"),
    );
    let mut work = Workdir::new(&config);
    moto::configure_env(&mut work);
    let ca_data = base64::engine::general_purpose::STANDARD.encode(cluster.server.ca_pem());
    work.env("TF_VAR_cluster_endpoint", &cluster.server.base_url())
        .env("TF_VAR_cluster_certificate_authority_data", &ca_data);

    work.apply().ok();
    assert!(
        cluster.node_pool("default").is_some(),
        "the node pool example was created"
    );
    assert!(
        cluster.node_class("default").is_some(),
        "the node class example was created"
    );
    assert!(work.plan_is_empty(), "a refresh through EKS auth finds no drift");
    work.destroy().ok();
    assert!(
        cluster.node_pool("default").is_none(),
        "destroy removed the node pool"
    );
}
