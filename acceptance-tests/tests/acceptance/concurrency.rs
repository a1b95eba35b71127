//! Concurrency (issue #10, item 7), through the real terraform against the Kubernetes API test
//! server:
//!
//! - 100 resources (50 node pools, 50 node classes) applied at Terraform's default parallelism
//!   and at `-parallelism=50`, on a cluster whose CRDs appear only after the apply has started
//!   (so every resource queues at the shared CRD gate at once), with latency and a sprinkling
//!   of 429 and 503 answers: the apply succeeds, every object is on the server exactly once,
//!   the plan after is empty, and each CRD was waited for once (a few looks while it is
//!   absent, one read before the watch), not once per resource.
//! - StopProvider during a long CRD wait: SIGINT to terraform while a node pool waits for a CRD
//!   that never comes (a 10-minute create timeout): terraform must end, reporting the
//!   interrupt, well within a hang guard, and its provider must be gone.
//!
//! Every terraform run has a hang guard; none of the guards is a speed assertion.

use std::time::{Duration, Instant};

use acceptance_tests::Workdir;
use acceptance_tests::kube::{Cluster, FaultKind, FaultSpec, TestServer};
use acceptance_tests::processes::{alive, provider_children};

const EACH: usize = 50;
const GUARD: Duration = Duration::from_secs(300);

fn hundred(cluster: &Cluster) -> String {
    format!(
        r#"{}
resource "karpenter_ec2_node_class" "many" {{
  count                         = {EACH}
  name                          = "class-${{count.index}}"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{{ alias = "al2023@latest" }}]
  subnet_selector_terms         = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
  security_group_selector_terms = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
}}

resource "karpenter_node_pool" "many" {{
  count = {EACH}
  name  = "pool-${{count.index}}"
  template = {{
    spec = {{
      node_class_ref = {{ name = "class-${{count.index}}" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
}}
"#,
        cluster.provider_block()
    )
}

fn names(cluster: &Cluster, group: &str, plural: &str, kind: &str) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = cluster.server.client().await.expect("client");
        let ar = kube::core::ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk(group, "v1", kind),
            plural,
        );
        let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(client, &ar);
        let mut names: Vec<String> = api
            .list(&Default::default())
            .await
            .expect("list")
            .items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect();
        names.sort();
        names
    })
}

fn expected(prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = (0..EACH).map(|i| format!("{prefix}-{i}")).collect();
    v.sort();
    v
}

fn hundred_resources_with_faults(parallelism: Option<&str>) {
    let cluster = Cluster::empty();
    let work = Workdir::new(&hundred(&cluster));
    cluster.server.set_latency(Duration::from_millis(20));
    for spec in [
        FaultSpec::new(FaultKind::TooManyRequests, 8).method("PATCH"),
        FaultSpec::new(FaultKind::ServiceUnavailable, 8).method("PATCH"),
        FaultSpec::new(FaultKind::TooManyRequests, 3)
            .method("GET")
            .path_contains("customresourcedefinitions"),
        FaultSpec::new(FaultKind::ServiceUnavailable, 3)
            .method("GET")
            .path_contains("/apis/karpenter"),
    ] {
        cluster.server.inject_fault(spec);
    }
    let mut args = vec!["apply", "-no-color", "-input=false", "-auto-approve"];
    if let Some(p) = parallelism {
        args.push(p);
    }
    let child = work.spawn(&args);
    // The CRDs come once the apply is waiting for them (planning 100 resources comes first).
    let deadline = Instant::now() + GUARD;
    while cluster
        .requests(Some("GET"), "customresourcedefinitions")
        .is_empty()
    {
        assert!(Instant::now() < deadline, "the apply never asked for the CRDs");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    cluster
        .server
        .install_crds_from_dir(TestServer::shared_crds_dir("v1"))
        .expect("CRDs");
    let (run, took) = child.wait(GUARD);
    assert!(run.success, "apply failed:\n{}", run.output());
    let faults_fired = cluster
        .server
        .request_log()
        .iter()
        .filter(|r| r.fault.is_some())
        .count();
    println!(
        "100 resources, parallelism {}: apply took {took:?}, {faults_fired} injected faults answered",
        parallelism.unwrap_or("default (10)")
    );
    assert!(faults_fired > 0, "no fault fired");
    assert_eq!(
        names(&cluster, "karpenter.sh", "nodepools", "NodePool"),
        expected("pool")
    );
    assert_eq!(
        names(&cluster, "karpenter.k8s.aws", "ec2nodeclasses", "EC2NodeClass"),
        expected("class")
    );
    // One shared wait per CRD, not one per resource: the look that the CRD exists (every 2 s
    // while it is absent; it comes about 2 s after the first look) and one read before the
    // gate's watch, for all 50 resources of the kind (the faulted GETs that were retried count
    // as answered requests too, so count the successful ones).
    for crd in [
        "customresourcedefinitions/nodepools.karpenter.sh",
        "customresourcedefinitions/ec2nodeclasses.karpenter.k8s.aws",
    ] {
        let reads: Vec<_> = cluster
            .requests(Some("GET"), crd)
            .into_iter()
            .filter(|r| r.fault.is_none() && !r.query.contains("watch"))
            .collect();
        assert!(
            (1..=5).contains(&reads.len()),
            "{crd}: {} reads: {reads:?}",
            reads.len()
        );
    }
    assert!(work.plan_is_empty(), "plan after:\n{}", work.plan().output());
}

#[test]
fn hundred_resources_at_default_parallelism_with_faults() {
    hundred_resources_with_faults(None);
}

#[test]
fn hundred_resources_at_parallelism_50_with_faults() {
    hundred_resources_with_faults(Some("-parallelism=50"));
}

#[test]
fn sigint_during_a_long_crd_wait_stops_promptly() {
    let cluster = Cluster::empty();
    let work = Workdir::new(&format!(
        r#"{}
resource "karpenter_node_pool" "waiting" {{
  name = "waiting"
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
  timeouts {{
    create = "10m"
  }}
}}
"#,
        cluster.provider_block()
    ));
    let child = work.spawn(&["apply", "-no-color", "-input=false", "-auto-approve"]);
    let terraform = child.id();
    // Wait until the provider is in the gate: it read the CRD (absent) and watches for it.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cluster
        .requests(Some("GET"), "customresourcedefinitions")
        .iter()
        .any(|r| r.query.contains("watch"))
    {
        assert!(
            Instant::now() < deadline,
            "the apply never started watching the CRD"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let providers = provider_children(terraform);
    assert_eq!(providers.len(), 1, "{providers:?}");
    std::thread::sleep(Duration::from_secs(1));
    let status = std::process::Command::new("kill")
        .args(["-INT", &terraform.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    // A hang guard, far below the 10-minute create timeout the wait would otherwise run to.
    let (run, took) = child.wait(Duration::from_secs(60));
    let output = run.output();
    println!("SIGINT during the CRD wait: terraform ended after {took:?}:\n{output}");
    assert!(!run.success, "the interrupted apply reported success:\n{output}");
    assert!(output.contains("Interrupt received"), "{output}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(providers[0]) {
        assert!(Instant::now() < deadline, "the provider outlived terraform");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(cluster.node_pool("waiting").is_none());
}
