//! #18, "status noise": through the real terraform CLI against the Kubernetes API test server,
//! whose simulated Karpenter fills the NodePool's status as soon as it is created.
//!
//! - after create, state holds the status the server has (not an empty one until a refresh);
//! - a change of the NodePool's own labels (or of provider-side settings) plans no `status`
//!   "(known after apply)", and applies without an inconsistent result;
//! - a `spec` change keeps the prior `status` in the plan too (#28: a one-value change reads as
//!   one line), applies cleanly, and the next refresh reads the status Karpenter wrote since;
//! - the plan after each apply is empty.
//!
//! Plan sizes are printed (`--nocapture`).

use acceptance_tests::Workdir;
use acceptance_tests::kube::Cluster;
use serde_json::Value;

fn pool(team: &str, cpu: &str, force_destroy: bool) -> String {
    format!(
        r#"
resource "karpenter_node_pool" "default" {{
  name     = "default"
  metadata = {{ labels = {{ team = "{team}" }} }}
  template = {{
    spec = {{
      node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }}]
    }}
  }}
  limits        = {{ cpu = "{cpu}" }}
  force_destroy = {force_destroy}
}}
"#
    )
}

fn state_status(work: &Workdir) -> Value {
    let state = work.state();
    state["values"]["root_module"]["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["type"] == "karpenter_node_pool"))
        .map(|r| r["values"]["status"].clone())
        .unwrap_or(Value::Null)
}

/// The plan's changed-resource lines, and how many of them say "(known after apply)".
fn plan_counts(work: &Workdir) -> (String, usize, usize) {
    let run = work.plan().ok();
    let lines = run.stdout.lines().count();
    let unknown = run
        .stdout
        .lines()
        .filter(|l| l.contains("(known after apply)"))
        .count();
    (run.stdout, lines, unknown)
}

#[test]
fn status_is_filled_after_create_and_planned_unknown_only_for_spec_changes() {
    let cluster = Cluster::with_v1_crds();
    let provider = cluster.provider_block();
    let work = Workdir::new(&format!("{provider}\n{}", pool("a", "100", false)));
    work.apply().ok();

    // State after create has what the server has (the simulated Karpenter's Ready conditions).
    let status = state_status(&work);
    let server = cluster.node_pool("default").expect("NodePool");
    let ready = |conditions: &Value| {
        conditions
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
    };
    assert!(ready(&server["status"]["conditions"]), "{server:#}");
    assert!(
        ready(&status["conditions"]),
        "status in state after create: {status:#}"
    );
    assert_eq!(status["nodes"], server["status"]["nodes"], "{status:#}");
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // Labels and force_destroy only: no status "(known after apply)".
    work.set_config(&format!("{provider}\n{}", pool("b", "100", true)));
    let (plan, lines, unknown) = plan_counts(&work);
    eprintln!("labels-only plan: {lines} lines, {unknown} \"(known after apply)\"");
    assert!(plan.contains("team"), "{plan}");
    assert!(plan.contains("1 to change"), "{plan}");
    assert_eq!(unknown, 0, "{plan}");
    assert!(!plan.contains("status"), "{plan}");
    let run = work.apply().ok();
    assert!(!run.text().contains("inconsistent"), "{}", run.output());
    assert_eq!(state_status(&work), status, "the prior status, as planned");
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // A spec change: the prior status stays in the plan too; a refresh then reads the new one.
    work.set_config(&format!("{provider}\n{}", pool("b", "200", true)));
    let (plan, lines, unknown) = plan_counts(&work);
    eprintln!("spec plan: {lines} lines, {unknown} \"(known after apply)\"");
    assert!(plan.contains("\"200\""), "{plan}");
    assert!(!plan.contains("status"), "{plan}");
    assert_eq!(unknown, 0, "{plan}");
    let run = work.apply().ok();
    assert!(!run.text().contains("inconsistent"), "{}", run.output());
    assert!(ready(&state_status(&work)["conditions"]));
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    assert!(
        cluster.server.patch_object(
            "karpenter.sh",
            "nodepools",
            "",
            "default",
            &serde_json::json!({"status": {"nodes": 7}})
        ),
        "the NodePool"
    );
    work.terraform(&["apply", "-refresh-only", "-auto-approve", "-no-color"])
        .ok();
    assert_eq!(
        state_status(&work)["nodes"],
        7,
        "a refresh reads the status Karpenter wrote"
    );
}
