//! Migrating from terraform-aws-eks's `modules/karpenter` (#26, #36), the way
//! `docs/guides/migrating-from-terraform-aws-eks.md` says, word for word, against accounts made
//! the way the module's v20.37.2 and v21.19.0 make them ([`module_seed`]): every common way the
//! module is called — IRSA only, Pod Identity only, both; a custom namespace and service account;
//! `enable_v1_permissions`; `enable_inline_policy`; custom role names with and without name
//! prefixes; `tags`, `iam_role_tags`, `node_iam_role_tags`; a custom `queue_name` and
//! `rule_name_prefix`; `iam_role_policies`, `node_iam_role_additional_policies`;
//! `create_instance_profile` — several calls in one account and one configuration.
//!
//! The guide's flow: its `import {}` blocks, `terraform plan -generate-config-out`, the apply;
//! then its optional steps (the provider's own permissions, with the block that keeps what they
//! leave out; the provider's rule names and all five rules), each as the guide words it. After
//! every apply: nothing replaced or deleted (role IDs, queue URL and its message, instance
//! profiles); the controller's trusted principals and permissions at least what they were
//! ([`permissions`]); tags unchanged; only the changes the guide lists; no AWS write the plan
//! did not show ([`writes`]); the plan after it empty. Besides: what the provider's permissions
//! leave out of the module's policy is exactly the guide's table, and a configuration that
//! forgets the IRSA namespace gets the plan's warning before the apply locks the controller out.
//!
//! Not here: the EKS access entry and the Pod Identity association (moto has no API for them;
//! the guide keeps them with hashicorp/aws), and the `removed`/`moved` blocks of the guide's
//! first step (they act on the module's state, which the test cannot make without the module).

mod module_seed;
mod permissions;
mod writes;

use std::collections::{BTreeMap, BTreeSet};

use crate::iam_common::{attached, decode};
use acceptance_tests::moto::{ACCOUNT_ID, FaultProxy, Moto, REGION, configure_env};
use acceptance_tests::roundtrip::generate_config;
use acceptance_tests::{Workdir, repo_file};
use module_seed::{Made, ModuleCall, Version};
use permissions::{Grant, grants, lost, principals};
use serde_json::{Value as Json, json};

const GUIDE: &str = "docs/guides/migrating-from-terraform-aws-eks.md";

pub(crate) struct Aws {
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

    async fn role_id(&self, name: &str) -> String {
        let r = self.iam.get_role().role_name(name).send().await.expect("GetRole");
        r.role().map(|r| r.role_id().to_string()).expect("role")
    }

    async fn role_tags(&self, name: &str) -> BTreeMap<String, String> {
        let out = self
            .iam
            .list_role_tags()
            .role_name(name)
            .send()
            .await
            .expect("ListRoleTags");
        out.tags()
            .iter()
            .map(|t| (t.key().to_string(), t.value().to_string()))
            .collect()
    }

    async fn trust(&self, role: &str) -> Json {
        let r = self.iam.get_role().role_name(role).send().await.expect("GetRole");
        decode(
            r.role()
                .and_then(|r| r.assume_role_policy_document())
                .expect("trust"),
        )
    }

