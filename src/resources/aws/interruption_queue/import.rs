//! Import of `karpenter_interruption_queue` by queue name or URL: the queue, and the rules
//! that target it, found by their target (ours by their prefix, others' by their event
//! pattern, adopted under their own names in `rule_names`), with the cluster name read from
//! the tags, the rules' prefix or the queue's name.

use std::collections::BTreeMap;

use super::calls::clients;
use super::kinds::{
    MODULE_CLUSTER_TAG, RULE_KINDS, cluster_for_import, default_rule_prefix, kind_of_pattern,
    queue_name_from_import_id, split_rule_name,
};
use super::model::{RuleState, set_attr, visible_tags};
use super::schema::{CLUSTER_TAG_KEY, SCHEMA};
use crate::context::KarpenterContext;
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::Value;

pub(super) async fn import(ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
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
