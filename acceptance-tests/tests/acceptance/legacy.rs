//! `karpenter_provisioner` / `karpenter_node_template` (Karpenter ≤ 0.32) through the real
//! terraform CLI against the test server with the v0.32.10 CRDs: the same machinery as the v1
//! kinds (CRD gate, apply, read, delete-wait, import), the free-form `provider_json`, and
//! `moved {}` from `kubectl_manifest`.

use std::time::Duration;

use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::moved::{create_manifests, kubectl_manifest_of, state, workdir, yaml_fixture};
use acceptance_tests::{Workdir, repo_file};
use serde_json::json;

fn legacy_cluster(crds_now: bool) -> Cluster {
    Cluster::start(Config {
        crd_dirs: if crds_now {
            vec![TestServer::shared_crds_dir("v1alpha5")]
        } else {
            vec![]
        },
        establish_delay: Duration::from_secs(2),
        controller: ControllerConfig::karpenter(),
        ..Config::default()
    })
}

fn provisioner(cluster: &Cluster, name: &str) -> Option<serde_json::Value> {
    cluster
        .server
        .object("karpenter.sh", "v1alpha5", "provisioners", name)
}

fn node_template(cluster: &Cluster, name: &str) -> Option<serde_json::Value> {
    cluster
        .server
        .object("karpenter.k8s.aws", "v1alpha1", "awsnodetemplates", name)
}

fn examples() -> String {
    format!(
        "{}\n{}",
        repo_file("examples/resources/karpenter_node_template/resource.tf"),
        repo_file("examples/resources/karpenter_provisioner/resource.tf")
    )
}

#[test]
fn examples_apply_with_crds_registered_late_replan_empty_import_and_destroy() {
    let cluster = legacy_cluster(false);
    let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), examples()));
    cluster.apply_with_crds_arriving(&work, &TestServer::shared_crds_dir("v1alpha5"));
    let p = provisioner(&cluster, "default").expect("Provisioner on the server");
    assert_eq!(p["spec"]["providerRef"]["name"], "default");
    assert_eq!(p["spec"]["consolidation"], json!({"enabled": true}));
    assert_eq!(p["spec"]["ttlSecondsUntilExpired"], 2592000);
    assert_eq!(p["spec"]["kubeletConfiguration"]["maxPods"], 110);
    assert_eq!(p["spec"]["labels"], json!({"workload": "general"}));
    let t = node_template(&cluster, "default").expect("AWSNodeTemplate on the server");
    assert_eq!(t["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"], "100Gi");
    assert_eq!(t["spec"]["metadataOptions"]["httpPutResponseHopLimit"], 2);
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // Drift on a field is shown as that field.
    assert!(cluster.server.patch_object(
        "karpenter.sh",
        "provisioners",
        "",
        "default",
        &json!({"spec": {"ttlSecondsUntilExpired": 60}})
    ));
    let run = work.plan().ok();
    assert!(
        run.stdout.contains("~ ttl_seconds_until_expired = 60 -> 2592000"),
        "{}",
        run.stdout
    );
    work.apply().ok();

    // Import by name into a fresh state plans empty.
    let imported = Workdir::new(&format!("{}\n{}", cluster.provider_block(), examples()));
    imported
        .terraform(&[
            "import",
            "-no-color",
            "karpenter_node_template.default",
            "default",
        ])
        .ok();
    imported
        .terraform(&["import", "-no-color", "karpenter_provisioner.default", "default"])
        .ok();
    assert!(imported.plan_is_empty(), "{}", imported.plan().output());

    work.destroy().ok();
    assert!(provisioner(&cluster, "default").is_none());
    assert!(node_template(&cluster, "default").is_none());
}

#[test]
fn provider_json_is_sent_as_an_object_and_formatting_is_no_drift() {
    let cluster = legacy_cluster(true);
    let work = Workdir::new(&format!(
        r#"{}
resource "karpenter_provisioner" "inline" {{
  name          = "inline"
  provider_json = jsonencode({{ subnetSelector = {{ "karpenter.sh/discovery" = "demo" }}, instanceProfile = "nodes" }})
}}
"#,
        cluster.provider_block()
    ));
    work.apply().ok();
    let p = provisioner(&cluster, "inline").expect("provisioner");
    assert_eq!(
        p["spec"]["provider"],
        json!({"subnetSelector": {"karpenter.sh/discovery": "demo"}, "instanceProfile": "nodes"})
    );
    assert!(work.plan_is_empty());
    // A change inside the free-form object is drift.
    assert!(cluster.server.patch_object(
        "karpenter.sh",
        "provisioners",
        "",
        "inline",
        &json!({"spec": {"provider": {"instanceProfile": "other"}}})
    ));
    let run = work.plan().ok();
    assert!(run.stdout.contains("provider_json"), "{}", run.stdout);
    assert!(run.stdout.contains("1 to change"), "{}", run.stdout);
}

