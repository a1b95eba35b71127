//! A flaky control plane (#41), through the real terraform against the Kubernetes API test
//! server, whose API port can go down mid-apply as a killed kube-apiserver does (open
//! connections closed, new ones refused, then it listens again on the same port):
//!
//! - an outage longer than the 30 s a never-reached server is given, during which the answers to
//!   committed NodePool writes are lost, is sat out by the same apply: it finishes on its own,
//!   records every object (each found by the token its create wrote), and the next plan is empty
//!   — nothing refused, nothing to import;
//! - an object another writer creates under the same name while the create's write went
//!   unanswered is still refused (create never adopts), with the import advice naming the
//!   resource's address, and is left as that writer made it;
//! - a destroy that waits on the garbage collector alone (kube-controller-manager down) says so
//!   in a warning log line after 30 s, naming the collector and how to check it, and in the
//!   error at its timeout;
//! - no diagnostic of these shows a library's own text (`client error (Connect)`, `os error`).

use std::time::{Duration, Instant};

use acceptance_tests::kube::{Cluster, FaultKind, FaultSpec};
use acceptance_tests::{Run, Workdir, library_text};
use serde_json::json;

/// The outage: longer than the 30 s an API server this provider has not reached yet is given
/// (`k8s::retry::UNREACHABLE_FOR`), far shorter than the create timeout.
const OUTAGE: Duration = Duration::from_secs(40);

/// Creates the EC2NodeClass `default` the pools name, as kubectl would (so each pool's apply
/// finds it at once).
fn node_class(cluster: &Cluster) {
    cluster
        .server
        .create_object(
            "karpenter.k8s.aws",
            "v1",
            "ec2nodeclasses",
            "",
            json!({
                "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
                "metadata": {"name": "default"},
                "spec": {
                    "role": "KarpenterNodeRole-cp",
                    "amiSelectorTerms": [{"alias": "al2023@latest"}],
                    "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "cp"}}],
                    "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "cp"}}]
                }
            }),
            "kubectl-create",
        )
        .expect("create the EC2NodeClass");
}

fn pool(label: &str, name: &str, timeouts: &str) -> String {
    format!(
        r#"
resource "karpenter_node_pool" "{label}" {{
  name = "{name}"
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
  limits = {{ cpu = "100" }}
  timeouts {{
    {timeouts}
  }}
}}
"#
    )
}

