//! `karpenter_interruption_queue` through the real terraform against moto (one server per
//! test): the example applies and what moto holds matches Karpenter's template; re-plan is
//! empty; a rule and the policy deleted out of band are each detected and repaired; import
//! by queue name plans empty; destroy leaves nothing. With a fault proxy, a PutTargets that
//! fails midway leaves a state listing what exists, and the next apply converges.

use std::collections::BTreeMap;

use acceptance_tests::moto::{self, Fault, FaultProxy, Moto};
use acceptance_tests::roundtrip::import_and_plan_empty;
use acceptance_tests::{Workdir, repo_file};

const RULE_SUFFIXES: &[(&str, &str, &str)] = &[
    ("scheduled_change", "ScheduledChange", "AWS Health Event"),
    (
        "spot_interruption",
        "SpotInterruption",
        "EC2 Spot Instance Interruption Warning",
    ),
    ("rebalance", "Rebalance", "EC2 Instance Rebalance Recommendation"),
    (
        "instance_state_change",
        "InstanceStateChange",
        "EC2 Instance State-change Notification",
    ),
    (
        "capacity_reservation_interruption",
        "CapacityReservationInterruption",
        "EC2 Capacity Reservation Instance Interruption Warning",
    ),
];

struct Aws {
    sqs: aws_sdk_sqs::Client,
    events: aws_sdk_eventbridge::Client,
}

impl Aws {
    fn new(moto: &Moto) -> Self {
        let config = moto.sdk_config();
        Aws {
            sqs: aws_sdk_sqs::Client::new(&config),
            events: aws_sdk_eventbridge::Client::new(&config),
        }
    }

    async fn queue_names(&self) -> Vec<String> {
        let out = self.sqs.list_queues().send().await.unwrap();
        out.queue_urls()
            .iter()
            .filter_map(|u| u.rsplit('/').next().map(str::to_string))
            .collect()
    }

    async fn queue_attributes(&self, name: &str) -> BTreeMap<String, String> {
        let url = self.sqs.get_queue_url().queue_name(name).send().await.unwrap();
        let out = self
            .sqs
            .get_queue_attributes()
            .queue_url(url.queue_url().unwrap())
            .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
            .send()
            .await
            .unwrap();
        out.attributes()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str().to_string(), v.clone()))
            .collect()
    }

    async fn set_policy(&self, queue: &str, policy: &str) {
        let url = self.sqs.get_queue_url().queue_name(queue).send().await.unwrap();
        self.sqs
            .set_queue_attributes()
            .queue_url(url.queue_url().unwrap())
            .attributes(aws_sdk_sqs::types::QueueAttributeName::Policy, policy)
            .send()
            .await
            .unwrap();
    }

    async fn rule_names(&self, prefix: &str) -> Vec<String> {
        let out = self.events.list_rules().name_prefix(prefix).send().await.unwrap();
        let mut names: Vec<String> = out
            .rules()
            .iter()
            .filter_map(|r| r.name().map(str::to_string))
            .collect();
        names.sort();
        names
    }

    /// (pattern, state, targets as (id, arn))
    async fn rule(&self, name: &str) -> (serde_json::Value, String, Vec<(String, String)>) {
        let r = self.events.describe_rule().name(name).send().await.unwrap();
        let pattern = serde_json::from_str(r.event_pattern().unwrap()).unwrap();
        let targets = self
            .events
            .list_targets_by_rule()
            .rule(name)
            .send()
            .await
            .unwrap();
        let targets = targets
            .targets()
            .iter()
            .map(|t| (t.id().to_string(), t.arn().to_string()))
            .collect();
        (
            pattern,
            r.state().map(|s| s.as_str().to_string()).unwrap_or_default(),
            targets,
        )
    }

    async fn delete_rule(&self, name: &str) {
        self.events
            .remove_targets()
            .rule(name)
            .ids("KarpenterInterruptionQueueTarget")
            .send()
            .await
            .unwrap();
        self.events.delete_rule().name(name).send().await.unwrap();
    }
}

