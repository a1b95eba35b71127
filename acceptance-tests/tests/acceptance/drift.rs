//! #51, "what will this change do to the nodes running now": through the real terraform CLI,
//! a plan that changes a NodePool or an EC2NodeClass warns which running nodes Karpenter will
//! replace, against NodeClaims labelled and annotated as Karpenter labels and annotates them
//! (instance labels, the pool and class hashes copied from the objects' annotations as
//! Karpenter copies them at launch, a `Drifted` condition on one). A change that drifts nothing
//! says nothing and makes no request; a plan lists the NodeClaims once; a destroy says what it
//! terminates; a cluster that refuses the list is a warning, never an error. The data source
//! says which NodeClaims Karpenter marked drifted.

use acceptance_tests::Workdir;
use acceptance_tests::kube::{Cluster, Config, ControllerConfig, FaultKind, FaultSpec, TestServer};
use serde_json::{Value, json};

/// A simulated Karpenter that writes the hash annotations but launches no NodeClaim itself:
/// the test makes them, as Karpenter would have.
fn cluster() -> Cluster {
    Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller: ControllerConfig {
            node_claims_per_node_pool: 0,
            ..ControllerConfig::karpenter()
        },
        ..Config::default()
    })
}

/// One EC2NodeClass and two pools using it; `edit` rewrites parts of it per plan.
fn config(
    cluster: &Cluster,
    pool_label: &str,
    types: &str,
    class_tag: &str,
    subnet_tag: &str,
    weight: u32,
) -> String {
    format!(
        r#"{provider}
resource "karpenter_ec2_node_class" "default" {{
  name                          = "default"
  role                          = "KarpenterNodeRole-test"
  ami_selector_terms            = [{{ alias = "al2023@latest" }}]
  subnet_selector_terms         = [{{ tags = {{ "karpenter.sh/discovery" = "{subnet_tag}" }} }}]
  security_group_selector_terms = [{{ tags = {{ "karpenter.sh/discovery" = "test" }} }}]
  tags                          = {{ team = "{class_tag}" }}
}}

resource "karpenter_node_pool" "general" {{
  name   = "general"
  weight = {weight}
  template = {{
    metadata = {{ labels = {{ team = "{pool_label}" }} }}
    spec = {{
      node_class_ref = {{ name = karpenter_ec2_node_class.default.name }}
      requirements = [
        {{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] }},
        {{ key = "node.kubernetes.io/instance-type", operator = "In", values = [{types}] }},
      ]
    }}
  }}
}}

resource "karpenter_node_pool" "batch" {{
  name = "batch"
  template = {{
    spec = {{
      node_class_ref = {{ name = karpenter_ec2_node_class.default.name }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
  disruption = {{
    consolidate_after = "1m"
    budgets           = [{{ nodes = "1" }}]
  }}
}}
"#,
        provider = cluster.provider_block()
    )
}

const TYPES: &str = r#""m5.large", "c5.large""#;

fn base(cluster: &Cluster) -> String {
    config(cluster, "platform", TYPES, "platform", "test", 10)
}

/// The annotation `key` of an object, once the simulated Karpenter wrote it.
fn annotation(cluster: &Cluster, object: impl Fn() -> Option<Value>, key: &str) -> String {
    let mut found = String::new();
    cluster.eventually(key, || {
        found = object()
            .and_then(|o| o["metadata"]["annotations"][key].as_str().map(str::to_string))
            .unwrap_or_default();
        !found.is_empty()
    });
    found
}

/// A NodeClaim as Karpenter makes one: its pool's and class's labels and hashes, the instance's
/// labels, launched and registered (`status.nodeName`); `drifted` adds a `Drifted` condition;
/// `hashed` false leaves the hash annotations out (a NodeClaim from before Karpenter wrote them).
struct Claim<'a> {
    name: &'a str,
    pool: &'a str,
    instance_type: &'a str,
    capacity_type: &'a str,
    drifted: bool,
    hashed: bool,
}

fn make(cluster: &Cluster, c: &Claim<'_>) {
    let pool_hash = annotation(
        cluster,
        || cluster.node_pool(c.pool),
        "karpenter.sh/nodepool-hash",
    );
    let pool_version = annotation(
        cluster,
        || cluster.node_pool(c.pool),
        "karpenter.sh/nodepool-hash-version",
    );
    let class_hash = annotation(
        cluster,
        || cluster.node_class("default"),
        "karpenter.k8s.aws/ec2nodeclass-hash",
    );
    let class_version = annotation(
        cluster,
        || cluster.node_class("default"),
        "karpenter.k8s.aws/ec2nodeclass-hash-version",
    );
    let family = c.instance_type.split('.').next().unwrap_or_default();
    let mut annotations = json!({"karpenter.k8s.aws/tagged": "true"});
    if c.hashed {
        annotations["karpenter.sh/nodepool-hash"] = json!(pool_hash);
        annotations["karpenter.sh/nodepool-hash-version"] = json!(pool_version);
        annotations["karpenter.k8s.aws/ec2nodeclass-hash"] = json!(class_hash);
        annotations["karpenter.k8s.aws/ec2nodeclass-hash-version"] = json!(class_version);
    }
    let pool_uid = cluster.node_pool(c.pool).expect("pool")["metadata"]["uid"].clone();
    let claim = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {
            "name": c.name,
            "labels": {
                "karpenter.sh/nodepool": c.pool,
                "karpenter.k8s.aws/ec2nodeclass": "default",
                "karpenter.sh/capacity-type": c.capacity_type,
                "node.kubernetes.io/instance-type": c.instance_type,
                "karpenter.k8s.aws/instance-family": family,
                "karpenter.k8s.aws/instance-category": &family[..1],
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/region": "us-east-1",
                "topology.kubernetes.io/zone": "us-east-1a",
                "team": "platform"
            },
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": c.pool,
                "uid": pool_uid, "blockOwnerDeletion": true}]
        },
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [c.instance_type]}]
        }
    });
    cluster
        .server
        .create_object("karpenter.sh", "v1", "nodeclaims", "", claim, "karpenter")
        .unwrap_or_else(|e| panic!("NodeClaim {}: {e:?}", c.name));
    let now = "2026-08-01T00:00:00Z";
    let mut conditions: Vec<Value> = ["Launched", "Registered", "Initialized", "Ready"]
        .iter()
        .map(|t| json!({"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": now}))
        .collect();
    if c.drifted {
        conditions.push(
            json!({"type": "Drifted", "status": "True", "reason": "NodePoolDrifted",
            "message": "NodePoolDrifted", "lastTransitionTime": now}),
        );
    }
    let status = json!({"status": {"nodeName": format!("ip-{}.ec2.internal", c.name), "providerID":
        format!("aws:///us-east-1a/i-{}", c.name), "conditions": conditions}});
    assert!(
        cluster
            .server
            .patch_object("karpenter.sh", "nodeclaims", "", c.name, &status)
    );
}

