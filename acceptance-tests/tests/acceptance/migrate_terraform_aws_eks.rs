//! Migrating from terraform-aws-eks's `modules/karpenter` (#26, item 2): moto is seeded with
//! what the module's defaults make — v21 (five rules, PullOnly, `DenyHTTP` with `Bool`), v20
//! (four rules, ReadOnly, `DenyHTTP` with `StringEquals`), a v21 variant with a custom
//! `queue_name` and `rule_name_prefix`, and a stack shaped like the CloudFormation reference
//! (rules named by CloudFormation, no cluster tag, kept under their names with `rule_names`)
//! — plus a message in the queue and an
//! instance profile Karpenter's controller made for the node role. Then exactly the
//! configuration of `docs/guides/migrating-from-terraform-aws-eks.md` is applied, with its
//! import blocks: nothing is replaced or deleted that nodes or the controller use, the
//! controller keeps the permissions it had, the module's rules are replaced by the resource's
//! own (created before the old ones are deleted), and the plan after it is empty. Switching the
//! controller to provider-written permissions then adds them before detaching the module's.

use std::collections::BTreeSet;

use crate::iam_common::attached;
use acceptance_tests::moto::{FaultProxy, Moto, configure_env};
use acceptance_tests::{Workdir, repo_file};
use serde_json::json;

const ACCOUNT: &str = "123456789012";
const REGION: &str = "us-east-1";

/// One module installation to seed.
struct Seed {
    cluster: &'static str,
    queue: &'static str,
    /// Rule names by our kind key, as the module (or CloudFormation) named them.
    rules: Vec<(&'static str, String)>,
    /// The `ClusterName` tag the module puts on its rules (CloudFormation puts none).
    rule_cluster_tag: bool,
    deny_http_condition: serde_json::Value,
    controller_role: &'static str,
    controller_policy: &'static str,
    node_role: &'static str,
    ecr_policy: &'static str,
    /// Keep the rules under their own names (`rule_names`), instead of replacing them.
    keep_names: bool,
}

const SFX: &str = "20240312093015123400000001";

fn module_rules(prefix: &str, five: bool) -> Vec<(&'static str, String)> {
    let mut rules = vec![
        ("scheduled_change", format!("{prefix}HealthEvent-{SFX}")),
        ("spot_interruption", format!("{prefix}SpotInterrupt-{SFX}")),
        ("rebalance", format!("{prefix}InstanceRebalance-{SFX}")),
        (
            "instance_state_change",
            format!("{prefix}InstanceStateChange-{SFX}"),
        ),
    ];
    if five {
        rules.push((
            "capacity_reservation_interruption",
            format!("{prefix}CRInterruption-{SFX}"),
        ));
    }
    rules
}

fn v21() -> Seed {
    Seed {
        cluster: "demo",
        queue: "Karpenter-demo",
        rules: module_rules("Karpenter", true),
        rule_cluster_tag: true,
        deny_http_condition: json!({"Bool": {"aws:SecureTransport": "false"}}),
        controller_role: "KarpenterController-20240312093015123400000002",
        controller_policy: "KarpenterController-20240312093015123400000003",
        node_role: "Karpenter-demo-20240312093015123400000004",
        ecr_policy: "AmazonEC2ContainerRegistryPullOnly",
        keep_names: false,
    }
}

fn v20() -> Seed {
    Seed {
        rules: module_rules("Karpenter", false),
        deny_http_condition: json!({"StringEquals": {"aws:SecureTransport": "false"}}),
        ecr_policy: "AmazonEC2ContainerRegistryReadOnly",
        ..v21()
    }
}

fn v21_custom_names() -> Seed {
    Seed {
        queue: "platform-karpenter-events",
        rules: module_rules("Platform", true),
        ..v21()
    }
}

fn cloudformation() -> Seed {
    let kind =
        |key: &'static str, logical: &str| (key, format!("Karpenter-demo-{logical}Rule-1AB2C3D4E5F6G"));
    Seed {
        queue: "demo",
        rules: vec![
            kind("scheduled_change", "ScheduledChange"),
            kind("spot_interruption", "SpotInterruption"),
            kind("rebalance", "Rebalance"),
            kind("instance_state_change", "InstanceStateChange"),
        ],
        rule_cluster_tag: false,
        deny_http_condition: json!({"Bool": {"aws:SecureTransport": false}}),
        controller_role: "KarpenterControllerRole-demo",
        controller_policy: "KarpenterControllerPolicy-demo",
        node_role: "KarpenterNodeRole-demo",
        keep_names: true,
        ..v21()
    }
}

/// The event pattern of one of our kinds, spelled as the module spells it (other key order).
fn module_pattern(key: &str) -> String {
    let (source, detail) = match key {
        "scheduled_change" => ("aws.health", "AWS Health Event"),
        "spot_interruption" => ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
        "rebalance" => ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
        "instance_state_change" => ("aws.ec2", "EC2 Instance State-change Notification"),
        _ => (
            "aws.ec2",
            "EC2 Capacity Reservation Instance Interruption Warning",
        ),
    };
    format!("{{\n  \"source\": [\"{source}\"],\n  \"detail-type\": [\"{detail}\"]\n}}")
}

struct Aws {
    iam: aws_sdk_iam::Client,
    sqs: aws_sdk_sqs::Client,
    events: aws_sdk_eventbridge::Client,
}

impl Aws {
    fn new(moto: &Moto) -> Aws {
        let c = moto.sdk_config();
        Aws {
            iam: aws_sdk_iam::Client::new(&c),
            sqs: aws_sdk_sqs::Client::new(&c),
            events: aws_sdk_eventbridge::Client::new(&c),
        }
    }

