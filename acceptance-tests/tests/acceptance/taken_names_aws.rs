//! Create never adopts, on the AWS side (#26): two Terraform states in one account declaring the
//! same names — every AWS type: node role with instance profile, controller role with its
//! managed policies, interruption queue with its rules. The second state's apply is refused on
//! each resource's name attribute (saying the parts carry this provider's ownership tag, so an
//! interrupted apply or another state made them, with the import block); every part of the
//! first state stays byte for byte as it was, the first state's plan stays empty, and the
//! second state's destroy deletes nothing. Also: with no region anywhere, every AWS type fails
//! at plan instead of at apply with the SDK's text.

use std::collections::BTreeMap;

use acceptance_tests::Workdir;
use acceptance_tests::moto::Moto;
use serde_json::{Value as Json, json};

fn config(team: &str) -> String {
    format!(
        r#"
resource "karpenter_node_role" "nodes" {{
  name                    = "KarpenterNodeRole-shared"
  create_instance_profile = true
  tags                    = {{ team = "{team}" }}
}}

resource "karpenter_controller_role" "controller" {{
  name                   = "KarpenterController-shared"
  cluster_name           = "shared"
  region                 = "us-east-1"
  node_role_arn          = "arn:aws:iam::123456789012:role/KarpenterNodeRole-shared"
  interruption_queue_arn = "arn:aws:sqs:us-east-1:123456789012:shared"
  pod_identity           = true
  policy_attachment      = "managed"
  tags                   = {{ team = "{team}" }}
}}

resource "karpenter_interruption_queue" "queue" {{
  cluster_name = "shared"
  tags         = {{ team = "{team}" }}
}}
"#
    )
}

struct Aws {
    iam: aws_sdk_iam::Client,
    sqs: aws_sdk_sqs::Client,
    events: aws_sdk_eventbridge::Client,
}

