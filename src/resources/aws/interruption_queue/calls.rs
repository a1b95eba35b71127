//! The AWS side of the queue: creating, converging, reading and deleting its parts (the SQS queue,
//! its policy, the EventBridge rules and targets), each recorded as soon as it exists.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::document::{canonical_json, policy_document};
use super::kinds::{RULE_KINDS, rule_name_in};
use super::model::{Current, Desired, RuleState, set_attr, statements, string_map, visible_tags};
use super::policy_equivalence;
use super::schema::TYPE_NAME;
use crate::aws::error::{AwsError, AwsErrorKind};
use crate::aws::eventbridge::RuleRemoval;
use crate::aws::sqs::QUEUE_DELETED_RECENTLY;
use crate::aws::{EventBridge, Sqs, ownership};
use crate::aws_names;
use crate::context::KarpenterContext;
use crate::context::plan_memory::QueueBacklog;
use crate::resources::aws::tags_all;
use crate::resources::taken_name::{Marks, Taken, owner_tag_mark};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::{get_str, opt_string};
use crate::terraform::tfvalue::{AttributePath, Number, Value};

/// The target Id upstream's template gives the queue on every rule.
pub const TARGET_ID: &str = "KarpenterInterruptionQueueTarget";

// ----------------------------------------------------------------------------------------
// AWS operations

pub(super) struct Clients {
    pub(super) sqs: Sqs,
    pub(super) events: EventBridge,
    /// The region the clients talk to, when the SDK configuration names one.
    pub(super) region: Option<String>,
}

pub(super) async fn clients(ctx: &KarpenterContext) -> Result<Clients, Diagnostics> {
    clients_of(ctx.aws().await?)
}

/// [`clients`] for create, update and delete: the account guards are checked first.
pub(super) async fn clients_to_change(ctx: &KarpenterContext) -> Result<Clients, Diagnostics> {
    clients_of(ctx.aws_to_change().await?)
}

pub(super) fn clients_of(aws: &crate::aws::AwsClients) -> Result<Clients, Diagnostics> {
    Ok(Clients {
        sqs: Sqs::new(aws.sqs(), aws.endpoint_for("sqs")),
        events: EventBridge::new(aws.events(), aws.endpoint_for("events")),
        region: aws.region().map(str::to_string),
    })
}

/// The ARN of the queue at `url` (`…/<account>/<name>`) in `region`; None in the ISO partitions'
/// regions (SQS is asked there) or when the URL names no account.
pub(crate) fn queue_arn_from_url(url: &str, region: &str) -> Option<String> {
    if region.is_empty() || region.contains("iso") {
        return None;
    }
    let mut parts = url.trim_end_matches('/').rsplit('/');
    let name = parts.next().filter(|n| !n.is_empty())?;
    let account = parts.next().filter(|a| aws_names::aws_account_id(a).is_ok())?;
    let partition = aws_names::partition_of_region(region);
    Some(format!("arn:{partition}:sqs:{region}:{account}:{name}"))
}

/// How long to wait between CreateQueue attempts while SQS refuses a recently deleted name.
pub(super) const RECREATE_RETRY: Duration = Duration::from_secs(2);

pub(super) async fn create_queue(c: &Clients, d: &Desired, deadline: Instant) -> Result<String, AwsError> {
    loop {
        match c
            .sqs
            .create_queue(&d.queue_name, &d.queue_attributes(), &d.queue_tags())
            .await
        {
            // AWS refuses a name for 60 s after its queue was deleted (e.g. during a replace).
            Err(e)
                if e.code.as_deref() == Some(QUEUE_DELETED_RECENTLY)
                    && Instant::now() + RECREATE_RETRY < deadline =>
            {
                tracing::info!(queue = %d.queue_name, "queue name deleted recently; retrying CreateQueue");
                tokio::time::sleep(RECREATE_RETRY).await;
            }
            other => return other,
        }
    }
}

pub(super) fn fail(e: AwsError, path: Option<AttributePath>) -> Diagnostics {
    match path {
        Some(p) => e.at(p).to_diagnostics(),
        None => e.to_diagnostics(),
    }
}

