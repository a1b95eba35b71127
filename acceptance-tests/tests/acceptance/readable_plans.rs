//! #28, "a one-line change must read as one line": through the real terraform CLI against the
//! Kubernetes API test server, whose simulated Karpenter writes every kind's status (conditions,
//! and for an EC2NodeClass the resolved AMIs, subnets, security groups and instance profile).
//!
//! For each Kubernetes kind, one spec value is changed (in the configuration, and for two kinds
//! on the server, as drift) and `terraform plan` is rendered. The resource's diff must show the
//! changed value with a few lines of context: no `-> null` for what Karpenter wrote, no
//! `(known after apply)`, and at most [`MAX_DIFF_LINES`] lines. Then the change applies and the
//! next plan is empty. Diff sizes are printed (`--nocapture`).

use acceptance_tests::Workdir;
use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use serde_json::json;

/// A one-value change of a resource nested three levels deep (a NodePool taint) takes about
/// a dozen lines in Terraform's renderer; whatever the provider adds beyond that is noise.
const MAX_DIFF_LINES: usize = 16;

/// The lines of the plan that describe one resource's change: from its `# <address> will be`
/// heading to the line that closes its block.
fn diff_of(plan: &str, address: &str) -> Vec<String> {
    let heading = format!("# {address} ");
    let mut lines = plan
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(&heading))
        .map(str::to_string);
    let mut out: Vec<String> = Vec::new();
    if let Some(first) = lines.next() {
        out.push(first);
    }
    for line in lines {
        let closes = line == "    }";
        out.push(line);
        if closes {
            break;
        }
    }
    out
}

#[track_caller]
fn assert_readable(work: &Workdir, address: &str, changed: &str) {
    let run = work.plan().ok();
    let plan = run.stdout.clone();
    let diff = diff_of(&plan, address);
    eprintln!("{address}, {changed}: {} lines\n{}", diff.len(), diff.join("\n"));
    assert!(!diff.is_empty(), "no change of {address} in the plan:\n{plan}");
    let text = diff.join("\n");
    assert!(
        text.contains(changed),
        "the change {changed:?} is not in the diff:\n{text}"
    );
    assert!(
        !text.contains("-> null"),
        "status or other noise removed in the diff:\n{text}"
    );
    assert!(
        !text.contains("(known after apply)"),
        "unknowns in a one-value diff:\n{text}"
    );
    assert!(
        diff.len() <= MAX_DIFF_LINES,
        "a one-value change of {address} takes {} lines (at most {MAX_DIFF_LINES}):\n{text}",
        diff.len()
    );
    assert!(plan.contains("0 to add, 1 to change, 0 to destroy"), "{plan}");
}

fn v1_config(tag: &str, taint: &str, budget: &str, price: &str, replicas: u32) -> String {
    format!(
        r#"
resource "karpenter_ec2_node_class" "c" {{
  name                          = "c"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{{ alias = "al2023@latest" }}]
  subnet_selector_terms         = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
  security_group_selector_terms = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
  tags                          = {{ team = "{tag}" }}
}}

resource "karpenter_node_pool" "p" {{
  name = "p"
  template = {{
    spec = {{
      node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = karpenter_ec2_node_class.c.name }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }}]
      taints         = [{{ key = "dedicated", value = "{taint}", effect = "NoSchedule" }}]
    }}
  }}
  disruption = {{ consolidate_after = "0s", budgets = [{{ nodes = "{budget}" }}] }}
  limits     = {{ cpu = "100" }}
}}

resource "karpenter_node_overlay" "o" {{
  name         = "o"
  requirements = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
  price        = "{price}"
}}

resource "karpenter_capacity_buffer" "b" {{
  name             = "b"
  pod_template_ref = {{ name = "t" }}
  replicas         = {replicas}
}}
"#
    )
}

