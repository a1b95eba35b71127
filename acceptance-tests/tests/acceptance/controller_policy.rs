//! `data "karpenter_controller_policy"` through the real terraform CLI: the example renders,
//! bad input fails at plan with the attribute path, provider logs reach TF_LOG_PROVIDER, and a
//! provider block that is unknown at plan time still plans.

use acceptance_tests::{Workdir, repo_file};

const UPSTREAM_SIDS: &[&str] = &[
    "AllowScopedEC2InstanceAccessActions",
    "AllowScopedEC2LaunchTemplateAccessActions",
    "AllowScopedEC2InstanceActionsWithTags",
    "AllowScopedResourceCreationTagging",
    "AllowScopedResourceTagging",
    "AllowScopedDeletion",
    "AllowPassingInstanceRole",
    "AllowScopedInstanceProfileCreationActions",
    "AllowScopedInstanceProfileTagActions",
    "AllowScopedInstanceProfileActions",
    "AllowAPIServerEndpointDiscovery",
    "AllowInterruptionQueueActions",
    "AllowZonalShiftStatusReadOnly",
    "AllowRegionalReadActions",
    "AllowSSMReadActions",
    "AllowPricingReadActions",
    "AllowUnscopedInstanceProfileListAction",
    "AllowInstanceProfileReadActions",
];

#[test]
fn example_renders_a_policy_with_every_upstream_statement() {
    let work = Workdir::new(&repo_file(
        "examples/data-sources/karpenter_controller_policy/data-source.tf",
    ));
    work.validate().ok();
    work.apply().ok();
    let outputs = work.outputs();
    let json = outputs["controller_policy_json"]["value"]
        .as_str()
        .expect("policy output is a string");
    let policy: serde_json::Value = serde_json::from_str(json).expect("policy is JSON");
    assert_eq!(policy["Version"], "2012-10-17");
    let sids: Vec<&str> = policy["Statement"]
        .as_array()
        .expect("statements")
        .iter()
        .filter_map(|s| s["Sid"].as_str())
        .collect();
    assert_eq!(sids, UPSTREAM_SIDS);
    let pass_role = &policy["Statement"][6];
    assert_eq!(
        pass_role["Resource"],
        "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"
    );
    assert!(work.plan_is_empty(), "a second plan must be empty");
    work.destroy().ok();
}

#[test]
fn structured_statements_and_documents_match_the_json() {
    let work = Workdir::new(
        r#"
data "karpenter_controller_policy" "p" {
  cluster_name  = "blue"
  region        = "cn-north-1"
  account_id    = "111122223333"
  node_role_arn = "arn:aws-cn:iam::111122223333:role/nodes"
}
output "partition" { value = data.karpenter_controller_policy.p.partition }
output "groups"    { value = keys(data.karpenter_controller_policy.p.documents) }
output "sids"      { value = [for s in data.karpenter_controller_policy.p.statements : s.sid] }
output "deletion"  { value = [for s in data.karpenter_controller_policy.p.statements : s if s.sid == "AllowScopedDeletion"][0] }
"#,
    );
    work.apply().ok();
    let out = work.outputs();
    assert_eq!(out["partition"]["value"], "aws-cn");
    let groups: Vec<&str> = out["groups"]["value"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g.as_str())
        .collect();
    assert_eq!(
        groups,
        [
            "EKSIntegration",
            "IAMIntegration",
            "NodeLifecycle",
            "ResourceDiscovery",
            "ZonalShift"
        ]
    );
    let sids = out["sids"]["value"].as_array().expect("sids");
    assert_eq!(sids.len(), 17, "no queue, no interruption statement");
    let deletion = &out["deletion"]["value"];
    assert_eq!(deletion["resources"][0], "arn:aws-cn:ec2:cn-north-1:*:instance/*");
    assert_eq!(
        deletion["conditions"][0]["variable"],
        "aws:ResourceTag/kubernetes.io/cluster/blue"
    );
}

