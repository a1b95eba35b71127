//! Resource `karpenter_interruption_queue`: the SQS queue Karpenter reads interruption events
//! from, its queue policy, and the EventBridge rules (one per event kind, each with the queue as
//! its target), managed as one object, after Karpenter's CloudFormation reference.
//!
//! Contract: every part is recorded in state as soon as it exists, so a failure midway returns
//! what exists plus the error, and the next apply finishes (Terraform marks a failed create as
//! tainted and replaces it; deletion removes exactly what is recorded plus our derived names).
//! Read checks every part (queue attributes, policy, each rule's pattern and state, each
//! target); modify_plan plans the desired value of each, so drift shows as exactly that part.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::aws_names;
use crate::context::KarpenterContext;
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::{get_str, object};
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, IdentitySchema, ListRequest, ListSink, ReadOutcome, Resource, Schema, timeouts,
};
use crate::terraform::tfvalue::{AttributePath, Number, Value};
use calls::{clients, clients_to_change, converge, delete_parts, refresh};
use identity::{QUEUE_IDENTITY, import_queue_by_identity, queue_identity};
use kinds::{
    KIND_KEYS, MODULE_CLUSTER_TAG, cluster_for_import, default_rule_prefix, kind, kind_of_pattern,
    queue_name_from_import_id, rule_name_in, split_rule_name,
};
use list::{QUEUE_LIST, list_queues};
use model::{
    Current, Desired, RuleState, enabled_kinds, is_bookkeeping_tag, set_attr, statements, string_list,
    string_map, strings, visible_tags,
};
use schema::{CLUSTER_TAG_KEY, DEFAULT_KMS_REUSE, MAX_USER_TAGS, SCHEMA, TYPE_NAME};

mod calls;
mod document;
mod identity;
mod kinds;
mod list;
mod model;
mod policy_equivalence;
mod schema;

// What the acceptance tests use to build an upstream-shaped queue by hand.
pub use calls::TARGET_ID;
pub use document::policy_document;
pub use kinds::{RULE_KINDS, RuleKind};

/// The resource type.
pub struct InterruptionQueue;

// ----------------------------------------------------------------------------------------

