//! `moved {}` from `kubectl_manifest` (gavinbunney/kubectl, alekc/kubectl) and
//! `kubernetes_manifest` (hashicorp/kubernetes) to the typed resources: the state is written as
//! those providers store it (state format 4), the objects already exist in the cluster, and
//! the move adopts them — same uid, no change planned when the typed config matches the YAML.

use acceptance_tests::kube::Cluster;
use acceptance_tests::moved::{
    create_manifests, kubectl_manifest_of, kubernetes_manifest, state, workdir, yaml_fixture,
};
use acceptance_tests::repo_file;
use serde_json::{Value as Json, json};

const POOL_YAML: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
  labels:
    team: platform
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: [\"spot\"]
  limits:
    cpu: \"100\"
";

const SPOT_YAML: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: spot
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
  weight: 10
";

fn class_manifest() -> Json {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "role": "KarpenterNodeRole-demo",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
        }
    })
}

const TYPED: &str = r#"
resource "karpenter_node_pool" "default" {
  name     = "default"
  metadata = { labels = { team = "platform" } }
  template = {
    spec = {
      node_class_ref = { name = "default" }
      requirements   = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }]
    }
  }
  limits = { cpu = "100" }
}

resource "karpenter_node_pool" "spot" {
  name = "spot"
  template = {
    spec = {
      node_class_ref = { name = "default" }
      requirements   = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }]
    }
  }
  weight = 10
}

resource "karpenter_ec2_node_class" "default" {
  name                          = "default"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
}
"#;

const MOVES: &str = r#"
moved {
  from = kubectl_manifest.pool
  to   = karpenter_node_pool.default
}
moved {
  from = kubectl_manifest.spot
  to   = karpenter_node_pool.spot
}
moved {
  from = kubernetes_manifest.class
  to   = karpenter_ec2_node_class.default
}
"#;

fn kubectl_manifest(name: &str, provider: &str, yaml: &str, object_name: &str) -> Json {
    kubectl_manifest_of("karpenter.sh/v1", "NodePool", name, provider, yaml, object_name)
}

/// Creates the objects the old providers had created (field manager `kubectl`).
fn create_out_of_band(cluster: &Cluster) {
    create_manifests(
        cluster,
        vec![yaml_fixture(POOL_YAML), yaml_fixture(SPOT_YAML), class_manifest()],
    );
}

