//! The node role's EKS access entry (`eks_access_entry`): the entry of the role in the cluster,
//! of type `EC2_LINUX` (Karpenter's nodes) or `EC2` with the `AmazonEKSAutoNodePolicy` access
//! policy (EKS Auto Mode's), made after the role and deleted before it. Like the role, an entry
//! this resource has not recorded is never taken over on create: it is refused with the import
//! that takes it over (`<role name>:<cluster name>`), except the entry EKS makes itself for the
//! node role of the cluster's Auto Mode compute configuration, which cannot be modified: that one
//! is refused on create and on import ([`refuse_eks_managed`]). Recorded entries are converged: a changed
//! type recreates the entry (EKS cannot change it in place), a changed cluster moves it, and
//! access policies added or removed outside Terraform are put back.

use std::collections::BTreeMap;

use super::schema::{TYPE_NAME, access_entry_cluster, access_entry_type, access_policies};
use crate::aws::eks_access::{AccessEntry, EksAccess};
use crate::aws::ownership;
use crate::context::KarpenterContext;
use crate::resources::aws::tags_all;
use crate::resources::taken_name::{Marks, Taken, owner_tag_mark};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::{get_str, string_list};
use crate::terraform::tfvalue::{AttributePath, Value};

/// The state fields of the entry (null when there is none).
pub(super) fn into_state(state: &mut Value, entry: Option<&AccessEntry>) {
    let Value::Object(fields) = state else { return };
    let (kind, arn, policies) = match entry {
        Some(e) => (
            Value::string(e.kind.clone()),
            Value::string(e.arn.clone()),
            string_list(e.policies.iter()),
        ),
        None => (Value::Null, Value::Null, Value::Null),
    };
    fields.insert("access_entry_type".into(), kind);
    fields.insert("access_entry_arn".into(), arn);
    fields.insert("access_policy_arns".into(), policies);
}

/// The cluster of the entry `state` records: `eks_access_entry`'s, when the entry's ARN is
/// recorded too. Only a recorded entry is this resource's to read, converge or delete; one found
/// for the role but never recorded (refused on create as someone else's) is not.
pub(super) fn recorded_cluster(state: &Value) -> Option<&str> {
    access_entry_cluster(state).filter(|_| get_str(state, "access_entry_arn").is_some())
}

/// The plan of the entry's fields: null without `eks_access_entry`; the type and policies the
/// mode asks for; the prior ARN while the entry stays (same cluster, same type), else unknown.
pub(super) fn plan(prior: &Value, planned: &mut Value) {
    let entry = planned.get("eks_access_entry").unwrap_or(&Value::Null);
    let (kind, arn, policies) = if entry.is_null() {
        (Value::Null, Value::Null, Value::Null)
    } else {
        let mode_known = planned.get("mode").is_some_and(Value::is_wholly_known);
        let kind = if mode_known {
            Value::string(access_entry_type(planned))
        } else {
            Value::unknown()
        };
        let partition = get_str(planned, "partition").or_else(|| get_str(prior, "partition"));
        let policies = match (mode_known, partition) {
            (true, Some(p)) => string_list(access_policies(planned, p).iter()),
            _ => Value::unknown(),
        };
        let stays = entry.is_wholly_known()
            && recorded_cluster(prior).is_some()
            && access_entry_cluster(planned) == recorded_cluster(prior)
            && prior.get("access_entry_type") == Some(&kind);
        let arn = match prior.get("access_entry_arn") {
            Some(recorded) if stays => recorded.clone(),
            _ => Value::unknown(),
        };
        (kind, arn, policies)
    };
    let Value::Object(fields) = planned else { return };
    fields.insert("access_entry_type".into(), kind);
    fields.insert("access_entry_arn".into(), arn);
    fields.insert("access_policy_arns".into(), policies);
}

/// The diagnostics of a failed EKS call made to `what`, on `eks_access_entry` (errors about the
/// provider's AWS setup carry no attribute path).
fn eks_diagnostics(what: &str, e: &crate::aws::AwsError) -> Diagnostics {
    tracing::debug!(error = %e, "could not {what}");
    e.clone()
        .at(AttributePath::root().attr("eks_access_entry"))
        .to_diagnostics()
}

/// The entry recorded in `state` as it is now; `None` without `eks_access_entry` or when gone.
pub(super) async fn read(eks: &EksAccess, state: &Value) -> Result<Option<AccessEntry>, Diagnostics> {
    let (Some(cluster), Some(role)) = (access_entry_cluster(state), get_str(state, "arn")) else {
        return Ok(None);
    };
    eks.get(cluster, role)
        .await
        .map_err(|e| eks_diagnostics("read the EKS access entry", &e))
}