#[async_trait]
impl Resource<KarpenterContext> for InterruptionQueue {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        let root = AttributePath::root();
        if config.get("name").is_some_and(Value::is_null)
            && let Some(cluster) = get_str(config, "cluster_name")
            && aws_names::eks_cluster_name(cluster).is_ok()
            && let Err(e) = aws_names::sqs_queue_name(cluster)
        {
            diags.error_at(
                &root.attr("cluster_name"),
                "Cluster name too long for a queue name",
                format!("The queue is named after the cluster, but {e}. Set `name`."),
            );
        }
        // `rule_names` names kinds this resource enables.
        let enabled = config
            .get("enabled_rules")
            .filter(|e| e.is_wholly_known() && !e.is_null());
        for key in config
            .get("rule_names")
            .and_then(Value::as_entries)
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            let path = root.attr("rule_names").key(key.clone());
            if kind(key).is_none() {
                diags.error_at(
                    &path,
                    "Unknown rule kind",
                    format!(
                        "{key:?} is not a rule kind; the kinds are {}.",
                        KIND_KEYS.join(", ")
                    ),
                );
            } else if let Some(enabled) = enabled
                && !strings(Some(enabled)).iter().any(|k| k == key)
            {
                diags.error_at(
                    &path,
                    "Rule kind not enabled",
                    format!("{key:?} is not in enabled_rules, so there is no such rule to name; add it there or remove this entry."),
                );
            }
        }
        for (attr, key) in ["tags", "rule_tags"].into_iter().flat_map(|attr| {
            config
                .get(attr)
                .and_then(Value::as_entries)
                .into_iter()
                .flatten()
                .map(move |(k, _)| (attr, k))
                .filter(|(_, k)| is_bookkeeping_tag(k))
        }) {
            diags.error_at(
                &root.attr(attr).key(key.clone()),
                "Reserved tag key",
                format!(
                    "The tag key {key:?} is the provider's own bookkeeping (it marks the parts this resource created); remove it from `{attr}`."
                ),
            );
        }
        let kms = config.get("kms_master_key_id").filter(|v| !v.is_null());
        if kms.is_none()
            && config
                .get("kms_data_key_reuse_period_seconds")
                .is_some_and(|v| !v.is_null())
        {
            diags.error_at(
                &root.attr("kms_data_key_reuse_period_seconds"),
                "Data key reuse without a KMS key",
                "`kms_data_key_reuse_period_seconds` applies only to KMS encryption: set `kms_master_key_id` too, or remove it.",
            );
        }
        if kms.is_some() && config.get("sqs_managed_sse_enabled").and_then(Value::as_bool) == Some(true) {
            diags.error_at(
                &root.attr("sqs_managed_sse_enabled"),
                "Two kinds of encryption",
                "A queue is encrypted either with SQS-managed keys or with a KMS key: remove `sqs_managed_sse_enabled = true` or `kms_master_key_id`.",
            );
        }
        if let Some(statements) = config.get("policy_statements").and_then(Value::as_elements) {
            for (i, s) in statements.iter().enumerate() {
                for (j, p) in s
                    .get("principals")
                    .and_then(Value::as_elements)
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                {
                    if get_str(p, "type").is_some_and(|t| t != "*")
                        && p.get("identifiers")
                            .and_then(Value::as_elements)
                            .is_some_and(<[Value]>::is_empty)
                    {
                        diags.error_at(
                            &root
                                .attr("policy_statements")
                                .index(i)
                                .attr("principals")
                                .index(j)
                                .attr("identifiers"),
                            "No principal identifiers",
                            "Name at least one principal of this type, or use type `*`.",
                        );
                    }
                }
            }
        }
    }

    /// `tags_all` needs the provider's default tags; with them, the parts may carry at most
    /// [`MAX_USER_TAGS`] tags of the user's.
    fn modify_plan_in(
        &self,
        ctx: Option<&KarpenterContext>,
        config: &Value,
        prior: &Value,
        planned: &mut Value,
        diags: &mut Diagnostics,
    ) {
        if planned.is_null() {
            return;
        }
        if let Some(ctx) = ctx {
            ctx.require_region("The interruption queue", diags);
        }
        tags_all::plan_into(ctx, planned);
        if let Some(n) = planned
            .get(tags_all::TAGS_ALL)
            .and_then(Value::as_entries)
            .map(BTreeMap::len)
            .filter(|n| *n > MAX_USER_TAGS)
        {
            diags.error_at(
                &AttributePath::root().attr("tags"),
                "Too many tags",
                format!(
                    "`tags` merged with the provider's aws {{ default_tags }} make {n} tags, but SQS and EventBridge \
                     allow 50 per resource and the provider keeps 2 for itself: use at most {MAX_USER_TAGS} \
                     together (a key in `tags` that is also a default tag counts once)."
                ),
            );
        }
        let mut rule_tags = string_map(planned.get(tags_all::TAGS_ALL));
        rule_tags.extend(string_map(planned.get("rule_tags")));
        if rule_tags.len() > MAX_USER_TAGS
            && planned
                .get(tags_all::TAGS_ALL)
                .is_some_and(Value::is_wholly_known)
        {
            diags.error_at(
                &AttributePath::root().attr("rule_tags"),
                "Too many tags",
                format!(
                    "`tags` merged with the provider's aws {{ default_tags }} and `rule_tags` make {} tags on every \
                     rule, but EventBridge allows 50 per rule and the provider keeps 2 for itself: use at most \
                     {MAX_USER_TAGS} together.",
                    rule_tags.len()
                ),
            );
        }
        self.modify_plan(config, prior, planned, diags);
    }

    fn modify_plan(&self, config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
        if planned.is_null() {
            return;
        }
        let cluster = planned.get("cluster_name").cloned().unwrap_or(Value::Null);
        let queue_name = match config.get("name") {
            Some(n) if !n.is_null() => n.clone(),
            _ => cluster.clone(),
        };
        set_attr(planned, "queue_name", queue_name.clone());
        let prefix = match config.get("rule_name_prefix") {
            Some(p) if !p.is_null() => p.clone(),
            _ => cluster
                .as_str()
                .map_or_else(Value::unknown, |c| Value::string(default_rule_prefix(c))),
        };
        set_attr(planned, "rule_name_prefix", prefix.clone());
        let kms = config.get("kms_master_key_id").cloned().unwrap_or(Value::Null);
        if config.get("sqs_managed_sse_enabled").is_none_or(Value::is_null) {
            let sse = if kms.is_unknown() {
                Value::unknown()
            } else {
                Value::Bool(kms.is_null())
            };
            set_attr(planned, "sqs_managed_sse_enabled", sse);
        }
        if config
            .get("kms_data_key_reuse_period_seconds")
            .is_none_or(Value::is_null)
        {
            let reuse = if kms.is_unknown() {
                Value::unknown()
            } else if kms.is_null() {
                Value::Null
            } else {
                Value::number(Number::from_i64(DEFAULT_KMS_REUSE))
            };
            set_attr(planned, "kms_data_key_reuse_period_seconds", reuse);
        }

        // Identity: kept while the queue name stays; unknown for a new queue.
        let same_queue = !prior.is_null() && prior.get("queue_name") == Some(&queue_name);
        let keep = |name: &str| {
            if same_queue {
                prior
                    .get(name)
                    .filter(|v| !v.is_null())
                    .cloned()
                    .unwrap_or_else(Value::unknown)
            } else {
                Value::unknown()
            }
        };
        let queue_arn = keep("queue_arn");
        set_attr(planned, "queue_url", keep("queue_url"));
        set_attr(planned, "queue_arn", queue_arn.clone());

        let statements_known = planned
            .get("policy_statements")
            .is_none_or(Value::is_wholly_known);
        let policy = match queue_arn.as_str() {
            Some(arn) if statements_known => Value::string(policy_document(arn, &statements(planned))),
            _ => Value::unknown(),
        };
        set_attr(planned, "policy_json", policy);

        // Someone else's targets on our rules: reported, never touched.
        for (key, r) in Current::from_state(prior).rules {
            if let Some(others) = r.other_targets.filter(|o| !o.is_empty()) {
                diags.warning_at(
                    &AttributePath::root().attr("rules").key(key),
                    "EventBridge rule has targets of others",
                    format!(
                        "The rule {:?} has targets this resource did not add ({}). The provider leaves them as they \
                         are; on destroy it removes only its own target and keeps the rule for them.",
                        r.name,
                        others.join(", ")
                    ),
                );
            }
        }

        let enabled_known = planned.get("enabled_rules").is_none_or(Value::is_wholly_known);
        // Every rule carries `tags_all`, and `rule_tags` on top.
        let extra = planned.get("rule_tags").cloned().unwrap_or(Value::Null);
        let rule_tags = match planned.get(tags_all::TAGS_ALL) {
            Some(t) if !t.is_wholly_known() || !extra.is_wholly_known() => Value::unknown(),
            Some(t) if !t.is_null() => {
                let mut all = string_map(Some(t));
                all.extend(string_map(Some(&extra)));
                crate::terraform::framework::values::string_map(all)
            }
            _ => crate::terraform::framework::values::string_map(string_map(Some(&extra))),
        };
        let rules = match prefix.as_str() {
            Some(prefix) if enabled_known => {
                let prior_rules = if same_queue {
                    Current::from_state(prior).rules
                } else {
                    BTreeMap::new()
                };
                let names = string_map(planned.get("rule_names"));
                Value::Map(
                    enabled_kinds(planned)
                        .into_iter()
                        .map(|k| {
                            let name = rule_name_in(&names, prefix, k);
                            let same = prior_rules.get(k.key).filter(|r| r.name == name);
                            let arn = same
                                .and_then(|r| r.arn.clone())
                                .map_or_else(Value::unknown, Value::string);
                            let others = string_list(same.and_then(|r| r.other_targets.as_deref()));
                            let v = object([
                                ("name", Value::string(name)),
                                ("arn", arn),
                                ("event_pattern", Value::string(k.event_pattern())),
                                ("enabled", Value::Bool(true)),
                                ("target_arn", queue_arn.clone()),
                                ("other_target_ids", others),
                                ("tags", rule_tags.clone()),
                            ]);
                            (k.key.to_string(), v)
                        })
                        .collect(),
                )
            }
            _ => Value::unknown(),
        };
        set_attr(planned, "rules", rules);
    }

    /// A new queue name (from `name` or `cluster_name`) replaces the whole resource.
    fn extra_replacements(&self, prior: &Value, planned: &Value) -> Vec<AttributePath> {
        match (prior.get("queue_name"), planned.get("queue_name")) {
            (Some(p), Some(n)) if !p.is_null() && p != n => vec![AttributePath::root().attr("queue_name")],
            _ => vec![],
        }
    }

    /// `queue_name`, `region` and `account_id` (see [`super::listing`]).
    fn identity_schema(&self) -> Option<&IdentitySchema> {
        Some(&QUEUE_IDENTITY)
    }

    fn identity(&self, state: &Value) -> Value {
        queue_identity(state)
    }

    async fn import_by_identity(
        &self,
        ctx: &KarpenterContext,
        identity: &Value,
    ) -> Result<Value, Diagnostics> {
        import_queue_by_identity(self, ctx, identity).await
    }

    fn list_schema(&self) -> Option<&Schema> {
        Some(&QUEUE_LIST)
    }

    async fn list(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        list_queues(self, ctx, request, sink).await;
    }

    async fn create(&self, ctx: &KarpenterContext, planned: &Value) -> ApplyOutcome {
        self.apply(ctx, &Value::Null, planned, "create").await
    }

    async fn read(&self, ctx: &KarpenterContext, current: &Value) -> Result<ReadOutcome, Diagnostics> {
        // With the aws {} block still unknown (plan of a stack being built), keep what we have.
        if ctx
            .settings
            .unknown
            .iter()
            .any(|p| p.to_string().starts_with("aws"))
        {
            return Ok(ReadOutcome::Found(current.clone()));
        }
        let c = clients(ctx).await?;
        match refresh(&c, current, &tags_all::defaults(ctx)).await {
            Ok(Some(v)) => Ok(ReadOutcome::Found(v)),
            Ok(None) => Ok(ReadOutcome::Gone),
            Err(e) => Err(e.to_diagnostics()),
        }
    }

    async fn update(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
        self.apply(ctx, prior, planned, "update").await
    }

    async fn delete(&self, ctx: &KarpenterContext, prior: &Value) -> Diagnostics {
        let c = match clients_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return d,
        };
        let mut notes = Diagnostics::new();
        if let Err(e) = delete_parts(&c, prior, &mut notes).await {
            notes.extend(e.to_diagnostics());
        }
        notes
    }

    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
        let Some(name) = queue_name_from_import_id(id) else {
            return Err(Diagnostics::from_error(
                "Invalid import ID",
                format!(
                    "{id:?} is neither an SQS queue name nor a queue URL. Use e.g. `terraform import karpenter_interruption_queue.this my-cluster`."
                ),
            ));
        };
        let c = clients(ctx).await?;
        let url = c.sqs.get_queue_url(&name).await.map_err(|e| {
            if e.is_not_found() {
                Diagnostics::from_error(
                    "Queue not found",
                    format!("No SQS queue named {name:?} in this account and region."),
                )
            } else {
                e.to_diagnostics()
            }
        })?;
        let attrs = c.sqs.get_attributes(&url).await.map_err(|e| e.to_diagnostics())?;
        let arn = attrs.get("QueueArn").cloned().unwrap_or_default();
        // The rules are found by their target; their common prefix is the rule_name_prefix.
        // Rules named otherwise (a CloudFormation stack, terraform-aws-eks's Karpenter module)
        // that carry one of our event patterns are adopted under their own names, in
        // `rule_names`; the module's `ClusterName` tag on them names the cluster.
        let mut rules = BTreeMap::new();
        let mut prefix = None;
        let mut names = BTreeMap::new();
        let mut cluster_hint = None;
        // Each adopted rule's tags, by kind: those all of them carry and the queue does not are
        // the rules' own (`rule_tags`: the module's `ClusterName`).
        let mut rule_tags: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for rule in c
            .events
            .rule_names_by_target(&arn)
            .await
            .map_err(|e| e.to_diagnostics())?
        {
            match split_rule_name(&rule) {
                None => {
                    let Some(info) = c
                        .events
                        .describe_rule(&rule)
                        .await
                        .map_err(|e| e.to_diagnostics())?
                    else {
                        continue;
                    };
                    let Some(kind) = info.event_pattern.as_deref().and_then(kind_of_pattern) else {
                        continue;
                    };
                    if rules.contains_key(kind.key) {
                        continue;
                    }
                    let tags = c
                        .events
                        .list_tags(&info.arn)
                        .await
                        .map_err(|e| e.to_diagnostics())?;
                    if cluster_hint.is_none() {
                        cluster_hint = tags.get(MODULE_CLUSTER_TAG).cloned();
                    }
                    rule_tags.insert(kind.key.to_string(), visible_tags(tags));
                    names.insert(kind.key.to_string(), Value::string(rule.clone()));
                    rules.insert(kind.key.to_string(), RuleState::named(rule).to_value());
                }
                Some((p, k)) if prefix.as_deref().is_none_or(|q| q == p) => {
                    prefix = Some(p.to_string());
                    names.remove(k.key);
                    if let Some(info) = c
                        .events
                        .describe_rule(&rule)
                        .await
                        .map_err(|e| e.to_diagnostics())?
                    {
                        let tags = c
                            .events
                            .list_tags(&info.arn)
                            .await
                            .map_err(|e| e.to_diagnostics())?;
                        rule_tags.insert(k.key.to_string(), visible_tags(tags));
                    }
                    rules.insert(k.key.to_string(), RuleState::named(rule.clone()).to_value());
                }
                Some(_) => {}
            }
        }
        // The cluster name: the queue's cluster tag (queues this provider created), else read
        // from the rules' prefix or the queue's name (see `cluster_for_import`). A queue named
        // otherwise gets `name`, so a config with `name = ...` plans empty after import.
        let tags = c.sqs.list_tags(&url).await.map_err(|e| e.to_diagnostics())?;
        let cluster = cluster_for_import(
            &name,
            tags.get(CLUSTER_TAG_KEY)
                .or(cluster_hint.as_ref())
                .map(String::as_str),
            prefix.as_deref(),
        );
        let prefix = prefix.unwrap_or_else(|| default_rule_prefix(&cluster));
        let enabled: Vec<Value> = RULE_KINDS
            .iter()
            .filter(|k| rules.contains_key(k.key))
            .map(|k| Value::string(k.key))
            .collect();
        let mut state = crate::terraform::framework::schema::null_object(&SCHEMA.value_type());
        if cluster != name {
            set_attr(&mut state, "name", Value::string(name.clone()));
        }
        set_attr(&mut state, "cluster_name", Value::string(cluster));
        set_attr(&mut state, "queue_name", Value::string(name));
        set_attr(&mut state, "queue_url", Value::string(url));
        set_attr(&mut state, "queue_arn", Value::string(arn));
        set_attr(&mut state, "rule_name_prefix", Value::string(prefix));
        set_attr(&mut state, "enabled_rules", Value::Set(enabled));
        if !names.is_empty() {
            set_attr(&mut state, "rule_names", Value::Map(names));
        }
        let queue_tags = visible_tags(tags);
        let own: BTreeMap<String, String> = rule_tags
            .values()
            .next()
            .map(|first| {
                first
                    .iter()
                    .filter(|(k, v)| rule_tags.values().all(|t| t.get(*k) == Some(*v)))
                    .filter(|(k, v)| queue_tags.get(*k) != Some(*v))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        if rules.len() == rule_tags.len() && !own.is_empty() {
            set_attr(
                &mut state,
                "rule_tags",
                crate::terraform::framework::values::string_map(own),
            );
        }
        set_attr(&mut state, "rules", Value::Map(rules));
        Ok(state)
    }
}

