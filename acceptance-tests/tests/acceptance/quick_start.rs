//! `examples/quick-start` applies against the local test environment (kube-testserver + moto),
//! re-plans empty and destroys: the stack the README's first command runs.

use acceptance_tests::kube::Cluster;
use acceptance_tests::moto::Moto;
use acceptance_tests::{Workdir, repo_file};

#[test]
fn quick_start_applies_replans_empty_and_destroys() {
    let cluster = Cluster::from_release_data().expect("the quick-start's cluster");
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

/// The README's first command itself, as a user runs it on a fresh clone: `scripts/quickstart.sh`
/// builds the provider and the local environment, installs the provider into a filesystem
/// mirror (a temporary one here), and runs the quick-start with `terraform init` / `apply` /
/// `destroy` from that mirror. It runs where nothing beside the repository can be read (the
/// `../shared` folder the tests use is hidden under an empty mount) and with no network (a
/// network namespace with loopback alone): what it builds from and serves comes from the
/// repository, so the next outside dependency fails here. (moto, which the script installs from
/// PyPI on a first run, is installed before, as on a machine that ran it once.)
#[test]
fn quickstart_script_installs_the_provider_and_runs_the_quick_start() {
    acceptance_tests::moto::moto_venv();
    let mirror = tempfile::tempdir().expect("temp dir");
    let root = acceptance_tests::workspace_root();
    // the folder of the tests' upstream files (kube_testserver::upstream), beside the clone
    let beside = kube_testserver::upstream::root()
        .parent()
        .map(std::path::Path::to_path_buf)
        .expect("the upstream files' folder has a parent");
    // Root may mount at once; anyone else through a user namespace that maps them to root.
    let as_root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let mut cmd = std::process::Command::new("unshare");
    if !as_root {
        cmd.arg("--map-root-user");
    }
    cmd.args(["--mount", "--net", "--fork", "bash", "-c"])
        .arg(
            r#"set -e
ip link set lo up
if [ -d "$BESIDE" ]; then mount -t tmpfs -o ro empty "$BESIDE"; fi
if [ -n "$(ls -A "$BESIDE" 2>/dev/null)" ]; then echo "could not hide $BESIDE" >&2; exit 97; fi
exec bash scripts/quickstart.sh"#,
        )
        .current_dir(&root)
        .env("BESIDE", &beside)
        .env("MIRROR", mirror.path())
        .env_remove("TF_CLI_CONFIG_FILE");
    let out = cmd
        .output()
        .expect("run unshare (util-linux): the test hides the upstream files and the network in namespaces");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "quickstart.sh failed with nothing beside the repository and no network:\n{stdout}\n{stderr}"
    );
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