/// The resource's instance in `terraform show -json`.
fn resource_values(work: &Workdir) -> serde_json::Value {
    let state = work.state();
    state["values"]["root_module"]["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["type"] == "karpenter_interruption_queue"))
        .map(|r| r["values"].clone())
        .unwrap_or(serde_json::Value::Null)
}

async fn assert_matches_template(aws: &Aws, queue: &str, prefix: &str) {
    let attrs = aws.queue_attributes(queue).await;
    assert_eq!(attrs["MessageRetentionPeriod"], "300");
    assert_eq!(attrs["SqsManagedSseEnabled"], "true");
    let arn = attrs["QueueArn"].clone();
    assert_eq!(arn, format!("arn:aws:sqs:us-east-1:123456789012:{queue}"));
    // moto stores the policy but never evaluates it (events are delivered without it, and the
    // DenyHTTP statement has no effect over plain http); AWS enforces both.
    let policy: serde_json::Value = serde_json::from_str(&attrs["Policy"]).unwrap();
    assert_eq!(policy["Id"], "EC2InterruptionPolicy");
    let statements = policy["Statement"].as_array().unwrap();
    assert_eq!(statements.len(), 2);
    assert_eq!(statements[0]["Effect"], "Allow");
    assert_eq!(
        statements[0]["Principal"]["Service"],
        serde_json::json!(["events.amazonaws.com", "sqs.amazonaws.com"])
    );
    assert_eq!(statements[0]["Action"], "sqs:SendMessage");
    assert_eq!(statements[0]["Resource"], arn.as_str());
    assert_eq!(statements[1]["Sid"], "DenyHTTP");
    assert_eq!(statements[1]["Effect"], "Deny");
    assert_eq!(statements[1]["Action"], "sqs:*");
    assert_eq!(statements[1]["Condition"]["Bool"]["aws:SecureTransport"], "false");

    let expected: Vec<String> = {
        let mut v: Vec<String> = RULE_SUFFIXES
            .iter()
            .map(|(_, s, _)| format!("{prefix}{s}"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(aws.rule_names(prefix).await, expected);
    for (_, suffix, detail_type) in RULE_SUFFIXES {
        let (pattern, state, targets) = aws.rule(&format!("{prefix}{suffix}")).await;
        let source = if *suffix == "ScheduledChange" {
            "aws.health"
        } else {
            "aws.ec2"
        };
        assert_eq!(
            pattern,
            serde_json::json!({"source": [source], "detail-type": [detail_type]})
        );
        assert_eq!(state, "ENABLED");
        assert_eq!(
            targets,
            vec![("KarpenterInterruptionQueueTarget".to_string(), arn.clone())]
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn example_lifecycle_drift_import_destroy() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let example = repo_file("examples/resources/karpenter_interruption_queue/resource.tf");
    let work = moto::workdir(&moto.provider_block(), &example);
    work.apply().ok();
    assert_matches_template(&aws, "demo", "Karpenter-demo-").await;
    let outputs = work.outputs();
    assert_eq!(outputs["queue_name"]["value"], "demo");
    assert_eq!(
        outputs["queue_arn"]["value"],
        "arn:aws:sqs:us-east-1:123456789012:demo"
    );
    assert_eq!(
        outputs["rule_names"]["value"]["spot_interruption"],
        "Karpenter-demo-SpotInterruption"
    );
    let tags = aws
        .sqs
        .list_queue_tags()
        // moto's queue URLs use the request's host; AWS's are https://sqs.<region>.amazonaws.com/...
        .queue_url(moto.endpoint().to_string() + "/123456789012/demo")
        .send()
        .await
        .unwrap();
    assert_eq!(
        tags.tags()
            .and_then(|t| t.get("karpenter.sh/discovery"))
            .map(String::as_str),
        Some("demo")
    );
    assert!(
        work.plan_is_empty(),
        "re-plan after create must be empty:\n{}",
        work.plan().output()
    );

    // A rule deleted out of band: the plan shows that rule, the apply brings it back.
    aws.delete_rule("Karpenter-demo-Rebalance").await;
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("1 to change, 0 to destroy"),
        "{}",
        plan.output()
    );
    assert!(plan.stdout.contains("\"rebalance\""), "{}", plan.output());
    work.apply().ok();
    assert_matches_template(&aws, "demo", "Karpenter-demo-").await;
    assert!(
        work.plan_is_empty(),
        "after repairing the rule:\n{}",
        work.plan().output()
    );

    // The policy removed out of band: detected (policy_json) and put back.
    aws.set_policy("demo", "").await;
    assert!(!aws.queue_attributes("demo").await.contains_key("Policy"));
    let plan = work.plan().ok();
    assert!(plan.stdout.contains("policy_json"), "{}", plan.output());
    assert!(
        plan.stdout.contains("1 to change, 0 to destroy"),
        "{}",
        plan.output()
    );
    work.apply().ok();
    assert_matches_template(&aws, "demo", "Karpenter-demo-").await;
    assert!(
        work.plan_is_empty(),
        "after repairing the policy:\n{}",
        work.plan().output()
    );

    // Import by queue name (import.sh's command) into a fresh state plans empty.
    let import_sh = repo_file("examples/resources/karpenter_interruption_queue/import.sh");
    let command = import_sh
        .lines()
        .find(|l| l.starts_with("terraform import"))
        .expect("import.sh has a terraform import line");
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    // moto returns the queue policy re-serialized (with spaces), not byte for byte as set;
    // AWS may reformat too, so the provider compares policies as JSON (canonical form).
    let before_import = resource_values(&work);
    work.terraform(&["state", "rm", "karpenter_interruption_queue.this"])
        .ok();
    let mut import_args = vec![args[0], "-no-color", "-input=false"];
    import_args.extend(&args[1..]);
    work.terraform(&import_args).ok();
    let values = resource_values(&work);
    assert!(
        work.plan_is_empty(),
        "plan after import:\n{}\nbefore: {before_import}\nafter:  {values}",
        work.plan().output()
    );
    assert_eq!(values["rules"].as_object().map(|m| m.len()), Some(5));

    // Destroy leaves nothing with our names.
    work.destroy().ok();
    assert!(aws.queue_names().await.is_empty());
    assert!(aws.rule_names("Karpenter-demo-").await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn failure_midway_is_recorded_and_the_next_apply_converges() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let proxy = FaultProxy::start(moto.port());
    let work = moto::workdir(
        &proxy.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "partial"
}
"#,
    );
    // The first PutTargets goes through; the second fails, also on each of the SDK's
    // standard-mode retries (3 attempts), so the apply stops after the second rule.
    proxy.arm(Fault::new("AWSEvents.PutTargets", 3, 400, "ThrottlingException").after(1));
    let run = work.apply().failed();
    assert!(run.stderr.contains("events:PutTargets"), "{}", run.output());
    assert_eq!(proxy.pending(), 0, "the fault fired");

    // The state lists what exists: the queue, its policy, the first rule with its target and
    // the second rule without one.
    let values = resource_values(&work);
    assert_eq!(values["queue_name"], "partial");
    assert!(
        values["queue_arn"]
            .as_str()
            .is_some_and(|a| a.ends_with(":partial"))
    );
    assert!(values["policy_json"].is_string());
    let rules = values["rules"].as_object().cloned().unwrap_or_default();
    assert_eq!(rules.len(), 2, "{rules:?}\n{:?}\n{}", proxy.log(), run.output());
    assert!(rules["scheduled_change"]["target_arn"].is_string());
    assert!(rules["spot_interruption"]["target_arn"].is_null());
    assert_eq!(aws.queue_names().await, vec!["partial".to_string()]);
    assert_eq!(aws.rule_names("Karpenter-partial-").await.len(), 2);

    // Terraform keeps a failed create as tainted, so the next apply replaces it: delete what
    // is recorded, then create everything.
    let plan = work.plan().ok();
    assert!(plan.stdout.contains("tainted"), "{}", plan.output());
    // The next apply finishes the job: one queue, five rules, each with its target.
    work.apply().ok();
    assert_matches_template_partial(&aws).await;
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
    assert!(aws.queue_names().await.is_empty());
    assert!(aws.rule_names("Karpenter-partial-").await.is_empty());
}

async fn assert_matches_template_partial(aws: &Aws) {
    assert_eq!(aws.queue_names().await, vec!["partial".to_string()]);
    let attrs = aws.queue_attributes("partial").await;
    assert_eq!(attrs["MessageRetentionPeriod"], "300");
    assert_eq!(aws.rule_names("Karpenter-partial-").await.len(), 5);
    for (_, suffix, _) in RULE_SUFFIXES {
        let (_, _, targets) = aws.rule(&format!("Karpenter-partial-{suffix}")).await;
        assert_eq!(targets.len(), 1, "{suffix}");
        assert_eq!(targets[0].1, attrs["QueueArn"]);
    }
}

/// AWS refuses a queue name for 60 s after its queue was deleted (moto does not: it
/// recreates at once), which a replacement hits. The fault proxy plays AWS's refusal; the
/// provider waits and retries within the create timeout.
#[tokio::test(flavor = "multi_thread")]
async fn recently_deleted_queue_name_is_retried() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let proxy = FaultProxy::start(moto.port());
    let work = moto::workdir(
        &proxy.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name    = "again"
  enabled_rules   = ["spot_interruption"]
}
"#,
    );
    proxy.arm(Fault::new(
        "AmazonSQS.CreateQueue",
        2,
        400,
        "AWS.SimpleQueueService.QueueDeletedRecently",
    ));
    work.apply().ok();
    assert_eq!(proxy.pending(), 0);
    assert_eq!(aws.queue_names().await, vec!["again".to_string()]);
    assert_eq!(
        aws.rule_names("Karpenter-again-").await,
        vec!["Karpenter-again-SpotInterruption".to_string()]
    );
    assert!(work.plan_is_empty());
    work.destroy().ok();
}

/// Plan-time validation needs no AWS: bad values fail at plan with the attribute named.
#[test]
fn invalid_values_fail_at_plan() {
    let work = moto::workdir(
        &moto::provider_block("http://127.0.0.1:9"),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name              = "demo"
  message_retention_seconds = 10
  enabled_rules             = ["spot"]
  rule_name_prefix          = "this-prefix-is-far-too-long-for-the-rule-names"
}
"#,
    );
    let run = work.plan().failed();
    let out = run.output();
    assert!(out.contains("message_retention_seconds"), "{out}");
    assert!(out.contains("enabled_rules"), "{out}");
    assert!(out.contains("rule_name_prefix"), "{out}");
}

/// A rule name kept from elsewhere (`rule_names`) must be an EventBridge rule name: the check
/// ran on the map as a whole before (#40), so it never fired, and `PutRule` failed at apply.
#[test]
fn a_bad_kept_rule_name_fails_at_validate() {
    let work = Workdir::new(
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "demo"
  rule_names   = { spot_interruption = "not a rule name" }
}
"#,
    );
    let run = work.validate().failed();
    // Terraform wraps the detail: compare with single spaces.
    let out = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(out.contains("rule_names"), "{out}");
    assert!(out.contains("an EventBridge rule name"), "{out}");
}

/// In-place updates: retention, tags, a rule kind switched off, a removed target repaired;
/// a new queue name replaces.
#[tokio::test(flavor = "multi_thread")]
async fn updates_in_place_and_replaces_on_a_new_name() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let work = moto::workdir(
        &moto.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "upd"
  tags         = { team = "a" }
}
"#,
    );
    work.apply().ok();
    assert_eq!(aws.rule_names("Karpenter-upd-").await.len(), 5);

    work.set_config(&format!(
        "{}\n{}",
        moto.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name              = "upd"
  message_retention_seconds = 600
  enabled_rules             = ["scheduled_change", "rebalance", "instance_state_change", "capacity_reservation_interruption"]
  tags                      = { team = "b", env = "test" }
}
"#
    ));
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("1 to change, 0 to destroy"),
        "{}",
        plan.output()
    );
    work.apply().ok();
    let attrs = aws.queue_attributes("upd").await;
    assert_eq!(attrs["MessageRetentionPeriod"], "600");
    let names = aws.rule_names("Karpenter-upd-").await;
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with("SpotInterruption")));
    let url = aws.sqs.get_queue_url().queue_name("upd").send().await.unwrap();
    let tags = aws
        .sqs
        .list_queue_tags()
        .queue_url(url.queue_url().unwrap())
        .send()
        .await
        .unwrap();
    // the user's tags, and the provider's two bookkeeping tags, which tag sync never removes
    let tags: BTreeMap<String, String> = tags.tags().cloned().unwrap_or_default().into_iter().collect();
    assert_eq!(
        tags,
        BTreeMap::from([
            ("env".to_string(), "test".to_string()),
            ("team".to_string(), "b".to_string()),
            (
                "terraform-provider-karpenter/cluster-name".to_string(),
                "upd".to_string()
            ),
            (
                "terraform-provider-karpenter/resource-type".to_string(),
                "karpenter_interruption_queue".to_string()
            )
        ])
    );
    let rule_arn = aws
        .events
        .describe_rule()
        .name("Karpenter-upd-Rebalance")
        .send()
        .await
        .unwrap()
        .arn()
        .unwrap()
        .to_string();
    let rule_tags = aws
        .events
        .list_tags_for_resource()
        .resource_arn(rule_arn)
        .send()
        .await
        .unwrap();
    let rule_tags: BTreeMap<String, String> = rule_tags
        .tags()
        .iter()
        .map(|t| (t.key().to_string(), t.value().to_string()))
        .collect();
    // the same tags, but the cluster tag, which only the queue carries
    let mut queue_tags = tags.clone();
    queue_tags.remove("terraform-provider-karpenter/cluster-name");
    assert_eq!(rule_tags, queue_tags, "rules carry the same tags");
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // Only the target removed out of band: detected on that rule and put back.
    aws.events
        .remove_targets()
        .rule("Karpenter-upd-Rebalance")
        .ids("KarpenterInterruptionQueueTarget")
        .send()
        .await
        .unwrap();
    let plan = work.plan().ok();
    assert!(plan.stdout.contains("target_arn"), "{}", plan.output());
    work.apply().ok();
    let (_, _, targets) = aws.rule("Karpenter-upd-Rebalance").await;
    assert_eq!(targets.len(), 1);
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // A tag added to one rule out of band: detected on that rule and removed.
    let rebalance_arn = format!(
        "arn:aws:events:us-east-1:{}:rule/Karpenter-upd-Rebalance",
        moto::ACCOUNT_ID
    );
    aws.events
        .tag_resource()
        .resource_arn(&rebalance_arn)
        .tags(
            aws_sdk_eventbridge::types::Tag::builder()
                .key("stray")
                .value("x")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let plan = work.plan().ok();
    assert!(plan.stdout.contains("stray"), "{}", plan.output());
    work.apply().ok();
    let rule_tags = aws
        .events
        .list_tags_for_resource()
        .resource_arn(&rebalance_arn)
        .send()
        .await
        .unwrap();
    assert!(!rule_tags.tags().iter().any(|t| t.key() == "stray"));
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // A new rule-name prefix renames the rules in place: new ones first, then the old ones go.
    work.set_config(&format!(
        "{}\n{}",
        moto.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name              = "upd"
  message_retention_seconds = 600
  enabled_rules             = ["scheduled_change", "rebalance", "instance_state_change", "capacity_reservation_interruption"]
  tags                      = { team = "b", env = "test" }
  rule_name_prefix          = "kq-"
}
"#
    ));
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("1 to change, 0 to destroy"),
        "{}",
        plan.output()
    );
    work.apply().ok();
    assert!(aws.rule_names("Karpenter-upd-").await.is_empty());
    assert_eq!(aws.rule_names("kq-").await.len(), 4);
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // A new name replaces the queue (SQS cannot rename).
    work.set_config(&format!(
        "{}\n{}",
        moto.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name  = "upd"
  name          = "upd-renamed"
  enabled_rules = ["rebalance"]
}
"#
    ));
    let plan = work.plan().ok();
    assert!(plan.stdout.contains("must be replaced"), "{}", plan.output());
    work.apply().ok();
    assert_eq!(aws.queue_names().await, vec!["upd-renamed".to_string()]);
    assert_eq!(
        aws.rule_names("Karpenter-upd-").await,
        vec!["Karpenter-upd-Rebalance".to_string()]
    );
    work.destroy().ok();
    assert!(aws.queue_names().await.is_empty());
    assert!(aws.rule_names("Karpenter-upd-").await.is_empty());
}

