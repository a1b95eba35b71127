//! `karpenter_node_role` against moto through the real terraform: the trust and the attached
//! policies in IAM are exactly the expected ones; drift (a detached policy, an edited trust
//! policy, a removed instance profile) is detected and repaired; import plans empty; destroy
//! leaves nothing. Also applies the resource's examples.

use crate::iam_common;

use std::collections::BTreeSet;

use crate::iam_common::{assert_nothing_left, attached, attrs, client, run_example, trust};
use acceptance_tests::Workdir;
use acceptance_tests::moto::{Fault, FaultProxy, Moto};
use serde_json::json;

const CONFIG: &str = r#"
resource "karpenter_node_role" "this" {
  name                    = "KarpenterNodeRole-demo"
  path                    = "/karpenter/"
  create_instance_profile = true
  ecr_policy              = "AmazonEC2ContainerRegistryReadOnly"
  additional_policy_arns  = ["arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"]
  tags = {
    "karpenter.sh/discovery" = "demo"
  }
}
"#;

fn expected_policies() -> BTreeSet<String> {
    [
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonEC2ContainerRegistryReadOnly",
        "AmazonSSMManagedInstanceCore",
        "CloudWatchAgentServerPolicy",
    ]
    .iter()
    .map(|p| format!("arn:aws:iam::aws:policy/{p}"))
    .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn node_role_lifecycle_drift_import_destroy() {
    let moto = Moto::start();
    let iam = client(&moto);
    let work = moto.workdir(CONFIG);
    work.apply().ok();
    let role = "KarpenterNodeRole-demo";

    let ec2_trust = json!({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}],
    });
    assert_eq!(trust(&iam, role).await, ec2_trust);
    assert_eq!(attached(&iam, role).await, expected_policies());
    let profile = iam
        .get_instance_profile()
        .instance_profile_name(role)
        .send()
        .await
        .expect("instance profile");
    let profile = profile.instance_profile().expect("profile");
    assert_eq!(profile.path(), "/karpenter/");
    assert_eq!(
        profile.roles().iter().map(|r| r.role_name()).collect::<Vec<_>>(),
        vec![role]
    );
    let state = attrs(&work.state(), "karpenter_node_role.this");
    assert_eq!(
        state["arn"],
        "arn:aws:iam::123456789012:role/karpenter/KarpenterNodeRole-demo"
    );
    assert_eq!(state["partition"], "aws");
    assert_eq!(state["instance_profile_name"], role);
    assert!(work.plan_is_empty(), "plan after apply is not empty");

    // Drift: a node policy detached, the trust policy edited, the profile emptied.
    iam.detach_role_policy()
        .role_name(role)
        .policy_arn("arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore")
        .send()
        .await
        .expect("detach");
    let edited = json!({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": ["ec2.amazonaws.com", "lambda.amazonaws.com"]}, "Action": "sts:AssumeRole"}],
    });
    iam.update_assume_role_policy()
        .role_name(role)
        .policy_document(edited.to_string())
        .send()
        .await
        .expect("edit trust");
    iam.remove_role_from_instance_profile()
        .instance_profile_name(role)
        .role_name(role)
        .send()
        .await
        .expect("remove from profile");
    iam.tag_role()
        .role_name(role)
        .tags(
            aws_sdk_iam::types::Tag::builder()
                .key("added")
                .value("outside")
                .build()
                .expect("tag"),
        )
        .send()
        .await
        .expect("tag role");
    let plan = work.plan().ok();
    assert!(plan.stdout.contains("\"added\""), "{}", plan.stdout);
    assert!(
        plan.stdout.contains("AmazonSSMManagedInstanceCore"),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("assume_role_policy"), "{}", plan.stdout);
    assert!(plan.stdout.contains("create_instance_profile"), "{}", plan.stdout);
    work.apply().ok();
    assert_eq!(trust(&iam, role).await, ec2_trust);
    assert_eq!(attached(&iam, role).await, expected_policies());
    let tags = iam.list_role_tags().role_name(role).send().await.expect("tags");
    let tags: Vec<(&str, &str)> = tags.tags().iter().map(|t| (t.key(), t.value())).collect();
    // The user's tags, plus the ownership tag written at create (issue #15), which the user
    // never sees and tag repair never removes.
    assert_eq!(
        tags,
        vec![
            ("karpenter.sh/discovery", "demo"),
            (
                "terraform-provider-karpenter/resource-type",
                "karpenter_node_role"
            )
        ]
    );
    assert!(work.plan_is_empty(), "plan after repair is not empty");

    // A trust policy with the same meaning but other formatting is not drift.
    iam.update_assume_role_policy()
        .role_name(role)
        .policy_document(serde_json::to_string_pretty(&ec2_trust).expect("json"))
        .send()
        .await
        .expect("reformat trust");
    assert!(work.plan_is_empty(), "reformatted trust policy shows as drift");

    // Import into a fresh working directory: the plan is empty.
    let imported = moto.workdir(CONFIG);
    imported
        .terraform(&["import", "-no-color", "karpenter_node_role.this", role])
        .ok();
    assert!(imported.plan_is_empty(), "plan after import is not empty");
    imported
        .terraform(&["state", "rm", "karpenter_node_role.this"])
        .ok();

    // Changed tags reach the role and its instance profile.
    work.set_config(&format!(
        "{}\n{}",
        moto.provider_block(),
        CONFIG.replace("\"karpenter.sh/discovery\" = \"demo\"", "team = \"platform\"")
    ));
    work.apply().ok();
    let tags = iam.list_role_tags().role_name(role).send().await.expect("tags");
    let tags: Vec<(&str, &str)> = tags.tags().iter().map(|t| (t.key(), t.value())).collect();
    assert_eq!(
        tags,
        vec![
            ("team", "platform"),
            (
                "terraform-provider-karpenter/resource-type",
                "karpenter_node_role"
            )
        ]
    );
    let profile = iam
        .get_instance_profile()
        .instance_profile_name(role)
        .send()
        .await
        .expect("instance profile");
    let mut profile_tags: Vec<(&str, &str)> = profile
        .instance_profile()
        .map(|p| p.tags().iter().map(|t| (t.key(), t.value())).collect())
        .unwrap_or_default();
    profile_tags.sort();
    assert_eq!(
        profile_tags,
        vec![
            ("team", "platform"),
            (
                "terraform-provider-karpenter/resource-type",
                "karpenter_node_role"
            )
        ]
    );
    assert!(work.plan_is_empty(), "plan after a tag change is not empty");

    // A tag added to the instance profile outside Terraform is drift, and apply removes it.
    iam.tag_instance_profile()
        .instance_profile_name(role)
        .tags(
            aws_sdk_iam::types::Tag::builder()
                .key("added")
                .value("outside")
                .build()
                .expect("tag"),
        )
        .send()
        .await
        .expect("tag profile");
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("instance_profile_tags") && plan.stdout.contains("\"added\""),
        "profile tag drift not planned:\n{}",
        plan.stdout
    );
    work.apply().ok();
    let profile = iam
        .get_instance_profile()
        .instance_profile_name(role)
        .send()
        .await
        .expect("instance profile");
    let mut profile_tags: Vec<(&str, &str)> = profile
        .instance_profile()
        .map(|p| p.tags().iter().map(|t| (t.key(), t.value())).collect())
        .unwrap_or_default();
    profile_tags.sort();
    assert_eq!(
        profile_tags,
        vec![
            ("team", "platform"),
            (
                "terraform-provider-karpenter/resource-type",
                "karpenter_node_role"
            )
        ],
        "apply repaired the profile's tags"
    );
    assert!(
        work.plan_is_empty(),
        "plan after repairing the profile's tags is not empty"
    );

    work.destroy().ok();
    assert_nothing_left(&iam).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn node_role_example_applies_imports_and_destroys() {
    let moto = Moto::start();
    run_example(&moto, "karpenter_node_role", "karpenter_node_role.this");
    assert_nothing_left(&client(&moto)).await;
}