/// The entry's part of an apply, once the role has been converged (`role_converged`) and read
/// back into `state`: converges the entry when the role's converge went through, then records
/// what exists of an entry that is this resource's, even when something failed, so a destroy
/// finds what this apply made. When the role's converge failed, the entry is left alone and
/// recorded as before.
#[allow(clippy::too_many_arguments)]
pub(super) async fn follow_role(
    ctx: &KarpenterContext,
    prior: &Value,
    planned: &Value,
    role_converged: bool,
    role_arn: &str,
    partition: &str,
    state: &mut Value,
    diags: &mut Diagnostics,
) {
    if access_entry_cluster(planned).is_none() && access_entry_cluster(prior).is_none() {
        return;
    }
    let eks = match ctx.aws_to_change().await {
        Ok(aws) if role_converged => aws.eks_access(),
        Ok(_) => return keep_prior(prior, state),
        Err(d) => {
            keep_prior(prior, state);
            return diags.extend(d);
        }
    };
    let tags = tags_all::wanted(ctx, planned);
    if converge(&eks, prior, planned, role_arn, partition, &tags, diags).await {
        match read(&eks, state).await {
            Ok(entry) => into_state(state, entry.as_ref()),
            Err(d) => diags.extend(d),
        }
    }
}

/// Nothing was done to the entry (the role's converge failed, or AWS could not be reached): the
/// state keeps recording it as the prior state did, cluster included, so a failed move to
/// another cluster still knows the entry it has to delete in the old one.
fn keep_prior(prior: &Value, state: &mut Value) {
    let Value::Object(fields) = state else { return };
    for k in [
        "eks_access_entry",
        "access_entry_type",
        "access_entry_arn",
        "access_policy_arns",
    ] {
        fields.insert(k.into(), prior.get(k).cloned().unwrap_or(Value::Null));
    }
}

/// Makes the entry of `role_arn` match `planned`, from what `prior` recorded. Errors go into
/// `diags`. Returns whether the entry in the wanted cluster is this resource's to record (false
/// when one made elsewhere was refused); the caller reads back what exists.
pub(super) async fn converge(
    eks: &EksAccess,
    prior: &Value,
    planned: &Value,
    role_arn: &str,
    partition: &str,
    user_tags: &BTreeMap<String, String>,
    diags: &mut Diagnostics,
) -> bool {
    let path = AttributePath::root().attr("eks_access_entry");
    let recorded = recorded_cluster(prior);
    let wanted = access_entry_cluster(planned);
    // Moved to another cluster or dropped: the recorded entry goes.
    if let Some(old) = recorded
        && Some(old) != wanted
        && let Err(e) = eks.delete(old, role_arn).await
    {
        diags.extend(eks_diagnostics("delete the EKS access entry", &e));
        return true;
    }
    let Some(cluster) = wanted else { return true };
    let kind = access_entry_type(planned);
    let ours = recorded == Some(cluster);
    let mut existing = match eks.get(cluster, role_arn).await {
        Ok(e) => e,
        Err(e) => {
            diags.extend(eks_diagnostics("read the EKS access entry", &e));
            return ours;
        }
    };
    if let Some(found) = existing.as_ref().filter(|_| !ours) {
        if let Some(d) = eks_managed(eks, cluster, role_arn).await {
            diags.extend(d);
            return false;
        }
        let import_id = format!("{}:{cluster}", get_str(planned, "name").unwrap_or_default());
        Taken {
            resource_type: TYPE_NAME,
            what: "EKS access entry",
            name: role_arn,
            id_detail: Some(&found.arn),
            place: &format!("in cluster {cluster:?} (type {})", found.kind),
            our_mark: owner_tag_mark(TYPE_NAME),
            marks: Marks::of_tags(&found.tags, TYPE_NAME),
            import_id: Some(&import_id),
            otherwise: "remove eks_access_entry and keep managing the entry where it is managed now",
        }
        .refuse(&path, diags);
        return false;
    }
    if let Some(found) = existing.as_ref().filter(|f| f.kind != kind) {
        tracing::info!(cluster, from = %found.kind, to = kind, "access entry type changes: recreating it");
        if let Err(e) = eks.delete(cluster, role_arn).await {
            diags.extend(eks_diagnostics("delete the EKS access entry", &e));
            return true;
        }
        existing = None;
    }
    let have_policies = match existing {
        Some(e) => e.policies,
        None => {
            let tags = ownership::with_owner_tag(user_tags, TYPE_NAME);
            if let Err(e) = eks.create(cluster, role_arn, kind, &tags).await {
                diags.extend(eks_diagnostics("create the EKS access entry", &e));
                return true;
            }
            Vec::new()
        }
    };
    let want_policies = access_policies(planned, partition);
    for policy in want_policies.iter().filter(|p| !have_policies.contains(p)) {
        if let Err(e) = eks.associate(cluster, role_arn, policy).await {
            diags.extend(eks_diagnostics("associate the access policy", &e));
            return true;
        }
    }
    for policy in have_policies.iter().filter(|p| !want_policies.contains(p)) {
        if let Err(e) = eks.disassociate(cluster, role_arn, policy).await {
            diags.extend(eks_diagnostics("disassociate the access policy", &e));
            return true;
        }
    }
    true
}