/// An AWS refusal becomes a diagnostic that names the AWS action, and nothing is recorded
/// when nothing was created.
#[test]
fn access_denied_names_the_action() {
    let moto = Moto::start();
    let proxy = FaultProxy::start(moto.port());
    let work = moto::workdir(
        &proxy.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "denied"
}
"#,
    );
    proxy.arm(Fault::new("AmazonSQS.CreateQueue", 1, 403, "AccessDenied"));
    let run = work.apply().failed();
    assert!(
        run.stderr.contains("AWS denied sqs:CreateQueue"),
        "{}",
        run.output()
    );
    // the diagnostic points at the attribute the queue name comes from
    assert!(
        run.stderr.contains("cluster_name = \"denied\""),
        "{}",
        run.output()
    );
    let state = work.terraform(&["state", "list"]);
    assert!(state.stdout.trim().is_empty(), "{}", state.output());
}

/// A queue not named after its cluster (`name` set) imports by queue name with the cluster
/// taken from its rules' prefix, and plans empty.
#[tokio::test(flavor = "multi_thread")]
async fn import_of_a_queue_named_apart_from_its_cluster_plans_empty() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let config = r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "prod"
  name         = "prod-karpenter-events"
}
"#;
    let work = moto::workdir(&moto.provider_block(), config);
    work.apply().ok();
    assert_matches_template(&aws, "prod-karpenter-events", "Karpenter-prod-").await;
    work.terraform(&["state", "rm", "karpenter_interruption_queue.this"])
        .ok();
    work.terraform(&[
        "import",
        "-no-color",
        "-input=false",
        "karpenter_interruption_queue.this",
        "prod-karpenter-events",
    ])
    .ok();
    let values = resource_values(&work);
    assert_eq!(values["cluster_name"], "prod", "{values}");
    assert_eq!(values["name"], "prod-karpenter-events", "{values}");
    assert!(
        work.plan_is_empty(),
        "plan after import:\n{}",
        work.plan().output()
    );
    work.destroy().ok();
    assert!(aws.queue_names().await.is_empty());
}