/// `karpenter_version` (#50): unset, the newest release the provider knows (v1.15, with
/// `ec2:RebootInstances`); pinned, that release however it is spelled (v1.8: one policy); an
/// unknown release fails the plan on the attribute, listing the known ones.
#[test]
fn karpenter_version_renders_that_releases_policy() {
    let work = Workdir::new(
        r#"
data "karpenter_controller_policy" "newest" {
  cluster_name  = "demo"
  region        = "us-east-1"
  account_id    = "123456789012"
  node_role_arn = "arn:aws:iam::123456789012:role/nodes"
}
data "karpenter_controller_policy" "v18" {
  cluster_name      = "demo"
  region            = "us-east-1"
  account_id        = "123456789012"
  node_role_arn     = "arn:aws:iam::123456789012:role/nodes"
  karpenter_version = "1.8"
}
output "newest_version" { value = data.karpenter_controller_policy.newest.karpenter_version }
output "newest_json"    { value = data.karpenter_controller_policy.newest.json }
output "v18_groups"     { value = keys(data.karpenter_controller_policy.v18.documents) }
output "v18_json"       { value = data.karpenter_controller_policy.v18.json }
"#,
    );
    work.apply().ok();
    let out = work.outputs();
    assert_eq!(out["newest_version"]["value"], "v1.15");
    let newest = out["newest_json"]["value"].as_str().expect("json");
    assert!(newest.contains("ec2:RebootInstances"), "{newest}");
    assert_eq!(out["v18_groups"]["value"], serde_json::json!(["Controller"]));
    let v18 = out["v18_json"]["value"].as_str().expect("json");
    assert!(
        !v18.contains("ec2:RebootInstances") && v18.contains("AllowScopedDeletion"),
        "{v18}"
    );

    let bad = Workdir::new(
        r#"
data "karpenter_controller_policy" "p" {
  cluster_name      = "demo"
  region            = "us-east-1"
  account_id        = "123456789012"
  node_role_arn     = "arn:aws:iam::123456789012:role/nodes"
  karpenter_version = "v1.16"
}
"#,
    );
    let run = bad.plan().failed();
    let text = run.text();
    assert!(
        text.contains("does not know the controller policy of Karpenter v1.16"),
        "{}",
        run.output()
    );
    assert!(
        text.contains("v1.0, v1.1") && text.contains("v1.15"),
        "{}",
        run.output()
    );
    assert!(
        run.output().contains("karpenter_version = \"v1.16\""),
        "{}",
        run.output()
    );
}

#[test]
fn bad_arn_fails_plan_at_the_attribute() {
    let work = Workdir::new(
        r#"
data "karpenter_controller_policy" "bad" {
  cluster_name  = "demo"
  region        = "us-east-1"
  account_id    = "123456789012"
  node_role_arn = "arn:aws:iam::123456789012:user/not-a-role"
}
"#,
    );
    let run = work.plan().failed();
    let out = run.output();
    assert!(out.contains("Invalid attribute value"), "{out}");
    assert!(
        run.text()
            .contains("node_role_arn: \"arn:aws:iam::123456789012:user/not-a-role\" is not an IAM role ARN"),
        "{out}"
    );
    // Terraform shows the offending line when the diagnostic carries the attribute path.
    assert!(
        out.contains("node_role_arn = \"arn:aws:iam::123456789012:user/not-a-role\""),
        "{out}"
    );
}

#[test]
fn provider_logs_reach_tf_log_provider() {
    let mut work = Workdir::new(&repo_file(
        "examples/data-sources/karpenter_controller_policy/data-source.tf",
    ));
    work.env("TF_LOG_PROVIDER", "debug");
    let run = work.plan().ok();
    assert!(
        run.stderr.lines().any(|l| l.contains("provider.terraform-provider-karpenter") && l.contains("provider configured")),
        "no provider log line in stderr:\n{}",
        run.stderr
    );
}

#[test]
fn provider_block_unknown_at_plan_time_still_plans() {
    let work = Workdir::new(
        r#"
resource "terraform_data" "cluster" {
  input = "https://cluster.example:6443"
}

provider "karpenter" {
  kubernetes {
    host  = terraform_data.cluster.output
    token = "not-a-real-token"
  }
}

data "karpenter_controller_policy" "p" {
  cluster_name  = "demo"
  region        = "us-east-1"
  account_id    = "123456789012"
  node_role_arn = "arn:aws:iam::123456789012:role/nodes"
}
"#,
    );
    let run = work.plan().ok();
    assert!(
        run.stdout.contains("terraform_data.cluster will be created"),
        "{}",
        run.output()
    );
    work.apply().ok();
}
