//! #29, part 3: `karpenter_node_role` with `mode = "eks_auto_mode"` and its EKS access entry,
//! through the real terraform. IAM is moto's; the EKS cluster is moto's too, but moto has no
//! access entries, so the fault proxy answers those calls from its stand-in
//! (`acceptance_tests::eks_standin`, which says what it models). Checked: the two policies the
//! EKS guide names and no instance profile; an entry of type `EC2` with
//! `AmazonEKSAutoNodePolicy`; a re-plan that is empty; drift of the policy and of the entry
//! shown and repaired; the mode switched to Karpenter's shape (type `EC2_LINUX`, no policy);
//! an entry someone else made refused on create, and taken over by import `<role>:<cluster>`;
//! a failed move to another cluster orphans nothing; destroy removes the entries with the roles.

use std::collections::BTreeSet;

use crate::iam_common::{assert_nothing_left, attached, client};
use acceptance_tests::moto::{self, Fault, FaultProxy, Moto};
use acceptance_tests::{Workdir, resource_at};

const AUTO_NODE_POLICY: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAutoNodePolicy";

fn config(mode: Option<&str>) -> String {
    let mode = mode.map_or_else(String::new, |m| format!("  mode = \"{m}\"\n"));
    format!(
        r#"
resource "karpenter_node_role" "auto" {{
  name = "eks-auto-nodes"
{mode}  eks_access_entry = {{
    cluster_name = "demo"
  }}
}}
"#
    )
}

fn policies(names: &[&str]) -> BTreeSet<String> {
    names
        .iter()
        .map(|p| format!("arn:aws:iam::aws:policy/{p}"))
        .collect()
}

async fn create_cluster(moto: &Moto, name: &str) {
    let eks = aws_sdk_eks::Client::new(&moto.sdk_config());
    eks.create_cluster()
        .name(name)
        .role_arn("arn:aws:iam::123456789012:role/eks")
        .resources_vpc_config(aws_sdk_eks::types::VpcConfigRequest::builder().build())
        .send()
        .await
        .expect("CreateCluster");
}