/// Create makes each part once (no tag listing of the rules it just created with their
/// tags) after one ownership look-up per service; destroy removes our known target and the
/// rule without listing targets first; and a rule that someone gave a target of their own
/// keeps that target and stays (DeleteRule refuses, the provider lists what is left and keeps
/// the rule, with a warning).
#[tokio::test(flavor = "multi_thread")]
async fn create_and_destroy_make_the_fewest_calls_and_foreign_targets_are_left_alone() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let proxy = FaultProxy::start(moto.port());
    let work = moto::workdir(
        &proxy.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "lean"
  tags         = { team = "platform" }
}
"#,
    );
    work.apply().ok();
    let ops = |log: Vec<(String, bool)>| -> Vec<String> {
        log.into_iter()
            .map(|(op, _)| op.rsplit(['.', '=']).next().unwrap_or_default().to_string())
            .collect()
    };
    let create = ops(proxy.log());
    let count = |list: &[String], op: &str| list.iter().filter(|o| o.as_str() == op).count();
    assert_eq!(count(&create, "ListTagsForResource"), 0, "{create:?}");
    assert_eq!(count(&create, "PutRule"), 5, "{create:?}");
    assert_eq!(count(&create, "PutTargets"), 5, "{create:?}");
    // The parts' minimum: CreateQueue, the policy (SetQueueAttributes), 5 × PutRule, 5 ×
    // PutTargets; the new queue's ARN is derived from its URL, not fetched. Ownership adds
    // two look-ups before anything is created (create never adopts): GetQueueUrl and one
    // ListRules for all five rule names.
    assert_eq!(count(&create, "GetQueueAttributes"), 0, "{create:?}");
    assert_eq!(count(&create, "GetQueueUrl"), 1, "{create:?}");
    assert_eq!(count(&create, "ListRules"), 1, "{create:?}");
    assert_eq!(create.len(), 14, "{create:?}");
    // the rules carry their tags all the same, and the ownership tag
    for (_, suffix, _) in RULE_SUFFIXES {
        let arn = aws
            .events
            .describe_rule()
            .name(format!("Karpenter-lean-{suffix}"))
            .send()
            .await
            .unwrap()
            .arn()
            .unwrap()
            .to_string();
        let tags = aws
            .events
            .list_tags_for_resource()
            .resource_arn(arn)
            .send()
            .await
            .unwrap();
        let mut tags: Vec<(&str, &str)> = tags.tags().iter().map(|t| (t.key(), t.value())).collect();
        tags.sort();
        assert_eq!(
            tags,
            vec![
                ("team", "platform"),
                (
                    "terraform-provider-karpenter/resource-type",
                    "karpenter_interruption_queue"
                )
            ],
            "{suffix}"
        );
    }
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    // the bookkeeping tags are not the user's
    assert_eq!(
        resource_values(&work)["tags"],
        serde_json::json!({"team": "platform"})
    );

    // A target of someone else's on one rule.
    let foreign = aws_sdk_eventbridge::types::Target::builder()
        .id("someone-else")
        .arn("arn:aws:sqs:us-east-1:123456789012:elsewhere")
        .build()
        .unwrap();
    aws.events
        .put_targets()
        .rule("Karpenter-lean-Rebalance")
        .targets(foreign)
        .send()
        .await
        .unwrap();
    // reported at plan, recorded, and not a change
    let plan = work.plan().ok();
    assert!(
        plan.output().contains("EventBridge rule has targets of others"),
        "{}",
        plan.output()
    );
    assert!(plan.stdout.contains("No changes"), "{}", plan.output());
    work.terraform(&[
        "apply",
        "-refresh-only",
        "-auto-approve",
        "-no-color",
        "-input=false",
    ])
    .ok();
    assert_eq!(
        resource_values(&work)["rules"]["rebalance"]["other_target_ids"],
        serde_json::json!(["someone-else"])
    );
    let before = proxy.log().len();
    let run = work
        .terraform(&[
            "destroy",
            "-no-color",
            "-input=false",
            "-auto-approve",
            "-refresh=false",
        ])
        .ok();
    assert!(run.output().contains("EventBridge rule kept"), "{}", run.output());
    let destroy = ops(proxy.log()[before..].to_vec());
    // 4 rules: RemoveTargets + DeleteRule; the fifth: RemoveTargets, a refused DeleteRule,
    // then ListTargetsByRule, which shows the other target: the rule stays. And DeleteQueue.
    assert_eq!(count(&destroy, "ListTargetsByRule"), 1, "{destroy:?}");
    assert_eq!(count(&destroy, "DeleteQueue"), 1, "{destroy:?}");
    assert_eq!(count(&destroy, "DeleteRule"), 5, "{destroy:?}");
    assert_eq!(destroy.len(), 12, "{destroy:?}");
    assert!(aws.queue_names().await.is_empty());
    assert_eq!(
        aws.rule_names("Karpenter-lean-").await,
        vec!["Karpenter-lean-Rebalance".to_string()]
    );
    let (_, _, targets) = aws.rule("Karpenter-lean-Rebalance").await;
    assert_eq!(
        targets,
        vec![(
            "someone-else".to_string(),
            "arn:aws:sqs:us-east-1:123456789012:elsewhere".to_string()
        )]
    );
}