fn names_on_server(cluster: &Cluster) -> Vec<String> {
    let mut names: Vec<String> = ["cp-a", "cp-b", "cp-c", "contested"]
        .into_iter()
        .filter(|n| cluster.node_pool(n).is_some())
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

fn names_in_state(work: &Workdir) -> Vec<String> {
    let state = work.state();
    let mut names: Vec<String> = state["values"]["root_module"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["type"] == "karpenter_node_pool")
        .filter_map(|r| r["values"]["name"].as_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

#[track_caller]
fn no_library_text(run: &Run) {
    if let Some(text) = library_text(run) {
        panic!(
            "a diagnostic shows a library's own text ({text}):\n{}",
            run.output()
        );
    }
}

/// Three pools are created at once; the first two NodePool writes are committed but their
/// answers held, and when the second is in, the API port goes down for 40 s, losing both
/// answers (the third pool's write, if it comes later, finds the server down). The apply must
/// finish on its own, with every pool in state once.
#[test]
fn an_outage_with_lost_answers_is_sat_out_and_every_write_recorded() {
    let cluster = Cluster::with_v1_crds();
    node_class(&cluster);
    let config = format!(
        "{}{}{}{}",
        cluster.provider_block(),
        pool("a", "cp-a", "create = \"3m\""),
        pool("b", "cp-b", "create = \"3m\""),
        pool("c", "cp-c", "create = \"3m\""),
    );
    let mut work = Workdir::new(&config);
    // The provider's warn lines are what Terraform shows beside "Still creating…".
    work.env("TF_LOG_PROVIDER", "WARN");
    cluster.server.inject_fault(
        FaultSpec::lose_answer(2, OUTAGE)
            .method("PATCH")
            .path_contains("/apis/karpenter.sh/v1/nodepools/"),
    );
    let started = Instant::now();
    let (run, _) = work
        .spawn(&["apply", "-auto-approve", "-no-color", "-input=false"])
        .wait(Duration::from_secs(300));
    let took = started.elapsed();
    let lost: Vec<_> = cluster
        .server
        .request_log()
        .into_iter()
        .filter(|r| r.fault == Some(FaultKind::LoseAnswer))
        .collect();
    assert_eq!(lost.len(), 2, "the fault did not take: {}", run.output());
    let down_at = lost.iter().map(|r| r.at_unix_ms).max().unwrap_or_default();
    let back_at = cluster
        .server
        .request_log()
        .into_iter()
        .filter(|r| r.at_unix_ms > down_at && r.status > 0)
        .map(|r| r.at_unix_ms)
        .min()
        .unwrap_or_default();
    println!(
        "control_plane: apply of 3 pools with 2 answers lost and a {OUTAGE:?} outage took {took:?}; first request \
         answered after the outage came {} ms after it began",
        back_at.saturating_sub(down_at)
    );
    assert!(
        run.success,
        "the apply did not sit the outage out:\n{}",
        run.output()
    );
    // Diagnostics only: the provider's log lines (shown here by TF_LOG_PROVIDER) may quote
    // the libraries (kube's own `failed with error client error (Connect)` at ERROR).
    no_library_text(&Run {
        success: run.success,
        stdout: run.stdout.clone(),
        stderr: run
            .stderr
            .lines()
            .filter(|l| !l.contains(" provider.terraform-provider-karpenter: "))
            .collect::<Vec<_>>()
            .join("\n"),
    });
    let text = run.text();
    // One warning per lost answer (Terraform folds warnings with the same summary into one,
    // "and one more similar warning elsewhere").
    assert!(
        text.contains("Warning: An answer of the Kubernetes API server was lost"),
        "{}",
        run.output()
    );
    assert!(
        text.contains("The Kubernetes API server did not answer for a while"),
        "{}",
        run.output()
    );
    // While it waits, a log line says the server does not answer and since when.
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("[WARN]") && l.contains("has not answered since") && l.contains(" UTC")),
        "no warn line saying since when the server is silent:\n{}",
        run.output()
    );
    assert!(took >= OUTAGE, "the outage was not waited out: {took:?}");
    assert_eq!(names_on_server(&cluster), ["cp-a", "cp-b", "cp-c"]);
    assert_eq!(names_in_state(&work), ["cp-a", "cp-b", "cp-c"]);
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    let again = work.apply();
    assert!(
        again.success && !again.text().contains("already exists"),
        "{}",
        again.output()
    );
}

/// The create's write is dropped and the server goes down for a few seconds; meanwhile another
/// writer (kubectl) creates a NodePool of the same name. When the server is back, the create
/// must refuse it — not write over it — naming the resource's address in its import advice.
#[test]
fn another_writer_taking_the_name_during_the_outage_is_refused() {
    let cluster = Cluster::with_v1_crds();
    node_class(&cluster);
    let config = format!(
        "{}{}",
        cluster.provider_block(),
        pool("mine", "contested", "create = \"2m\"")
    );
    let work = Workdir::new(&config);
    cluster.server.inject_fault(
        FaultSpec::new(FaultKind::DropConnection, 1)
            .method("PATCH")
            .path_contains("/apis/karpenter.sh/v1/nodepools/contested")
            .outage(Duration::from_secs(4)),
    );
    let apply = work.spawn(&["apply", "-auto-approve", "-no-color", "-input=false"]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !cluster
        .server
        .request_log()
        .iter()
        .any(|r| r.fault == Some(FaultKind::DropConnection))
    {
        assert!(Instant::now() < deadline, "the create's write never came");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(cluster.server.is_down(), "the server should be down now");
    cluster
        .server
        .create_object(
            "karpenter.sh",
            "v1",
            "nodepools",
            "",
            json!({
                "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                "metadata": {"name": "contested", "labels": {"owner": "someone-else"}},
                "spec": {
                    "template": {"spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]
                    }},
                    "limits": {"cpu": "7"}
                }
            }),
            "kubectl-create",
        )
        .expect("the other writer's create");
    let (run, _) = apply.wait(Duration::from_secs(180));
    assert!(
        !run.success,
        "the create wrote over another writer's NodePool:\n{}",
        run.output()
    );
    no_library_text(&run);
    let text = run.text();
    for expected in [
        "Error: NodePool already exists",
        "It was not made by this provider",
        "kubectl-create",
        "import { to = karpenter_node_pool.mine id = \"contested\" }",
        "terraform import karpenter_node_pool.mine contested",
    ] {
        assert!(text.contains(expected), "no {expected:?} in:\n{}", run.output());
    }
    let theirs = cluster.node_pool("contested").expect("still there");
    assert_eq!(theirs["spec"]["limits"]["cpu"], "7", "{theirs}");
    let managers: Vec<&str> = theirs["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(
        managers.contains(&"kubectl-create") && !managers.contains(&"terraform-provider-karpenter"),
        "{theirs}"
    );
    assert!(names_in_state(&work).is_empty());
}

/// kube-controller-manager is down: a NodePool's foreground deletion keeps
/// `foregroundDeletion` once Karpenter's own finalizer is gone, and the NodeClaim it owns is
/// never marked for deletion. After 30 s the destroy logs a warning naming the garbage collector
/// and how to check it; at its timeout it fails saying the same (not blaming Karpenter). With the
/// collector back, the destroy finishes.
#[test]
fn a_destroy_waiting_on_the_garbage_collector_says_so() {
    let cluster = Cluster::with_v1_crds();
    node_class(&cluster);
    let config = format!(
        "{}{}",
        cluster.provider_block(),
        pool("gc", "cp-gc", "delete = \"40s\"")
    );
    let mut work = Workdir::new(&config);
    work.apply().ok();
    cluster.server.set_garbage_collector(false);
    work.env("TF_LOG_PROVIDER", "WARN");
    let started = Instant::now();
    let run = work.destroy();
    let took = started.elapsed();
    println!("control_plane: destroy waiting on a stopped garbage collector failed after {took:?}");
    assert!(!run.success, "{}", run.output());
    let warned = run
        .stderr
        .lines()
        .find(|l| l.contains("[WARN]") && l.contains("for the Kubernetes garbage collector alone"))
        .unwrap_or_else(|| {
            panic!(
                "no warning log line about the garbage collector:\n{}",
                run.output()
            )
        });
    for expected in ["kube-controller-manager", "get lease kube-controller-manager"] {
        assert!(warned.contains(expected), "{expected:?} not in {warned}");
    }
    let error = run.stderr[run.stderr.find("Error:").unwrap_or(0)..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for expected in [
        "is still being deleted",
        "garbage collector alone",
        "kube-controller-manager",
        "raise timeouts.delete",
    ] {
        assert!(
            error.contains(expected),
            "{expected:?} not in the error:\n{}",
            run.output()
        );
    }
    assert!(!error.contains("Karpenter removes its finalizer"), "{error}");
    cluster.server.set_garbage_collector(true);
    let again = work.destroy();
    assert!(again.success, "{}", again.output());
    assert!(cluster.node_pool("cp-gc").is_none());
}
