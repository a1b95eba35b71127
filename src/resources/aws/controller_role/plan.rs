//! `karpenter_controller_role`'s plan: `region` defaulted to the provider's (and checked like a
//! configured one), the provider's default tags, then the planned values: `karpenter_version`
//! (the newest for a new role, kept for an existing one), account and partition from the node
//! role, the policy and its size limits, the trust policy, the managed policies' ARNs, and the
//! warnings of what an update would take away ([`super::losses`]).

use super::losses;
use super::model::{check_sizes, expected_policy, group_arn, inputs, managed, trust_policy, unmanaged};
use super::validate::check_region;
use crate::aws_names;
use crate::context::{KarpenterContext, ProviderDefault};
use crate::policy::arn::Arn;
use crate::policy::controller::policy_groups;
use crate::policy::releases;
use crate::resources::aws::iam_role;
use crate::resources::aws::tags_all;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::{get_str, string_list};
use crate::terraform::tfvalue::{AttributePath, Value};

/// `region` when the configuration leaves it out: the provider's, checked like a configured
/// one; unknown while the provider's is unknown; an error when there is none.
fn default_region(ctx: Option<&KarpenterContext>, planned: &Value, diags: &mut Diagnostics) -> Value {
    let path = AttributePath::root().attr("region");
    match ctx.map(KarpenterContext::default_region) {
        Some(ProviderDefault::Known(r)) => {
            let origin = " (the provider's aws { region })";
            if aws_names::aws_region(&r).is_err() {
                diags.error_at(
                    &path,
                    "Invalid provider region",
                    format!(
                        "region is not set, so it defaults to the provider's aws {{ region }}, {r:?}, which is not an AWS \
                         region name such as \"us-east-1\". Set region here or fix the provider's."
                    ),
                );
            } else if let Some(Ok(role)) = get_str(planned, "node_role_arn").map(Arn::parse_role) {
                check_region(planned, &r, &role, origin, diags);
            }
            Value::string(r)
        }
        Some(ProviderDefault::Unknown) | None => Value::unknown(),
        Some(ProviderDefault::Unset) => {
            diags.error_at(
                &path,
                "No region",
                "region is not set and the provider has no region either. Set region = \"...\" here, or region in \
                 the provider's aws {} block (or AWS_REGION in its environment).",
            );
            Value::unknown()
        }
    }
}

pub(super) fn modify_plan_in(
    ctx: Option<&KarpenterContext>,
    config: &Value,
    prior: &Value,
    planned: &mut Value,
    diags: &mut Diagnostics,
) {
    if config.get("region").is_none_or(Value::is_null) {
        let region = default_region(ctx, planned, diags);
        if let Value::Object(fields) = planned {
            fields.insert("region".into(), region);
        }
    }
    tags_all::plan_into(ctx, planned);
    modify_plan(config, prior, planned, diags);
}

pub(super) fn modify_plan(config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
    iam_role::plan_unmanaged_inline(planned);
    let snapshot = planned.clone();
    let Value::Object(fields) = planned else { return };
    // Unset: a new role gets the newest release; an existing one keeps its own (stable).
    if config.get("karpenter_version").is_none_or(Value::is_null)
        && fields
            .get("karpenter_version")
            .is_none_or(|v| v.is_null() || v.is_unknown())
    {
        fields.insert(
            "karpenter_version".into(),
            Value::string(releases::newest().version),
        );
    }
    let node_role = get_str(&snapshot, "node_role_arn").and_then(|s| Arn::parse_role(s).ok());
    if fields.get("account_id").is_some_and(Value::is_null)
        || fields.get("account_id").is_some_and(Value::is_unknown)
    {
        let account = match (&node_role, get_str(prior, "account_id")) {
            (Some(r), _) => Value::string(r.account.clone()),
            (None, Some(a)) if !snapshot.get("node_role_arn").is_some_and(Value::is_unknown) => {
                Value::string(a)
            }
            _ => Value::unknown(),
        };
        fields.insert("account_id".into(), account);
    }
    fields.insert(
        "partition".into(),
        node_role
            .as_ref()
            .map(|r| Value::string(r.partition.clone()))
            .unwrap_or_else(Value::unknown),
    );
    let snapshot = Value::Object(fields.clone());
    let policy = match inputs(&snapshot) {
        _ if unmanaged(&snapshot) => Value::Null,
        Some(i) => {
            check_sizes(&i, managed(&snapshot), diags);
            Value::string(expected_policy(&i))
        }
        None => Value::unknown(),
    };
    fields.insert("policy".into(), policy);
    // The trust policy that exists is kept when it admits the same (a module's, with its own
    // statement IDs and order): the plan shows a change only where a principal changes.
    fields.insert(
        "assume_role_policy".into(),
        trust_policy(&snapshot)
            .map(|t| Value::string(iam_role::planned_trust(get_str(prior, "assume_role_policy"), &t)))
            .unwrap_or_else(Value::unknown),
    );
    let arns = match (
        get_str(prior, "arn"),
        get_str(&snapshot, "name"),
        get_str(&snapshot, "path"),
        inputs(&snapshot),
    ) {
        (Some(role_arn), Some(name), Some(path), Some(i)) if !prior.is_null() => {
            if managed(&snapshot) {
                let (p, a) = iam_role::partition_and_account(role_arn).unwrap_or_default();
                string_list(
                    policy_groups(&i)
                        .iter()
                        .map(|g| group_arn(&p, &a, path, name, g.name)),
                )
            } else {
                Value::List(Vec::new())
            }
        }
        _ if matches!(get_str(&snapshot, "policy_attachment"), Some("inline" | "none")) => {
            Value::List(Vec::new())
        }
        _ => Value::unknown(),
    };
    fields.insert("managed_policy_arns".into(), arns);
    losses::warn(prior, planned, diags);
}