/// Issue #15, point 1 and 2: a queue of our name that someone else made (even with the very
/// attributes we would set, a message in it and a tag of theirs) and a rule of one of our names
/// (their pattern, their target) are refused before anything is created; neither is changed,
/// and destroy deletes neither. Before the fix, CreateQueue's idempotence adopted the queue
/// and PutRule overwrote the rule's pattern and added our target beside theirs.
#[tokio::test(flavor = "multi_thread")]
async fn an_existing_queue_or_rule_of_our_name_is_refused_and_left_alone() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    // Their queue, named like the cluster, with our attributes.
    let theirs = aws
        .sqs
        .create_queue()
        .queue_name("taken")
        .attributes(
            aws_sdk_sqs::types::QueueAttributeName::MessageRetentionPeriod,
            "300",
        )
        .attributes(
            aws_sdk_sqs::types::QueueAttributeName::SqsManagedSseEnabled,
            "true",
        )
        .tags("owner", "other-team")
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string();
    aws.sqs
        .send_message()
        .queue_url(&theirs)
        .message_body("theirs")
        .send()
        .await
        .unwrap();
    // Their rule, with one of the names the second cluster's rules would get.
    let their_pattern = r#"{"source":["their.app"]}"#;
    aws.events
        .put_rule()
        .name("Karpenter-ruled-SpotInterruption")
        .event_pattern(their_pattern)
        .send()
        .await
        .unwrap();
    let their_target = aws_sdk_eventbridge::types::Target::builder()
        .id("their-target")
        .arn("arn:aws:sqs:us-east-1:123456789012:taken")
        .build()
        .unwrap();
    aws.events
        .put_targets()
        .rule("Karpenter-ruled-SpotInterruption")
        .targets(their_target)
        .send()
        .await
        .unwrap();

    let work = moto::workdir(
        &moto.provider_block(),
        r#"
resource "karpenter_interruption_queue" "taken" {
  cluster_name = "taken"
}
"#,
    );
    let run = work.apply().failed();
    let out = run.output();
    assert!(out.contains("SQS queue already exists"), "{out}");
    assert!(out.contains("terraform import"), "{out}");
    assert!(
        out.contains("cluster_name = \"taken\""),
        "the error is on the name attribute: {out}"
    );
    let queue_tags = aws.sqs.list_queue_tags().queue_url(&theirs).send().await.unwrap();
    assert_eq!(
        queue_tags
            .tags()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .collect::<BTreeMap<_, _>>(),
        BTreeMap::from([("owner".to_string(), "other-team".to_string())])
    );
    let attrs = aws.queue_attributes("taken").await;
    assert_eq!(attrs["ApproximateNumberOfMessages"], "1");
    assert!(
        !attrs.contains_key("Policy"),
        "their queue got our policy: {attrs:?}"
    );
    assert!(
        aws.rule_names("Karpenter-taken-").await.is_empty(),
        "nothing was created"
    );

    work.set_config(&format!(
        "{}\n{}",
        moto.provider_block(),
        r#"
resource "karpenter_interruption_queue" "ruled" {
  cluster_name = "ruled"
}
"#
    ));
    let run = work.apply().failed();
    let out = run.output();
    assert!(out.contains("EventBridge rule already exists"), "{out}");
    assert!(out.contains("Karpenter-ruled-SpotInterruption"), "{out}");
    assert!(out.contains("rule_name_prefix"), "{out}");
    let (pattern, _, targets) = aws.rule("Karpenter-ruled-SpotInterruption").await;
    assert_eq!(pattern, serde_json::json!({"source": ["their.app"]}));
    assert_eq!(
        targets,
        vec![(
            "their-target".to_string(),
            "arn:aws:sqs:us-east-1:123456789012:taken".to_string()
        )]
    );
    assert_eq!(
        aws.rule_names("Karpenter-ruled-").await.len(),
        1,
        "no rule of ours was made"
    );
    assert!(
        !aws.queue_names().await.contains(&"ruled".to_string()),
        "refused before the queue"
    );

    work.destroy().ok();
    assert_eq!(aws.queue_names().await, vec!["taken".to_string()]);
    assert_eq!(
        aws.queue_attributes("taken").await["ApproximateNumberOfMessages"],
        "1"
    );
    assert_eq!(aws.rule_names("Karpenter-ruled-").await.len(), 1);
}

