//! `karpenter_node_role`'s plan: a region required of the provider, its default tags, the
//! access entry ([`super::access_entry::plan`]), the instance profile's values, and for an
//! existing role the managed policies and the trust policy it will have.

use super::access_entry;
use super::schema::{bool_of, policies_for, trust_policy};
use crate::context::KarpenterContext;
use crate::resources::aws::iam_role;
use crate::resources::aws::tags_all;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::{get_str, string_list};
use crate::terraform::tfvalue::Value;

/// `tags_all` needs the provider's default tags.
pub(super) fn modify_plan_in(
    ctx: Option<&KarpenterContext>,
    config: &Value,
    prior: &Value,
    planned: &mut Value,
    diags: &mut Diagnostics,
) {
    if !planned.is_null()
        && let Some(ctx) = ctx
    {
        ctx.require_region("The node role", diags);
    }
    tags_all::plan_into(ctx, planned);
    modify_plan(config, prior, planned, diags);
}

pub(super) fn modify_plan(_config: &Value, prior: &Value, planned: &mut Value, _diags: &mut Diagnostics) {
    iam_role::plan_unmanaged_inline(planned);
    access_entry::plan(prior, planned);
    let Value::Object(fields) = planned else { return };
    let profile = fields.get("create_instance_profile").and_then(Value::as_bool);
    // The profile carries the role's tags (`tags_all`).
    let profile_tags = match (profile, fields.get(tags_all::TAGS_ALL)) {
        (Some(false), _) => Value::Null,
        (Some(true), Some(t)) if t.is_wholly_known() => match t {
            Value::Null => Value::Map(Default::default()),
            known => known.clone(),
        },
        (Some(true), None) => Value::Map(Default::default()),
        _ => Value::unknown(),
    };
    fields.insert("instance_profile_tags".into(), profile_tags);
    if profile == Some(false) {
        fields.insert("instance_profile_name".into(), Value::Null);
        fields.insert("instance_profile_arn".into(), Value::Null);
    } else if profile == Some(true) && !bool_of(prior, "create_instance_profile") {
        fields.insert("instance_profile_name".into(), Value::unknown());
        fields.insert("instance_profile_arn".into(), Value::unknown());
    } else if profile == Some(true) {
        for k in ["instance_profile_name", "instance_profile_arn"] {
            fields.insert(k.into(), prior.get(k).cloned().unwrap_or(Value::Null));
        }
    }
    if prior.is_null() {
        return;
    }
    let partition = fields
        .get("partition")
        .and_then(Value::as_str)
        .map(str::to_string);
    let account = get_str(prior, "arn")
        .and_then(iam_role::partition_and_account)
        .map(|(_, a)| a);
    let planned_copy = Value::Object(fields.clone());
    let (policies, trust) = match (partition, account) {
        (Some(p), Some(a)) => (
            policies_for(&planned_copy, &p, &a)
                .map(string_list)
                .unwrap_or_else(Value::unknown),
            Value::string(iam_role::planned_trust(
                get_str(prior, "assume_role_policy"),
                &trust_policy(&p),
            )),
        ),
        _ => (Value::unknown(), Value::unknown()),
    };
    fields.insert("managed_policy_arns".into(), policies);
    fields.insert("assume_role_policy".into(), trust);
}
