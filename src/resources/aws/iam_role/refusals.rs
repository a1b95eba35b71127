//! What a role's create or update refuses before it changes anything (a role, instance profile
//! or managed policy of the name that this resource has not recorded: create never adopts; an
//! `additional_policy_arns` entry that does not exist or is in another partition), and the
//! warning after a create that failed once the role existed.

use std::collections::BTreeSet;

use super::model::Actual;
use crate::aws::iam::{Iam, IamError, ProfileInfo};
use crate::policy::arn::Arn;
use crate::resources::taken_name::{Marks, Taken, owner_tag_mark};
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{ApplyOutcome, Diagnostics};
use crate::terraform::tfvalue::{AttributePath, Value};

/// A create that failed after the role existed: the role is recorded, and Terraform itself
/// marks it tainted (a provider cannot prevent that), so the next plan would replace it. Says
/// so, with the way to keep the role: `terraform untaint`. The checks before the create
/// (foreign parts, `additional_policy_arns`) keep this to failures only AWS can report later.
pub fn explain_partial_create(resource_type: &str, mut out: ApplyOutcome) -> ApplyOutcome {
    if let Some(name) = out.state.as_ref().and_then(|s| get_str(s, "name"))
        && out.diagnostics.has_errors()
    {
        let name = name.to_string();
        out.diagnostics.warning(
            "Role created but not finished",
            format!(
                "IAM role {name:?} was created and is recorded in the state, but a later step failed \
                 (see the error). Terraform marks a resource whose create failed as tainted and \
                 would replace it — a new role ID, which breaks access entries and trust policies \
                 that refer to it. To keep the role, fix the cause and run `terraform untaint \
                 {resource_type}.<name>`; the next apply then finishes the role in place."
            ),
        );
    }
    out
}

/// Refuses a role that exists but is not in this resource's state: create never adopts, even
/// a role with our ownership tag (another state's, or an interrupted apply's; import takes
/// either over on purpose).
pub fn refuse_existing_role(resource_type: &str, have: Option<&Actual>, diags: &mut Diagnostics) {
    let Some(a) = have else { return };
    let marks = match a.owner.as_deref() {
        Some(owner) if owner == resource_type => Marks::Ours,
        _ => Marks::Others(String::new()),
    };
    Taken {
        resource_type,
        what: "IAM role",
        name: &a.role.name,
        id_detail: Some(&a.role.arn),
        place: "in this account",
        our_mark: owner_tag_mark(resource_type),
        marks,
        import_id: Some(&a.role.name),
        otherwise: "choose another name",
    }
    .refuse(&AttributePath::root().attr("name"), diags);
}

/// Refuses an instance profile of the role's name that this resource has not recorded. On a
/// create every one is refused; on an update that turns `create_instance_profile` on, one with
/// our ownership tag is the remnant of an interrupted update of this very role (the profile is
/// named after a role this state owns) and is converged onto.
pub fn refuse_existing_profile(
    resource_type: &str,
    role: &str,
    profile: Option<&ProfileInfo>,
    creating: bool,
    diags: &mut Diagnostics,
) {
    let Some(p) = profile else { return };
    let marks = Marks::of_tags(&p.tags, resource_type);
    if !creating && marks == Marks::Ours {
        return;
    }
    let holds = if p.roles.is_empty() {
        "holding no role".to_string()
    } else {
        format!("holding {}", p.roles.join(", "))
    };
    let id = format!("{}, {holds}", p.arn);
    let otherwise = format!(
        "set create_instance_profile = false, or choose another role name (the profile is named after the role); \
         to manage that profile together with role {role:?}, delete it, or put the tag on it and import the role"
    );
    Taken {
        resource_type,
        what: "instance profile",
        name: &p.name,
        id_detail: Some(&id),
        place: "in this account",
        our_mark: owner_tag_mark(resource_type),
        marks,
        import_id: None,
        otherwise: &otherwise,
    }
    .refuse(&AttributePath::root().attr("name"), diags);
}

/// Refuses customer managed policies (the ones the resource would create, named after the
/// role) that exist. On a create every one is refused; on an update (switching to managed
/// policies) one with our ownership tag is the remnant of an interrupted update of this role.
pub async fn refuse_existing_policies(
    iam: &Iam,
    resource_type: &str,
    arns: &[String],
    creating: bool,
    diags: &mut Diagnostics,
) -> Result<(), IamError> {
    for arn in arns {
        let Some(tags) = iam.policy_tags(arn).await? else {
            continue;
        };
        let marks = Marks::of_tags(&tags, resource_type);
        if !creating && marks == Marks::Ours {
            continue;
        }
        let name = arn.rsplit('/').next().unwrap_or(arn);
        Taken {
            resource_type,
            what: "managed policy",
            name,
            id_detail: Some(arn),
            place: "in this account",
            our_mark: owner_tag_mark(resource_type),
            marks,
            import_id: None,
            otherwise: "choose another role name (the policies are named after it), or delete that policy if it \
                        is a leftover; no role was created",
        }
        .refuse(&AttributePath::root().attr("name"), diags);
    }
    Ok(())
}

/// Checks, before anything is created or changed, that every policy ARN of
/// `additional_policy_arns` that is not attached yet exists and is in the role's partition, so
/// a typo fails with nothing done instead of after the role exists.
pub async fn check_additional_policies(
    iam: &Iam,
    planned: &Value,
    partition: Option<&str>,
    attached: &BTreeSet<String>,
    diags: &mut Diagnostics,
) -> Result<(), IamError> {
    let Some(elements) = planned.get("additional_policy_arns").and_then(Value::as_elements) else {
        return Ok(());
    };
    for (i, element) in elements.iter().enumerate() {
        let Some(arn) = element.as_str() else { continue };
        let path = AttributePath::root().attr("additional_policy_arns").index(i);
        if let (Some(want), Ok(a)) = (partition, Arn::parse(arn))
            && a.partition != want
        {
            diags.error_at(
                &path,
                "Policy ARN in another partition",
                format!(
                    "{arn} is in partition {:?}, but the role is in {want:?}: IAM cannot attach it. Use arn:{want}:… instead.",
                    a.partition
                ),
            );
            continue;
        }
        if attached.contains(arn) {
            continue;
        }
        if iam.policy_tags(arn).await?.is_none() {
            diags.error_at(
                &path,
                "Managed policy not found",
                format!(
                    "There is no managed policy {arn} in this account (IAM GetPolicy: NoSuchEntity). \
                     Check the name, account and path; nothing was created or changed."
                ),
            );
        }
    }
    Ok(())
}
