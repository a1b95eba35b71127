//! `moved {}` from `kubectl_manifest` (gavinbunney/kubectl, alekc/kubectl) and
//! `kubernetes_manifest` (hashicorp/kubernetes) to the typed resources: the state is written as
//! those providers store it (state format 4), the objects already exist in the cluster, and
//! the move adopts them — same uid, no change planned when the typed config matches the YAML.

use acceptance_tests::kube::Cluster;
use acceptance_tests::{Workdir, legacy_standin_dir, repo_file};
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

/// cty's type JSON for an arbitrary YAML/JSON value, as kubernetes_manifest types its manifest.
fn cty_type(v: &Json) -> Json {
    match v {
        Json::Object(m) => json!([
            "object",
            m.iter()
                .map(|(k, v)| (k.clone(), cty_type(v)))
                .collect::<serde_json::Map<_, _>>()
        ]),
        Json::Array(items) => json!(["tuple", items.iter().map(cty_type).collect::<Vec<_>>()]),
        Json::String(_) => json!("string"),
        Json::Number(_) => json!("number"),
        Json::Bool(_) => json!("bool"),
        Json::Null => json!("dynamic"),
    }
}

fn kubectl_manifest(name: &str, provider: &str, yaml: &str, object_name: &str) -> Json {
    kubectl_manifest_of("karpenter.sh/v1", "NodePool", name, provider, yaml, object_name)
}

/// A kubectl_manifest state entry for an object of any kind (`api_version` as `group/version`).
fn kubectl_manifest_of(
    api_version: &str,
    kind: &str,
    name: &str,
    provider: &str,
    yaml: &str,
    object_name: &str,
) -> Json {
    let plural = plural_of(kind);
    json!({
        "mode": "managed",
        "type": "kubectl_manifest",
        "name": name,
        "provider": format!("provider[\"registry.terraform.io/{provider}\"]"),
        "instances": [{
            "schema_version": 1,
            "attributes": {
                "id": format!("/apis/{api_version}/{plural}/{object_name}"),
                "uid": "", "live_uid": "", "yaml_incluster": "x", "live_manifest_incluster": "x",
                "api_version": api_version, "kind": kind, "name": object_name, "namespace": null,
                "override_namespace": null, "yaml_body": yaml, "yaml_body_parsed": yaml,
                "sensitive_fields": null, "force_new": false, "server_side_apply": false, "force_conflicts": false,
                "apply_only": false, "ignore_fields": null, "wait": null, "wait_for_rollout": true, "validate_schema": true
            },
            "sensitive_attributes": []
        }]
    })
}

fn kubernetes_manifest(name: &str, manifest: &Json) -> Json {
    let dynamic = json!({"value": manifest, "type": cty_type(manifest)});
    json!({
        "mode": "managed",
        "type": "kubernetes_manifest",
        "name": name,
        "provider": "provider[\"registry.terraform.io/hashicorp/kubernetes\"]",
        "instances": [{
            "schema_version": 1,
            "attributes": {"manifest": dynamic, "object": dynamic, "computed_fields": null, "timeouts": null},
            "sensitive_attributes": []
        }]
    })
}

fn state(resources: Vec<Json>) -> String {
    json!({
        "version": 4,
        "terraform_version": "1.5.7",
        "serial": 7,
        "lineage": "3f8c0b6e-6a4c-4f59-9d3e-2b7f1c0d9a11",
        "outputs": {},
        "resources": resources,
        "check_results": null
    })
    .to_string()
}

fn workdir(config: &str) -> Workdir {
    let standin = legacy_standin_dir();
    Workdir::with_overrides(
        config,
        &[
            ("registry.terraform.io/gavinbunney/kubectl", &standin),
            ("registry.terraform.io/alekc/kubectl", &standin),
            ("registry.terraform.io/hashicorp/kubernetes", &standin),
        ],
    )
}

/// The lower-case plural resource name of a Karpenter kind.
fn plural_of(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with("ss") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

/// Creates the objects the old providers had created (field manager `kubectl`).
fn create_out_of_band(cluster: &Cluster) {
    create_manifests(
        cluster,
        vec![yaml_fixture(POOL_YAML), yaml_fixture(SPOT_YAML), class_manifest()],
    );
}

/// Creates `manifests` with server-side apply under the field manager `kubectl`.
fn create_manifests(cluster: &Cluster, manifests: Vec<Json>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = cluster.server.client().await.expect("client");
        for m in manifests {
            let (group, version) = m["apiVersion"]
                .as_str()
                .and_then(|a| a.split_once('/'))
                .expect("apiVersion");
            let kind = m["kind"].as_str().expect("kind");
            let plural = plural_of(kind);
            let ar = kube::core::ApiResource::from_gvk_with_plural(
                &kube::core::GroupVersionKind::gvk(group, version, kind),
                &plural,
            );
            let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(client.clone(), &ar);
            let name = m["metadata"]["name"].as_str().expect("name").to_string();
            api.patch(
                &name,
                &kube::api::PatchParams::apply("kubectl"),
                &kube::api::Patch::Apply(&m),
            )
            .await
            .expect("create");
        }
    });
}

/// A YAML fixture as JSON, read the way the provider reads a kubectl_manifest's yaml_body.
fn yaml_fixture(yaml: &str) -> Json {
    terraform_provider_karpenter::resources::kube::moves::source_manifest(
        "registry.terraform.io/gavinbunney/kubectl",
        "kubectl_manifest",
        json!({"yaml_body": yaml}).to_string().as_bytes(),
    )
    .expect("fixture YAML parses")
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
