//! The schema pieces both IAM roles (`karpenter_node_role`, `karpenter_controller_role`) are
//! built from: the attributes they share (naming, path, boundary, tags, extra policies, outputs)
//! and the validators of IAM names, paths and the reserved ownership tag key (policy ARNs'
//! is `policy::arn`'s).

use super::names::MAX_PREFIX;
use crate::aws::ownership::{self, OWNER_TAG_KEY};
use crate::aws_names;
use crate::policy::arn;
use crate::terraform::framework::Attribute;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{Type, Value};

/// The computed attribute listing inline policies not in the configuration.
pub const UNMANAGED_INLINE: &str = "unmanaged_inline_policies";

pub fn role_name_validator() -> impl Validator {
    aws_names::iam_role_name_validator()
}

pub fn name_prefix_validator() -> impl Validator {
    aws_names::validator(
        format!(
            "Must be 1–{MAX_PREFIX} characters of letters, digits and `+=,.@_-` (26 more are generated)."
        ),
        |s| aws_names::iam_role_name_prefix(s, MAX_PREFIX),
    )
}

/// Refuses the ownership tag's key as a user tag.
pub fn reserved_tag_key_validator() -> impl Validator {
    v::check(
        format!("Must not be `{OWNER_TAG_KEY}` (reserved for the provider)."),
        |value| {
            let s = value.as_str()?;
            ownership::is_reserved_key(s).then(|| {
                format!("{s:?} is reserved: the provider tags the parts it creates with it to recognise them. Use another key.")
            })
        },
    )
}

pub fn path_validator() -> impl Validator {
    aws_names::iam_path_validator()
}

/// Attributes both roles have: naming, path, boundary, tags, extra policies, outputs.
/// `owned_parts` names what the role's tags also go on (its instance profile, its managed
/// policies).
pub fn common_attributes(default_prefix: &'static str, owned_parts: &'static str) -> Vec<Attribute> {
    vec![
        Attribute::string("name")
            .optional_computed()
            .stable()
            .replace_on_change()
            .describe(format!(
                "Name of the role. Conflicts with `name_prefix`; when neither is set, a name starting with `{default_prefix}` is generated. Changing it replaces the role."
            ))
            .validate(role_name_validator()),
        Attribute::string("name_prefix")
            .optional()
            .replace_on_change()
            .describe("Creates a unique name beginning with this prefix. Conflicts with `name`.")
            .validate(name_prefix_validator()),
        Attribute::string("path")
            .default_value(Value::string("/"))
            .replace_on_change()
            .describe("IAM path of the role (and of what it owns). Changing it replaces the role.")
            .validate(path_validator()),
        Attribute::string("permissions_boundary")
            .optional()
            .describe("ARN of a managed policy that bounds the role's permissions.")
            .validate(arn::policy_arn_validator()),
        Attribute::map_of("tags", Type::String)
            .optional()
            .describe(format!(
                "Tags of the role (and of what it owns: {owned_parts}), merged with the provider's `aws {{ default_tags }}` (a key here wins; see `tags_all`). The key `{OWNER_TAG_KEY}` is reserved: the provider puts it on every part it creates, to recognise its own parts; it is never shown here."
            ))
            .validate(v::each_key(v::length(1, 128)))
            .validate(v::each_key(reserved_tag_key_validator())),
        Attribute::set_of("additional_policy_arns", Type::String)
            .optional()
            .describe("Further managed policies to attach. Policies attached outside Terraform are shown as drift here and detached.")
            .validate(v::each(arn::policy_arn_validator())),
        Attribute::string("id").computed().stable().describe("The role name."),
        Attribute::string("arn").computed().stable().describe("ARN of the role."),
        Attribute::set_of(UNMANAGED_INLINE, Type::String)
            .computed()
            .describe("Names of inline policies on the role that this resource does not manage (added outside Terraform). Always planned empty: one found here shows as drift, and apply deletes it — together with attached managed policies outside the configuration (see `additional_policy_arns`), nothing grants the role permissions unseen."),
        Attribute::string("assume_role_policy")
            .computed()
            .describe("The trust policy in force, as canonical JSON (keys sorted). Compared as parsed JSON."),
    ]
}