/// IAM eventual consistency (a just-created role not yet visible to AttachRolePolicy) is
/// waited out within one apply; a hard failure midway records the role that exists, and the
/// next apply finishes the job.
#[tokio::test(flavor = "multi_thread")]
async fn eventual_consistency_is_retried_and_a_partial_create_converges() {
    let moto = Moto::start();
    let iam = client(&moto);
    let proxy = FaultProxy::start(moto.port());
    let config = r#"
resource "karpenter_node_role" "this" {
  name = "KarpenterNodeRole-demo"
}
"#;
    let mut work = Workdir::new(&format!("{}\n{config}", proxy.provider_block()));
    moto.configure(&mut work);
    let role = "KarpenterNodeRole-demo";
    let mut wanted = expected_policies();
    wanted.remove("arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy");
    wanted.remove("arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly");
    wanted.insert("arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly".into());

    proxy.arm(Fault::new("Action=AttachRolePolicy", 2, 404, "NoSuchEntity"));
    work.apply().ok();
    assert_eq!(proxy.pending(), 0, "the faults were not hit");
    assert_eq!(attached(&iam, role).await, wanted);
    work.destroy().ok();
    assert_nothing_left(&iam).await;

    // A failure that does not heal: the apply fails after the role exists.
    proxy.arm(Fault::new("Action=AttachRolePolicy", 1, 400, "InvalidInput"));
    let failed = work.apply().failed();
    assert!(failed.output().contains("InvalidInput"), "{}", failed.output());
    let state = attrs(&work.state(), "karpenter_node_role.this");
    assert_eq!(state["name"], role, "the created role is recorded");
    work.apply().ok();
    assert_eq!(attached(&iam, role).await, wanted);
    assert!(work.plan_is_empty(), "plan after convergence is not empty");
    work.destroy().ok();
    assert_nothing_left(&iam).await;
}

