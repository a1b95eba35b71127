//! State written by earlier builds and releases reads back through the current binary (#40):
//! the state each release wrote for every managed resource type (committed under
//! `acceptance-tests/testdata/state/<release>/`, with the configuration that wrote it) is put in
//! place over the same objects, and `terraform plan -refresh=false` and a normal plan are both
//! empty, with every stored attribute value kept. Also the known case: a `karpenter_node_role`
//! state from before `mode` existed plans nothing, even without a refresh.

use std::path::PathBuf;

use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::moto::Moto;
use acceptance_tests::{Run, Workdir, resource_at, workspace_root};
use serde_json::Value;

/// The attributes `karpenter_node_role` gained with `mode` (6c8057b): a state written before
/// has none of them.
const NODE_ROLE_LATER_ATTRIBUTES: &[&str] = &[
    "mode",
    "eks_access_entry",
    "access_entry_type",
    "access_entry_arn",
    "access_policy_arns",
];

fn testdata() -> PathBuf {
    workspace_root().join("acceptance-tests/testdata/state")
}

/// The releases with committed state, oldest first.
fn releases() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(testdata())
        .unwrap_or_else(|e| panic!("{}: {e}", testdata().display()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with('v'))
        .collect();
    names.sort_by_key(|n| {
        n.trim_start_matches('v')
            .split('.')
            .map(|p| p.parse::<u64>().unwrap_or(0))
            .collect::<Vec<_>>()
    });
    names
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// One test server serving every kind the provider manages (v1, the alpha kinds, the legacy
/// v1alpha5 kinds, EKS Auto Mode's NodeClass) with a simulated Karpenter, and one moto.
fn environment() -> (Cluster, Moto) {
    let cluster = Cluster::start(Config {
        crd_dirs: vec![
            TestServer::shared_crds_dir("v1"),
            TestServer::shared_crds_dir("v1-alpha"),
            TestServer::shared_crds_dir("v1alpha5"),
            workspace_root().join("acceptance-tests/crds/eks-auto-mode"),
        ],
        controller: ControllerConfig::karpenter(),
        ..Config::default()
    });
    (cluster, Moto::start())
}

/// One provider block with the test server's `kubernetes {}` and moto's `aws {}` settings.
fn provider_block(cluster: &Cluster, moto: &Moto) -> String {
    let kube = cluster.provider_block();
    let aws = moto.provider_block();
    let kube = kube.trim_end().strip_suffix('}').expect("a provider block");
    let aws = aws
        .trim_start()
        .strip_prefix("provider \"karpenter\" {")
        .expect("a provider block");
    format!("{kube}{aws}")
}

/// A working directory with `release`'s configuration.
fn workdir(cluster: &Cluster, moto: &Moto, release: &str) -> Workdir {
    let config = read(testdata().join(release).join("main.tf"));
    let mut work = Workdir::new(&format!("{}\n{config}", provider_block(cluster, moto)));
    moto.configure(&mut work);
    work
}

/// `terraform plan -refresh=false` into `upgrade.tfplan`; the run and the plan as JSON.
fn plan_without_refresh(work: &Workdir) -> (Run, Value) {
    let run = work.terraform(&[
        "plan",
        "-no-color",
        "-input=false",
        "-refresh=false",
        "-detailed-exitcode",
        "-out=upgrade.tfplan",
    ]);
    let shown = work.terraform(&["show", "-json", "upgrade.tfplan"]);
    let plan = serde_json::from_str(&shown.stdout).unwrap_or(Value::Null);
    (run, plan)
}

/// The stored state's managed resources: address and attributes.
fn stored_resources(state: &Value) -> Vec<(String, &serde_json::Map<String, Value>)> {
    state["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["mode"] == "managed")
        .map(|r| {
            let address = format!(
                "{}.{}",
                r["type"].as_str().unwrap_or_default(),
                r["name"].as_str().unwrap_or_default()
            );
            let attributes = r["instances"][0]["attributes"]
                .as_object()
                .unwrap_or_else(|| panic!("{address}: no attributes"));
            (address, attributes)
        })
        .collect()
}

/// The `karpenter_version` of controller roles whose state has none: provider 0.1.x, before
/// the attribute existed, wrote v1.14's policy (the value the state upgrade fills in).
const VERSION_BEFORE_THE_ATTRIBUTE: &str = "v1.14";

/// An override file pinning what this build would otherwise make differently from what the
/// release made, by design: a controller role's policy (a new role gets the newest Karpenter
/// release's; the release's roles have the release the state names, v1.14 before
/// `karpenter_version` existed). Empty when the state has no controller role.
fn as_the_release_made_them(committed: &Value) -> String {
    stored_resources(committed)
        .into_iter()
        .filter_map(|(address, stored)| {
            let name = address.strip_prefix("karpenter_controller_role.")?;
            let version = stored
                .get("karpenter_version")
                .and_then(Value::as_str)
                .unwrap_or(VERSION_BEFORE_THE_ATTRIBUTE);
            Some(format!(
                "resource \"karpenter_controller_role\" \"{name}\" {{\n  karpenter_version = \"{version}\"\n}}\n"
            ))
        })
        .collect()
}

/// Replays each release's committed state over the same objects, applied afresh from the
/// configuration that wrote it (with [`as_the_release_made_them`] for that apply only): both
/// plans are empty, and the upgraded state (the plan's prior state) keeps every attribute value
/// the release stored.
#[test]
fn the_state_of_every_release_plans_nothing_and_keeps_every_value() {
    let (cluster, moto) = environment();
    let releases = releases();
    assert!(releases.iter().any(|r| r == "v0.1.0"), "{releases:?}");
    let mut types = std::collections::BTreeSet::new();
    for release in &releases {
        let work = workdir(&cluster, &moto, release);
        let text = read(testdata().join(release).join("terraform.tfstate"));
        let committed: Value = serde_json::from_str(&text).expect("state JSON");
        let pinned = as_the_release_made_them(&committed);
        work.write("release_override.tf", &pinned);
        work.apply().ok();
        std::fs::remove_file(work.path().join("release_override.tf")).expect("remove the override");
        work.write("terraform.tfstate", &text);

        let (run, plan) = plan_without_refresh(&work);
        assert!(
            run.success,
            "{release}: plan -refresh=false is not empty:\n{}",
            run.output()
        );
        let prior = &plan["prior_state"];
        let resources = stored_resources(&committed);
        for (address, stored) in &resources {
            types.insert(address.split('.').next().unwrap_or_default().to_string());
            let upgraded = &resource_at(prior, address)["values"];
            for (name, value) in *stored {
                assert_eq!(
                    &upgraded[name], value,
                    "{release}: {address}.{name} changed in the upgrade"
                );
            }
        }
        assert!(
            work.plan_is_empty(),
            "{release}: plan with refresh is not empty:\n{}",
            work.plan().output()
        );
        work.destroy().ok();
    }
    let expected: std::collections::BTreeSet<String> = [
        "karpenter_capacity_buffer",
        "karpenter_controller_role",
        "karpenter_ec2_node_class",
        "karpenter_eks_node_class",
        "karpenter_interruption_queue",
        "karpenter_node_overlay",
        "karpenter_node_pool",
        "karpenter_node_role",
        "karpenter_node_template",
        "karpenter_provisioner",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(types, expected, "every managed type has committed state");
}

const NODE_ROLE: &str = r#"
resource "karpenter_node_role" "this" {
  name                    = "KarpenterNodeRole-before-mode"
  create_instance_profile = true
}
"#;

/// #40: the state of a `karpenter_node_role` written before `mode` existed plans nothing
/// after the upgrade, even with `-refresh=false` (the default is filled in the upgrade, not at
/// read time), and the upgraded state holds `mode = "karpenter"`.
#[test]
fn a_node_role_from_before_mode_plans_nothing_without_refresh() {
    let moto = Moto::start();
    let work = moto.workdir(NODE_ROLE);
    work.apply().ok();
    let path = work.path().join("terraform.tfstate");
    let mut state: Value = serde_json::from_str(&read(path.clone())).expect("state JSON");
    let attributes = state["resources"][0]["instances"][0]["attributes"]
        .as_object_mut()
        .expect("the role's attributes");
    for name in NODE_ROLE_LATER_ATTRIBUTES {
        assert!(attributes.remove(*name).is_some(), "{name} in the state");
    }
    work.write(
        "terraform.tfstate",
        &serde_json::to_string_pretty(&state).expect("state JSON"),
    );

    let (run, plan) = plan_without_refresh(&work);
    assert!(run.success, "plan -refresh=false is not empty:\n{}", run.output());
    let upgraded = &resource_at(&plan["prior_state"], "karpenter_node_role.this")["values"];
    assert_eq!(upgraded["mode"], "karpenter");
    assert_eq!(upgraded["name"], "KarpenterNodeRole-before-mode");
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
}

/// Writes the state this build makes for `KARPENTER_STATE_RELEASE`'s configuration (its
/// `main.tf`, copied from the previous release and extended with new types) as that release's
/// `terraform.tfstate`. Run when cutting a release, see `testdata/state/README.md`.
#[test]
#[ignore = "writes test data; run by hand when cutting a release"]
fn write_the_state_of_this_build() {
    let release = std::env::var("KARPENTER_STATE_RELEASE").expect("KARPENTER_STATE_RELEASE=vX.Y.Z");
    let (cluster, moto) = environment();
    let work = workdir(&cluster, &moto, &release);
    work.apply().ok();
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    let state = read(work.path().join("terraform.tfstate"));
    let target = testdata().join(&release).join("terraform.tfstate");
    std::fs::write(&target, state).unwrap_or_else(|e| panic!("write {}: {e}", target.display()));
    work.destroy().ok();
}
