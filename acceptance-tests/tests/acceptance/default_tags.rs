//! The provider's `aws { default_tags }` and account guards against moto through the real
//! terraform (issue #21): default tags land on every AWS part the provider creates (the
//! interruption queue and each of its rules, the node role and its instance profile, the
//! controller role and its managed policies), a resource's own tag wins over a default one,
//! `tags_all` shows the merged set in the plan, a change of the default tags is an in-place
//! update after which the plan is empty, and drift in the real tags shows as drift of
//! `tags_all`. `allowed_account_ids` / `forbidden_account_ids` refuse moto's account
//! (123456789012) before any call that changes anything: the proxy's call log holds one STS
//! GetCallerIdentity and nothing else that writes.

use std::collections::BTreeMap;

use crate::iam_common::{attrs, client};
use acceptance_tests::moto::{self, ACCOUNT_ID, FaultProxy, Moto, provider_block};

const CLUSTER: &str = "tagged";
const NODE_ROLE: &str = "KarpenterNodeRole-tagged";
const CONTROLLER_ROLE: &str = "KarpenterControllerRole-tagged";

const RESOURCES: &str = r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "tagged"
  tags         = { team = "karpenter" }
}

resource "karpenter_node_role" "this" {
  name                    = "KarpenterNodeRole-tagged"
  create_instance_profile = true
  tags                    = { team = "karpenter" }
}

resource "karpenter_controller_role" "this" {
  name                   = "KarpenterControllerRole-tagged"
  cluster_name           = "tagged"
  node_role_arn          = karpenter_node_role.this.arn
  interruption_queue_arn = karpenter_interruption_queue.this.queue_arn
  pod_identity           = true
  policy_attachment      = "managed"
}
"#;

/// The provider block at `endpoint` with `extra` inside `aws {}`.
fn provider_with(endpoint: &str, extra: &str) -> String {
    provider_block(endpoint).replacen("  aws {\n", &format!("  aws {{\n{extra}\n"), 1)
}

fn default_tags(pairs: &[(&str, &str)]) -> String {
    let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k} = \"{v}\"")).collect();
    format!(
        "    default_tags {{\n      tags = {{ {} }}\n    }}",
        body.join(", ")
    )
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Tags of every part, by part, with the provider's bookkeeping tags left out.
async fn tags_of_every_part(moto: &Moto) -> BTreeMap<String, BTreeMap<String, String>> {
    let config = moto.sdk_config();
    let sqs = aws_sdk_sqs::Client::new(&config);
    let events = aws_sdk_eventbridge::Client::new(&config);
    let iam = client(moto);
    let visible = |tags: BTreeMap<String, String>| -> BTreeMap<String, String> {
        tags.into_iter()
            .filter(|(k, _)| !k.starts_with("terraform-provider-karpenter/"))
            .collect()
    };
    let mut out = BTreeMap::new();

    let url = sqs
        .get_queue_url()
        .queue_name(CLUSTER)
        .send()
        .await
        .expect("queue url")
        .queue_url()
        .expect("url")
        .to_string();
    let tags = sqs
        .list_queue_tags()
        .queue_url(&url)
        .send()
        .await
        .expect("queue tags");
    out.insert(
        "queue".to_string(),
        visible(tags.tags().cloned().unwrap_or_default().into_iter().collect()),
    );
    let rules = events
        .list_rules()
        .name_prefix(format!("Karpenter-{CLUSTER}-"))
        .send()
        .await
        .expect("rules");
    assert_eq!(rules.rules().len(), 5, "{rules:?}");
    for rule in rules.rules() {
        let tags = events
            .list_tags_for_resource()
            .resource_arn(rule.arn().expect("rule arn"))
            .send()
            .await
            .expect("rule tags");
        out.insert(
            format!("rule {}", rule.name().unwrap_or_default()),
            visible(
                tags.tags()
                    .iter()
                    .map(|t| (t.key().to_string(), t.value().to_string()))
                    .collect(),
            ),
        );
    }
    for role in [NODE_ROLE, CONTROLLER_ROLE] {
        let tags = iam
            .list_role_tags()
            .role_name(role)
            .send()
            .await
            .expect("role tags");
        out.insert(
            format!("role {role}"),
            visible(
                tags.tags()
                    .iter()
                    .map(|t| (t.key().to_string(), t.value().to_string()))
                    .collect(),
            ),
        );
    }
    let profile = iam
        .get_instance_profile()
        .instance_profile_name(NODE_ROLE)
        .send()
        .await
        .expect("instance profile");
    out.insert(
        "instance profile".to_string(),
        visible(
            profile
                .instance_profile()
                .expect("profile")
                .tags()
                .iter()
                .map(|t| (t.key().to_string(), t.value().to_string()))
                .collect(),
        ),
    );
    let policies = iam
        .list_policies()
        .scope(aws_sdk_iam::types::PolicyScopeType::Local)
        .send()
        .await
        .expect("policies");
    let mut managed = 0;
    for p in policies.policies() {
        let name = p.policy_name().unwrap_or_default();
        if !name.starts_with(CONTROLLER_ROLE) {
            continue;
        }
        managed += 1;
        let got = iam
            .get_policy()
            .policy_arn(p.arn().expect("policy arn"))
            .send()
            .await
            .expect("policy");
        out.insert(
            format!("policy {name}"),
            visible(
                got.policy()
                    .expect("policy")
                    .tags()
                    .iter()
                    .map(|t| (t.key().to_string(), t.value().to_string()))
                    .collect(),
            ),
        );
    }
    assert_eq!(managed, 6, "the controller role's managed policies");
    out
}