    /// What the module's apply makes, call for call.
    async fn seed(&self, s: &Seed) -> String {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let url = self
            .sqs
            .create_queue()
            .queue_name(s.queue)
            .attributes(A::MessageRetentionPeriod, "300")
            .attributes(A::SqsManagedSseEnabled, "true")
            .send()
            .await
            .expect("CreateQueue")
            .queue_url()
            .expect("url")
            .to_string();
        let queue_arn = format!("arn:aws:sqs:{REGION}:{ACCOUNT}:{}", s.queue);
        let policy = json!({
            "Version": "2012-10-17",
            "Statement": [
                {"Sid": "SqsWrite", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": queue_arn,
                 "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}},
                {"Sid": "DenyHTTP", "Effect": "Deny", "Action": "sqs:*", "Resource": queue_arn,
                 "Principal": "*", "Condition": s.deny_http_condition},
            ]
        });
        self.sqs
            .set_queue_attributes()
            .queue_url(&url)
            .attributes(A::Policy, policy.to_string())
            .send()
            .await
            .expect("SetQueueAttributes");
        for (key, name) in &s.rules {
            let mut put = self
                .events
                .put_rule()
                .name(name)
                .event_pattern(module_pattern(key));
            if s.rule_cluster_tag {
                put = put.tags(
                    aws_sdk_eventbridge::types::Tag::builder()
                        .key("ClusterName")
                        .value(s.cluster)
                        .build()
                        .expect("tag"),
                );
            }
            put.send().await.expect("PutRule");
            self.events
                .put_targets()
                .rule(name)
                .targets(
                    aws_sdk_eventbridge::types::Target::builder()
                        .id("KarpenterInterruptionQueueTarget")
                        .arn(&queue_arn)
                        .build()
                        .expect("target"),
                )
                .send()
                .await
                .expect("PutTargets");
        }
        // The controller role: Pod Identity trust, the module's own policy attached.
        let pod_identity = json!({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"]}]});
        self.iam
            .create_role()
            .role_name(s.controller_role)
            .assume_role_policy_document(pod_identity.to_string())
            .send()
            .await
            .expect("CreateRole controller");
        let controller_policy = json!({"Version": "2012-10-17", "Statement": [
            {"Sid": "AllowScopedEC2InstanceAccessActions", "Effect": "Allow",
             "Action": ["ec2:RunInstances", "ec2:CreateFleet"], "Resource": "*"},
            {"Sid": "AllowInterruptionQueueActions", "Effect": "Allow",
             "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"], "Resource": queue_arn},
        ]});
        let policy_arn = self
            .iam
            .create_policy()
            .policy_name(s.controller_policy)
            .policy_document(controller_policy.to_string())
            .send()
            .await
            .expect("CreatePolicy")
            .policy()
            .and_then(|p| p.arn())
            .expect("arn")
            .to_string();
        self.iam
            .attach_role_policy()
            .role_name(s.controller_role)
            .policy_arn(&policy_arn)
            .send()
            .await
            .expect("attach controller policy");
        // The node role: EC2 trust, the three node policies.
        let ec2 = json!({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
        self.iam
            .create_role()
            .role_name(s.node_role)
            .assume_role_policy_document(ec2.to_string())
            .send()
            .await
            .expect("CreateRole node");
        for policy in ["AmazonEKSWorkerNodePolicy", s.ecr_policy, "AmazonEKS_CNI_Policy"] {
            self.iam
                .attach_role_policy()
                .role_name(s.node_role)
                .policy_arn(format!("arn:aws:iam::aws:policy/{policy}"))
                .send()
                .await
                .expect("attach node policy");
        }
        // The instance profile Karpenter's controller made for an EC2NodeClass.
        let profile = format!("{}_1234567890123456789", s.cluster);
        self.iam
            .create_instance_profile()
            .instance_profile_name(&profile)
            .path(format!("/karpenter/{REGION}/{}/0b1c2d3e/", s.cluster))
            .send()
            .await
            .expect("CreateInstanceProfile");
        self.iam
            .add_role_to_instance_profile()
            .instance_profile_name(&profile)
            .role_name(s.node_role)
            .send()
            .await
            .expect("AddRoleToInstanceProfile");
        self.sqs
            .send_message()
            .queue_url(&url)
            .message_body("{\"detail-type\":\"EC2 Spot Instance Interruption Warning\"}")
            .send()
            .await
            .expect("SendMessage");
        policy_arn
    }

    async fn role_id(&self, name: &str) -> String {
        let r = self.iam.get_role().role_name(name).send().await.expect("GetRole");
        r.role().map(|r| r.role_id().to_string()).expect("role")
    }

    async fn profile_roles(&self, name: &str) -> Vec<String> {
        let p = self
            .iam
            .get_instance_profile()
            .instance_profile_name(name)
            .send()
            .await
            .expect("the Karpenter-made instance profile is gone");
        p.instance_profile()
            .map(|p| p.roles().iter().map(|r| r.role_name().to_string()).collect())
            .unwrap_or_default()
    }

    async fn queue_url(&self, name: &str) -> String {
        let out = self
            .sqs
            .get_queue_url()
            .queue_name(name)
            .send()
            .await
            .expect("queue gone");
        out.queue_url().unwrap_or_default().to_string()
    }

    async fn messages(&self, url: &str) -> String {
        let out = self
            .sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
            .send()
            .await
            .expect("attributes");
        out.attributes()
            .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages))
            .cloned()
            .unwrap_or_default()
    }

    /// Rule name → its targets' ARNs, for every rule.
    async fn rules(&self) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        for rule in self.events.list_rules().send().await.expect("rules").rules() {
            let name = rule.name().unwrap_or_default().to_string();
            let targets = self
                .events
                .list_targets_by_rule()
                .rule(&name)
                .send()
                .await
                .expect("targets")
                .targets()
                .iter()
                .map(|t| t.arn().to_string())
                .collect();
            out.push((name, targets));
        }
        out.sort();
        out
    }

    async fn inline_names(&self, role: &str) -> Vec<String> {
        self.iam
            .list_role_policies()
            .role_name(role)
            .send()
            .await
            .expect("inline")
            .policy_names()
            .to_vec()
    }
}

/// The guide's configuration: the `hcl` block after its `<!-- migration-config -->` marker.
fn guide_config() -> String {
    let guide = repo_file("docs/guides/migrating-from-terraform-aws-eks.md");
    let after = guide
        .split("<!-- migration-config -->")
        .nth(1)
        .expect("the guide's migration-config marker");
    after
        .split("```hcl\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the hcl block after the marker")
        .to_string()
}

async fn migrate(seed: Seed) {
    let moto = Moto::start();
    let proxy = FaultProxy::start(moto.port());
    let aws = Aws::new(&moto);
    let policy_arn = aws.seed(&seed).await;
    let queue_url = aws.queue_url(seed.queue).await;
    let profile = format!("{}_1234567890123456789", seed.cluster);
    let controller_id = aws.role_id(seed.controller_role).await;
    let node_id = aws.role_id(seed.node_role).await;
    let controller_policies = attached(&aws.iam, seed.controller_role).await;
    let node_policies = attached(&aws.iam, seed.node_role).await;
    assert_eq!(aws.messages(&queue_url).await, "1");

    let mut work = Workdir::new(&format!("{}\n{}", proxy.provider_block(), guide_config()));
    configure_env(&mut work);
    let rule_names = if seed.keep_names {
        let entries: Vec<String> = seed
            .rules
            .iter()
            .map(|(key, name)| format!("  {key} = \"{name}\"\n"))
            .collect();
        format!("rule_names = {{\n{}}}\n", entries.concat())
    } else {
        String::new()
    };
    work.write(
        "terraform.tfvars",
        &format!(
            "cluster_name = \"{}\"\ncontroller_role_name = \"{}\"\ncontroller_policy_arn = \"{policy_arn}\"\n\
             node_role_name = \"{}\"\nqueue_name = \"{}\"\necr_policy = \"{}\"\n{rule_names}",
            seed.cluster, seed.controller_role, seed.node_role, seed.queue, seed.ecr_policy
        ),
    );
    let plan = work.plan().ok();
    let plan_text = plan.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        plan_text.contains("3 to import, 0 to add, 3 to change, 0 to destroy"),
        "{}",
        plan.stdout
    );
    work.apply().ok();

