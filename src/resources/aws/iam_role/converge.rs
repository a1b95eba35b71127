//! Converging a role onto what the resource wants, one part at a time (the role, its tags, trust
//! policy, owned and attached policies, inline policies, instance profile), so that a failure
//! midway leaves a state that records what exists.

use std::collections::{BTreeMap, BTreeSet};

use super::documents::same_doc;
use super::model::{Actual, Desired};
use crate::aws::iam::{Iam, IamError, NewRole, Tagged};
use crate::aws::ownership;
use crate::policy::equivalence;

/// Whether the role's bookkeeping tag should be written now: the role's own tags change anyway
/// (the tag goes in the same calls), or nothing has recorded it yet. A role this resource only
/// imported gets it with the first change of its tags, so an apply never writes a tag the plan
/// did not show.
fn owner_tag_due(have: &Actual, want: &Desired) -> bool {
    have.owner.is_none() && have.tags != want.tags
}

/// Makes the role what `want` says, one part at a time, given what exists (`None`: nothing).
pub async fn converge(iam: &Iam, want: &Desired, have: Option<&Actual>) -> Result<(), IamError> {
    let empty_tags = BTreeMap::new();
    let created;
    let (role, tags) = match have {
        Some(a) => (&a.role, &a.tags),
        None => {
            created = iam
                .create_role(&NewRole {
                    name: &want.name,
                    path: &want.path,
                    trust_policy: &want.trust,
                    permissions_boundary: want.permissions_boundary.as_deref(),
                    description: want.description.as_deref(),
                    tags: &ownership::with_owner_tag(&want.tags, want.resource_type),
                })
                .await?;
            (&created, &want.tags)
        }
    };
    let tags = if have.is_some() { tags } else { &empty_tags };
    if let Some(have) = have {
        // Compared for what they admit: statement IDs and order someone else gave are kept.
        if !equivalence::equivalent(&role.trust_policy, &want.trust) {
            iam.update_trust_policy(&want.name, &want.trust).await?;
        }
        if role.permissions_boundary != want.permissions_boundary {
            iam.set_permissions_boundary(&want.name, want.permissions_boundary.as_deref())
                .await?;
        }
        if owner_tag_due(have, want) {
            // A role recorded by an earlier version of the provider (before the ownership tag),
            // or imported: it is ours (it is in state), so it gets the tag with this change of
            // its tags.
            let wanted = ownership::with_owner_tag(&want.tags, want.resource_type);
            iam.sync_tags(Tagged::Role(&want.name), tags, &wanted).await?;
        } else {
            iam.sync_tags(Tagged::Role(&want.name), tags, &want.tags).await?;
        }
    }
    let attached = have.map(|a| a.attached.clone()).unwrap_or_default();

    // Owned managed policies: create or update, then attach. They carry the role's tags (and
    // the ownership tag, added to a policy recorded before it existed).
    let policy_tags = ownership::with_owner_tag(&want.tags, want.resource_type);
    for policy in &want.owned {
        match have.and_then(|a| a.owned.get(&policy.arn)) {
            None => {
                // Not readable: create it (an existing one of that name means another owner).
                iam.create_policy(&policy.name, &want.path, &policy.document, &policy_tags)
                    .await?;
            }
            Some(doc) => {
                if !same_doc(&policy.document, Some(doc)) {
                    iam.update_managed_policy(&policy.arn, &policy.document).await?;
                }
                let current = have
                    .and_then(|a| a.owned_tags.get(&policy.arn))
                    .cloned()
                    .unwrap_or_default();
                if current != policy_tags {
                    iam.sync_tags(Tagged::ManagedPolicy(&policy.arn), &current, &policy_tags)
                        .await?;
                }
            }
        }
    }
    let wanted_attached: BTreeSet<&String> = want
        .attached
        .iter()
        .chain(want.owned.iter().map(|p| &p.arn))
        .collect();
    for arn in &wanted_attached {
        if !attached.contains(*arn) {
            iam.attach_policy(&want.name, arn).await?;
        }
    }
    // The inline policies, before anything is detached or deleted: permissions are added before
    // others are taken away, so a switch of `policy_attachment` (e.g. from a policy someone else
    // manages to ours) never leaves the role without a permission it had.
    for (policy, document) in &want.inline {
        if !same_doc(document, have.and_then(|a| a.inline.get(policy))) {
            iam.put_inline_policy(&want.name, policy, document).await?;
        }
    }
    for arn in &attached {
        if !wanted_attached.contains(arn) {
            iam.detach_policy(&want.name, arn).await?;
        }
    }
    for arn in &want.stale_owned {
        iam.detach_policy(&want.name, arn).await?;
        iam.delete_managed_policy(arn).await?;
    }

    for policy in &want.stale_inline {
        if have.is_some_and(|a| a.inline_names.contains(policy)) {
            iam.delete_inline_policy(&want.name, policy).await?;
        }
    }
    // Inline policies the configuration does not ask for grant permissions nobody reviews:
    // they were shown as drift (`unmanaged_inline_policies`), and go.
    for policy in have.map(|a| a.inline_names.as_slice()).unwrap_or_default() {
        let wanted = want.inline.iter().any(|(n, _)| n == policy);
        if !wanted && !want.stale_inline.contains(policy) {
            iam.delete_inline_policy(&want.name, policy).await?;
        }
    }

    // Instance profile.
    if let Some(profile) = &want.instance_profile {
        let mut existing = have.and_then(|a| a.profile.clone());
        if existing.is_none() {
            let tags = ownership::with_owner_tag(&want.tags, want.resource_type);
            match iam.create_instance_profile(profile, &want.path, &tags).await {
                Ok(_) => {}
                // Created a moment ago by an update of this role that did not get to record
                // it: ours only when it carries our ownership tag, and never on a create
                // (the role was just created, so the profile is someone else's).
                Err(e) if e.is_already_exists() && have.is_some() => {
                    match iam.get_instance_profile(profile).await? {
                        Some(p) if ownership::is_owned_by(&p.tags, want.resource_type) => existing = Some(p),
                        _ => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        let holds_role = existing.as_ref().is_some_and(|p| p.roles.contains(&want.name));
        match existing.as_ref() {
            None => {}
            // The profile's tags follow the role's (applied whenever the role is updated); the
            // ownership tag is kept, and added to a profile recorded before it existed (or
            // imported) when its tags change anyway: an apply writes no tag the plan does not show.
            Some(p) => {
                let wanted = ownership::with_owner_tag(&want.tags, want.resource_type);
                if ownership::user_tags(&p.tags) != want.tags {
                    iam.sync_tags(Tagged::InstanceProfile(profile), &p.tags, &wanted)
                        .await?;
                }
            }
        }
        if !holds_role {
            if let Some(other) = existing.as_ref().and_then(|p| p.roles.first()) {
                // A profile holds one role; replace whatever took our place.
                iam.remove_role_from_profile(profile, other).await?;
            }
            iam.add_role_to_profile(profile, &want.name).await?;
        }
    }
    if let Some(profile) = &want.stale_profile {
        iam.remove_role_from_profile(profile, &want.name).await?;
        iam.delete_instance_profile(profile).await?;
    }
    Ok(())
}