/// The uids of the three objects the moves adopt.
fn uids(cluster: &Cluster) -> Vec<String> {
    let uid = |o: Option<Json>| {
        o.map(|o| o["metadata"]["uid"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default()
    };
    vec![
        uid(cluster.node_pool("default")),
        uid(cluster.node_pool("spot")),
        uid(cluster.node_class("default")),
    ]
}

#[test]
fn kubectl_and_kubernetes_manifests_move_to_typed_resources_without_recreation() {
    let cluster = Cluster::with_v1_crds();
    create_out_of_band(&cluster);
    let before = uids(&cluster);

    let work = workdir(&format!("{}\n{TYPED}\n{MOVES}", cluster.provider_block()));
    work.write(
        "terraform.tfstate",
        &state(vec![
            kubectl_manifest("pool", "gavinbunney/kubectl", POOL_YAML, "default"),
            kubectl_manifest("spot", "alekc/kubectl", SPOT_YAML, "spot"),
            kubernetes_manifest("class", &class_manifest()),
        ]),
    );
    let run = work.plan().ok();
    for moved in [
        "kubectl_manifest.pool has moved to karpenter_node_pool.default",
        "kubectl_manifest.spot has moved to karpenter_node_pool.spot",
        "kubernetes_manifest.class has moved to karpenter_ec2_node_class.default",
    ] {
        assert!(run.stdout.contains(moved), "missing {moved:?}:\n{}", run.stdout);
    }
    assert!(
        run.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    work.apply().ok();

    let after = uids(&cluster);
    assert_eq!(before, after, "objects were adopted, not recreated");
    let state = work.state();
    let types: Vec<&str> = state["values"]["root_module"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["type"].as_str())
        .collect();
    assert_eq!(
        types,
        [
            "karpenter_ec2_node_class",
            "karpenter_node_pool",
            "karpenter_node_pool"
        ]
    );
    assert!(work.plan_is_empty());
}

#[test]
fn a_move_to_the_wrong_kind_is_refused_with_a_clear_message() {
    let cluster = Cluster::with_v1_crds();
    let work = workdir(&format!(
        "{}\n{}\nmoved {{\n  from = kubectl_manifest.pool\n  to   = karpenter_ec2_node_class.default\n}}\n",
        cluster.provider_block(),
        TYPED
            .split("resource \"karpenter_ec2_node_class\"")
            .nth(1)
            .map(|rest| format!("resource \"karpenter_ec2_node_class\"{rest}"))
            .unwrap_or_default()
    ));
    work.write(
        "terraform.tfstate",
        &state(vec![kubectl_manifest(
            "pool",
            "gavinbunney/kubectl",
            POOL_YAML,
            "default",
        )]),
    );
    let run = work.plan().failed();
    let text = run.text();
    assert!(text.contains("Cannot move this resource"), "{}", run.output());
    assert!(text.contains("holds a karpenter.sh/v1 NodePool, but karpenter_ec2_node_class manages karpenter.k8s.aws/v1 EC2NodeClass"), "{}", run.output());
}

/// `examples/migrate-from-kubectl-manifest`: the objects its `before/` templates render exist in
/// the cluster and in a kubectl_manifest state; `after/main.tf` moves them with no change planned
/// and adopts them in place.
#[test]
fn the_migration_example_moves_its_objects_in_place() {
    let dir = "examples/migrate-from-kubectl-manifest";
    let before = repo_file(&format!("{dir}/before/main.tf"));
    for address in [
        "\"kubectl_manifest\" \"node_class\"",
        "\"kubectl_manifest\" \"node_pool\"",
    ] {
        assert!(before.contains(address), "before/main.tf declares {address}");
    }
    // templatefile() with the example's default variables.
    let render = |file: &str| repo_file(&format!("{dir}/before/{file}")).replace("${cluster_name}", "demo");
    let class_yaml = render("node-class.yaml.tftpl");
    let pool_yaml = render("node-pool.yaml.tftpl");

    let cluster = Cluster::with_v1_crds();
    create_manifests(
        &cluster,
        vec![yaml_fixture(&class_yaml), yaml_fixture(&pool_yaml)],
    );
    let uids = || {
        let uid = |o: Option<Json>| o.map(|o| o["metadata"]["uid"].clone()).unwrap_or_default();
        (
            uid(cluster.node_class("default")),
            uid(cluster.node_pool("default")),
        )
    };
    let before_uids = uids();

    let work = workdir(&format!(
        "{}\n{}",
        cluster.provider_block(),
        repo_file(&format!("{dir}/after/main.tf"))
    ));
    work.write(
        "terraform.tfstate",
        &state(vec![
            kubectl_manifest_of(
                "karpenter.k8s.aws/v1",
                "EC2NodeClass",
                "node_class",
                "gavinbunney/kubectl",
                &class_yaml,
                "default",
            ),
            kubectl_manifest_of(
                "karpenter.sh/v1",
                "NodePool",
                "node_pool",
                "gavinbunney/kubectl",
                &pool_yaml,
                "default",
            ),
        ]),
    );
    let run = work.plan().ok();
    for moved in [
        "kubectl_manifest.node_class has moved to karpenter_ec2_node_class.default",
        "kubectl_manifest.node_pool has moved to karpenter_node_pool.default",
    ] {
        assert!(run.stdout.contains(moved), "missing {moved:?}:\n{}", run.stdout);
    }
    assert!(
        run.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    work.apply().ok();
    assert_eq!(
        before_uids,
        uids(),
        "the example adopts the objects, it does not recreate them"
    );
    assert!(work.plan_is_empty());
}

/// The same NodePool as `POOL_YAML` in the karpenter.sh/v1beta1 shape of Karpenter v0.33–v0.37
/// (consolidation inside `disruption`, `expireAfter` beside it), as a kubectl_manifest written
/// before the upgrade to Karpenter 1.0 still holds it.
const POOL_V1BETA1_YAML: &str = "apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: default
  labels:
    team: platform
spec:
  template:
    spec:
      nodeClassRef:
        name: default
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: [\"spot\"]
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 720h
  limits:
    cpu: \"100\"
";

/// After the upgrade to Karpenter 1.0 the cluster serves the object as karpenter.sh/v1 (the
/// conversion webhook rewrote it); the kubectl_manifest state still holds the v1beta1 YAML.
/// Moving it adopts the object as it is served: same uid, and the typed configuration of the
/// v1 object plans no change.
#[test]
fn v1beta1_manifests_from_before_karpenter_1_0_move_to_the_v1_resources() {
    let cluster = Cluster::with_v1_crds();
    create_manifests(&cluster, vec![yaml_fixture(POOL_YAML)]);
    let before = cluster.node_pool("default").expect("pool")["metadata"]["uid"].clone();
    let pool_only = TYPED
        .split("resource \"karpenter_node_pool\" \"spot\"")
        .next()
        .unwrap_or_default();
    let work = workdir(&format!(
        "{}\n{pool_only}\nmoved {{\n  from = kubectl_manifest.pool\n  to   = karpenter_node_pool.default\n}}\n",
        cluster.provider_block(),
    ));
    let mut entry = kubectl_manifest_of(
        "karpenter.sh/v1beta1",
        "NodePool",
        "pool",
        "gavinbunney/kubectl",
        POOL_V1BETA1_YAML,
        "default",
    );
    entry["instances"][0]["attributes"]["id"] = json!("/apis/karpenter.sh/v1beta1/nodepools/default");
    work.write("terraform.tfstate", &state(vec![entry]));
    let run = work.plan().ok();
    assert!(
        run.stdout
            .contains("kubectl_manifest.pool has moved to karpenter_node_pool.default"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    work.apply().ok();
    let after = cluster.node_pool("default").expect("pool")["metadata"]["uid"].clone();
    assert_eq!(before, after, "adopted, not recreated");
    assert!(work.plan_is_empty());
}
