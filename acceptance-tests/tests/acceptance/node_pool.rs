//! `karpenter_node_pool` and `karpenter_ec2_node_class` through the real terraform CLI against
//! the Kubernetes API test server (the real Karpenter v1.14.1 CRDs, a simulated controller).

use std::time::Duration;

use acceptance_tests::kube::{Cluster, FaultKind, FaultSpec};
use acceptance_tests::roundtrip::{Import, import_with_generated_config};
use acceptance_tests::{Workdir, repo_file};
use serde_json::json;

fn examples() -> String {
    format!(
        "{}\n{}",
        repo_file("examples/resources/karpenter_ec2_node_class/resource.tf"),
        repo_file("examples/resources/karpenter_node_pool/resource.tf")
    )
}

#[test]
fn examples_apply_replan_empty_and_destroy() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), examples()));
    work.apply().ok();

    let pool = cluster.node_pool("default").expect("NodePool on the server");
    let spec = &pool["spec"];
    assert_eq!(spec["limits"], json!({"cpu": "1000"}));
    assert_eq!(
        spec["template"]["spec"]["nodeClassRef"],
        json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"})
    );
    assert_eq!(
        spec["template"]["spec"]["requirements"][2],
        json!({"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]})
    );
    assert_eq!(
        spec["disruption"]["budgets"][1],
        json!({"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"})
    );
    assert_eq!(
        pool["metadata"]["managedFields"][0]["manager"],
        "terraform-provider-karpenter"
    );

    let class = cluster.node_class("default").expect("EC2NodeClass on the server");
    assert_eq!(
        class["spec"]["amiSelectorTerms"],
        json!([{"alias": "al2023@latest"}])
    );
    assert_eq!(
        class["spec"]["metadataOptions"]["httpTokens"], "required",
        "server default, planned by us too"
    );

    // wait_for_ready: the class was Ready when apply returned, and status is in state.
    let state = work.state();
    let resources = state["values"]["root_module"]["resources"]
        .as_array()
        .expect("resources");
    let class_state = resources
        .iter()
        .find(|r| r["type"] == "karpenter_ec2_node_class")
        .expect("class in state");
    let conditions = class_state["values"]["status"]["conditions"]
        .as_array()
        .expect("status conditions");
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True"),
        "{conditions:?}"
    );

    assert!(
        work.plan_is_empty(),
        "second plan must be empty:\n{}",
        work.plan().output()
    );
    work.destroy().ok();
    assert!(cluster.node_pool("default").is_none());
    assert!(cluster.node_class("default").is_none());
}

/// A class and two pools, no depends_on between the pools and the class.
fn stack(cluster: &Cluster) -> String {
    format!(
        r#"{provider}
resource "karpenter_ec2_node_class" "default" {{
  name                          = "default"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{{ alias = "al2023@latest" }}]
  subnet_selector_terms         = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
  security_group_selector_terms = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
}}

resource "karpenter_node_pool" "spot" {{
  name = "spot"
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
  limits = {{ cpu = "100" }}
  weight = 50
}}

resource "karpenter_node_pool" "on_demand" {{
  name = "on-demand"
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }}]
    }}
  }}
}}
"#,
        provider = cluster.provider_block()
    )
}

#[test]
fn crds_registered_20s_after_apply_starts_then_apply_converges() {
    let cluster = Cluster::empty();
    let work = Workdir::new(&stack(&cluster));
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_secs(20));
            cluster
                .server
                .install_crds_from_dir(acceptance_tests::kube::TestServer::shared_crds_dir("v1"))
                .expect("CRDs");
        });
        work.apply().ok();
    });
    let spot = cluster.node_pool("spot").expect("spot pool");
    assert_eq!(
        spot["spec"],
        json!({
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
                "expireAfter": "720h"
            }},
            "limits": {"cpu": "100"},
            "weight": 50,
            "disruption": {"consolidateAfter": "0s", "consolidationPolicy": "WhenEmptyOrUnderutilized", "budgets": [{"nodes": "10%"}]}
        })
    );
    assert!(cluster.node_pool("on-demand").is_some());
    assert!(cluster.node_class("default").is_some());
    // One CRD wait per kind, shared by both pools: one look every 2 s while the CRD is absent
    // (20 s), then the gate's single GET before its watch.
    let gets = cluster
        .requests(Some("GET"), "customresourcedefinitions/nodepools.karpenter.sh")
        .len();
    assert!((2..=13).contains(&gets), "{gets} GETs of the NodePool CRD");
    assert!(work.plan_is_empty());
}