fn tags_of<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> BTreeMap<String, String> {
    pairs.map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

impl Aws {
    fn new(moto: &Moto) -> Self {
        let config = moto.sdk_config();
        Aws {
            iam: aws_sdk_iam::Client::new(&config),
            sqs: aws_sdk_sqs::Client::new(&config),
            events: aws_sdk_eventbridge::Client::new(&config),
        }
    }

    /// Everything of the account a takeover could touch, as one value: roles (id, trust,
    /// tags, attached and inline policies), instance profiles (id, roles, tags), customer
    /// managed policies (id, versions, default document, tags), queues (attributes, tags) and
    /// rules (pattern, state, tags, targets).
    async fn snapshot(&self) -> Json {
        let mut roles = BTreeMap::new();
        for role in self.iam.list_roles().send().await.expect("ListRoles").roles() {
            let name = role.role_name();
            let full = self.iam.get_role().role_name(name).send().await.expect("GetRole");
            let r = full.role().expect("role");
            let attached: Vec<String> = self
                .iam
                .list_attached_role_policies()
                .role_name(name)
                .send()
                .await
                .expect("attached")
                .attached_policies()
                .iter()
                .filter_map(|p| p.policy_arn().map(str::to_string))
                .collect();
            let inline = self
                .iam
                .list_role_policies()
                .role_name(name)
                .send()
                .await
                .expect("inline")
                .policy_names()
                .to_vec();
            roles.insert(
                name.to_string(),
                json!({
                    "id": r.role_id(),
                    "trust": r.assume_role_policy_document(),
                    "tags": tags_of(r.tags().iter().map(|t| (t.key(), t.value()))),
                    "attached": attached,
                    "inline": inline,
                }),
            );
        }
        let mut profiles = BTreeMap::new();
        for p in self
            .iam
            .list_instance_profiles()
            .send()
            .await
            .expect("profiles")
            .instance_profiles()
        {
            let full = self
                .iam
                .get_instance_profile()
                .instance_profile_name(p.instance_profile_name())
                .send()
                .await
                .expect("profile");
            let p = full.instance_profile().expect("profile");
            profiles.insert(
                p.instance_profile_name().to_string(),
                json!({
                    "id": p.instance_profile_id(),
                    "roles": p.roles().iter().map(|r| r.role_name()).collect::<Vec<_>>(),
                    "tags": tags_of(p.tags().iter().map(|t| (t.key(), t.value()))),
                }),
            );
        }
        let mut policies = BTreeMap::new();
        for p in self
            .iam
            .list_policies()
            .scope(aws_sdk_iam::types::PolicyScopeType::Local)
            .send()
            .await
            .expect("policies")
            .policies()
        {
            let arn = p.arn().expect("arn");
            let version = p.default_version_id().expect("version");
            let doc = self
                .iam
                .get_policy_version()
                .policy_arn(arn)
                .version_id(version)
                .send()
                .await
                .expect("version");
            let tags = self
                .iam
                .list_policy_tags()
                .policy_arn(arn)
                .send()
                .await
                .expect("tags");
            policies.insert(
                arn.to_string(),
                json!({
                    "id": p.policy_id(),
                    "version": version,
                    "document": doc.policy_version().and_then(|v| v.document()),
                    "tags": tags_of(tags.tags().iter().map(|t| (t.key(), t.value()))),
                }),
            );
        }
        let mut queues = BTreeMap::new();
        for url in self.sqs.list_queues().send().await.expect("queues").queue_urls() {
            let attrs = self
                .sqs
                .get_queue_attributes()
                .queue_url(url)
                .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
                .send()
                .await
                .expect("attributes");
            let tags = self
                .sqs
                .list_queue_tags()
                .queue_url(url)
                .send()
                .await
                .expect("tags");
            queues.insert(
                url.to_string(),
                json!({
                    "attributes": attrs.attributes().map(|a| {
                        a.iter().map(|(k, v)| (k.as_str().to_string(), v.clone())).collect::<BTreeMap<_, _>>()
                    }),
                    "tags": tags.tags(),
                }),
            );
        }
        let mut rules = BTreeMap::new();
        for rule in self.events.list_rules().send().await.expect("rules").rules() {
            let name = rule.name().expect("name");
            let arn = rule.arn().expect("arn");
            let targets: Vec<(String, String)> = self
                .events
                .list_targets_by_rule()
                .rule(name)
                .send()
                .await
                .expect("targets")
                .targets()
                .iter()
                .map(|t| (t.id().to_string(), t.arn().to_string()))
                .collect();
            let tags = self
                .events
                .list_tags_for_resource()
                .resource_arn(arn)
                .send()
                .await
                .expect("tags");
            rules.insert(
                name.to_string(),
                json!({
                    "pattern": rule.event_pattern(),
                    "state": rule.state().map(|s| s.as_str().to_string()),
                    "tags": tags_of(tags.tags().iter().map(|t| (t.key(), t.value()))),
                    "targets": targets,
                }),
            );
        }
        json!({"roles": roles, "profiles": profiles, "policies": policies, "queues": queues, "rules": rules})
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_state_with_the_same_names_is_refused_and_changes_and_deletes_nothing() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let mut first = Workdir::new(&format!("{}\n{}", moto.provider_block(), config("a")));
    moto.configure(&mut first);
    first.apply().ok();
    let made = aws.snapshot().await;
    assert_eq!(made["rules"].as_object().map(|r| r.len()), Some(5), "{made}");
    assert_eq!(made["policies"].as_object().map(|p| p.len()), Some(6), "{made}");

    let mut second = Workdir::new(&format!("{}\n{}", moto.provider_block(), config("b")));
    moto.configure(&mut second);
    let out = one_line(&second.apply().failed().output());
    for needle in [
        // one refusal per resource, on its name attribute
        "Error: IAM role already exists with karpenter_node_role.nodes",
        "Error: IAM role already exists with karpenter_controller_role.controller",
        "Error: SQS queue already exists with karpenter_interruption_queue.queue",
        // the queue's rules are refused too, on rule_name_prefix
        "Error: EventBridge rule already exists with karpenter_interruption_queue.queue",
        // each carries our tag: say what that means, and how to take it over
        "It carries this provider's mark (the tag `terraform-provider-karpenter/resource-type` = `karpenter_node_role`)",
        "another Terraform state manages it",
        "to = karpenter_node_role.<name> id = \"KarpenterNodeRole-shared\"",
        "to = karpenter_controller_role.<name> id = \"KarpenterController-shared\"",
        "to = karpenter_interruption_queue.<name> id = \"shared\"",
        "terraform import karpenter_interruption_queue.<name> shared",
        "will not delete it",
    ] {
        assert!(out.contains(needle), "no {needle:?} in: {out}");
    }
    for (resource, line) in [
        ("karpenter_node_role.nodes", "name = \"KarpenterNodeRole-shared\""),
        (
            "karpenter_controller_role.controller",
            "name = \"KarpenterController-shared\"",
        ),
        ("karpenter_interruption_queue.queue", "cluster_name = \"shared\""),
    ] {
        assert!(
            out.contains(&format!("with {resource}, on main.tf line")) && out.contains(line),
            "{resource} not refused on {line}: {out}"
        );
    }
    // No diagnostic shows a Rust debug dump.
    for dump in [
        "DispatchFailure",
        "ConnectorError",
        "Some(",
        "SdkError",
        "ServiceError",
    ] {
        assert!(!out.contains(dump), "{dump} in: {out}");
    }
    assert!(
        second.state()["values"]["root_module"]["resources"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "the refusing state recorded something"
    );
    assert_eq!(
        aws.snapshot().await,
        made,
        "the refused apply changed the first state's parts"
    );
    assert!(
        first.plan_is_empty(),
        "the first state's plan is not empty after the refusal"
    );

    second.destroy().ok();
    assert_eq!(
        aws.snapshot().await,
        made,
        "the refusing state's destroy changed the first state's parts"
    );
    assert!(
        first.plan_is_empty(),
        "the first state's plan is not empty after the other destroy"
    );

    first.destroy().ok();
    let gone = aws.snapshot().await;
    for part in ["roles", "profiles", "policies", "queues", "rules"] {
        assert_eq!(
            gone[part],
            json!({}),
            "{part} left after the first state's destroy"
        );
    }
}

/// No region in the provider block, the environment or a profile: every AWS type fails at plan,
/// with one sentence that says where to set it, and nothing reaches AWS.
#[test]
fn without_a_region_every_aws_type_fails_at_plan() {
    let moto = Moto::start();
    let provider = moto
        .provider_block()
        .lines()
        .filter(|l| !l.trim_start().starts_with("region"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!provider.contains("region"), "{provider}");
    let config = config("a").replace("  region                 = \"us-east-1\"\n", "");
    let mut work = Workdir::new(&format!("{provider}\n{config}"));
    moto.configure(&mut work);
    // Set after configure's AWS_REGION, so these win; an empty value counts as unset.
    work.env("AWS_REGION", "")
        .env("AWS_DEFAULT_REGION", "")
        .env("AWS_PROFILE", "");
    let out = one_line(&work.plan().failed().output());
    assert_eq!(out.matches("Error: No AWS region").count(), 2, "{out}");
    assert!(out.contains("Error: No region"), "{out}");
    for resource in [
        "karpenter_node_role.nodes",
        "karpenter_controller_role.controller",
        "karpenter_interruption_queue.queue",
    ] {
        assert!(
            out.contains(&format!("with {resource}")),
            "{resource} not refused at plan: {out}"
        );
    }
    assert!(out.contains("aws {} block (or AWS_REGION"), "{out}");
    for dump in ["MissingSigningRegion", "dispatch failure", "DispatchFailure"] {
        assert!(!out.contains(dump), "{dump} in: {out}");
    }
}
