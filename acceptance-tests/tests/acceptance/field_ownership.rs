//! Field ownership (#18): objects created and co-owned by other field managers — `kubectl
//! apply` (client-side: a POST as `kubectl-client-side-apply` with the last-applied
//! annotation), `kubectl patch` (a merge patch as `kubectl-patch`), a second server-side
//! applier — then imported or moved. Removing settings from the configuration must change the
//! cluster and leave the next plan empty; labels and annotations someone else set are never
//! planned away. The foreign writes are the requests kubectl sends, made over HTTP here.

use acceptance_tests::kube::Cluster;
use acceptance_tests::{Workdir, legacy_standin_dir};
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::Request;
use serde_json::{Value as Json, json};

/// Sends a built request (an `http::Request`, named only through kube here).
macro_rules! send {
    ($cluster:expr, $req:expr) => {{
        let req = $req;
        block_on(async {
            let client = $cluster.server.client().await.expect("client");
            client.request_text(req).await.expect("write accepted");
        });
    }};
}

const NODE_POOLS: &str = "/apis/karpenter.sh/v1/nodepools";
const NODE_CLASSES: &str = "/apis/karpenter.k8s.aws/v1/ec2nodeclasses";

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// `kubectl apply` (client-side) of a new object: a POST as `kubectl-client-side-apply` whose
/// body carries its own `kubectl.kubernetes.io/last-applied-configuration` annotation.
fn kubectl_client_side_create(cluster: &Cluster, collection: &str, mut obj: Json) {
    let last_applied = obj.to_string();
    obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json!(last_applied);
    let params = PostParams {
        field_manager: Some("kubectl-client-side-apply".into()),
        ..Default::default()
    };
    let req = Request::new(collection)
        .create(&params, serde_json::to_vec(&obj).expect("json"))
        .expect("request");
    send!(cluster, req);
}

/// A merge patch as `kubectl patch --type merge` (or kubectl edit, `manager`) sends it.
fn kubectl_merge_patch(cluster: &Cluster, collection: &str, name: &str, manager: &str, patch: Json) {
    let params = PatchParams {
        field_manager: Some(manager.into()),
        ..Default::default()
    };
    let req = Request::new(collection)
        .patch(name, &params, &Patch::Merge(&patch))
        .expect("request");
    send!(cluster, req);
}

/// `kubectl apply --server-side` (or any other applier) as `manager`.
fn server_side_apply(cluster: &Cluster, collection: &str, name: &str, manager: &str, obj: Json) {
    let params = PatchParams::apply(manager).force();
    let req = Request::new(collection)
        .patch(name, &params, &Patch::Apply(&obj))
        .expect("request");
    send!(cluster, req);
}

fn managers(obj: &Json) -> Vec<String> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                // The simulated Karpenter writes too (finalizers); not part of these checks.
                .filter(|e| e["manager"] != "karpenter")
                .map(|e| {
                    format!(
                        "{}/{}",
                        e["manager"].as_str().unwrap_or(""),
                        e["operation"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn class_object() -> Json {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "role": "KarpenterNodeRole-demo",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "userData": "echo hello",
            "tags": {"team": "platform", "cost-center": "42"}
        }
    })
}

fn pool_object() -> Json {
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
                "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
            }},
            "limits": {"cpu": "100", "memory": "100Gi"}
        }
    })
}

const CLASS_FULL: &str = r#"
resource "karpenter_ec2_node_class" "default" {
  name                          = "default"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  user_data                     = "echo hello"
  tags                          = { team = "platform", "cost-center" = "42" }
}
"#;

const CLASS_TRIMMED: &str = r#"
resource "karpenter_ec2_node_class" "default" {
  name                          = "default"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  tags                          = { team = "platform" }
}
"#;

fn pool_config(memory: Option<&str>, taints: bool, metadata: &str) -> String {
    let limits = match memory {
        Some(m) => format!("{{ cpu = \"100\", memory = \"{m}\" }}"),
        None => "{ cpu = \"100\" }".into(),
    };
    let taints = if taints {
        "\n      taints = [{ key = \"dedicated\", value = \"gpu\", effect = \"NoSchedule\" }]"
    } else {
        ""
    };
    format!(
        r#"
resource "karpenter_node_pool" "default" {{
  name = "default"{metadata}
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]{taints}
    }}
  }}
  limits = {limits}
}}
"#
    )
}

