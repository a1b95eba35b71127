//! Deleting a role and every part of it, in the order IAM requires.

use crate::aws::iam::{Iam, IamError};

/// Deletes the role and every part of it, in the order IAM requires: managed policies
/// detached, inline policies deleted, the role removed from its instance profiles (and the
/// owned profile deleted), the owned managed policies deleted, then the role. Gone is success.
///
/// The role goes last: while it exists a refresh finds the resource, so a delete that fails
/// midway stays in state and the next apply finishes it. (With the role deleted first, a
/// failed DeletePolicy left policies that no state listed: the refresh saw the role gone.)
pub async fn delete(
    iam: &Iam,
    name: &str,
    owned: &[String],
    owned_profile: Option<&str>,
) -> Result<(), IamError> {
    if iam.get_role(name).await?.is_some() {
        for arn in iam.attached_policies(name).await? {
            iam.detach_policy(name, &arn).await?;
        }
        for policy in iam.inline_policy_names(name).await? {
            iam.delete_inline_policy(name, &policy).await?;
        }
        for profile in iam.profiles_for_role(name).await? {
            iam.remove_role_from_profile(&profile, name).await?;
        }
    }
    if let Some(profile) = owned_profile {
        if let Some(p) = iam.get_instance_profile(profile).await? {
            for role in &p.roles {
                if role == name {
                    iam.remove_role_from_profile(profile, role).await?;
                }
            }
        }
        iam.delete_instance_profile(profile).await?;
    }
    for arn in owned {
        iam.delete_managed_policy(arn).await?;
    }
    iam.delete_role(name).await?;
    Ok(())
}