    // Nothing nodes or the controller use was replaced or deleted.
    assert_eq!(
        aws.role_id(seed.controller_role).await,
        controller_id,
        "controller role replaced"
    );
    assert_eq!(aws.role_id(seed.node_role).await, node_id, "node role replaced");
    assert_eq!(aws.queue_url(seed.queue).await, queue_url, "queue replaced");
    assert_eq!(aws.messages(&queue_url).await, "1", "the queue lost its message");
    assert_eq!(
        aws.profile_roles(&profile).await,
        vec![seed.node_role.to_string()]
    );
    // The controller's permissions are what they were; the node role only gained SSM.
    assert_eq!(
        attached(&aws.iam, seed.controller_role).await,
        controller_policies
    );
    assert!(aws.inline_names(seed.controller_role).await.is_empty());
    let mut expected_node: BTreeSet<String> = node_policies.clone();
    expected_node.insert("arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore".into());
    assert_eq!(attached(&aws.iam, seed.node_role).await, expected_node);
    // Five rules at the queue: the module's replaced by the resource's own, or (keep_names)
    // kept under their names with the missing kind created beside them.
    let queue_arn = format!("arn:aws:sqs:{REGION}:{ACCOUNT}:{}", seed.queue);
    let rules = aws.rules().await;
    let names: Vec<&str> = rules.iter().map(|(n, _)| n.as_str()).collect();
    let prefix = format!("Karpenter-{}-", seed.cluster);
    assert_eq!(rules.len(), 5, "{names:?}");
    for (name, targets) in &rules {
        let kept = seed.keep_names && seed.rules.iter().any(|(_, n)| n == name);
        assert!(
            kept || name.starts_with(&prefix),
            "{name} is not one of the resource's rules: {names:?}"
        );
        assert_eq!(targets, &vec![queue_arn.clone()], "{name}");
    }
    let calls: Vec<String> = proxy.calls().into_iter().map(|c| c.operation).collect();
    if seed.keep_names {
        assert!(
            !calls.iter().any(|c| c == "AWSEvents.DeleteRule"),
            "a kept rule was deleted: {calls:?}"
        );
    } else {
        // ... created before the module's were deleted.
        let last_put = calls
            .iter()
            .rposition(|c| c == "AWSEvents.PutTargets")
            .expect("PutTargets");
        let first_delete = calls
            .iter()
            .position(|c| c == "AWSEvents.DeleteRule")
            .expect("DeleteRule");
        assert!(
            last_put < first_delete,
            "a module rule was deleted before the new rules were wired: {calls:?}"
        );
    }
    assert!(
        work.plan_is_empty(),
        "plan after the migration is not empty:\n{}",
        work.plan().output()
    );