/// Issue #15, point 1: a role or instance profile of the configured name that someone else
/// created is refused on the name, left exactly as it was, and survives `terraform destroy`.
#[tokio::test(flavor = "multi_thread")]
async fn an_existing_foreign_role_or_profile_is_refused_and_never_touched() {
    let moto = Moto::start();
    let iam = client(&moto);
    let empty_trust = json!({"Version": "2012-10-17", "Statement": []});
    iam.create_role()
        .role_name("someone-elses")
        .assume_role_policy_document(empty_trust.to_string())
        .send()
        .await
        .expect("CreateRole");
    let work = moto.workdir(
        r#"
resource "karpenter_node_role" "this" {
  name = "someone-elses"
}
"#,
    );
    let failed = work.apply().failed();
    // Terraform wraps diagnostics at 80 columns.
    let out = failed.output().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(out.contains("IAM role already exists"), "{out}");
    assert!(
        out.contains("terraform import karpenter_node_role.<name> someone-elses"),
        "{out}"
    );
    assert!(
        out.contains("with karpenter_node_role.this") && out.contains("name"),
        "{out}"
    );
    assert_eq!(
        trust(&iam, "someone-elses").await,
        empty_trust,
        "the trust was replaced"
    );
    assert!(
        attached(&iam, "someone-elses").await.is_empty(),
        "policies were attached"
    );
    work.destroy().ok();
    iam.get_role()
        .role_name("someone-elses")
        .send()
        .await
        .expect("the foreign role was deleted");

    // An instance profile of the role's name, holding no role.
    iam.create_instance_profile()
        .instance_profile_name("KarpenterNodeRole-demo")
        .send()
        .await
        .expect("CreateInstanceProfile");
    work.set_config(&format!(
        "{}\n{}",
        moto.provider_block(),
        r#"
resource "karpenter_node_role" "this" {
  name                    = "KarpenterNodeRole-demo"
  create_instance_profile = true
}
"#
    ));
    let failed = work.apply().failed();
    assert!(
        failed.output().contains("Instance profile already exists"),
        "{}",
        failed.output()
    );
    let profile = iam
        .get_instance_profile()
        .instance_profile_name("KarpenterNodeRole-demo")
        .send()
        .await
        .expect("the foreign profile was deleted");
    assert!(
        profile.instance_profile().expect("profile").roles().is_empty(),
        "a role was added"
    );
    assert!(
        iam.get_role()
            .role_name("KarpenterNodeRole-demo")
            .send()
            .await
            .is_err(),
        "a role was created although the profile is refused"
    );
    work.destroy().ok();
    iam.get_instance_profile()
        .instance_profile_name("KarpenterNodeRole-demo")
        .send()
        .await
        .expect("destroy deleted the foreign profile");
}

