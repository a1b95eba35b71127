//! `karpenter_interruption_queue`'s plan: the provider's default tags and the tag limits
//! ([`modify_plan_in`]), then the desired value of every part ([`modify_plan`]: the queue name,
//! its rule prefix, encryption defaults, the queue's identity kept while its name stays, the
//! policy, each enabled rule), and the replacement a new queue name forces.

use std::collections::BTreeMap;

use super::document::policy_document;
use super::kinds::{default_rule_prefix, rule_name_in};
use super::model::{Current, enabled_kinds, set_attr, statements, string_list, string_map};
use super::schema::{DEFAULT_KMS_REUSE, MAX_USER_TAGS};
use crate::context::KarpenterContext;
use crate::resources::aws::tags_all;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::object;
use crate::terraform::tfvalue::{AttributePath, Number, Value};

/// `tags_all` needs the provider's default tags; with them, the parts may carry at most
/// [`MAX_USER_TAGS`] tags of the user's.
pub(super) fn modify_plan_in(
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
    modify_plan(config, prior, planned, diags);
}

pub(super) fn modify_plan(config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
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
pub(super) fn extra_replacements(prior: &Value, planned: &Value) -> Vec<AttributePath> {
    match (prior.get("queue_name"), planned.get("queue_name")) {
        (Some(p), Some(n)) if !p.is_null() && p != n => vec![AttributePath::root().attr("queue_name")],
        _ => vec![],
    }
}