    // Step 4 of the guide: the provider's own permissions, added before the module's go.
    let config = guide_config().replace(
        "  policy_attachment      = \"none\"\n  additional_policy_arns = [var.controller_policy_arn]",
        "  policy_attachment      = \"inline\"\n  additional_policy_arns = []",
    );
    assert!(
        config.contains("\"inline\""),
        "the guide's controller role block changed"
    );
    work.set_config(&format!("{}\n{config}", proxy.provider_block()));
    let before = proxy.calls().len();
    work.apply().ok();
    let calls: Vec<String> = proxy.calls()[before..]
        .iter()
        .map(|c| c.operation.clone())
        .collect();
    let put = calls
        .iter()
        .position(|c| c == "Action=PutRolePolicy")
        .expect("PutRolePolicy");
    let detach = calls
        .iter()
        .position(|c| c == "Action=DetachRolePolicy")
        .expect("DetachRolePolicy");
    assert!(
        put < detach,
        "the module's policy was detached before the inline policy was written: {calls:?}"
    );
    assert_eq!(
        aws.inline_names(seed.controller_role).await,
        vec!["KarpenterControllerPolicy".to_string()]
    );
    assert!(attached(&aws.iam, seed.controller_role).await.is_empty());
    assert_eq!(aws.role_id(seed.controller_role).await, controller_id);
    assert!(
        work.plan_is_empty(),
        "plan after switching to inline is not empty"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn module_v21_defaults_migrate_in_place() {
    migrate(v21()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn module_v20_defaults_migrate_in_place() {
    migrate(v20()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn module_v21_with_custom_queue_and_rule_names_migrates_in_place() {
    migrate(v21_custom_names()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cloudformation_reference_stack_migrates_in_place() {
    migrate(cloudformation()).await;
}
