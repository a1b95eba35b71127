//! What `karpenter_node_role` and `karpenter_controller_role` share: the desired shape of a
//! role and its parts, reading what exists, converging one onto the other step by step (so a
//! failure midway leaves a state that records what exists), the delete order, and (in
//! [`schema`]) the schema pieces and validators both use.
//!
//! Documents are compared as parsed JSON and written to state in one canonical form (keys
//! sorted, compact), so formatting differences never show as drift.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value as Json;

use crate::aws::iam::{Iam, IamError, NewRole, ProfileInfo, RoleInfo, Tagged};
use crate::aws::ownership::{self, OWNER_TAG_KEY};
use crate::policy::arn::Arn;
use crate::policy::equivalence;
use crate::resources::taken_name::{Marks, Taken, owner_tag_mark};
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{ApplyOutcome, Diagnostics};
use crate::terraform::tfvalue::{AttributePath, Value};

/// Longest `name_prefix`: a generated suffix takes 26 of a role name's 64 characters.
pub const MAX_PREFIX: usize = 38;

/// The canonical text of a document: sorted keys, no whitespace.
pub fn canonical(doc: &Json) -> String {
    // serde_json's map is ordered by key (no `preserve_order`), so this is canonical.
    doc.to_string()
}

/// Parses a document and returns its canonical text (None when it is not JSON).
pub fn canonical_text(text: &str) -> Option<String> {
    serde_json::from_str::<Json>(text).ok().map(|d| canonical(&d))
}

/// The DNS suffix of a partition, used in service principals (`ec2.amazonaws.com.cn`).
pub fn dns_suffix(partition: &str) -> &'static str {
    if partition == "aws-cn" {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    }
}

/// A role name made from a prefix: the prefix and 26 digits (time and a process counter).
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed) % 100_000_000;
    format!("{prefix}{:018}{n:08}", nanos % 1_000_000_000_000_000_000)
}

/// A customer managed policy the resource owns (controller role, managed attachment).
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedPolicy {
    pub arn: String,
    pub name: String,
    pub document: String,
}

/// Everything the role should be.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    /// The Terraform resource type, written as the ownership tag on every part created.
    pub resource_type: &'static str,
    pub name: String,
    pub path: String,
    pub description: Option<String>,
    pub trust: Json,
    pub permissions_boundary: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// Policies attached but not owned (AWS managed ones, `additional_policy_arns`).
    pub attached: BTreeSet<String>,
    /// Name and document of each inline policy the resource writes (the controller's own, and
    /// the ones of `additional_inline_policies`).
    pub inline: Vec<(String, String)>,
    /// Owned managed policies: created, kept up to date, attached.
    pub owned: Vec<OwnedPolicy>,
    /// Owned managed policies that may exist from an earlier configuration and must go.
    pub stale_owned: Vec<String>,
    /// Inline policy names the resource owns but no longer wants.
    pub stale_inline: Vec<String>,
    /// An instance profile of this name, holding the role.
    pub instance_profile: Option<String>,
    /// A profile the resource created earlier that is no longer wanted.
    pub stale_profile: Option<String>,
}

/// What exists.
#[derive(Debug, Clone, PartialEq)]
pub struct Actual {
    pub role: RoleInfo,
    /// The user's tags (the ownership tag left out).
    pub tags: BTreeMap<String, String>,
    /// The ownership tag's value, when the role has it.
    pub owner: Option<String>,
    pub attached: BTreeSet<String>,
    pub inline_names: Vec<String>,
    /// Documents of the inline policies asked for, by name.
    pub inline: BTreeMap<String, Json>,
    /// Documents of the owned managed policies asked for, by ARN (absent: does not exist).
    pub owned: BTreeMap<String, Json>,
    /// Tags of those policies (the ownership tag included), by ARN.
    pub owned_tags: BTreeMap<String, BTreeMap<String, String>>,
    /// The instance profile asked for, when it exists.
    pub profile: Option<ProfileInfo>,
}

/// What to read besides the role itself.
#[derive(Debug, Clone, Default)]
pub struct ReadScope<'a> {
    pub inline: &'a [String],
    /// Read the document of every inline policy the role has, not only those of `inline`.
    pub every_inline: bool,
    pub owned_arns: &'a [String],
    pub profile: Option<&'a str>,
}

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

fn same_doc(text: &str, actual: Option<&Json>) -> bool {
    match (serde_json::from_str::<Json>(text), actual) {
        (Ok(want), Some(have)) => want == *have,
        _ => false,
    }
}