#[test]
fn kubectl_manifest_provisioners_move_without_recreation() {
    let cluster = legacy_cluster(true);
    let yaml = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  providerRef:\n    name: default\n  ttlSecondsAfterEmpty: 30\n  requirements:\n    - key: karpenter.sh/capacity-type\n      operator: In\n      values: [spot]\n  limits:\n    resources:\n      cpu: \"100\"\n";
    // The object as kubectl created it.
    create_manifests(&cluster, vec![yaml_fixture(yaml)]);
    let uid = provisioner(&cluster, "default").expect("provisioner")["metadata"]["uid"].clone();

    let work = workdir(&format!(
        r#"{}
moved {{
  from = kubectl_manifest.provisioner
  to   = karpenter_provisioner.default
}}
resource "karpenter_provisioner" "default" {{
  name                    = "default"
  provider_ref            = {{ name = "default" }}
  ttl_seconds_after_empty = 30
  requirements            = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
  limits                  = {{ resources = {{ cpu = "100" }} }}
}}
"#,
        cluster.provider_block()
    ));
    work.write(
        "terraform.tfstate",
        &state(vec![kubectl_manifest_of(
            "karpenter.sh/v1alpha5",
            "Provisioner",
            "provisioner",
            "gavinbunney/kubectl",
            yaml,
            "default",
        )]),
    );
    let run = work.plan().ok();
    assert!(
        run.stdout
            .contains("kubectl_manifest.provisioner has moved to karpenter_provisioner.default"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    work.apply().ok();
    assert_eq!(
        provisioner(&cluster, "default").expect("provisioner")["metadata"]["uid"],
        uid,
        "adopted, not recreated"
    );
    assert!(work.plan_is_empty());
}

/// Karpenter v0.32's mutating webhook appended default requirements to every Provisioner. They
/// are the server's, not drift: the apply's result matches the plan, the next plan is empty, and
/// constraining a defaulted key later replaces the default instead of fighting it.
#[test]
fn requirements_added_by_the_v0_32_webhook_are_not_drift() {
    let cluster = legacy_cluster(true);
    cluster.server.set_legacy_webhook_defaults(true);
    let template = repo_file("examples/resources/karpenter_node_template/resource.tf");
    let pool = |requirements: &str| {
        format!(
            "{}\n{template}\nresource \"karpenter_provisioner\" \"default\" {{\n  name = \"default\"\n  requirements = [\n{requirements}\n  ]\n  provider_ref = {{ name = karpenter_node_template.default.name }}\n}}\n",
            cluster.provider_block()
        )
    };
    let spot = r#"    { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] },"#;
    let work = Workdir::new(&pool(spot));
    work.apply().ok();
    let keys = |cluster: &Cluster| -> Vec<String> {
        provisioner(cluster, "default").expect("Provisioner")["spec"]["requirements"]
            .as_array()
            .expect("requirements")
            .iter()
            .map(|r| format!("{}={}", r["key"].as_str().unwrap_or(""), r["values"]))
            .collect()
    };
    assert_eq!(
        keys(&cluster),
        [
            "karpenter.sh/capacity-type=[\"spot\"]",
            "kubernetes.io/os=[\"linux\"]",
            "kubernetes.io/arch=[\"amd64\"]",
            "karpenter.k8s.aws/instance-category=[\"c\",\"m\",\"r\"]",
            "karpenter.k8s.aws/instance-generation=[\"2\"]",
        ],
        "the webhook stand-in added its defaults"
    );
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // The user constrains arch and the instance family: the webhook's defaults for those go.
    work.set_config(&pool(&format!(
        "{spot}\n    {{ key = \"kubernetes.io/arch\", operator = \"In\", values = [\"arm64\"] }},\n    {{ key = \"karpenter.k8s.aws/instance-family\", operator = \"In\", values = [\"m7g\"] }},"
    )));
    work.apply().ok();
    assert_eq!(
        keys(&cluster),
        [
            "karpenter.sh/capacity-type=[\"spot\"]",
            "kubernetes.io/arch=[\"arm64\"]",
            "karpenter.k8s.aws/instance-family=[\"m7g\"]",
            "kubernetes.io/os=[\"linux\"]",
        ]
    );
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // Imported, with nothing known of what was written: the appended tail is recognised.
    let imported = Workdir::new(&pool(&format!(
        "{spot}\n    {{ key = \"kubernetes.io/arch\", operator = \"In\", values = [\"arm64\"] }},\n    {{ key = \"karpenter.k8s.aws/instance-family\", operator = \"In\", values = [\"m7g\"] }},"
    )));
    for (address, id) in [
        ("karpenter_node_template.default", "default"),
        ("karpenter_provisioner.default", "default"),
    ] {
        imported.terraform(&["import", "-no-color", address, id]).ok();
    }
    assert!(imported.plan_is_empty(), "{}", imported.plan().output());

    // A defaulted requirement changed outside Terraform is still drift.
    assert!(cluster.server.patch_object(
        "karpenter.sh",
        "provisioners",
        "",
        "default",
        &json!({"spec": {"requirements": [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7g"]},
            {"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}
        ]}})
    ));
    let run = work.plan().ok();
    assert!(run.stdout.contains("windows"), "{}", run.stdout);
    work.apply().ok();
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
}