/// The rules found in AWS under our names but not recorded in state that an interrupted update
/// of this resource left ([`is_remnant_of_ours`]); a create adopts nothing.
#[derive(Debug, Default)]
pub(super) struct Adopted {
    pub(super) rules: Vec<String>,
}

/// The key under which a recorded rule that is no longer wanted (renamed prefix, kind switched
/// off) stays in `rules` until it is deleted, so a failure in between keeps it recorded.
pub(super) fn retired_key(name: &str) -> String {
    format!("retired:{name}")
}

/// Whether an unrecorded rule under one of our names is what an interrupted update of this very
/// resource left: it carries our ownership tag and points at nothing but the queue this state
/// records (or at nothing yet, when the interruption came between PutRule and PutTargets). A
/// rule of another state carries the same tag but targets that state's queue, so it never
/// qualifies; without a recorded queue nothing does.
pub(super) async fn is_remnant_of_ours(
    c: &Clients,
    name: &str,
    tags: &BTreeMap<String, String>,
    recorded_queue_arn: Option<&str>,
) -> Result<bool, AwsError> {
    let Some(queue_arn) = recorded_queue_arn else {
        return Ok(false);
    };
    if !ownership::is_owned_by(tags, TYPE_NAME) {
        return Ok(false);
    }
    let targets = c.events.list_targets(name).await?.unwrap_or_default();
    Ok(targets.iter().all(|t| t.id == TARGET_ID && t.arn == queue_arn))
}