#[test]
fn one_value_changes_of_the_v1_kinds_read_as_one_line() {
    let cluster = Cluster::with_alpha_crds();
    let provider = cluster.provider_block();
    let config = |tag, taint, budget, price, replicas| {
        format!("{provider}\n{}", v1_config(tag, taint, budget, price, replicas))
    };
    let work = Workdir::new(&config("a", "gpu", "10%", "0.5", 1));
    work.apply().ok();
    cluster.eventually("the simulated Karpenter resolves the class's AMIs", || {
        cluster
            .node_class("c")
            .is_some_and(|c| c["status"]["amis"].as_array().is_some_and(|a| !a.is_empty()))
    });
    // The state holds the whole status, as a reviewer's state does.
    work.terraform(&["apply", "-refresh-only", "-auto-approve", "-no-color"])
        .ok();
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    let steps: [(&str, &str, [&str; 5]); 5] = [
        (
            "karpenter_ec2_node_class.c",
            "\"b\"",
            ["b", "gpu", "10%", "0.5", "1"],
        ),
        ("karpenter_node_pool.p", "\"ml\"", ["b", "ml", "10%", "0.5", "1"]),
        ("karpenter_node_pool.p", "\"20%\"", ["b", "ml", "20%", "0.5", "1"]),
        (
            "karpenter_node_overlay.o",
            "\"0.7\"",
            ["b", "ml", "20%", "0.7", "1"],
        ),
        ("karpenter_capacity_buffer.b", "2", ["b", "ml", "20%", "0.7", "2"]),
    ];
    for (address, changed, [tag, taint, budget, price, replicas]) in steps {
        work.set_config(&config(
            tag,
            taint,
            budget,
            price,
            replicas.parse().expect("replicas"),
        ));
        assert_readable(&work, address, changed);
        let run = work.apply().ok();
        assert!(!run.text().contains("inconsistent"), "{}", run.output());
        assert!(work.plan_is_empty(), "{}", work.plan().output());
    }

    // Drift: one spec value changed on the server reads as one line too.
    assert!(cluster.server.patch_object(
        "karpenter.k8s.aws",
        "ec2nodeclasses",
        "",
        "c",
        &json!({"spec": {"tags": {"team": "someone-else"}}})
    ));
    assert_readable(&work, "karpenter_ec2_node_class.c", "\"someone-else\"");
    work.apply().ok();
    assert!(cluster.server.patch_object(
        "karpenter.sh",
        "nodepools",
        "",
        "p",
        &json!({"spec": {"disruption": {"budgets": [{"nodes": "99%"}]}}})
    ));
    assert_readable(&work, "karpenter_node_pool.p", "\"99%\"");
    work.apply().ok();
    assert!(work.plan_is_empty(), "{}", work.plan().output());
}

fn legacy_config(label: &str, tag: &str) -> String {
    format!(
        r#"
resource "karpenter_node_template" "t" {{
  name                     = "t"
  subnet_selector          = {{ "karpenter.sh/discovery" = "demo" }}
  security_group_selector  = {{ "karpenter.sh/discovery" = "demo" }}
  tags                     = {{ team = "{tag}" }}
}}

resource "karpenter_provisioner" "p" {{
  name         = "p"
  labels       = {{ team = "{label}" }}
  provider_ref = {{ name = karpenter_node_template.t.name }}
}}
"#
    )
}

#[test]
fn one_value_changes_of_the_legacy_kinds_read_as_one_line() {
    let cluster = Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1alpha5")],
        controller: ControllerConfig::karpenter(),
        ..Config::default()
    });
    let provider = cluster.provider_block();
    let work = Workdir::new(&format!("{provider}\n{}", legacy_config("a", "a")));
    work.apply().ok();
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.set_config(&format!("{provider}\n{}", legacy_config("b", "a")));
    assert_readable(&work, "karpenter_provisioner.p", "\"b\"");
    work.apply().ok();
    work.set_config(&format!("{provider}\n{}", legacy_config("b", "b")));
    assert_readable(&work, "karpenter_node_template.t", "\"b\"");
    work.apply().ok();
    assert!(work.plan_is_empty(), "{}", work.plan().output());
}