fn entries(proxy: &FaultProxy) -> Vec<(String, String, String, Vec<String>)> {
    proxy.access_entries().list()
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_mode_node_role_and_access_entry_lifecycle() {
    let moto = Moto::start();
    create_cluster(&moto, "demo").await;
    let proxy = FaultProxy::start(moto.port());
    let iam = client(&moto);
    let arn = "arn:aws:iam::123456789012:role/eks-auto-nodes";
    let work = moto::workdir(&proxy.provider_block(), &config(Some("eks_auto_mode")));
    work.apply().ok();

    assert_eq!(
        attached(&iam, "eks-auto-nodes").await,
        policies(&[
            "AmazonEKSWorkerNodeMinimalPolicy",
            "AmazonEC2ContainerRegistryPullOnly"
        ])
    );
    let profiles = iam
        .list_instance_profiles_for_role()
        .role_name("eks-auto-nodes")
        .send()
        .await
        .expect("ListInstanceProfilesForRole");
    assert!(profiles.instance_profiles().is_empty());
    assert_eq!(
        entries(&proxy),
        vec![(
            "demo".into(),
            arn.into(),
            "EC2".into(),
            vec![AUTO_NODE_POLICY.to_string()]
        )]
    );
    let state = work.state();
    let values = &resource_at(&state, "karpenter_node_role.auto")["values"];
    assert_eq!(values["access_entry_type"], "EC2");
    assert!(
        values["access_entry_arn"]
            .as_str()
            .is_some_and(|a| a.contains("access-entry/demo")),
        "{values}"
    );
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // The access policy removed outside Terraform: shown, and put back.
    assert!(proxy.access_entries().disassociate("demo", arn, AUTO_NODE_POLICY));
    let run = work.plan().ok();
    assert!(run.stdout.contains("~ access_policy_arns"), "{}", run.stdout);
    work.apply().ok();
    assert_eq!(entries(&proxy)[0].3, vec![AUTO_NODE_POLICY.to_string()]);

    // The entry deleted outside Terraform: shown, and made again.
    assert!(proxy.access_entries().delete("demo", arn));
    let run = work.plan().ok();
    assert!(run.stdout.contains("access_entry_arn"), "{}", run.stdout);
    work.apply().ok();
    assert_eq!(entries(&proxy).len(), 1);
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // Karpenter's shape: the four node policies and an EC2_LINUX entry without policies.
    work.set_config(&format!("{}\n{}", proxy.provider_block(), config(None)));
    let run = work.plan().ok();
    assert!(run.stdout.contains("\"EC2\" -> \"EC2_LINUX\""), "{}", run.stdout);
    work.apply().ok();
    assert_eq!(
        attached(&iam, "eks-auto-nodes").await,
        policies(&[
            "AmazonEKSWorkerNodePolicy",
            "AmazonEKS_CNI_Policy",
            "AmazonEC2ContainerRegistryPullOnly",
            "AmazonSSMManagedInstanceCore"
        ])
    );
    assert_eq!(
        entries(&proxy),
        vec![("demo".into(), arn.into(), "EC2_LINUX".into(), Vec::new())]
    );
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    work.destroy().ok();
    assert!(entries(&proxy).is_empty());
    assert_nothing_left(&iam).await;
}

/// A move to another cluster whose apply fails in IAM (before the entry is touched) keeps the
/// entry recorded in the old cluster, so the next apply deletes it there: nothing is orphaned.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_move_to_another_cluster_keeps_the_old_entry_recorded() {
    let moto = Moto::start();
    create_cluster(&moto, "demo").await;
    create_cluster(&moto, "demo2").await;
    let proxy = FaultProxy::start(moto.port());
    let arn = "arn:aws:iam::123456789012:role/eks-auto-nodes";
    let work = moto::workdir(&proxy.provider_block(), &config(Some("eks_auto_mode")));
    work.apply().ok();
    assert_eq!(entries(&proxy)[0].0, "demo");

    let moved = config(Some("eks_auto_mode"))
        .replace("\"demo\"", "\"demo2\"")
        .replace(
            "  eks_access_entry",
            "  additional_policy_arns = [\"arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy\"]\n  eks_access_entry",
        );
    work.set_config(&format!("{}\n{moved}", proxy.provider_block()));
    proxy.arm(Fault::new("Action=AttachRolePolicy", 1, 400, "InvalidInput"));
    work.apply().failed();
    assert_eq!(
        entries(&proxy),
        vec![(
            "demo".into(),
            arn.into(),
            "EC2".into(),
            vec![AUTO_NODE_POLICY.to_string()]
        )],
        "the failed apply left the entry alone"
    );
    let state = work.state();
    let values = &resource_at(&state, "karpenter_node_role.auto")["values"];
    assert_eq!(values["eks_access_entry"]["cluster_name"], "demo", "{values}");

    work.apply().ok();
    assert_eq!(
        entries(&proxy),
        vec![(
            "demo2".into(),
            arn.into(),
            "EC2".into(),
            vec![AUTO_NODE_POLICY.to_string()]
        )]
    );
    work.destroy().ok();
    assert!(entries(&proxy).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_entry_made_elsewhere_is_refused_on_create_and_taken_over_by_import() {
    let moto = Moto::start();
    create_cluster(&moto, "demo").await;
    let proxy = FaultProxy::start(moto.port());
    let iam = client(&moto);
    // Made by another tool: the role, and its entry in the cluster.
    iam.create_role()
        .role_name("ext-nodes")
        .assume_role_policy_document(
            r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#,
        )
        .send()
        .await
        .expect("CreateRole");
    for p in [
        "AmazonEKSWorkerNodeMinimalPolicy",
        "AmazonEC2ContainerRegistryPullOnly",
    ] {
        iam.attach_role_policy()
            .role_name("ext-nodes")
            .policy_arn(format!("arn:aws:iam::aws:policy/{p}"))
            .send()
            .await
            .expect("AttachRolePolicy");
    }
    let ext = "arn:aws:iam::123456789012:role/ext-nodes";
    proxy.access_entries().insert("demo", ext, "EC2");
    // A stale entry left behind by a deleted role of the name this configuration creates.
    let stale = "arn:aws:iam::123456789012:role/fresh-nodes";
    proxy.access_entries().insert("demo", stale, "EC2");

    let fresh = r#"
resource "karpenter_node_role" "fresh" {
  name             = "fresh-nodes"
  mode             = "eks_auto_mode"
  eks_access_entry = { cluster_name = "demo" }
}
"#;
    let work = moto::workdir(&proxy.provider_block(), fresh);
    let run = work.apply().failed();
    let text = run.output().replace('\n', " ");
    for expected in [
        "EKS access entry already exists",
        "eks_access_entry",
        "fresh-nodes:demo",
    ] {
        assert!(
            text.contains(expected),
            "missing {expected:?} in:\n{}",
            run.output()
        );
    }
    // Nothing was taken over: the entry is as it was, and the role that was created is in state.
    assert!(entries(&proxy).iter().any(|e| e.1 == stale && e.3.is_empty()));
    let state = work.state();
    let fresh_values = &resource_at(&state, "karpenter_node_role.fresh")["values"];
    assert_eq!(fresh_values["name"], "fresh-nodes");
    assert!(
        fresh_values["access_entry_arn"].is_null(),
        "the refused entry is not recorded: {fresh_values}"
    );

    let importer = moto::workdir(
        &proxy.provider_block(),
        r#"
import {
  to = karpenter_node_role.ext
  id = "ext-nodes:demo"
}

resource "karpenter_node_role" "ext" {
  name             = "ext-nodes"
  mode             = "eks_auto_mode"
  eks_access_entry = { cluster_name = "demo" }
}
"#,
    );
    let run = importer.plan().ok();
    assert!(run.stdout.contains("1 to import"), "{}", run.stdout);
    assert!(run.stdout.contains("access_policy_arns"), "{}", run.stdout);
    importer.apply().ok();
    assert!(
        entries(&proxy)
            .iter()
            .any(|e| e.1 == ext && e.3 == vec![AUTO_NODE_POLICY.to_string()]),
        "{:?}",
        entries(&proxy)
    );
    assert!(importer.plan_is_empty(), "{}", importer.plan().output());
    importer.destroy().ok();
    assert!(!entries(&proxy).iter().any(|e| e.1 == ext));
    // The refused entry was never this state's: destroy leaves it where it was.
    work.destroy().ok();
    assert!(
        entries(&proxy).iter().any(|e| e.1 == stale),
        "{:?}",
        entries(&proxy)
    );
}

/// The Auto Mode shape refuses the Karpenter shape's settings at plan.
#[test]
fn karpenter_settings_on_an_auto_mode_role_fail_at_plan() {
    let work = Workdir::new(
        r#"
provider "karpenter" {}

resource "karpenter_node_role" "auto" {
  name                    = "eks-auto-nodes"
  mode                    = "eks_auto_mode"
  create_instance_profile = true
  attach_cni_policy       = false
}
"#,
    );
    let run = work.validate().failed();
    let text = run.output().replace('\n', " ");
    for expected in [
        "Not used by an EKS Auto Mode node role",
        "create_instance_profile",
        "attach_cni_policy",
    ] {
        assert!(
            text.contains(expected),
            "missing {expected:?} in:\n{}",
            run.output()
        );
    }
}

/// An access entry for a cluster that does not exist fails on `eks_access_entry`, naming the
/// EKS call; the role made before it is in state, and destroy removes it.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_cluster_is_an_error_on_eks_access_entry() {
    let moto = Moto::start();
    let proxy = FaultProxy::start(moto.port());
    let iam = client(&moto);
    let work = moto::workdir(
        &proxy.provider_block(),
        r#"
resource "karpenter_node_role" "auto" {
  name = "eks-auto-nodes"
  mode = "eks_auto_mode"
  eks_access_entry = {
    cluster_name = "nowhere"
  }
}
"#,
    );
    let run = work.apply().failed();
    let text = run.output();
    for expected in ["eks:CreateAccessEntry", "eks_access_entry = {", "nowhere"] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(entries(&proxy).is_empty());
    let state = work.state();
    assert_eq!(
        resource_at(&state, "karpenter_node_role.auto")["values"]["name"],
        "eks-auto-nodes"
    );
    work.destroy().ok();
    assert_nothing_left(&iam).await;
}

/// #38: the access entry EKS makes itself for the node role of the cluster's Auto Mode compute
/// configuration (`compute_config.node_role_arn`) cannot be modified, so the provider does not
/// manage it. A role that is that node role gets an error saying so (not the offer to import the
/// entry that an entry someone else made gets), with nothing changed: at plan when the cluster
/// already names the role (by ARN, or by name for a role not created yet), else at apply; the import
/// `<role>:<cluster>` is refused the same way; the role alone is still managed.
#[tokio::test(flavor = "multi_thread")]
async fn the_entry_eks_makes_for_the_clusters_node_role_is_not_managed() {
    let moto = Moto::start();
    create_cluster(&moto, "demo").await;
    let proxy = FaultProxy::start(moto.port());
    let iam = client(&moto);
    let arn = "arn:aws:iam::123456789012:role/eks-auto-nodes";
    let role_only = r#"
resource "karpenter_node_role" "auto" {
  name = "eks-auto-nodes"
  mode = "eks_auto_mode"
}
"#;
    let work = moto::workdir(&proxy.provider_block(), role_only);
    work.apply().ok();
    // A plan that adds the entry, saved before the cluster names the role: plan cannot tell yet.
    work.set_config(&format!(
        "{}\n{}",
        proxy.provider_block(),
        config(Some("eks_auto_mode"))
    ));
    work.terraform(&["plan", "-no-color", "-input=false", "-out=entry.tfplan"])
        .ok();
    // The cluster is then created (or Auto Mode enabled) with this role as its node role: EKS
    // makes the role's entry.
    proxy.access_entries().auto_mode_cluster("demo", arn);
    let eks_made = entries(&proxy);
    assert_eq!(
        eks_made,
        vec![(
            "demo".to_string(),
            arn.to_string(),
            "EC2".to_string(),
            vec![AUTO_NODE_POLICY.to_string()]
        )]
    );
    let expect_refusal = |run: &acceptance_tests::Run| {
        let text = run.text();
        for expected in [
            "EKS manages this access entry",
            "compute_config.node_role_arn",
            "cannot be modified",
            "Remove eks_access_entry",
        ] {
            assert!(
                text.contains(expected),
                "missing {expected:?} in:\n{}",
                run.output()
            );
        }
        assert!(!text.contains("terraform import"), "{}", run.output());
    };
    // The saved plan's apply is refused by the apply.
    expect_refusal(
        &work
            .terraform(&["apply", "-no-color", "-input=false", "entry.tfplan"])
            .failed(),
    );
    assert_eq!(entries(&proxy), eks_made, "the entry EKS made is unchanged");
    // From now on plan itself tells: the cluster says the role is its node role.
    let run = work.plan().failed();
    expect_refusal(&run);
    assert!(
        !run.output()
            .contains("Terraform will perform the following actions"),
        "the refusal is the plan's: {}",
        run.output()
    );
    // And for a role this configuration does not manage yet (recognised by name).
    let newcomer = moto::workdir(&proxy.provider_block(), &config(Some("eks_auto_mode")));
    expect_refusal(&newcomer.plan().failed());
    assert_eq!(entries(&proxy), eks_made, "the entry EKS made is unchanged");
    let state = work.state();
    assert!(
        resource_at(&state, "karpenter_node_role.auto")["values"]["access_entry_arn"].is_null(),
        "{state}"
    );

    // Importing it is refused the same way.
    let importer = moto::workdir(&proxy.provider_block(), &config(Some("eks_auto_mode")));
    let run = importer
        .terraform(&[
            "import",
            "-no-color",
            "-input=false",
            "karpenter_node_role.auto",
            "eks-auto-nodes:demo",
        ])
        .failed();
    assert!(
        run.output().contains("EKS manages this access entry"),
        "{}",
        run.output()
    );

    // Without eks_access_entry the role is the provider's as before; destroy leaves EKS's entry.
    work.set_config(&format!("{}\n{role_only}", proxy.provider_block()));
    work.apply().ok();
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
    assert_eq!(entries(&proxy), eks_made);
    assert_nothing_left(&iam).await;
}