    /// The profile's roles and tags.
    async fn profile(&self, name: &str) -> (Vec<String>, BTreeMap<String, String>) {
        let p = self
            .iam
            .get_instance_profile()
            .instance_profile_name(name)
            .send()
            .await
            .unwrap_or_else(|e| panic!("instance profile {name} is gone: {e}"));
        let p = p.instance_profile().expect("profile");
        (
            p.roles().iter().map(|r| r.role_name().to_string()).collect(),
            p.tags()
                .iter()
                .map(|t| (t.key().to_string(), t.value().to_string()))
                .collect(),
        )
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

    async fn queue_tags(&self, url: &str) -> BTreeMap<String, String> {
        let out = self
            .sqs
            .list_queue_tags()
            .queue_url(url)
            .send()
            .await
            .expect("ListQueueTags");
        out.tags().cloned().unwrap_or_default().into_iter().collect()
    }

    async fn messages(&self, url: &str) -> String {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let out = self
            .sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(A::ApproximateNumberOfMessages)
            .send()
            .await
            .expect("attributes");
        out.attributes()
            .and_then(|a| a.get(&A::ApproximateNumberOfMessages))
            .cloned()
            .unwrap_or_default()
    }

    /// Every rule that targets `queue_arn`: name → (its targets' ARNs, its tags).
    async fn rules_of(&self, queue_arn: &str) -> BTreeMap<String, (Vec<String>, BTreeMap<String, String>)> {
        let names = self
            .events
            .list_rule_names_by_target()
            .target_arn(queue_arn)
            .send()
            .await
            .expect("ListRuleNamesByTarget");
        let mut out = BTreeMap::new();
        for name in names.rule_names() {
            let targets = self
                .events
                .list_targets_by_rule()
                .rule(name)
                .send()
                .await
                .expect("targets");
            let rule = self
                .events
                .describe_rule()
                .name(name)
                .send()
                .await
                .expect("DescribeRule");
            let tags = self
                .events
                .list_tags_for_resource()
                .resource_arn(rule.arn().unwrap_or_default())
                .send()
                .await
                .expect("ListTagsForResource");
            out.insert(
                name.clone(),
                (
                    targets.targets().iter().map(|t| t.arn().to_string()).collect(),
                    tags.tags()
                        .iter()
                        .map(|t| (t.key().to_string(), t.value().to_string()))
                        .collect(),
                ),
            );
        }
        out
    }
}

/// One module call and the name its three resources get in the configuration.
struct Setup {
    key: &'static str,
    call: ModuleCall,
}

/// What a module call's parts are, read from AWS: compared before and after every apply.
#[derive(Debug, Clone, PartialEq)]
struct Snapshot {
    controller_id: String,
    node_id: String,
    queue_url: String,
    messages: String,
    /// The trust policies as they are, statement IDs and order included.
    controller_trust: Json,
    node_trust: Json,
    trusted: BTreeSet<String>,
    grants: BTreeSet<Grant>,
    node_policies: BTreeSet<String>,
    /// Tags by part (roles, queue, each rule, each instance profile).
    tags: BTreeMap<String, BTreeMap<String, String>>,
    /// The instance profiles and the roles they hold.
    profiles: BTreeMap<String, Vec<String>>,
}

async fn snapshot(aws: &Aws, made: &Made) -> Snapshot {
    let mut tags = BTreeMap::new();
    tags.insert(
        "controller role".to_string(),
        aws.role_tags(&made.controller_role).await,
    );
    tags.insert("node role".to_string(), aws.role_tags(&made.node_role).await);
    tags.insert("queue".to_string(), aws.queue_tags(&made.queue_url).await);
    for (name, (_, rule_tags)) in aws.rules_of(&made.queue_arn).await {
        tags.insert(format!("rule {name}"), rule_tags);
    }
    let mut profiles = BTreeMap::new();
    for profile in [Some(&made.karpenter_profile), made.module_profile.as_ref()]
        .into_iter()
        .flatten()
    {
        let (roles, profile_tags) = aws.profile(profile).await;
        profiles.insert(profile.clone(), roles);
        tags.insert(format!("profile {profile}"), profile_tags);
    }
    Snapshot {
        controller_id: aws.role_id(&made.controller_role).await,
        node_id: aws.role_id(&made.node_role).await,
        queue_url: aws.queue_url(&made.queue).await,
        messages: aws.messages(&made.queue_url).await,
        controller_trust: aws.trust(&made.controller_role).await,
        node_trust: aws.trust(&made.node_role).await,
        trusted: principals(&aws.trust(&made.controller_role).await),
        grants: grants(&aws.role_documents(&made.controller_role).await),
        node_policies: attached(&aws.iam, &made.node_role).await,
        tags,
        profiles,
    }
}

/// The invariants of every step: nothing replaced or deleted, the controller's principals and
/// permissions at least what they were, and (unless `tags_may_change`) tags unchanged.
async fn assert_kept(
    aws: &Aws,
    made: &Made,
    before: &Snapshot,
    step: &str,
    rules_may_change: bool,
) -> Snapshot {
    let now = snapshot(aws, made).await;
    let who = format!("{} ({step})", made.call.cluster);
    assert_eq!(
        now.controller_id, before.controller_id,
        "{who}: controller role replaced"
    );
    assert_eq!(now.node_id, before.node_id, "{who}: node role replaced");
    assert_eq!(now.queue_url, before.queue_url, "{who}: queue replaced");
    assert_eq!(now.messages, before.messages, "{who}: the queue lost its message");
    assert_eq!(
        now.profiles, before.profiles,
        "{who}: an instance profile changed"
    );
    // Trust policies that admit the same are kept as they are: statement IDs, order, spelling.
    assert_eq!(
        now.controller_trust, before.controller_trust,
        "{who}: controller trust rewritten"
    );
    assert_eq!(now.node_trust, before.node_trust, "{who}: node trust rewritten");
    let gone: Vec<&String> = before.trusted.difference(&now.trusted).collect();
    assert!(
        gone.is_empty(),
        "{who}: the controller role no longer trusts {gone:?}"
    );
    let docs = aws.role_documents(&made.controller_role).await;
    let missing = lost(&before.grants, &docs);
    assert!(missing.is_empty(), "{who}: the controller lost {missing:?}");
    let node_gone: Vec<&String> = before.node_policies.difference(&now.node_policies).collect();
    assert!(node_gone.is_empty(), "{who}: the node role lost {node_gone:?}");
    let tags = |s: &Snapshot| -> BTreeMap<String, BTreeMap<String, String>> {
        s.tags
            .iter()
            .filter(|(part, _)| !(rules_may_change && part.starts_with("rule ")))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    assert_eq!(tags(&now), tags(before), "{who}: tags changed");
    now
}

/// The guide's `hcl` block after `marker`.
fn guide_block(marker: &str) -> String {
    let guide = repo_file(GUIDE);
    let after = guide
        .split(marker)
        .nth(1)
        .unwrap_or_else(|| panic!("the guide's {marker} marker"));
    after
        .split("```hcl\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap_or_else(|| panic!("the hcl block after {marker}"))
        .to_string()
}

/// The guide's import blocks for one module call: its resources named `key`, the module's
/// outputs substituted.
fn imports(setup: &Setup, made: &Made) -> String {
    guide_block("<!-- migration-imports -->")
        .replace(".this", &format!(".{}", setup.key))
        .replace("<iam_role_name>", &made.controller_role)
        .replace("<node_iam_role_name>", &made.node_role)
        .replace("<queue_name>", &made.queue)
}

/// The actions of the guide's table of what the provider's permissions leave out, for a call.
fn guide_dropped(call: &ModuleCall) -> BTreeSet<String> {
    let row = match (call.version, call.enable_v1_permissions) {
        (Version::V20, false) => "| v20, default permissions |",
        (Version::V20, true) => "| v20, `enable_v1_permissions = true` |",
        (Version::V21, _) => "| v21 |",
    };
    let guide = repo_file(GUIDE);
    let line = guide
        .lines()
        .find(|l| l.starts_with(row))
        .unwrap_or_else(|| panic!("the guide's table has no row {row}"));
    line.trim_start_matches(row)
        .split('`')
        .filter(|s| s.contains(':') && !s.contains(' '))
        .map(str::to_string)
        .collect()
}

/// The plan saved in `tfplan`, as `terraform show -json` gives it.
fn saved_plan(work: &Workdir) -> Json {
    work.terraform(&["plan", "-no-color", "-input=false", "-out=tfplan"])
        .ok();
    let shown = work.terraform(&["show", "-json", "tfplan"]).ok();
    serde_json::from_str(&shown.stdout).expect("show -json")
}

/// The attributes of `address` the plan changes (before ≠ after, or unknown after).
fn changed_attributes(plan: &Json, address: &str) -> BTreeSet<String> {
    let rc = plan["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|rc| rc["address"] == address)
        .unwrap_or_else(|| panic!("{address} not in the plan"));
    let change = &rc["change"];
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for side in ["before", "after", "after_unknown"] {
        keys.extend(
            change[side]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| k.clone()),
        );
    }
    keys.into_iter()
        .filter(|k| {
            change["before"].get(k) != change["after"].get(k)
                || change["after_unknown"]
                    .get(k)
                    .is_some_and(|u| u != &json!(false) && u != &json!({}))
        })
        .collect()
}

/// Applies the saved plan, checks that every AWS write was planned, and that the plan after it
/// is empty.
fn apply_planned(
    work: &Workdir,
    proxy: &FaultProxy,
    plan: &Json,
    step: &str,
) -> Vec<acceptance_tests::moto::ProxyCall> {
    proxy.clear_log();
    work.terraform(&["apply", "-no-color", "-input=false", "tfplan"])
        .ok();
    let calls = proxy.calls();
    // #40: every AWS request names the provider and its version (CloudTrail's userAgent).
    let app = format!(
        "app/terraform-provider-karpenter#{}",
        acceptance_tests::provider_version()
    );
    let anonymous: Vec<_> = calls
        .iter()
        .filter(|c| !c.user_agent.contains(&app))
        .map(|c| format!("{} {:?}", c.operation, c.user_agent))
        .collect();
    assert!(anonymous.is_empty(), "{step}: calls without {app}: {anonymous:?}");
    let unplanned = writes::unplanned_writes(plan, &calls);
    assert!(
        unplanned.is_empty(),
        "{step}: writes the plan did not show:\n{}",
        unplanned.join("\n")
    );
    assert!(
        work.plan_is_empty(),
        "{step}: the plan after the apply is not empty:\n{}",
        work.plan().output()
    );
    calls
}

/// The operation (and the role or policy it names) of each call, for order checks.
fn ops(calls: &[acceptance_tests::moto::ProxyCall]) -> Vec<String> {
    calls
        .iter()
        .map(|c| {
            let field = |k: &str| {
                c.body
                    .split('&')
                    .find_map(|p| p.strip_prefix(&format!("{k}=")))
                    .map(|v| {
                        percent_encoding::percent_decode_str(v)
                            .decode_utf8_lossy()
                            .into_owned()
                    })
            };
            format!(
                "{} {} {}",
                c.operation,
                field("RoleName").unwrap_or_default(),
                field("PolicyName")
                    .or_else(|| field("PolicyArn"))
                    .unwrap_or_default()
            )
        })
        .collect()
}

async fn migrate(setups: Vec<Setup>, replace_rules: bool) {
    let moto = Moto::start();
    let proxy = FaultProxy::start(moto.port());
    let aws = Aws::new(&moto);
    let mut made = Vec::new();
    for s in &setups {
        made.push(aws.apply_module(&s.call).await);
    }
    let mut before = Vec::new();
    for m in &made {
        let snap = snapshot(&aws, m).await;
        assert_eq!(snap.messages, "1");
        before.push(snap);
    }

    // Steps 2 and 3: the import blocks, the generated configuration, the apply.
    let import_blocks: String = setups.iter().zip(&made).map(|(s, m)| imports(s, m)).collect();
    let mut work = Workdir::new(&format!("{}\n{import_blocks}", proxy.provider_block()));
    configure_env(&mut work);
    generate_config(&work, "karpenter.tf");
    let plan = saved_plan(&work);
    for (s, m) in setups.iter().zip(&made) {
        // Exactly the changes the guide lists.
        let queue_changes = changed_attributes(&plan, &format!("karpenter_interruption_queue.{}", s.key));
        let expected_queue: BTreeSet<String> = match s.call.version {
            Version::V20 => ["policy_json".to_string()].into(),
            Version::V21 => BTreeSet::new(),
        };
        assert_eq!(queue_changes, expected_queue, "{}: queue", m.call.cluster);
        assert_eq!(
            changed_attributes(&plan, &format!("karpenter_node_role.{}", s.key)),
            ["managed_policy_arns".to_string()].into(),
            "{}: node role",
            m.call.cluster
        );
        assert_eq!(
            changed_attributes(&plan, &format!("karpenter_controller_role.{}", s.key)),
            BTreeSet::new(),
            "{}: controller role",
            m.call.cluster
        );
    }
    apply_planned(&work, &proxy, &plan, "import");
    let mut now = Vec::new();
    for (m, b) in made.iter().zip(&before) {
        let snap = assert_kept(&aws, m, b, "import", false).await;
        let mut node = b.node_policies.clone();
        node.insert("arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore".into());
        assert_eq!(
            snap.node_policies, node,
            "{}: the node role only gains SSM",
            m.call.cluster
        );
        let rules = aws.rules_of(&m.queue_arn).await;
        for (key, name) in &m.rules {
            assert!(
                rules.contains_key(name),
                "{}: the module's {key} rule {name} is gone",
                m.call.cluster
            );
        }
        now.push(snap);
    }

    // The safety net: a configuration that leaves out the IRSA namespace (as the first version of
    // the guide did) is warned about before anything is applied.
    if let Some((s, m)) = setups.iter().zip(&made).find(|(s, _)| {
        s.call
            .irsa_service_accounts
            .first()
            .is_some_and(|sa| !sa.starts_with("kube-system:"))
    }) {
        work.write(
            "forgotten_override.tf",
            &format!(
                "resource \"karpenter_controller_role\" \"{}\" {{\n  irsa = {{ oidc_provider_arn = \"{}\" }}\n}}\n",
                s.key,
                m.call.oidc_provider_arn()
            ),
        );
        let plan = work.plan().ok();
        let text = plan.text();
        let sa = s.call.irsa_service_accounts[0].replace(':', "/");
        assert!(
            text.contains("The controller role would lose a trusted principal")
                && text.contains(&format!("the service account {sa}"))
                && text.contains("irsa"),
            "no warning for the forgotten namespace:\n{}",
            plan.output()
        );
        std::fs::remove_file(work.path().join("forgotten_override.tf")).expect("remove override");
    }

    // Step 4: the provider's own permissions, keeping what they leave out.
    // The attribute the guide's block adds to the controller role (the block elides the rest).
    let keep_block = guide_block("<!-- keep-permissions -->");
    let keep = keep_block
        .find("  additional_inline_policies")
        .and_then(|start| {
            keep_block
                .rfind("\n}")
                .map(|end| keep_block[start..end + 1].to_string())
        })
        .expect("the guide's additional_inline_policies block");
    let mut overrides = String::new();
    for (s, m) in setups.iter().zip(&made) {
        let extras: Vec<String> = m
            .controller_extra_arns
            .iter()
            .map(|a| format!("\"{a}\""))
            .collect();
        overrides.push_str(&format!(
            "resource \"karpenter_controller_role\" \"{}\" {{\n  policy_attachment      = \"inline\"\n  additional_policy_arns = [{}]\n{}}}\n\n",
            s.key,
            extras.join(", "),
            keep.replace("karpenter_interruption_queue.this", &format!("karpenter_interruption_queue.{}", s.key))
        ));
    }
    work.write("karpenter_override.tf", &overrides);
    let plan = saved_plan(&work);
    let calls = apply_planned(&work, &proxy, &plan, "step 4");
    let order = ops(&calls);
    for (s, m) in setups.iter().zip(&made) {
        let b = now
            .iter()
            .zip(&made)
            .find(|(_, x)| x.controller_role == m.controller_role)
            .map(|(b, _)| b)
            .expect("snapshot");
        assert_kept(&aws, m, b, "step 4", false).await;
        // Written before the module's policy went.
        let put = order
            .iter()
            .position(|o| {
                o.starts_with("Action=PutRolePolicy")
                    && o.contains(&m.controller_role)
                    && o.contains("KarpenterControllerPolicy")
            })
            .unwrap_or_else(|| panic!("{}: no PutRolePolicy: {order:?}", s.key));
        let gone = order
            .iter()
            .position(|o| {
                o.contains(&m.controller_role)
                    && (o.starts_with("Action=DetachRolePolicy") || o.starts_with("Action=DeleteRolePolicy"))
            })
            .unwrap_or_else(|| panic!("{}: the module's policy stayed: {order:?}", s.key));
        assert!(
            put < gone,
            "{}: the module's policy went before the provider's was written: {order:?}",
            s.key
        );
        if let Some(arn) = &m.controller_policy_arn {
            assert!(
                !attached(&aws.iam, &m.controller_role).await.contains(arn),
                "{}: still attached",
                s.key
            );
        }
        if let Some(name) = &m.controller_inline_policy {
            let names = aws
                .iam
                .list_role_policies()
                .role_name(&m.controller_role)
                .send()
                .await
                .expect("inline");
            assert!(
                !names.policy_names().contains(name),
                "{}: the module's inline policy stayed",
                s.key
            );
        }
        // What the provider's statements leave out of the module's policy is the guide's table.
        let ours = aws
            .iam
            .get_role_policy()
            .role_name(&m.controller_role)
            .policy_name("KarpenterControllerPolicy")
            .send()
            .await
            .expect("GetRolePolicy");
        let ours = decode(ours.policy_document());
        let module_grants: BTreeSet<Grant> = before
            .iter()
            .zip(&made)
            .find(|(_, x)| x.controller_role == m.controller_role)
            .map(|(b, _)| b.grants.clone())
            .expect("before");
        let extras: BTreeSet<Grant> = grants(&extra_documents(&aws, m).await);
        let dropped: BTreeSet<String> = lost(&module_grants, &[ours])
            .into_iter()
            .filter(|g| !extras.contains(g))
            .map(|(action, _)| action)
            .collect();
        assert_eq!(
            dropped,
            guide_dropped(&m.call),
            "{}: the guide's table of what is left out",
            s.key
        );
    }

    // Step 5: the rules under the provider's names, and all five.
    if replace_rules {
        overrides.push_str(
            &setups
                .iter()
                .map(|s| {
                    format!(
                        "resource \"karpenter_interruption_queue\" \"{}\" {{\n  rule_names    = null\n  enabled_rules = null\n}}\n\n",
                        s.key
                    )
                })
                .collect::<String>(),
        );
        work.write("karpenter_override.tf", &overrides);
        let plan = saved_plan(&work);
        let calls = apply_planned(&work, &proxy, &plan, "step 5");
        for (s, m) in setups.iter().zip(&made) {
            // The new rules wired before the first of the module's is deleted.
            let last_put = calls
                .iter()
                .rposition(|c| c.operation == "AWSEvents.PutTargets" && c.body.contains(&m.queue_arn))
                .unwrap_or_else(|| panic!("{}: no PutTargets", s.key));
            let first_delete = calls
                .iter()
                .position(|c| {
                    c.operation == "AWSEvents.DeleteRule" && m.rules.iter().any(|(_, n)| c.body.contains(n))
                })
                .unwrap_or_else(|| panic!("{}: no DeleteRule", s.key));
            assert!(
                last_put < first_delete,
                "{}: a module rule was deleted before the new rules were wired",
                s.key
            );
            let b = now
                .iter()
                .zip(&made)
                .find(|(_, x)| x.controller_role == m.controller_role)
                .map(|(b, _)| b)
                .expect("snapshot");
            assert_kept(&aws, m, b, "step 5", true).await;
            let rules = aws.rules_of(&m.queue_arn).await;
            let prefix = format!("Karpenter-{}-", m.call.cluster);
            assert_eq!(rules.len(), 5, "{}: {rules:?}", s.key);
            for (name, (targets, tags)) in &rules {
                assert!(
                    name.starts_with(&prefix),
                    "{}: {name} is not the provider's",
                    s.key
                );
                assert_eq!(targets, &vec![m.queue_arn.clone()], "{name}");
                assert_eq!(
                    tags.get("ClusterName").map(String::as_str),
                    Some(m.call.cluster),
                    "{name}: rule_tags"
                );
            }
        }
    }
}

/// The documents of the policies given besides the module's (`iam_role_policies`).
async fn extra_documents(aws: &Aws, m: &Made) -> Vec<Json> {
    let mut docs = Vec::new();
    for arn in &m.controller_extra_arns {
        let p = aws
            .iam
            .get_policy()
            .policy_arn(arn)
            .send()
            .await
            .expect("GetPolicy");
        let version = p
            .policy()
            .and_then(|p| p.default_version_id())
            .unwrap_or("v1")
            .to_string();
        let v = aws
            .iam
            .get_policy_version()
            .policy_arn(arn)
            .version_id(version)
            .send()
            .await
            .expect("GetPolicyVersion");
        docs.push(decode(
            v.policy_version().and_then(|v| v.document()).unwrap_or_default(),
        ));
    }
    docs
}

/// v20.37.2 as it is called: its defaults (Pod Identity, the v0.33 permissions); the usual IRSA
/// install (`enable_irsa`, `karpenter/karpenter`, both trusts) with tags; IRSA only with a custom
/// namespace and service account, v1 permissions, exact role names, extra policies on both roles,
/// role tags and the module's instance profile.
#[tokio::test(flavor = "multi_thread")]
async fn module_v20_calls_migrate_with_nothing_lost() {
    let mut irsa = ModuleCall::v20("v20-irsa");
    irsa.irsa_service_accounts = vec!["karpenter:karpenter"];
    irsa.tags = vec![("team", "platform"), ("env", "prod")];
    let mut custom = ModuleCall::v20("v20-custom");
    custom.enable_pod_identity = false;
    custom.irsa_service_accounts = vec!["platform:karpenter-controller"];
    custom.enable_v1_permissions = true;
    custom.iam_role_name = "platform-karpenter-controller";
    custom.iam_role_use_name_prefix = false;
    custom.iam_role_tags = vec![("role", "controller")];
    custom.iam_role_policies = vec!["platform-controller-extra"];
    custom.node_iam_role_name = Some("platform-karpenter-nodes");
    custom.node_iam_role_use_name_prefix = false;
    custom.node_iam_role_tags = vec![("role", "nodes")];
    custom.node_iam_role_additional_policies = vec!["platform-node-extra"];
    custom.create_instance_profile = true;
    custom.tags = vec![("team", "platform")];
    migrate(
        vec![
            Setup {
                key: "v20_defaults",
                call: ModuleCall::v20("v20-defaults"),
            },
            Setup {
                key: "v20_irsa",
                call: irsa,
            },
            Setup {
                key: "v20_custom",
                call: custom,
            },
        ],
        true,
    )
    .await;
}

/// v21.19.0 as it is called: its defaults (Pod Identity, the association); `enable_inline_policy`
/// with tags; a custom queue name and rule prefix, a custom role name prefix, an exact node role
/// name with extra policies, `iam_role_policies`, IRSA passed in
/// `iam_role_source_assume_policy_documents` (`kube-system/karpenter`) and
/// `create_pod_identity_association = false` (nothing of it in AWS but the trust).
#[tokio::test(flavor = "multi_thread")]
async fn module_v21_calls_migrate_with_nothing_lost() {
    let mut inline = ModuleCall::v21("v21-inline");
    inline.enable_inline_policy = true;
    inline.tags = vec![("team", "platform")];
    let mut custom = ModuleCall::v21("v21-custom");
    custom.queue_name = Some("platform-karpenter-events");
    custom.rule_name_prefix = "Platform";
    custom.iam_role_name = "PlatformKarpenter";
    custom.iam_role_policies = vec!["v21-controller-extra"];
    custom.node_iam_role_name = Some("platform-v21-nodes");
    custom.node_iam_role_use_name_prefix = false;
    custom.node_iam_role_additional_policies = vec!["v21-node-extra"];
    custom.irsa_service_accounts = vec!["kube-system:karpenter"];
    custom.tags = vec![("team", "platform"), ("cost-center", "42")];
    migrate(
        vec![
            Setup {
                key: "v21_defaults",
                call: ModuleCall::v21("v21-defaults"),
            },
            Setup {
                key: "v21_inline",
                call: inline,
            },
            Setup {
                key: "v21_custom",
                call: custom,
            },
        ],
        false,
    )
    .await;
}

/// A stack shaped like Karpenter's CloudFormation reference (rules named by CloudFormation, no
/// cluster tag, a queue named after the cluster) imports the same way: its rules are kept under
/// their names, the missing fifth kind is created beside them, the plan after it is empty.
#[tokio::test(flavor = "multi_thread")]
async fn a_cloudformation_reference_stack_migrates_in_place() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let queue_arn = format!("arn:aws:sqs:{REGION}:{ACCOUNT_ID}:demo");
    let url = aws
        .sqs
        .create_queue()
        .queue_name("demo")
        .attributes(
            aws_sdk_sqs::types::QueueAttributeName::MessageRetentionPeriod,
            "300",
        )
        .send()
        .await
        .expect("CreateQueue")
        .queue_url()
        .expect("url")
        .to_string();
    let policy = json!({"Id": "EC2InterruptionPolicy", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
         "Action": "sqs:SendMessage", "Resource": queue_arn},
        {"Sid": "DenyHTTP", "Effect": "Deny", "Action": "sqs:*", "Resource": queue_arn,
         "Condition": {"Bool": {"aws:SecureTransport": false}}, "Principal": "*"}]});
    aws.sqs
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(aws_sdk_sqs::types::QueueAttributeName::Policy, policy.to_string())
        .send()
        .await
        .expect("SetQueueAttributes");
    let kinds = [
        ("ScheduledChange", "aws.health", "AWS Health Event"),
        (
            "SpotInterruption",
            "aws.ec2",
            "EC2 Spot Instance Interruption Warning",
        ),
        ("Rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
        (
            "InstanceStateChange",
            "aws.ec2",
            "EC2 Instance State-change Notification",
        ),
    ];
    let mut names = Vec::new();
    for (logical, source, detail) in kinds {
        let name = format!("Karpenter-demo-{logical}Rule-1AB2C3D4E5F6G");
        aws.events
            .put_rule()
            .name(&name)
            .event_pattern(json!({"source": [source], "detail-type": [detail]}).to_string())
            .send()
            .await
            .expect("PutRule");
        aws.events
            .put_targets()
            .rule(&name)
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
        names.push(name);
    }
    let config = format!(
        "{}\nimport {{\n  to = karpenter_interruption_queue.this\n  id = \"demo\"\n}}\n",
        moto.provider_block()
    );
    let mut work = Workdir::new(&config);
    configure_env(&mut work);
    let (_, generated) = generate_config(&work, "karpenter.tf");
    assert!(generated.contains("rule_names"), "{generated}");
    // All five kinds: the stack's four kept, the fifth created.
    work.write(
        "karpenter_override.tf",
        "resource \"karpenter_interruption_queue\" \"this\" {\n  enabled_rules = null\n}\n",
    );
    work.apply().ok();
    let rules = aws.rules_of(&queue_arn).await;
    assert_eq!(rules.len(), 5, "{rules:?}");
    for name in &names {
        assert!(rules.contains_key(name), "{name} was not kept: {rules:?}");
    }
    assert_eq!(aws.queue_url("demo").await, url);
    assert!(work.plan_is_empty(), "{}", work.plan().output());
}