/// Applies until the plan is empty: the first apply after an adoption may carry settings the
/// import cannot know (timeouts, wait flags); it must converge in one.
fn converge(work: &Workdir) {
    if !work.plan_is_empty() {
        work.apply().ok();
    }
    assert!(work.plan_is_empty(), "{}", work.plan().stdout);
}

#[test]
fn removals_after_import_of_kubectl_objects_reach_the_cluster() {
    let cluster = Cluster::with_v1_crds();
    kubectl_client_side_create(&cluster, NODE_CLASSES, class_object());
    kubectl_client_side_create(&cluster, NODE_POOLS, pool_object());
    // Someone raised the memory limit with kubectl patch: kubectl-patch owns it now.
    kubectl_merge_patch(
        &cluster,
        NODE_POOLS,
        "default",
        "kubectl-patch",
        json!({"spec": {"limits": {"memory": "200Gi"}}}),
    );
    let pool = cluster.node_pool("default").expect("pool");
    assert_eq!(
        managers(&pool),
        ["kubectl-client-side-apply/Update", "kubectl-patch/Update"]
    );

    let provider = cluster.provider_block();
    let work = Workdir::new(&format!(
        "{provider}{CLASS_FULL}{}",
        pool_config(Some("200Gi"), true, "")
    ));
    work.terraform(&["import", "karpenter_ec2_node_class.default", "default"])
        .ok();
    work.terraform(&["import", "karpenter_node_pool.default", "default"])
        .ok();
    converge(&work);

    // Remove user_data, a tag, the taints and limits.memory.
    work.set_config(&format!(
        "{provider}{CLASS_TRIMMED}{}",
        pool_config(None, false, "")
    ));
    work.apply().ok();
    let class = cluster.node_class("default").expect("class");
    assert_eq!(class["spec"].get("userData"), None, "{class:#}");
    assert_eq!(class["spec"]["tags"], json!({"team": "platform"}));
    let pool = cluster.node_pool("default").expect("pool");
    assert_eq!(pool["spec"]["template"]["spec"].get("taints"), None, "{pool:#}");
    assert_eq!(pool["spec"]["limits"], json!({"cpu": "100"}));
    assert!(work.plan_is_empty(), "{}", work.plan().stdout);
    // Only what we manage moved: the last-applied annotation stays kubectl's.
    let csa = pool["metadata"]["managedFields"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["manager"] == "kubectl-client-side-apply"))
        .expect("kubectl-client-side-apply keeps its annotation");
    assert!(
        csa["fieldsV1"]["f:metadata"]["f:annotations"]
            .get("f:kubectl.kubernetes.io/last-applied-configuration")
            .is_some(),
        "{csa:#}"
    );
    assert!(csa["fieldsV1"].get("f:spec").is_none(), "{csa:#}");
}

#[test]
fn foreign_labels_and_annotations_are_never_planned_away() {
    let cluster = Cluster::with_v1_crds();
    let provider = cluster.provider_block();
    let work = Workdir::new(&format!(
        "{provider}{CLASS_TRIMMED}{}",
        pool_config(None, false, "")
    ));
    work.apply().ok();
    let foreign = json!({"metadata": {
        "labels": {"owner": "ops"},
        "annotations": {"compatibility.karpenter.sh/v1beta1-nodeclass-reference": "{\"name\":\"default\"}"}
    }});
    kubectl_merge_patch(&cluster, NODE_POOLS, "default", "kubectl-label", foreign.clone());
    // No `metadata` in the configuration: nothing there is ours.
    assert!(work.plan_is_empty(), "{}", work.plan().stdout);

    // With `metadata`: our keys are managed, theirs are left alone; a key we remove goes.
    let ours = "\n  metadata = { labels = { team = \"platform\", tier = \"a\" } }";
    work.set_config(&format!(
        "{provider}{CLASS_TRIMMED}{}",
        pool_config(None, false, ours)
    ));
    work.apply().ok();
    assert!(work.plan_is_empty(), "{}", work.plan().stdout);
    let ours = "\n  metadata = { labels = { team = \"platform\" } }";
    work.set_config(&format!(
        "{provider}{CLASS_TRIMMED}{}",
        pool_config(None, false, ours)
    ));
    work.apply().ok();
    let pool = cluster.node_pool("default").expect("pool");
    assert_eq!(
        pool["metadata"]["labels"],
        json!({"owner": "ops", "team": "platform"})
    );
    assert!(
        pool["metadata"]["annotations"]
            .get("compatibility.karpenter.sh/v1beta1-nodeclass-reference")
            .is_some()
    );
    assert!(work.plan_is_empty(), "{}", work.plan().stdout);
}