/// general: a, b (m5, hashed), c (c5, hashed), d (c5, already drifted), e (m5, no hashes);
/// batch: x, y (spot m5, hashed).
fn claims(cluster: &Cluster) {
    let general = |name, instance_type, drifted, hashed| Claim {
        name,
        pool: "general",
        instance_type,
        capacity_type: "on-demand",
        drifted,
        hashed,
    };
    for c in [
        general("general-a", "m5.large", false, true),
        general("general-b", "m5.large", false, true),
        general("general-c", "c5.large", false, true),
        general("general-d", "c5.large", true, true),
        general("general-e", "m5.large", false, false),
        Claim {
            name: "batch-x",
            pool: "batch",
            instance_type: "m5.large",
            capacity_type: "spot",
            drifted: false,
            hashed: true,
        },
        Claim {
            name: "batch-y",
            pool: "batch",
            instance_type: "m5.large",
            capacity_type: "spot",
            drifted: false,
            hashed: true,
        },
    ] {
        make(cluster, &c);
    }
}

/// The NodeClaim lists the plans made since the log was cleared.
fn lists(cluster: &Cluster) -> usize {
    cluster
        .requests(Some("GET"), "/apis/karpenter.sh/v1/nodeclaims")
        .iter()
        .filter(|r| r.path.ends_with("/nodeclaims"))
        .count()
}