/// Before anything is created: looks up the queue and each wanted rule this resource has not
/// recorded. Create never adopts: a queue that is not recorded and exists refuses the apply,
/// whoever made it (another state carries our ownership tag as well), and so does a rule,
/// except on an update where it is the remnant of an interrupted update of this resource
/// ([`is_remnant_of_ours`]). Refusals name the attribute the name comes from and come before
/// anything is created or changed. Costs GetQueueUrl when the queue is not recorded and one
/// ListRules when some wanted rule is not; tags (and targets) only for each part that exists.
pub(super) async fn check_ownership(c: &Clients, d: &Desired, cur: &Current) -> Result<Adopted, Diagnostics> {
    let root = AttributePath::root();
    let mut adopted = Adopted::default();
    let mut refusals = Diagnostics::new();
    if cur.queue_url.is_none() {
        let name_path = root.attr(d.name_attribute);
        match c.sqs.get_queue_url(&d.queue_name).await {
            Ok(url) => {
                let tags = c
                    .sqs
                    .list_tags(&url)
                    .await
                    .map_err(|e| fail(e, Some(name_path.clone())))?;
                let marks = Marks::of_tags(&tags, TYPE_NAME);
                Taken {
                    resource_type: TYPE_NAME,
                    what: "SQS queue",
                    name: &d.queue_name,
                    id_detail: Some(&url),
                    place: "in this account and region",
                    our_mark: owner_tag_mark(TYPE_NAME),
                    marks,
                    import_id: Some(&d.queue_name),
                    otherwise: "choose another queue name; its messages, policy and tags were left as they are",
                }
                .refuse(&name_path, &mut refusals);
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(fail(e, Some(name_path))),
        }
    }
    let unrecorded: Vec<String> = d
        .kinds
        .iter()
        .map(|k| d.rule_name(k))
        .filter(|n| !cur.rules.values().any(|r| &r.name == n))
        .collect();
    if !unrecorded.is_empty() {
        let prefix_path = root.attr("rule_name_prefix");
        let existing = c
            .events
            .rules_with_prefix(&d.prefix)
            .await
            .map_err(|e| fail(e, Some(prefix_path.clone())))?;
        for (name, arn) in existing.into_iter().filter(|(n, _)| unrecorded.contains(n)) {
            let tags = c
                .events
                .list_tags(&arn)
                .await
                .map_err(|e| fail(e, Some(prefix_path.clone())))?;
            let remnant = is_remnant_of_ours(c, &name, &tags, cur.recorded_queue_arn())
                .await
                .map_err(|e| fail(e, Some(prefix_path.clone())))?;
            if remnant {
                tracing::info!(rule = %name, "rule left by an interrupted update of this queue; converging onto it");
                adopted.rules.push(name);
                continue;
            }
            let marks = Marks::of_tags(&tags, TYPE_NAME);
            Taken {
                resource_type: TYPE_NAME,
                what: "EventBridge rule",
                name: &name,
                id_detail: Some(&arn),
                place: "on the default event bus",
                our_mark: owner_tag_mark(TYPE_NAME),
                marks,
                // Importing the queue the rule targets adopts the rule with it.
                import_id: None,
                otherwise: "set another `rule_name_prefix`; or, if the rule is a leftover that targets the queue \
                            you mean to manage, import that queue (its import adopts the rules that target it), or \
                            delete the rule",
            }
            .refuse(&prefix_path, &mut refusals);
        }
    }
    if refusals.has_errors() {
        Err(refusals)
    } else {
        Ok(adopted)
    }
}

/// The warning for a rule of ours that keeps targets of others (so it is not deleted).
pub(super) fn kept_rule_warning(notes: &mut Diagnostics, name: &str, other_targets: &[String]) {
    notes.warning(
        "EventBridge rule kept: it has targets of others",
        format!(
            "The rule {name:?} was created by this resource, but someone added targets to it ({}). The provider \
             removed only its own target ({TARGET_ID}) and left the rule with those targets in place; it is no \
             longer managed by Terraform. Delete it yourself once its other targets are not needed.",
            other_targets.join(", ")
        ),
    );
}

/// Builds or repairs every part towards `d`, recording each in `cur` as it is done; a part the
/// prior state (`prior`, as the plan's refresh read it) already records as `d` wants it is not
/// written: an apply writes nothing the plan does not show. Warnings (a rule kept for someone
/// else's targets) go to `notes`.
pub(super) async fn converge(
    c: &Clients,
    d: &Desired,
    prior: &Value,
    cur: &mut Current,
    deadline: Instant,
    notes: &mut Diagnostics,
) -> Result<(), Diagnostics> {
    let root = AttributePath::root();
    let adopted = check_ownership(c, d, cur).await?;
    // 1. the queue: the recorded one is made exact; a missing one (first create, or deleted
    // out of band) is created with its tags.
    let url = match &cur.queue_url {
        Some(url) => {
            let attributes = d.queue_attributes();
            if Desired::recorded_attributes(prior).as_ref() != Some(&attributes) {
                let mut attributes = attributes;
                if d.kms.is_none() && d.prior_kms {
                    // Switching from a KMS key back to SQS-managed keys: an empty key ID removes it.
                    attributes.insert("KmsMasterKeyId".into(), String::new());
                }
                c.sqs
                    .set_attributes(url, &attributes)
                    .await
                    .map_err(|e| fail(e, Some(root.attr("message_retention_seconds"))))?;
            }
            // With a change of the tags, also the bookkeeping tags, which a queue recorded by an
            // older provider version (or imported) may lack.
            if string_map(prior.get(tags_all::TAGS_ALL)) != d.tags {
                c.sqs
                    .sync_tags(url, &d.queue_tags())
                    .await
                    .map_err(|e| fail(e, Some(root.attr("tags"))))?;
            }
            url.clone()
        }
        None => {
            let url = create_queue(c, d, deadline)
                .await
                .map_err(|e| fail(e, Some(root.attr(d.name_attribute))))?;
            cur.queue_url = Some(url.clone());
            cur.queue_arn = None;
            url
        }
    };
    if cur.queue_arn.is_none() {
        // A queue URL names its account and queue, so the ARN of a queue just created is known
        // without asking (one call fewer); otherwise, or where the partition is not certain,
        // SQS says.
        cur.queue_arn = match c.region.as_deref().and_then(|r| queue_arn_from_url(&url, r)) {
            Some(arn) => Some(arn),
            None => {
                let attrs = c.sqs.get_attributes(&url).await.map_err(|e| fail(e, None))?;
                attrs.get("QueueArn").cloned()
            }
        };
    }
    let Some(queue_arn) = cur.queue_arn.clone() else {
        return Err(AwsError::new(
            "sqs:GetQueueAttributes",
            AwsErrorKind::Other,
            "no QueueArn attribute",
        )
        .to_diagnostics());
    };

    // 2. the policy (one that grants the same in another spelling reads as this one, and stays)
    let policy = policy_document(&queue_arn, &d.statements);
    if cur.policy_json.as_deref() != Some(policy.as_str()) {
        let mut attrs = BTreeMap::new();
        attrs.insert("Policy".to_string(), policy.clone());
        c.sqs
            .set_attributes(&url, &attrs)
            .await
            .map_err(|e| fail(e, Some(root.attr("policy_statements"))))?;
        cur.policy_json = Some(policy);
    }

    // 3. recorded rules no longer wanted (kind switched off, or renamed by a new prefix) are set
    // aside under a key of their own, so they stay recorded while the wanted rules are built:
    // new rules first, old ones deleted after, and a failure in between leaves both sets (never
    // none) with every rule in state.
    let stale: Vec<(String, RuleState)> = cur
        .rules
        .iter()
        .filter(|(key, r)| {
            !d.kinds
                .iter()
                .any(|k| k.key == key.as_str() && d.rule_name(k) == r.name)
        })
        .map(|(k, r)| (k.clone(), r.clone()))
        .collect();
    for (key, rule) in &stale {
        cur.rules.remove(key);
        cur.rules.insert(retired_key(&rule.name), rule.clone());
    }

    // 4. the wanted rules and their targets; a recorded rule already as wanted is not written
    // (nor its description, which is not recorded: a rule adopted from elsewhere keeps its own)
    for k in &d.kinds {
        let name = d.rule_name(k);
        let prior = cur.rules.get(k.key).filter(|r| r.name == name);
        let as_wanted = prior.filter(|r| {
            r.event_pattern.as_deref() == Some(k.event_pattern().as_str()) && r.enabled == Some(true)
        });
        let arn = match as_wanted.and_then(|r| r.arn.clone()) {
            Some(arn) => arn,
            None => c
                .events
                .put_rule(&name, &k.event_pattern(), &k.description(), &d.rule_tags())
                .await
                .map_err(|e| fail(e, Some(root.attr("rule_name_prefix"))))?,
        };
        // PutRule applies tags only when it creates the rule. A rule checked absent a moment
        // ago is new, so its tags are exact; a rule that existed (recorded, or a remnant found by
        // its tag) gets its tags made exact.
        let existed = prior.is_some() || adopted.rules.contains(&name);
        let target_arn = prior.and_then(|r| r.target_arn.clone());
        let tags = prior.and_then(|r| r.tags.clone());
        let other_targets = prior.and_then(|r| r.other_targets.clone());
        cur.rules.insert(
            k.key.to_string(),
            RuleState {
                name: name.clone(),
                arn: Some(arn.clone()),
                event_pattern: Some(k.event_pattern()),
                enabled: Some(true),
                target_arn,
                tags: tags.clone(),
                other_targets,
            },
        );
        let wanted_tags = d.visible_rule_tags();
        if existed && tags.as_ref() != Some(&wanted_tags) {
            c.events
                .sync_tags(&arn, &d.rule_tags())
                .await
                .map_err(|e| fail(e, Some(root.attr("tags"))))?;
        }
        if let Some(r) = cur.rules.get_mut(k.key) {
            r.tags = Some(wanted_tags);
        }
        if cur.rules.get(k.key).and_then(|r| r.target_arn.as_deref()) != Some(queue_arn.as_str()) {
            c.events
                .put_target(&name, TARGET_ID, &queue_arn)
                .await
                .map_err(|e| fail(e, Some(root.attr("rules").key(k.key))))?;
        }
        if let Some(r) = cur.rules.get_mut(k.key) {
            r.target_arn = Some(queue_arn.clone());
        }
    }

    // 5. the set-aside rules: ours (recorded), so our target goes and the rule with it, unless
    // someone else's targets are on it.
    for (_, rule) in stale {
        let removal = c
            .events
            .remove_target_and_delete_if_empty(&rule.name, TARGET_ID)
            .await
            .map_err(|e| fail(e, Some(root.attr("rule_name_prefix"))))?;
        if let RuleRemoval::Kept { other_targets } = removal {
            kept_rule_warning(notes, &rule.name, &other_targets);
        }
        cur.rules.remove(&retired_key(&rule.name));
    }

    Ok(())
}

/// The queue's message counts, from its attributes (SQS counts approximately).
fn backlog_of(attrs: &BTreeMap<String, String>) -> QueueBacklog {
    let count = |k: &str| attrs.get(k).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    QueueBacklog {
        waiting: count("ApproximateNumberOfMessages"),
        in_flight: count("ApproximateNumberOfMessagesNotVisible"),
    }
}

/// Writes what SQS says of the queue into `out`.
pub(super) fn read_queue(
    out: &mut Value,
    state: &Value,
    url: String,
    attrs: &BTreeMap<String, String>,
    tags: BTreeMap<String, String>,
    default_tags: &BTreeMap<String, String>,
) {
    let num = |k: &str| {
        attrs
            .get(k)
            .and_then(|s| s.parse::<i64>().ok())
            .map_or(Value::Null, |n| Value::number(Number::from_i64(n)))
    };
    let kms = attrs.get("KmsMasterKeyId").filter(|k| !k.is_empty()).cloned();
    set_attr(out, "queue_url", Value::string(url));
    set_attr(out, "queue_arn", opt_string(attrs.get("QueueArn").cloned()));
    set_attr(out, "message_retention_seconds", num("MessageRetentionPeriod"));
    set_attr(
        out,
        "sqs_managed_sse_enabled",
        Value::Bool(attrs.get("SqsManagedSseEnabled").is_some_and(|s| s == "true")),
    );
    set_attr(
        out,
        "kms_data_key_reuse_period_seconds",
        if kms.is_some() {
            num("KmsDataKeyReusePeriodSeconds")
        } else {
            Value::Null
        },
    );
    set_attr(out, "kms_master_key_id", opt_string(kms));
    // AWS may return the document reformatted (moto does: it re-serializes with spaces), or
    // hold one that grants the same in another spelling (Karpenter's CloudFormation reference
    // writes it without Version or the first Sid): that is the document this resource writes.
    let ours = attrs
        .get("QueueArn")
        .map(|arn| policy_document(arn, &statements(state)));
    let policy = attrs
        .get("Policy")
        .filter(|p| !p.is_empty())
        .map(|p| match &ours {
            Some(ours) if policy_equivalence::equivalent(p, ours) => ours.clone(),
            _ => canonical_json(p),
        });
    set_attr(out, "policy_json", opt_string(policy));
    let (own, all) = tags_all::read(&visible_tags(tags), default_tags, state.get("tags"));
    set_attr(out, "tags", own);
    set_attr(out, tags_all::TAGS_ALL, all);
}

/// Re-reads the queue and every recorded rule into `state`. A queue gone out of band leaves
/// its attributes null (the plan recreates it and keeps the rules); None only when neither the
/// queue nor any recorded rule exists.
/// The resource as AWS has it now (`None`: every part is gone), with the queue's message counts
/// when the queue was read.
pub(super) async fn refresh(
    c: &Clients,
    state: &Value,
    default_tags: &BTreeMap<String, String>,
) -> Result<Option<(Value, Option<QueueBacklog>)>, AwsError> {
    let queue_name = get_str(state, "queue_name")
        .or_else(|| get_str(state, "name"))
        .or_else(|| get_str(state, "cluster_name"))
        .unwrap_or_default()
        .to_string();
    // Only the recorded queue is read: a queue not recorded (gone out of band) is not looked
    // up by name, since whatever holds that name now may be another state's (the ownership tag
    // does not tell); the plan creates the queue again, and that create refuses a taken name.
    let url = get_str(state, "queue_url").map(str::to_string);
    let mut queue = None;
    if let Some(url) = url {
        match c.sqs.get_attributes(&url).await {
            Ok(attrs) => {
                let tags = c.sqs.list_tags(&url).await?;
                queue = Some((url, attrs, tags));
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    let mut out = state.clone();
    set_attr(&mut out, "queue_name", Value::string(queue_name));
    let queue_found = queue.is_some();
    let backlog = queue.as_ref().map(|(_, attrs, _)| backlog_of(attrs));
    if let Some((url, attrs, tags)) = queue {
        read_queue(&mut out, state, url, &attrs, tags, default_tags);
    } else {
        tracing::info!("the interruption queue is gone; the rules that remain are kept");
        for name in ["queue_url", "queue_arn", "policy_json"] {
            set_attr(&mut out, name, Value::Null);
        }
    }

    let mut rules = BTreeMap::new();
    for (key, r) in Current::from_state(state).rules {
        let Some(info) = c.events.describe_rule(&r.name).await? else {
            continue; // deleted out of band: the plan recreates it
        };
        let pattern = info.event_pattern.as_deref().map(canonical_json);
        let targets = c.events.list_targets(&r.name).await?.unwrap_or_default();
        let others: Vec<String> = targets
            .iter()
            .filter(|t| t.id != TARGET_ID)
            .map(|t| t.id.clone())
            .collect();
        if !others.is_empty() {
            tracing::warn!(rule = %r.name, targets = ?others, "targets of others on our rule: left alone, and destroy keeps the rule for them");
        }
        let target_arn = targets.into_iter().find(|t| t.id == TARGET_ID).map(|t| t.arn);
        let tags = visible_tags(c.events.list_tags(&info.arn).await?);
        rules.insert(
            key,
            RuleState {
                name: r.name,
                arn: Some(info.arn),
                event_pattern: pattern,
                enabled: Some(info.enabled),
                target_arn,
                tags: Some(tags),
                other_targets: (!others.is_empty()).then_some(others),
            }
            .to_value(),
        );
    }
    if !queue_found && rules.is_empty() {
        return Ok(None);
    }
    set_attr(&mut out, "rules", Value::Map(rules));
    Ok(Some((out, backlog)))
}

/// Deletes every part of ours that still exists, each on its own (a part already gone does
/// not stop the others): recorded rules lose our target and are deleted unless others' targets
/// remain; rules under our names that are not recorded are deleted only when an interrupted
/// update of this resource left them ([`is_remnant_of_ours`]); the recorded queue is deleted.
/// A queue that is not recorded (deleted out of band, perhaps made again by someone else) is
/// never deleted: the ownership tag alone does not say it is this state's.
pub(super) async fn delete_parts(
    c: &Clients,
    prior: &Value,
    notes: &mut Diagnostics,
) -> Result<(), AwsError> {
    let cur = Current::from_state(prior);
    let recorded: Vec<String> = cur.rules.values().map(|r| r.name.clone()).collect();
    for name in &recorded {
        if let RuleRemoval::Kept { other_targets } = c
            .events
            .remove_target_and_delete_if_empty(name, TARGET_ID)
            .await?
        {
            kept_rule_warning(notes, name, &other_targets);
        }
    }
    // Names this resource could have made without recording them (a crash after PutRule):
    // one DescribeRule each, which finds most of them absent.
    let recorded_queue = cur.recorded_queue_arn();
    if let Some(prefix) = get_str(prior, "rule_name_prefix")
        && recorded_queue.is_some()
    {
        let names = string_map(prior.get("rule_names"));
        for k in RULE_KINDS {
            let name = rule_name_in(&names, prefix, k);
            if recorded.contains(&name) {
                continue;
            }
            let Some(info) = c.events.describe_rule(&name).await? else {
                continue;
            };
            let tags = c.events.list_tags(&info.arn).await?;
            if !is_remnant_of_ours(c, &name, &tags, recorded_queue).await? {
                tracing::info!(rule = %name, "rule under our name is not this resource's; left alone");
                continue;
            }
            if let RuleRemoval::Kept { other_targets } = c
                .events
                .remove_target_and_delete_if_empty(&name, TARGET_ID)
                .await?
            {
                kept_rule_warning(notes, &name, &other_targets);
            }
        }
    }
    match cur.queue_url {
        Some(url) => c.sqs.delete_queue(&url).await,
        None => {
            tracing::info!("no queue recorded; nothing under its name is deleted");
            Ok(())
        }
    }
}