/// What the controller role carries: the default tags only (it has no `tags` of its own).
fn assert_tags(
    parts: &BTreeMap<String, BTreeMap<String, String>>,
    with_own: &BTreeMap<String, String>,
    defaults_only: &BTreeMap<String, String>,
) {
    for (part, tags) in parts {
        let expected = if part.contains(CONTROLLER_ROLE) {
            defaults_only
        } else {
            with_own
        };
        assert_eq!(tags, expected, "tags of {part}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn default_tags_reach_every_part_show_in_plan_and_update_in_place() {
    let moto = Moto::start();
    let defaults = default_tags(&[("env", "prod"), ("team", "platform")]);
    let work = moto::workdir(&provider_with(moto.endpoint(), &defaults), RESOURCES);

    // The plan shows the merged set before anything exists; the resource's team wins.
    let plan = work.plan().ok();
    let shown = plan.stdout.matches("tags_all").count();
    assert!(
        shown >= 3,
        "tags_all of the three resources in the plan:\n{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("\"env\"  = \"prod\"") && plan.stdout.contains("\"team\" = \"karpenter\""),
        "merged tags in the plan:\n{}",
        plan.stdout
    );

    let started = std::time::Instant::now();
    work.apply().ok();
    println!("apply with default tags: {:?}", started.elapsed());
    let own = map(&[("env", "prod"), ("team", "karpenter")]);
    let only_defaults = map(&[("env", "prod"), ("team", "platform")]);
    let parts = tags_of_every_part(&moto).await;
    assert_eq!(parts.len(), 1 + 5 + 2 + 1 + 6, "{:?}", parts.keys());
    assert_tags(&parts, &own, &only_defaults);

    let state = work.state();
    let queue = attrs(&state, "karpenter_interruption_queue.this");
    assert_eq!(queue["tags"], serde_json::json!({"team": "karpenter"}));
    assert_eq!(
        queue["tags_all"],
        serde_json::json!({"env": "prod", "team": "karpenter"})
    );
    let controller = attrs(&state, "karpenter_controller_role.this");
    assert_eq!(controller["tags"], serde_json::Value::Null);
    assert_eq!(
        controller["tags_all"],
        serde_json::json!({"env": "prod", "team": "platform"})
    );
    assert!(work.plan_is_empty(), "plan after apply is not empty");

    // New default tags: an in-place update of tags_all, nothing replaced.
    let defaults = default_tags(&[("env", "stage"), ("team", "platform"), ("cost", "42")]);
    work.set_config(&format!(
        "{}\n{RESOURCES}",
        provider_with(moto.endpoint(), &defaults)
    ));
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("0 to add, 3 to change, 0 to destroy"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("must be replaced"), "{}", plan.stdout);
    assert!(plan.stdout.contains("\"stage\""), "{}", plan.stdout);
    let started = std::time::Instant::now();
    work.apply().ok();
    println!("apply of new default tags: {:?}", started.elapsed());
    let own = map(&[("cost", "42"), ("env", "stage"), ("team", "karpenter")]);
    let only_defaults = map(&[("cost", "42"), ("env", "stage"), ("team", "platform")]);
    assert_tags(&tags_of_every_part(&moto).await, &own, &only_defaults);
    assert!(
        work.plan_is_empty(),
        "plan after the default tags changed is not empty"
    );

    // Drift: a default tag removed from the queue outside Terraform shows as tags_all.
    let sqs = aws_sdk_sqs::Client::new(&moto.sdk_config());
    let url = sqs
        .get_queue_url()
        .queue_name(CLUSTER)
        .send()
        .await
        .expect("queue url")
        .queue_url()
        .expect("url")
        .to_string();
    sqs.untag_queue()
        .queue_url(&url)
        .tag_keys("cost")
        .send()
        .await
        .expect("untag");
    let plan = work.plan().ok();
    assert!(
        plan.stdout
            .contains("karpenter_interruption_queue.this will be updated in-place")
            && plan.stdout.contains("tags_all"),
        "{}",
        plan.stdout
    );
    work.apply().ok();
    assert!(work.plan_is_empty(), "plan after repairing the tags is not empty");
    work.destroy().ok();
}

/// Calls that change something in AWS, by the proxy's operation names.
fn writes(log: &[(String, bool)]) -> Vec<String> {
    const READS: &[&str] = &["Get", "List", "Describe"];
    log.iter()
        .map(|(op, _)| op.rsplit(['.', '=']).next().unwrap_or(op).to_string())
        .filter(|op| !READS.iter().any(|r| op.starts_with(r)))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_account_not_allowed_or_forbidden_fails_before_anything_is_created() {
    let moto = Moto::start();
    let proxy = FaultProxy::start(moto.port());
    let config = r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "guarded"
}

resource "karpenter_node_role" "this" {
  name = "KarpenterNodeRole-guarded"
}
"#;
    for (guard, summary, setting) in [
        (
            "    allowed_account_ids = [\"111122223333\", \"210987654321\"]",
            "AWS account not allowed",
            "aws.allowed_account_ids",
        ),
        (
            "    forbidden_account_ids = [\"123456789012\"]",
            "AWS account forbidden",
            "aws.forbidden_account_ids",
        ),
    ] {
        proxy.clear_log();
        let work = moto::workdir(&provider_with(&proxy.endpoint(), guard), config);
        let run = work.apply().failed();
        let text = run.text();
        assert!(text.contains(summary), "{setting}: {text}");
        assert!(
            text.contains(&format!("account {ACCOUNT_ID}")) && text.contains(setting),
            "{setting}: the error names the account and the setting: {text}"
        );
        let log = proxy.log();
        let identity = log
            .iter()
            .filter(|(op, _)| op.contains("GetCallerIdentity"))
            .count();
        assert_eq!(
            identity, 1,
            "{setting}: one GetCallerIdentity per provider process: {log:?}"
        );
        let changed: Vec<String> = writes(&log);
        assert!(
            changed.is_empty(),
            "{setting}: calls that change something: {changed:?}"
        );
        let state = work.state();
        assert!(
            state["values"]["root_module"]["resources"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "{setting}: nothing recorded: {state}"
        );
    }

    // moto's own account allowed: the same configuration applies.
    proxy.clear_log();
    let guard = format!("    allowed_account_ids = [\"{ACCOUNT_ID}\"]");
    let work = moto::workdir(&provider_with(&proxy.endpoint(), &guard), config);
    work.apply().ok();
    let identity = proxy
        .log()
        .iter()
        .filter(|(op, _)| op.contains("GetCallerIdentity"))
        .count();
    assert_eq!(identity, 1, "one GetCallerIdentity for the whole apply");
    work.destroy().ok();
}

/// A state written before `tags_all` existed (the attribute missing from each resource) plans
/// empty after the refresh, and so does an import under default tags (`tags` holds only the
/// resource's own tags, `tags_all` the merged set).
#[tokio::test(flavor = "multi_thread")]
async fn states_without_tags_all_and_imports_plan_empty_under_default_tags() {
    let moto = Moto::start();
    let defaults = default_tags(&[("env", "prod"), ("team", "platform")]);
    let work = moto::workdir(&provider_with(moto.endpoint(), &defaults), RESOURCES);
    work.apply().ok();

    // The state as an earlier provider version wrote it: no tags_all anywhere.
    let pulled = work.terraform(&["state", "pull"]).ok();
    let mut state: serde_json::Value = serde_json::from_str(&pulled.stdout).expect("state JSON");
    state["serial"] = serde_json::json!(state["serial"].as_u64().unwrap_or(0) + 1);
    let mut stripped = 0;
    for resource in state["resources"].as_array_mut().expect("resources") {
        for instance in resource["instances"].as_array_mut().expect("instances") {
            if let Some(attributes) = instance["attributes"].as_object_mut()
                && attributes.remove("tags_all").is_some()
            {
                stripped += 1;
            }
        }
    }
    assert_eq!(stripped, 3, "tags_all in the state of each resource");
    work.write("old.tfstate", &state.to_string());
    work.terraform(&["state", "push", "old.tfstate"]).ok();
    assert!(
        work.plan_is_empty(),
        "a state without tags_all does not plan empty"
    );

    // Import under default tags.
    for (address, id) in [
        ("karpenter_node_role.this", NODE_ROLE),
        ("karpenter_interruption_queue.this", CLUSTER),
        ("karpenter_controller_role.this", CONTROLLER_ROLE),
    ] {
        work.terraform(&["state", "rm", address]).ok();
        work.terraform(&["import", "-no-color", address, id]).ok();
        let imported = attrs(&work.state(), address);
        assert_eq!(imported["tags_all"]["env"], "prod", "{address}: {imported}");
    }
    let imported = attrs(&work.state(), "karpenter_node_role.this");
    assert_eq!(imported["tags"], serde_json::json!({"team": "karpenter"}));
    assert!(work.plan_is_empty(), "plan after import is not empty");
    work.destroy().ok();
}
