//! The node role's two sides: what should exist for a planned value ([`desired`]) and the
//! state for what exists ([`state`]).

use std::collections::BTreeSet;

use super::schema::{TYPE_NAME, bool_of, policies_for, trust_policy};
use crate::resources::aws::iam_role;
use crate::resources::aws::iam_role::{Actual, Desired};
use crate::terraform::framework::values::{get_str, opt_string, string_map};
use crate::terraform::tfvalue::Value;

/// What the role should be, for a planned value whose name, partition and account are known;
/// `tags` is what every part carries (`tags_all`).
pub(super) fn desired(
    planned: &Value,
    prior: &Value,
    name: &str,
    partition: &str,
    account: &str,
    tags: std::collections::BTreeMap<String, String>,
) -> Desired {
    let mut attached: BTreeSet<String> = policies_for(planned, partition, account)
        .unwrap_or_default()
        .into_iter()
        .collect();
    attached.extend(iam_role::string_set_of(planned, "additional_policy_arns"));
    let profile = bool_of(planned, "create_instance_profile");
    Desired {
        resource_type: TYPE_NAME,
        name: name.to_string(),
        path: get_str(planned, "path").unwrap_or("/").to_string(),
        description: Some("Karpenter node role (managed by Terraform)".to_string()),
        trust: trust_policy(partition),
        permissions_boundary: get_str(planned, "permissions_boundary").map(str::to_string),
        tags,
        attached,
        inline: Vec::new(),
        owned: Vec::new(),
        stale_owned: Vec::new(),
        stale_inline: Vec::new(),
        instance_profile: profile.then(|| name.to_string()),
        stale_profile: (!profile
            && (bool_of(prior, "create_instance_profile")
                || get_str(prior, "instance_profile_name").is_some()))
        .then(|| name.to_string()),
    }
}

/// The state for what exists; `base` supplies the settings that are not read back, `defaults`
/// are the provider's default tags (to tell `tags` from `tags_all`).
pub(super) fn state(
    base: &Value,
    actual: &Actual,
    default_tags: &std::collections::BTreeMap<String, String>,
) -> Value {
    let (partition, account) = iam_role::partition_and_account(&actual.role.arn).unwrap_or_default();
    let defaults = policies_for(base, &partition, &account).unwrap_or_default();
    let managed: Vec<&String> = defaults.iter().filter(|a| actual.attached.contains(*a)).collect();
    // The profile counts as created when it holds the role. One that this resource made but
    // that does not hold the role yet (a create that failed between CreateInstanceProfile and
    // AddRoleToInstanceProfile) is still recorded by name, so destroy deletes it and no later
    // create meets it as a taken name; `create_instance_profile` stays false until it holds
    // the role, so the plan finishes the job.
    let holding = actual
        .profile
        .as_ref()
        .filter(|p| p.roles.contains(&actual.role.name));
    let profile = actual.profile.as_ref().filter(|p| {
        p.roles.contains(&actual.role.name) || crate::aws::ownership::is_owned_by(&p.tags, TYPE_NAME)
    });
    let mut fields = iam_role::common_state(
        base,
        actual,
        default_tags,
        Value::string(partition),
        &defaults,
        &managed,
    );
    let mut set = |k: &str, v: Value| {
        fields.insert(k.to_string(), v);
    };
    set(
        iam_role::UNMANAGED_INLINE,
        iam_role::unmanaged_inline(actual, None),
    );
    set("create_instance_profile", Value::Bool(holding.is_some()));
    set(
        "instance_profile_name",
        opt_string(profile.map(|p| p.name.clone())),
    );
    set("instance_profile_arn", opt_string(profile.map(|p| p.arn.clone())));
    // `mode` is kept from `base`: state written before it existed gets its default in the
    // state upgrade (framework::upgrade), an import sets it from the attached policies.
    // The access entry is read apart (access_entry::into_state); none until then.
    for k in ["access_entry_type", "access_entry_arn", "access_policy_arns"] {
        set(k, Value::Null);
    }
    set(
        "instance_profile_tags",
        profile.map_or(Value::Null, |p| {
            string_map(crate::aws::ownership::user_tags(&p.tags).iter())
        }),
    );
    Value::Object(fields)
}