impl InterruptionQueue {
    async fn apply(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value, op: &str) -> ApplyOutcome {
        let desired = match Desired::from_plan(planned) {
            Ok(d) => Desired {
                prior_kms: get_str(prior, "kms_master_key_id").is_some(),
                tags: tags_all::wanted(ctx, planned),
                ..d
            },
            Err(diags) => return ApplyOutcome::failed(None, diags),
        };
        let c = match clients_to_change(ctx).await {
            Ok(c) => c,
            Err(diags) => return ApplyOutcome::failed(None, diags),
        };
        let timeout = timeouts::get(planned, op, Duration::from_secs(300));
        let deadline = Instant::now() + timeout;
        let mut cur = Current::from_state(prior);
        let creating = prior.is_null();
        let mut notes = Diagnostics::new();
        let result = tokio::time::timeout(
            timeout,
            converge(&c, &desired, prior, &mut cur, deadline, &mut notes),
        )
        .await;
        let mut diags = match result {
            Ok(Ok(())) => Diagnostics::new(),
            Ok(Err(d)) => d,
            Err(_) => Diagnostics::from_error(
                format!("Timed out during {op}"),
                format!(
                    "The interruption queue was not finished within {timeout:?}; what exists is recorded, apply again to finish."
                ),
            ),
        };
        diags.extend(notes);
        if creating && cur.queue_url.is_none() {
            // Nothing was created.
            return ApplyOutcome::failed(None, diags);
        }
        let mut state = cur.to_state(planned, &desired.queue_name);
        set_attr(
            &mut state,
            tags_all::TAGS_ALL,
            crate::terraform::framework::values::string_map(desired.tags.iter()),
        );
        ApplyOutcome {
            state: Some(state),
            diagnostics: diags,
        }
    }
}

#[cfg(test)]
mod tests;