#[test]
fn unknown_provider_configuration_still_plans_the_full_typed_diff() {
    let work = Workdir::new(
        r#"
resource "terraform_data" "cluster" {
  input = { host = "https://cluster.example:6443", token = "t" }
}
provider "karpenter" {
  kubernetes {
    host  = terraform_data.cluster.output.host
    token = terraform_data.cluster.output.token
  }
}
resource "karpenter_node_pool" "default" {
  name = "default"
  template = {
    spec = {
      node_class_ref = { name = "default" }
      requirements   = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }]
    }
  }
}
"#,
    );
    let run = work.plan().ok();
    // Terraform aligns the `=` of sibling attributes: compare with runs of spaces collapsed, so
    // a new sibling attribute does not break the check.
    let squeeze = |s: &str| {
        s.split(' ')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let plan = squeeze(&run.stdout);
    for expected in [
        "karpenter_node_pool.default will be created",
        "consolidation_policy = \"WhenEmptyOrUnderutilized\"",
        "expire_after = \"720h\"",
        "kind = \"EC2NodeClass\"",
        "status = (known after apply)",
        "Plan: 2 to add",
    ] {
        assert!(
            plan.contains(expected),
            "missing {expected:?} in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn drift_is_shown_attribute_by_attribute_and_deletion_recreates() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&stack(&cluster));
    work.apply().ok();
    assert!(work.plan_is_empty());

    assert!(cluster.server.patch_object(
        "karpenter.sh",
        "nodepools",
        "",
        "spot",
        &json!({"spec": {"limits": {"cpu": "5"}}})
    ));
    let run = work.plan().ok();
    assert!(
        run.stdout
            .contains("karpenter_node_pool.spot will be updated in-place"),
        "{}",
        run.stdout
    );
    // `limits` holds each quantity with its own type (#50): an object, whose keys Terraform
    // shows bare, aligned.
    let squeezed = run
        .stdout
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(squeezed.contains("cpu = \"5\" -> \"100\""), "{}", run.stdout);
    assert!(
        run.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    work.apply().ok();
    assert_eq!(
        cluster.node_pool("spot").expect("spot")["spec"]["limits"]["cpu"],
        "100"
    );

    assert!(
        cluster
            .server
            .delete_object("karpenter.sh", "nodepools", "", "on-demand")
    );
    let run = work.plan().ok();
    assert!(
        run.stdout
            .contains("karpenter_node_pool.on_demand will be created"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Plan: 1 to add, 0 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    work.apply().ok();
    assert!(cluster.node_pool("on-demand").is_some());
    assert!(work.plan_is_empty());
}

#[test]
fn import_and_generated_configuration_plan_empty() {
    let cluster = Cluster::with_v1_crds();
    let creator = Workdir::new(&format!("{}\n{}", cluster.provider_block(), examples()));
    creator.apply().ok();

    // import {} blocks with -generate-config-out.
    let generated = import_with_generated_config(
        &cluster,
        &[
            Import::new("karpenter_node_pool", "default", "default"),
            Import::new("karpenter_ec2_node_class", "default", "default"),
        ],
        "",
    );
    assert!(
        generated.contains("alias") && generated.contains("al2023@latest"),
        "{generated}"
    );

    // terraform import on the CLI, with the example configuration.
    let cli = Workdir::new(&format!("{}\n{}", cluster.provider_block(), examples()));
    cli.terraform(&[
        "import",
        "-no-color",
        "-input=false",
        "karpenter_node_pool.default",
        "default",
    ])
    .ok();
    cli.terraform(&[
        "import",
        "-no-color",
        "-input=false",
        "karpenter_ec2_node_class.default",
        "default",
    ])
    .ok();
    // `wait_for_ready` is a Terraform setting, not part of the object, so an import cannot
    // know the example sets it to true: that is the one change, and it touches nothing in
    // the cluster.
    let run = cli.plan().ok();
    assert!(
        run.stdout
            .contains("~ wait_for_ready                = false -> true"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{}",
        run.stdout
    );
    cli.apply().ok();
    assert!(
        cli.plan_is_empty(),
        "plan after CLI import:\n{}",
        cli.plan().output()
    );

    // Importing what does not exist says so.
    let missing = Workdir::new(&format!(
        "{}\nresource \"karpenter_node_pool\" \"other\" {{\n  name = \"nope\"\n  template = {{ spec = {{ node_class_ref = {{ name = \"default\" }}, requirements = [] }} }}\n}}\n",
        cluster.provider_block()
    ));
    let run = missing
        .terraform(&[
            "import",
            "-no-color",
            "-input=false",
            "karpenter_node_pool.other",
            "nope",
        ])
        .failed();
    assert!(
        run.stderr.contains("There is no NodePool named \"nope\""),
        "{}",
        run.output()
    );
    let run = missing
        .terraform(&[
            "import",
            "-no-color",
            "-input=false",
            "karpenter_node_pool.other",
            "Not_A_Name",
        ])
        .failed();
    assert!(run.stderr.contains("Invalid import ID"), "{}", run.output());
}

#[test]
fn destroy_waits_for_the_finalizer_and_owned_node_claims() {
    let mut controller = acceptance_tests::kube::ControllerConfig::karpenter();
    controller.finalizer_removal_delay = Duration::from_secs(3);
    let cluster = Cluster::start(acceptance_tests::kube::Config {
        crd_dirs: vec![acceptance_tests::kube::TestServer::shared_crds_dir("v1")],
        controller,
        ..Default::default()
    });
    let work = Workdir::new(&stack(&cluster));
    work.apply().ok();
    let uid = cluster.node_pool("spot").expect("pool")["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let owned_claims = || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let client = cluster.server.client().await.expect("client");
            let ar = kube::core::ApiResource::from_gvk_with_plural(
                &kube::core::GroupVersionKind::gvk("karpenter.sh", "v1", "NodeClaim"),
                "nodeclaims",
            );
            let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(client, &ar);
            api.list(&Default::default())
                .await
                .expect("list")
                .items
                .into_iter()
                .filter(|c| c.metadata.owner_references.iter().flatten().any(|o| o.uid == uid))
                .count()
        })
    };
    cluster.eventually("a NodeClaim owned by the pool", || owned_claims() > 0);

    let started = std::time::Instant::now();
    work.destroy().ok();
    // When destroy returns, the pool, its NodeClaims and the class are gone — which took at
    // least the controller's finalizer delay.
    assert!(cluster.node_pool("spot").is_none());
    assert_eq!(owned_claims(), 0);
    assert!(cluster.node_class("default").is_none());
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "destroy returned before the finalizer was removed"
    );
}

#[test]
fn transient_faults_during_apply_converge_and_a_422_fails_fast_with_its_cause() {
    let cluster = Cluster::with_v1_crds();
    for (kind, count) in [
        (FaultKind::TooManyRequests, 2),
        (FaultKind::InternalError, 1),
        (FaultKind::DropConnection, 1),
        (FaultKind::WebhookRefused, 2),
    ] {
        cluster
            .server
            .inject_fault(FaultSpec::new(kind, count).method("PATCH"));
    }
    let work = Workdir::new(&stack(&cluster));
    work.apply().ok();
    for name in ["spot", "on-demand"] {
        assert!(cluster.node_pool(name).is_some(), "{name}");
    }
    assert!(work.plan_is_empty());

    // A cluster whose CRD is stricter than our plan-time rules: the value is refused before
    // the write (#28), once, on the attribute, with what the CRD allows.
    let strict = Cluster::empty();
    let crd = std::fs::read_to_string(
        acceptance_tests::kube::TestServer::shared_crds_dir("v1").join("karpenter.sh_nodepools.yaml"),
    )
    .expect("CRD")
    .replace(
        "                  maximum: 100\n                  minimum: 1",
        "                  maximum: 50\n                  minimum: 1",
    );
    strict.server.install_crd(&crd).expect("install strict CRD");
    let work = Workdir::new(&format!(
        "{}\nresource \"karpenter_node_pool\" \"heavy\" {{\n  name = \"heavy\"\n  template = {{ spec = {{ node_class_ref = {{ name = \"default\" }}, requirements = [] }} }}\n  weight = 75\n}}\n",
        strict.provider_block()
    ));
    let run = work.apply().failed();
    assert!(
        run.stderr
            .contains("Not supported by the Karpenter installed in this cluster"),
        "{}",
        run.output()
    );
    assert!(
        run.stderr.contains("spec.weight") && run.stderr.contains("is more than 50"),
        "{}",
        run.output()
    );
    assert_eq!(run.stderr.matches("Error:").count(), 1, "{}", run.output());
    assert!(
        strict.requests(Some("PATCH"), "nodepools/heavy").is_empty(),
        "nothing is sent that the cluster refuses"
    );
}

/// One CRD wait for all 50, and at most three requests per pool: the look-up that refuses a
/// taken name (create never adopts, #26), the server-side apply, and the one read of the status
/// Karpenter wrote.
#[test]
fn fifty_pools_make_one_crd_wait_and_at_most_three_requests_each() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!(
        r#"{}
resource "karpenter_node_pool" "many" {{
  count = 50
  name  = "pool-${{count.index}}"
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
}}
"#,
        cluster.provider_block()
    ));
    cluster.server.clear_request_log();
    work.apply().ok();
    // At most four reads of the CRD for all 50, each once per kind and provider process: the
    // plan's check against the installed release, in the plan and again in the apply's final
    // plan (Terraform runs each in a provider process of its own); then the look that it
    // exists, and the gate's read before its watch. Fewer is no fault: the look runs beside
    // the gate and is dropped when the gate opens first (it only matters for a CRD that is
    // absent), which on a loaded machine can be before its request leaves; and a plan gives
    // up its read after 5 s and goes on without it. What must hold is that 50 pools do not
    // read it 50 times.
    let crd_reads = cluster.requests(None, "customresourcedefinitions/nodepools.karpenter.sh");
    assert!((2..=4).contains(&crd_reads.len()), "{crd_reads:?}");
    let pool_requests = cluster.requests(None, "/apis/karpenter.sh/v1/nodepools");
    assert!(
        pool_requests.len() <= 150,
        "{} requests for 50 pools",
        pool_requests.len()
    );
    assert_eq!(
        cluster
            .requests(Some("PATCH"), "/apis/karpenter.sh/v1/nodepools/")
            .len(),
        50
    );
    // A refresh reads each pool once.
    cluster.server.clear_request_log();
    assert!(work.plan_is_empty());
    assert_eq!(
        cluster
            .requests(Some("GET"), "/apis/karpenter.sh/v1/nodepools/")
            .len(),
        50
    );
}

/// #28: the same rule for every kind. A NodePool (or a legacy Provisioner) whose CRD is absent,
/// with nothing installing it, fails after the minute the newer kinds wait, naming what the kind
/// needs, instead of waiting the whole 10 minutes of `timeouts.create`.
#[test]
fn an_absent_crd_nothing_installs_fails_like_the_newer_kinds() {
    let cluster = Cluster::empty();
    cluster.assert_kind_not_installed(
        r#"resource "karpenter_node_pool" "p" {
  name = "p"
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements   = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }]
    }
  }
}
resource "karpenter_provisioner" "legacy" {
  name         = "legacy"
  provider_ref = { name = "default" }
}
"#,
        &[
            "The cluster has no nodepools.karpenter.sh CRD",
            "NodePool needs Karpenter v1.0 or later",
            "The cluster has no provisioners.karpenter.sh CRD",
            "Karpenter v0.32 or earlier",
            "depends_on",
        ],
    );
}
