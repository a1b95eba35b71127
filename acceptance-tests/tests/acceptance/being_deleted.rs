//! #18, "a half-deleted object reads as No changes": through the real terraform CLI against
//! the Kubernetes API test server, whose simulated Karpenter puts `karpenter.sh/termination` on
//! the NodePool and (here) never removes it by itself. A destroy with a short
//! `timeouts.delete` fails and leaves the NodePool with a `deletionTimestamp`. Then:
//!
//! - `terraform plan` is not "No changes", and warns naming the finalizer and whose it is;
//! - with Karpenter gone (its Lease no longer renewed), `terraform apply` fails fast saying so,
//!   and what helps (start Karpenter, or force_destroy);
//! - with Karpenter back, `terraform apply` waits (saying so every ~10 s) until the finalizer
//!   goes (removed through the test server), creates the NodePool anew, and the next plan is
//!   empty.
//!
//! Durations are printed (`--nocapture`), never asserted.

use std::time::{Duration, Instant};

use acceptance_tests::Workdir;
use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use kube_testserver::LeaseConfig;
use serde_json::{Value, json};

const POOL: &str = r#"
resource "karpenter_node_pool" "default" {
  name = "default"
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements   = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }]
    }
  }
  timeouts {
    delete = "3s"
  }
}
"#;

fn uid(pool: &Value) -> String {
    pool["metadata"]["uid"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_deletion_stuck_on_a_finalizer_shows_in_plan_and_apply_creates_the_pool_again() {
    let mut controller = ControllerConfig::karpenter();
    // A Karpenter that is running but does not finish: the finalizer stays until the test
    // removes it. No NodeClaims, so only the NodePool's own finalizer holds it.
    controller.finalizer_removal_delay = Duration::from_secs(3600);
    controller.node_claims_per_node_pool = 0;
    // A short lease, so that "not renewed" shows within seconds (Karpenter's is 15 s).
    controller.leader_lease = Some(LeaseConfig {
        duration_seconds: 2,
        renew_every: Duration::from_millis(500),
        ..LeaseConfig::default()
    });
    let cluster = Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller: controller.clone(),
        ..Config::default()
    });
    let mut work = Workdir::new(&format!("{}\n{POOL}", cluster.provider_block()));
    work.apply().ok();
    let first = uid(&cluster.node_pool("default").expect("NodePool created"));

    // The delete times out on the finalizer: the NodePool stays, half deleted.
    let run = work.destroy().failed();
    assert!(
        run.text().contains("karpenter.sh/termination"),
        "{}",
        run.output()
    );
    let pool = cluster.node_pool("default").expect("NodePool still there");
    assert!(pool["metadata"]["deletionTimestamp"].is_string(), "{pool:#}");

    // The plan shows it, and says what holds it and whose that is.
    let plan = work.plan().ok();
    eprintln!("plan of the half-deleted pool:\n{}", plan.stdout);
    let text = plan.text();
    assert!(!text.contains("No changes"), "{}", plan.output());
    assert!(
        text.contains("NodePool default is being deleted"),
        "{}",
        plan.output()
    );
    assert!(
        text.contains("karpenter.sh/termination (removed by Karpenter's controller"),
        "{}",
        plan.output()
    );
    assert!(text.contains("creates the NodePool anew"), "{}", plan.output());
    assert!(!work.plan_is_empty());

    // Karpenter gone: apply fails fast, saying what holds the pool and what helps.
    cluster.server.stop_controller(false);
    let started = Instant::now();
    let run = work.apply().failed();
    eprintln!("apply with Karpenter gone failed after {:?}", started.elapsed());
    let text = run.text();
    assert!(
        text.contains("Karpenter is not running") && text.contains("cannot be created again"),
        "{}",
        run.output()
    );
    assert!(
        text.contains("force_destroy = true") && text.contains("start Karpenter again"),
        "{}",
        run.output()
    );
    assert!(text.contains("karpenter.sh/termination"), "{}", run.output());
    let pool = cluster.node_pool("default").expect("NodePool still there");
    assert_eq!(uid(&pool), first, "nothing was created");

    // Karpenter back: apply waits for the deletion, then creates the pool anew.
    cluster.server.set_controller(controller);
    work.env("TF_LOG_PROVIDER", "info");
    let started = Instant::now();
    let mut apply = work.spawn(&["apply", "-no-color", "-input=false", "-auto-approve"]);
    // The finalizer goes once the apply has said it is waiting (a progress line every 10 s of
    // the wait), however long terraform takes to get there on a busy machine.
    let progress = |l: &str| {
        l.contains("NodePool default is still being deleted after") && l.contains("karpenter.sh/termination")
    };
    let waited = apply.wait_for_stderr_line(progress, Duration::from_secs(240));
    assert!(
        waited,
        "the apply ended, or printed no progress line within 240 s, while the NodePool was still \
         being deleted"
    );
    assert!(
        cluster.server.patch_object(
            "karpenter.sh",
            "nodepools",
            "",
            "default",
            &json!({"metadata": {"finalizers": null}})
        ),
        "the NodePool was gone before its finalizer was removed"
    );
    let (run, _) = apply.wait(Duration::from_secs(300));
    eprintln!("apply that waited for the deletion took {:?}", started.elapsed());
    assert!(run.success, "{}", run.output());
    assert!(
        run.stderr.lines().any(progress),
        "no progress line:\n{}",
        run.stderr
    );
    let pool = cluster.node_pool("default").expect("NodePool created again");
    assert_ne!(uid(&pool), first, "a new object");
    assert!(pool["metadata"]["deletionTimestamp"].is_null(), "{pool:#}");
    assert!(
        work.plan_is_empty(),
        "plan after the recreation must be empty:\n{}",
        work.plan().output()
    );
}
