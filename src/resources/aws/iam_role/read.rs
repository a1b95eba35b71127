//! Reading what exists of a role: the role, its tags, its attached and inline policies, and
//! the owned managed policies and instance profile a [`ReadScope`] asks for.

use std::collections::BTreeMap;

use super::model::{Actual, ReadScope};
use crate::aws::iam::{Iam, IamError};
use crate::aws::ownership::{self, OWNER_TAG_KEY};

pub async fn read(iam: &Iam, name: &str, scope: &ReadScope<'_>) -> Result<Option<Actual>, IamError> {
    let Some(role) = iam.get_role(name).await? else {
        return Ok(None);
    };
    let all_tags = iam.role_tags(name).await?;
    let owner = all_tags.get(OWNER_TAG_KEY).cloned();
    let tags = ownership::user_tags(&all_tags);
    let attached = iam.attached_policies(name).await?;
    let inline_names = iam.inline_policy_names(name).await?;
    let mut inline = BTreeMap::new();
    let wanted: Vec<&String> = if scope.every_inline {
        inline_names.iter().collect()
    } else {
        scope.inline.iter().filter(|p| inline_names.contains(p)).collect()
    };
    for policy in wanted {
        if inline_names.contains(policy)
            && let Some(doc) = iam.get_inline_policy(name, policy).await?
        {
            inline.insert(policy.clone(), doc);
        }
    }
    let mut owned = BTreeMap::new();
    let mut owned_tags = BTreeMap::new();
    for arn in scope.owned_arns {
        if let Some((doc, tags)) = iam.managed_policy(arn).await? {
            owned.insert(arn.clone(), doc);
            owned_tags.insert(arn.clone(), tags);
        }
    }
    let profile = match scope.profile {
        Some(p) => iam.get_instance_profile(p).await?,
        None => None,
    };
    Ok(Some(Actual {
        role,
        tags,
        owner,
        attached,
        inline_names,
        inline,
        owned,
        owned_tags,
        profile,
    }))
}
