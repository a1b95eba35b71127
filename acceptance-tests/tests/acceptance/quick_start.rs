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

/// The README's first command itself: `scripts/quickstart.sh` builds the provider and the local
/// environment, installs the provider into a filesystem mirror (a temporary one here), and runs
/// the quick-start with `terraform init` / `apply` / `destroy` from that mirror.
#[test]
fn quickstart_script_installs_the_provider_and_runs_the_quick_start() {
    let mirror = tempfile::tempdir().expect("temp dir");
    let out = std::process::Command::new("bash")
        .arg(acceptance_tests::workspace_root().join("scripts/quickstart.sh"))
        .env("MIRROR", mirror.path())
        .env_remove("TF_CLI_CONFIG_FILE")
        .output()
        .expect("run scripts/quickstart.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "quickstart.sh failed:\n{stdout}\n{stderr}");
    for step in [
        "== installed into",
        "== terraform apply",
        "Apply complete!",
        "== quick-start done",
    ] {
        assert!(
            stdout.contains(step),
            "no {step:?} in the output:\n{stdout}\n{stderr}"
        );
    }
    let installed = std::fs::read_dir(mirror.path().join("registry.terraform.io/karpenter/karpenter"))
        .expect("the provider's directory in the mirror")
        .count();
    assert_eq!(installed, 1, "one version installed into the mirror");
}