/// Issue #15, point 3: a queue deleted out of band is recreated in place (an update, not a
/// create) with the existing rules kept and re-pointed; deleted again, `destroy` removes the
/// rules that remain. Before the fix, refresh dropped the whole resource when the queue was
/// gone, so destroy reported "0 destroyed" and left all five rules behind.
#[tokio::test(flavor = "multi_thread")]
async fn a_queue_deleted_out_of_band_is_recreated_and_destroy_removes_the_rules_left() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let work = moto::workdir(
        &moto.provider_block(),
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "vanish"
}
"#,
    );
    work.apply().ok();
    let delete_queue = || async {
        let url = aws.sqs.get_queue_url().queue_name("vanish").send().await.unwrap();
        aws.sqs
            .delete_queue()
            .queue_url(url.queue_url().unwrap())
            .send()
            .await
            .unwrap();
    };
    delete_queue().await;
    let rule_arns = |rules: serde_json::Value| -> Vec<String> {
        rules
            .as_object()
            .map(|m| {
                m.values()
                    .filter_map(|r| r["arn"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let before = rule_arns(resource_values(&work)["rules"].clone());
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("will be updated in-place"),
        "{}",
        plan.output()
    );
    work.apply().ok();
    assert_matches_template(&aws, "vanish", "Karpenter-vanish-").await;
    assert_eq!(
        rule_arns(resource_values(&work)["rules"].clone()),
        before,
        "the rules were kept"
    );
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    delete_queue().await;
    let run = work.destroy().ok();
    assert!(run.stdout.contains("1 destroyed"), "{}", run.output());
    assert!(aws.rule_names("Karpenter-vanish-").await.is_empty());
    assert!(aws.queue_names().await.is_empty());
}

/// Issue #15, point 6: a new `rule_name_prefix` builds the new rules (with their targets)
/// before deleting the old ones. A fault on the first RemoveTargets of the old rules stops the
/// apply between the two steps: both sets exist and are in state, never neither; the next
/// apply finishes. Before the fix the old rules went first, so the same fault left the old set
/// only (and a fault one step later, none).
#[tokio::test(flavor = "multi_thread")]
async fn a_new_rule_prefix_builds_the_new_rules_before_deleting_the_old() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let proxy = FaultProxy::start(moto.port());
    let config = |prefix: &str| {
        format!(
            "{}\nresource \"karpenter_interruption_queue\" \"this\" {{\n  cluster_name     = \"renamed\"\n  rule_name_prefix = \"{prefix}\"\n}}\n",
            proxy.provider_block()
        )
    };
    let work = moto::workdir("", &config("old-"));
    work.apply().ok();
    assert_eq!(aws.rule_names("old-").await.len(), 5);
    work.set_config(&config("new-"));
    proxy.arm(Fault::new(
        "AWSEvents.RemoveTargets",
        3,
        400,
        "ThrottlingException",
    ));
    let run = work.apply().failed();
    assert!(run.stderr.contains("events:RemoveTargets"), "{}", run.output());
    assert_eq!(aws.rule_names("new-").await.len(), 5, "new rules first");
    assert_eq!(aws.rule_names("old-").await.len(), 5, "old rules still there");
    for (_, suffix, _) in RULE_SUFFIXES {
        let (_, _, targets) = aws.rule(&format!("new-{suffix}")).await;
        assert_eq!(targets.len(), 1, "{suffix}");
    }
    let mut in_state: Vec<String> = resource_values(&work)["rules"]
        .as_object()
        .map(|m| {
            m.values()
                .filter_map(|r| r["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    in_state.sort();
    let mut in_moto = aws.rule_names("new-").await;
    in_moto.extend(aws.rule_names("old-").await);
    in_moto.sort();
    assert_eq!(in_state, in_moto, "every rule that exists is recorded");
    proxy.disarm();
    work.apply().ok();
    assert!(aws.rule_names("old-").await.is_empty());
    assert_matches_template(&aws, "renamed", "new-").await;
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
}

/// Issue #15, point 7: `import {}` + `plan -generate-config-out` then plan is empty, for a
/// short cluster name and for a 100-character one (whose rule prefix is shortened with a hash
/// and whose queue must be named apart). Before the fix the long name's import wrote the
/// hashed prefix's middle into `cluster_name`.
#[tokio::test(flavor = "multi_thread")]
async fn import_with_generated_config_plans_empty_for_short_and_long_cluster_names() {
    let moto = Moto::start();
    let long = format!("c{}", "23456789-".repeat(12))[..100].to_string();
    for (cluster, name) in [("short", None), (long.as_str(), Some("long-events"))] {
        let name_line = name.map(|n| format!("  name = \"{n}\"\n")).unwrap_or_default();
        let queue = name.unwrap_or(cluster);
        let work = moto::workdir(
            &moto.provider_block(),
            &format!(
                "resource \"karpenter_interruption_queue\" \"q\" {{\n  cluster_name = \"{cluster}\"\n{name_line}}}\n"
            ),
        );
        work.apply().ok();
        work.terraform(&["state", "rm", "karpenter_interruption_queue.q"])
            .ok();
        work.set_config(&format!(
            "{}\nimport {{\n  to = karpenter_interruption_queue.q\n  id = \"{queue}\"\n}}\n",
            moto.provider_block()
        ));
        let generated = import_and_plan_empty(&work, 1);
        let generated_cluster = generated
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("cluster_name "))
            .and_then(|l| l.split_once('='))
            .map(|(_, v)| v.trim().trim_matches('"').to_string());
        assert_eq!(generated_cluster.as_deref(), Some(cluster), "{generated}");
        work.destroy().ok();
    }
}

/// Issue #15, compatibility: a state written by an earlier version (no `other_target_ids`) over
/// parts without the bookkeeping tags is still this resource's: plan empty, no error, no
/// replacement; the next apply adds the tags in place, and destroy removes everything.
#[tokio::test(flavor = "multi_thread")]
async fn untagged_parts_recorded_by_an_earlier_version_stay_ours() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let config = |team: &str| {
        format!(
            "{}\nresource \"karpenter_interruption_queue\" \"this\" {{\n  cluster_name = \"legacy\"\n  tags = {{ team = \"{team}\" }}\n}}\n",
            moto.provider_block()
        )
    };
    let work = moto::workdir("", &config("a"));
    work.apply().ok();
    // What an earlier version left: no bookkeeping tags in AWS, no `other_target_ids` in state.
    let bookkeeping = [
        "terraform-provider-karpenter/resource-type",
        "terraform-provider-karpenter/cluster-name",
    ];
    let url = aws.sqs.get_queue_url().queue_name("legacy").send().await.unwrap();
    let url = url.queue_url().unwrap().to_string();
    aws.sqs
        .untag_queue()
        .queue_url(&url)
        .set_tag_keys(Some(bookkeeping.iter().map(|k| k.to_string()).collect()))
        .send()
        .await
        .unwrap();
    let rule_arns: Vec<String> = resource_values(&work)["rules"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["arn"].as_str().unwrap().to_string())
        .collect();
    for arn in &rule_arns {
        aws.events
            .untag_resource()
            .resource_arn(arn)
            .tag_keys(bookkeeping[0])
            .send()
            .await
            .unwrap();
    }
    let path = work.path().join("terraform.tfstate");
    let mut raw: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for rule in raw["resources"][0]["instances"][0]["attributes"]["rules"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        rule.as_object_mut().unwrap().remove("other_target_ids");
    }
    std::fs::write(&path, serde_json::to_string(&raw).unwrap()).unwrap();

    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.set_config(&config("b"));
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("1 to change, 0 to destroy"),
        "{}",
        plan.output()
    );
    work.apply().ok();
    let tags = aws.sqs.list_queue_tags().queue_url(&url).send().await.unwrap();
    let tags: BTreeMap<String, String> = tags.tags().cloned().unwrap_or_default().into_iter().collect();
    assert_eq!(
        tags.get(bookkeeping[0]).map(String::as_str),
        Some("karpenter_interruption_queue")
    );
    assert_eq!(tags.get("team").map(String::as_str), Some("b"));
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
    assert!(aws.queue_names().await.is_empty());
    assert!(aws.rule_names("Karpenter-legacy-").await.is_empty());
}