/// Deletes the recorded entry (before the role goes).
pub(super) async fn delete(eks: &EksAccess, prior: &Value) -> Diagnostics {
    let (Some(cluster), Some(role)) = (recorded_cluster(prior), get_str(prior, "arn")) else {
        return Diagnostics::new();
    };
    match eks.delete(cluster, role).await {
        Ok(()) => Diagnostics::new(),
        Err(e) => eks_diagnostics("delete the EKS access entry", &e),
    }
}

/// The refusal of the entry EKS made itself for the node role of `cluster`'s Auto Mode compute
/// configuration (`compute_config.node_role_arn`); `None` for any other entry, or when the
/// cluster's configuration cannot be read (then the entry is treated as anyone else's).
pub(super) async fn eks_managed(eks: &EksAccess, cluster: &str, role_arn: &str) -> Option<Diagnostics> {
    match eks.compute_node_role(cluster).await {
        Ok(Some(node_role)) if node_role == role_arn => Some(refuse_eks_managed(cluster, role_arn)),
        Ok(_) => None,
        Err(e) => {
            tracing::debug!(error = %e, cluster, "could not read the cluster's compute configuration");
            None
        }
    }
}

/// How long plan waits for the cluster's compute configuration before it gives up telling.
const PLAN_LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// At plan: the refusal of an `eks_access_entry` this plan adds (not yet recorded) for the role
/// that is already the node role of the cluster's Auto Mode compute configuration. The role is
/// recognised by its ARN when known (an existing role), else by its name (IAM role names are
/// unique in an account, and the cluster's node role is in the cluster's account). Nothing when
/// plan cannot tell: the cluster does not exist yet, EKS is not reachable within
/// [`PLAN_LOOKUP_TIMEOUT`], the name is still unknown (`name_prefix`); apply refuses it then.
pub(super) async fn plan_eks_managed(ctx: &KarpenterContext, prior: &Value, planned: &Value) -> Diagnostics {
    let Some(cluster) = access_entry_cluster(planned) else {
        return Diagnostics::new();
    };
    if recorded_cluster(prior) == Some(cluster) {
        return Diagnostics::new();
    }
    let arn = get_str(planned, "arn");
    let name = get_str(planned, "name");
    if arn.is_none() && name.is_none() {
        return Diagnostics::new();
    }
    let Ok(aws) = ctx.aws().await else {
        return Diagnostics::new();
    };
    let eks = aws.eks_access();
    let node_role = match tokio::time::timeout(PLAN_LOOKUP_TIMEOUT, eks.compute_node_role(cluster)).await {
        Ok(Ok(Some(node_role))) => node_role,
        Ok(Ok(None)) => return Diagnostics::new(),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, cluster, "plan could not read the cluster's compute configuration");
            return Diagnostics::new();
        }
        Err(_) => {
            tracing::debug!(
                cluster,
                "plan gave up reading the cluster's compute configuration"
            );
            return Diagnostics::new();
        }
    };
    let same_role = match arn {
        Some(arn) => arn == node_role,
        None => name.is_some_and(|name| role_name_of(&node_role) == Some(name)),
    };
    if same_role {
        refuse_eks_managed(cluster, &node_role)
    } else {
        Diagnostics::new()
    }
}

/// The role name of an IAM role ARN (`arn:aws:iam::111122223333:role/path/name` → `name`).
fn role_name_of(arn: &str) -> Option<&str> {
    let (_, resource) = arn.split_once(":role/")?;
    resource.rsplit('/').next().filter(|n| !n.is_empty())
}

/// Why the entry of the cluster's Auto Mode node role is not this resource's to manage.
pub(super) fn refuse_eks_managed(cluster: &str, role_arn: &str) -> Diagnostics {
    let mut diags = Diagnostics::new();
    diags.error_at(
        &AttributePath::root().attr("eks_access_entry"),
        "EKS manages this access entry",
        format!(
            "{role_arn} is the node role of cluster {cluster:?}'s EKS Auto Mode compute configuration \
             (compute_config.node_role_arn). EKS made its access entry itself, with the access EKS Auto Mode's \
             nodes need, and that entry cannot be modified, so this resource cannot create, import or change it. \
             Remove eks_access_entry: the nodes of the built-in node pools and of any NodeClass without role or \
             instance_profile already use it."
        ),
    );
    diags
}

#[cfg(test)]
mod tests {
    use super::role_name_of;

    #[test]
    fn the_role_name_of_an_arn_ignores_the_path() {
        assert_eq!(
            role_name_of("arn:aws:iam::111122223333:role/auto-nodes"),
            Some("auto-nodes")
        );
        assert_eq!(
            role_name_of("arn:aws-cn:iam::111122223333:role/a/b/auto-nodes"),
            Some("auto-nodes")
        );
        assert_eq!(role_name_of("arn:aws:iam::111122223333:user/auto-nodes"), None);
        assert_eq!(role_name_of("arn:aws:iam::111122223333:role/"), None);
    }
}