/// The trust policy text to plan: `prior`'s (what exists, as read) when it admits exactly what
/// `wanted` admits, so a trust policy written with other statement IDs or in another order (a
/// module's, an import's) is kept as it is rather than rewritten; else `wanted`'s.
pub fn planned_trust(prior: Option<&str>, wanted: &Json) -> String {
    match prior.and_then(|p| serde_json::from_str::<Json>(p).ok()) {
        Some(have) if equivalence::equivalent(&have, wanted) => canonical(&have),
        _ => canonical(wanted),
    }
}

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

/// True when part of the provider's `aws {}` block was unknown at configure time. A refresh
/// then keeps the prior state (the plan may create what the configuration depends on)
/// instead of failing the whole plan.
pub fn aws_config_unknown(ctx: &crate::context::KarpenterContext) -> bool {
    ctx.settings.unknown.iter().any(
        |p| matches!(p.steps.first(), Some(crate::terraform::tfvalue::PathStep::Attribute(a)) if a == "aws"),
    )
}

/// An IAM error as a diagnostic a user can act on.
pub fn diagnostics(what: &str, e: &IamError) -> Diagnostics {
    Diagnostics::from_error(format!("Could not {what}"), e.to_string())
}

// ---- values ---------------------------------------------------------------------------------

/// A string map attribute as a BTreeMap (null → empty).
pub fn string_map_of(value: &Value, name: &str) -> BTreeMap<String, String> {
    value
        .get(name)
        .and_then(Value::as_entries)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// A string set or list attribute as a BTreeSet (null → empty).
pub fn string_set_of(value: &Value, name: &str) -> BTreeSet<String> {
    value
        .get(name)
        .and_then(Value::as_elements)
        .map(|e| e.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// A map for state: null when empty and the prior value was null (so `tags` unset stays unset).
pub fn map_value(map: &BTreeMap<String, String>, prior: Option<&Value>) -> Value {
    if map.is_empty() && prior.is_none_or(Value::is_null) {
        return Value::Null;
    }
    crate::terraform::framework::values::string_map(map.iter())
}

/// A string set for state: null when empty and the prior value was null.
pub fn set_value(set: &BTreeSet<String>, prior: Option<&Value>) -> Value {
    if set.is_empty() && prior.is_none_or(Value::is_null) {
        return Value::Null;
    }
    Value::Set(set.iter().map(|s| Value::string(s.clone())).collect())
}

/// The ARN's partition and account (from a role ARN such as the one CreateRole returns).
pub fn partition_and_account(role_arn: &str) -> Option<(String, String)> {
    Arn::parse(role_arn).ok().map(|a| (a.partition, a.account))
}

/// The computed attribute listing inline policies not in the configuration.
pub const UNMANAGED_INLINE: &str = "unmanaged_inline_policies";

/// The inline policies of `actual` other than `managed` (the one the resource puts, if any),
/// for state: always a known set, empty when there are none.
pub fn unmanaged_inline(actual: &Actual, managed: Option<&str>) -> Value {
    let names: BTreeSet<&String> = actual
        .inline_names
        .iter()
        .filter(|n| Some(n.as_str()) != managed)
        .collect();
    Value::Set(names.into_iter().map(|n| Value::string(n.clone())).collect())
}

/// Plans `unmanaged_inline_policies` empty: what apply leaves.
pub fn plan_unmanaged_inline(planned: &mut Value) {
    if let Value::Object(fields) = planned {
        fields.insert(UNMANAGED_INLINE.into(), Value::Set(Vec::new()));
    }
}

/// The role name to create: `name`, or a unique name from `name_prefix` (or the default prefix).
pub fn resolve_name(planned: &Value, default_prefix: &str) -> String {
    match get_str(planned, "name") {
        Some(n) => n.to_string(),
        None => unique_name(get_str(planned, "name_prefix").unwrap_or(default_prefix)),
    }
}

/// `name` and `name_prefix` together is an error.
pub fn validate_names(config: &Value, diags: &mut Diagnostics) {
    let set = |n: &str| config.get(n).is_some_and(|v| !v.is_null());
    if set("name") && set("name_prefix") {
        diags.error_at(
            &AttributePath::root().attr("name_prefix"),
            "Conflicting attributes",
            "Set either name or name_prefix, not both.",
        );
    }
}

mod schema;
#[cfg(test)]
mod tests;

pub use schema::{
    common_attributes, name_prefix_validator, path_validator, policy_arn_validator,
    reserved_tag_key_validator, role_name_validator,
};