/// A kubectl_manifest (gavinbunney/kubectl) state entry, as that provider stores it.
fn kubectl_manifest_state(yaml: &str) -> String {
    json!({
        "version": 4, "terraform_version": "1.5.7", "serial": 3,
        "lineage": "0b7b2f0e-4f7e-4d43-9b0c-5d2f6f2b1a77", "outputs": {}, "check_results": null,
        "resources": [{
            "mode": "managed", "type": "kubectl_manifest", "name": "pool",
            "provider": "provider[\"registry.terraform.io/gavinbunney/kubectl\"]",
            "instances": [{
                "schema_version": 1,
                "attributes": {
                    "id": "/apis/karpenter.sh/v1/nodepools/default",
                    "uid": "", "live_uid": "", "yaml_incluster": "x", "live_manifest_incluster": "x",
                    "api_version": "karpenter.sh/v1", "kind": "NodePool", "name": "default", "namespace": null,
                    "override_namespace": null, "yaml_body": yaml, "yaml_body_parsed": yaml,
                    "sensitive_fields": null, "force_new": false, "server_side_apply": false, "force_conflicts": false,
                    "apply_only": false, "ignore_fields": null, "wait": null, "wait_for_rollout": true, "validate_schema": true
                },
                "sensitive_attributes": []
            }]
        }]
    })
    .to_string()
}

#[test]
fn removals_after_a_move_reach_the_cluster_despite_a_second_applier() {
    let cluster = Cluster::with_v1_crds();
    // kubectl_manifest created it with client-side apply; a GitOps tool applies the same
    // taints and memory limit server-side (shared ownership: same values, no conflict).
    kubectl_client_side_create(&cluster, NODE_POOLS, pool_object());
    server_side_apply(
        &cluster,
        NODE_POOLS,
        "default",
        "gitops",
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
            "spec": {"limits": {"memory": "100Gi"}, "template": {"spec": {
                "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}}}),
    );
    let pool = cluster.node_pool("default").expect("pool");
    assert_eq!(
        managers(&pool),
        ["kubectl-client-side-apply/Update", "gitops/Apply"]
    );

    let standin = legacy_standin_dir();
    let provider = cluster.provider_block();
    let moved = "moved {\n  from = kubectl_manifest.pool\n  to   = karpenter_node_pool.default\n}\n";
    let work = Workdir::with_overrides(
        &format!("{provider}{}{moved}", pool_config(Some("100Gi"), true, "")),
        &[("registry.terraform.io/gavinbunney/kubectl", &standin)],
    );
    let yaml = serde_json::to_string(&pool_object()).expect("yaml (JSON is YAML)");
    work.write("terraform.tfstate", &kubectl_manifest_state(&yaml));
    converge(&work);

    work.set_config(&format!("{provider}{}{moved}", pool_config(None, false, "")));
    work.apply().ok();
    let pool = cluster.node_pool("default").expect("pool");
    assert_eq!(pool["spec"]["template"]["spec"].get("taints"), None, "{pool:#}");
    assert_eq!(pool["spec"]["limits"], json!({"cpu": "100"}));
    assert!(work.plan_is_empty(), "{}", work.plan().stdout);
}
