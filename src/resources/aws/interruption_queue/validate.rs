//! `karpenter_interruption_queue`'s checks of a configuration on its own (Terraform's
//! `ValidateResourceConfig`): a queue name the cluster name cannot give, `rule_names` of kinds
//! that do not exist or are not enabled, the provider's reserved tag keys, a KMS setting
//! without a key, two kinds of encryption, principals without identifiers.

use super::kinds::{KIND_KEYS, kind};
use super::model::{is_bookkeeping_tag, strings};
use crate::aws_names;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

pub(super) fn validate(config: &Value, diags: &mut Diagnostics) {
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
