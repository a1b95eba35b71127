//! The legacy `karpenter_provisioner` / `karpenter_node_template` examples pass
//! `terraform validate` through the real CLI, and a few of the era's webhook rules fail there
//! with the attribute path named (offline: validate never contacts a cluster).

use acceptance_tests::{Workdir, repo_file};

#[test]
fn legacy_examples_validate() {
    let work = Workdir::new(&format!(
        "{}\n{}",
        repo_file("examples/resources/karpenter_node_template/resource.tf"),
        repo_file("examples/resources/karpenter_provisioner/resource.tf")
    ));
    work.validate().ok();
}

#[test]
fn legacy_rules_fail_validate() {
    let cases = [
        (
            r#"resource "karpenter_provisioner" "x" {
  name                    = "x"
  consolidation           = { enabled = true }
  ttl_seconds_after_empty = 30
}"#,
            "ttl_seconds_after_empty",
        ),
        (
            r#"resource "karpenter_provisioner" "x" {
  name         = "x"
  requirements = [{ key = "karpenter.sh/capacity-type", operator = "Gte", values = ["spot"] }]
}"#,
            "requirements[0].operator",
        ),
        (
            r#"resource "karpenter_node_template" "x" {
  name             = "x"
  subnet_selector  = { "karpenter.sh/discovery" = "demo" }
  launch_template  = "my-template"
  user_data        = "echo hello"
}"#,
            "user_data",
        ),
    ];
    for (config, path) in cases {
        let work = Workdir::new(config);
        let run = work.validate().failed();
        let text = run.output();
        assert!(text.contains(path), "expected {path} in:\n{text}");
    }
}
