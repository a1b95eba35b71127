//! `examples/provider/provider.tf`, applied as written: its `exec {}` block runs `aws eks
//! get-token`, so the test puts a stand-in `aws` command on `PATH` that answers with an
//! ExecCredential for the test server, and feeds the example's variables (endpoint, base64 CA
//! data) the way an EKS module's outputs would. The resource examples then apply through it.

use std::os::unix::fs::PermissionsExt;

use acceptance_tests::kube::Cluster;
use acceptance_tests::{Workdir, repo_file};
use base64::Engine;

#[test]
fn the_provider_example_configures_exec_auth_and_applies_the_resource_examples() {
    let cluster = Cluster::with_v1_crds();
    let config = format!(
        "{}\n{}\n{}",
        repo_file("examples/provider/provider.tf"),
        repo_file("examples/resources/karpenter_ec2_node_class/resource.tf"),
        repo_file("examples/resources/karpenter_node_pool/resource.tf"),
    );
    let mut work = Workdir::new(&config);

    // The stand-in `aws` refuses any other command line, so the example's args are checked too.
    let bin = work.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let calls = work.path().join("aws-calls.log");
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{calls}'\n\
         [ \"$*\" = 'eks get-token --cluster-name demo' ] || {{ echo \"unexpected: $*\" >&2; exit 1; }}\n\
         printf '%s' '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\"}}}}'\n",
        calls = calls.display(),
        token = cluster.server.token(),
    );
    let aws = bin.join("aws");
    std::fs::write(&aws, script).expect("write aws");
    std::fs::set_permissions(&aws, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let ca_data = base64::engine::general_purpose::STANDARD.encode(cluster.server.ca_pem());
    work.env("PATH", &path)
        .env("TF_VAR_cluster_endpoint", &cluster.server.base_url())
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
    let logged = std::fs::read_to_string(&calls).expect("the exec plugin ran");
    assert!(logged.contains("eks get-token --cluster-name demo"), "{logged}");
    assert!(work.plan_is_empty(), "a refresh through exec auth finds no drift");
    work.destroy().ok();
    assert!(
        cluster.node_pool("default").is_none(),
        "destroy removed the node pool"
    );
}