/// Plans `config` and returns the output (folded to one line), with how many NodeClaim lists
/// the plan made.
fn plan(cluster: &Cluster, work: &Workdir, config: &str) -> (String, usize) {
    work.set_config(config);
    cluster.server.clear_request_log();
    let run = work.plan().ok();
    (run.text(), lists(cluster))
}

#[test]
fn a_plan_says_which_running_nodes_a_change_replaces() {
    let cluster = cluster();
    let mut work = Workdir::new(&base(&cluster));
    let run = work.apply().ok();
    assert!(!run.text().contains("This change"), "{}", run.output());
    assert_eq!(
        lists(&cluster),
        0,
        "creating pools and a class lists no NodeClaim"
    );
    claims(&cluster);

    // A template label: hashed. a, b, c carry the pool's hash; d is already drifted; e has no
    // hash annotations. One list for the whole plan.
    let (text, n) = plan(
        &cluster,
        &work,
        &config(&cluster, "core", TYPES, "platform", "test", 10),
    );
    for phrase in [
        "Warning: This change replaces 3 of 5 nodes of NodePool \"general\"",
        "Karpenter hashes template.metadata.labels into the karpenter.sh/nodepool-hash annotation",
        "general-a (ip-general-a.ec2.internal), general-b (ip-general-b.ec2.internal), general-c (ip-general-c.ec2.internal)",
        "Already drifted, and replaced whatever this plan does: 1 node: general-d",
        "1 NodeClaim carries no karpenter.sh/nodepool-hash annotation of this hash version",
        "at most 1 node at a time (budget 10% of 5 nodes, rounded up)",
    ] {
        assert!(text.contains(phrase), "missing {phrase:?} in:\n{text}");
    }
    assert!(!text.contains("NodePool \"batch\""), "{text}");
    assert_eq!(n, 1, "one NodeClaim list per plan");
    // Without a refresh, the pool's hash annotations are read for the purpose: same answer.
    cluster.server.clear_request_log();
    let run = work
        .terraform(&["plan", "-refresh=false", "-no-color", "-input=false"])
        .ok();
    assert!(
        run.text()
            .contains("Warning: This change replaces 3 of 5 nodes of NodePool \"general\""),
        "{}",
        run.output()
    );
    assert_eq!(
        cluster
            .requests(Some("GET"), "/apis/karpenter.sh/v1/nodepools/general")
            .len(),
        1,
        "the pool read once for its annotations"
    );

    // Requirements narrowed to m5.large: c (c5) drifts; d is already drifted; e (m5) stays,
    // hash or not.
    let (text, _) = plan(
        &cluster,
        &work,
        &config(&cluster, "platform", r#""m5.large""#, "platform", "test", 10),
    );
    for phrase in [
        "Warning: This change replaces 1 of 5 nodes of NodePool \"general\"",
        "RequirementsDrifted",
        "general-c (ip-general-c.ec2.internal): its label node.kubernetes.io/instance-type=c5.large, which \
         node.kubernetes.io/instance-type In [m5.large] requires",
    ] {
        assert!(text.contains(phrase), "missing {phrase:?} in:\n{text}");
    }

    // Behavioural only (weight): nothing said, nothing asked.
    let (text, n) = plan(
        &cluster,
        &work,
        &config(&cluster, "platform", TYPES, "platform", "test", 20),
    );
    assert!(!text.contains("This change"), "{text}");
    assert!(text.contains("~ weight"), "{text}");
    assert_eq!(n, 1, "the health check's one list, shared with the drift preview");
    // Without the health check, the preview alone lists nothing for a behavioural change.
    work.env("KARPENTER_PLAN_HEALTH", "false");
    let (text, n) = plan(
        &cluster,
        &work,
        &config(&cluster, "platform", TYPES, "platform", "test", 20),
    );
    assert!(!text.contains("This change"), "{text}");
    assert_eq!(n, 0, "a plan that changes no drifting field lists nothing");
    work.env("KARPENTER_PLAN_HEALTH", "true");

    // A node class tag: every hashed NodeClaim of the class, in both pools, per pool.
    let (text, n) = plan(
        &cluster,
        &work,
        &config(&cluster, "platform", TYPES, "core", "test", 10),
    );
    for phrase in [
        "Warning: This change replaces 5 of 7 nodes of EC2NodeClass \"default\"",
        "karpenter.k8s.aws/ec2nodeclass-hash",
        "NodeClassDrift",
        "NodePool \"batch\": 2 of its 2 nodes, at most 1 node at a time (budget 1)",
        "NodePool \"general\": 3 of its 5 nodes, at most 1 node at a time (budget 10% of 5 nodes, rounded up)",
    ] {
        assert!(text.contains(phrase), "missing {phrase:?} in:\n{text}");
    }
    assert_eq!(n, 1, "one NodeClaim list per plan");

    // A subnet selector: resolved by Karpenter, so "may".
    let (text, _) = plan(
        &cluster,
        &work,
        &config(&cluster, "platform", TYPES, "platform", "other", 10),
    );
    assert!(
        text.contains("Warning: This change may replace up to 6 of 7 nodes of EC2NodeClass \"default\""),
        "{text}"
    );
    assert!(
        text.contains("Karpenter does not hash subnet_selector_terms"),
        "{text}"
    );

    // A pool removed from the configuration, and a destroy: its nodes go with it.
    let without_batch = base(&cluster)
        .split("resource \"karpenter_node_pool\" \"batch\"")
        .next()
        .unwrap_or_default()
        .to_string();
    let (text, _) = plan(&cluster, &work, &without_batch);
    assert!(
        text.contains("Warning: Destroying NodePool \"batch\" terminates its 2 nodes"),
        "{text}"
    );
    assert!(
        text.contains("batch-x (ip-batch-x.ec2.internal), batch-y"),
        "{text}"
    );
    work.set_config(&base(&cluster));
    let run = work
        .terraform(&["plan", "-destroy", "-no-color", "-input=false"])
        .ok();
    let text = run.text();
    assert!(
        text.contains("Warning: Destroying NodePool \"general\" terminates its 5 nodes"),
        "{text}"
    );
    assert!(
        text.contains("Warning: Destroying EC2NodeClass \"default\": 7 running nodes were launched from it"),
        "{text}"
    );
}

#[test]
fn a_cluster_that_refuses_the_list_is_a_warning_and_the_data_source_says_what_drifted() {
    let cluster = cluster();
    let work = Workdir::new(&base(&cluster));
    work.apply().ok();
    claims(&cluster);

    cluster.server.inject_fault(
        FaultSpec::new(FaultKind::Forbidden, 1)
            .method("GET")
            .path_contains("/nodeclaims"),
    );
    let (text, n) = plan(
        &cluster,
        &work,
        &config(&cluster, "core", TYPES, "platform", "test", 10),
    );
    assert!(
        text.contains(
            "Warning: Could not tell what this change to NodePool \"general\" does to the running nodes"
        ),
        "{text}"
    );
    assert!(text.contains("403 Forbidden"), "{text}");
    assert!(!text.contains("This change replaces"), "{text}");
    assert_eq!(n, 1, "a refused list is not asked again in the same plan");

    let reader = Workdir::new(&format!(
        "{}\ndata \"karpenter_node_claims\" \"general\" {{\n  node_pool = \"general\"\n}}\n\
         output \"drifted\" {{\n  value = {{ for c in data.karpenter_node_claims.general.node_claims : c.name => c.drift_reason if c.drifted }}\n}}\n",
        cluster.provider_block()
    ));
    reader.apply().ok();
    assert_eq!(
        reader.outputs()["drifted"]["value"],
        json!({"general-d": "NodePoolDrifted"})
    );
}