/// Issue #15, point 5: a typo in `additional_policy_arns` fails before anything is created,
/// on the element; after the fix the next apply creates the role (no taint, no `-/+`). On an
/// existing role, a bad ARN fails the update and the role keeps its ID.
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_additional_policy_creates_nothing_and_never_replaces_the_role() {
    let moto = Moto::start();
    let iam = client(&moto);
    let role = "KarpenterNodeRole-demo";
    let config = |arn: &str| {
        format!(
            r#"
resource "karpenter_node_role" "this" {{
  name                   = "{role}"
  additional_policy_arns = ["{arn}"]
}}
"#
        )
    };
    let good = "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy";
    let typo = "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicyy";
    let work = moto.workdir(&config(typo));
    let failed = work.apply().failed();
    let out = failed.output();
    assert!(out.contains("Managed policy not found"), "{out}");
    assert!(out.contains("additional_policy_arns"), "{out}");
    assert!(
        iam.get_role().role_name(role).send().await.is_err(),
        "the role was created"
    );
    assert!(
        work.state()
            .get("resources")
            .and_then(|r| r.as_array())
            .is_none_or(|r| r.is_empty())
    );

    work.set_config(&format!("{}\n{}", moto.provider_block(), config(good)));
    let applied = work.apply().ok();
    assert!(
        !applied.output().contains("must be replaced"),
        "{}",
        applied.output()
    );
    let id = attrs(&work.state(), "karpenter_node_role.this")["arn"].clone();
    assert!(attached(&iam, role).await.contains(good));

    // Update with a typo: fails on the element, nothing changes, no replacement planned.
    work.set_config(&format!("{}\n{}", moto.provider_block(), config(typo)));
    let failed = work.apply().failed();
    assert!(
        failed.output().contains("Managed policy not found"),
        "{}",
        failed.output()
    );
    assert!(
        !failed.output().contains("must be replaced"),
        "{}",
        failed.output()
    );
    assert!(
        attached(&iam, role).await.contains(good),
        "the update changed the role"
    );
    work.set_config(&format!("{}\n{}", moto.provider_block(), config(good)));
    assert!(work.plan_is_empty(), "plan after the failed update is not empty");
    assert_eq!(attrs(&work.state(), "karpenter_node_role.this")["arn"], id);
    work.destroy().ok();
    assert_nothing_left(&iam).await;
}

/// Issue #15, point 4: an inline policy added outside Terraform (`s3:*`) and an attached
/// managed policy not in the configuration show in the plan, and apply removes both.
#[tokio::test(flavor = "multi_thread")]
async fn out_of_band_inline_and_managed_policies_are_drift_and_removed() {
    let moto = Moto::start();
    let iam = client(&moto);
    let role = "KarpenterNodeRole-demo";
    let work = moto.workdir(&format!(
        "resource \"karpenter_node_role\" \"this\" {{\n  name = \"{role}\"\n}}\n"
    ));
    work.apply().ok();
    let before = attached(&iam, role).await;
    iam_common::add_out_of_band_permissions(&iam, role).await;
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("unmanaged_inline_policies") && plan.stdout.contains("\"s3-everything\""),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("AdministratorAccess"), "{}", plan.stdout);
    work.apply().ok();
    let names = iam
        .list_role_policies()
        .role_name(role)
        .send()
        .await
        .expect("ListRolePolicies");
    assert!(names.policy_names().is_empty(), "{:?}", names.policy_names());
    assert_eq!(attached(&iam, role).await, before);
    assert!(work.plan_is_empty(), "plan after the repair is not empty");
    work.destroy().ok();
    assert_nothing_left(&iam).await;
}

/// The access entry's cluster name follows EKS's rule (1–100 letters, digits, `-` and `_`,
/// starting with a letter or digit), as every other cluster name the provider takes does: a
/// name EKS would refuse at apply fails `terraform validate` on the attribute, naming the
/// character (#40; before, anything non-empty passed and `CreateAccessEntry` failed mid-apply).
#[test]
fn a_bad_access_entry_cluster_name_fails_validation_on_the_attribute() {
    for (cluster, said) in [
        ("my.cluster", "contains '.' (character 3)"),
        ("-cluster", "must start with a letter or digit"),
    ] {
        let work = Workdir::new(&format!(
            r#"
resource "karpenter_node_role" "this" {{
  name             = "KarpenterNodeRole-demo"
  eks_access_entry = {{ cluster_name = "{cluster}" }}
}}
"#
        ));
        let run = work.validate().failed();
        // Terraform wraps the detail: compare with single spaces.
        let out = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(out.contains("eks_access_entry.cluster_name"), "{cluster}: {out}");
        assert!(out.contains("an EKS cluster name"), "{cluster}: {out}");
        assert!(out.contains(said), "{cluster}: {out}");
    }
}
