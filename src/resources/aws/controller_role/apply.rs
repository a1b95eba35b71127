//! Create and update of `karpenter_controller_role`: the ownership and `additional_policy_arns`
//! checks made before anything is touched ([`preflight`]), the role created first when there is
//! none (the owned policies' ARNs need its account), then every part converged through
//! `iam_role`, and the state read back from what exists.

use super::calls::{iam_to_change, read_role};
use super::model::{desired, group_arn, groups, managed, state, trust_policy};
use super::schema::{DEFAULT_PREFIX, TYPE_NAME};
use crate::aws::iam::Iam;
use crate::context::KarpenterContext;
use crate::policy::arn::Arn;
use crate::resources::aws::iam_role::{self, Actual};
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{ApplyOutcome, Diagnostics};
use crate::terraform::tfvalue::Value;

pub(super) async fn create(ctx: &KarpenterContext, planned: &Value) -> ApplyOutcome {
    let iam = match iam_to_change(ctx).await {
        Ok(c) => c,
        Err(d) => return ApplyOutcome::failed(None, d),
    };
    let name = iam_role::resolve_name(planned, DEFAULT_PREFIX);
    iam_role::explain_partial_create(TYPE_NAME, apply(ctx, &iam, &Value::Null, planned, &name).await)
}

pub(super) async fn update(ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
    let iam = match iam_to_change(ctx).await {
        Ok(c) => c,
        Err(d) => return ApplyOutcome::failed(Some(prior.clone()), d),
    };
    let name = get_str(prior, "name").unwrap_or_default().to_string();
    apply(ctx, &iam, prior, planned, &name).await
}

/// Ownership and `additional_policy_arns`, checked before anything is created or changed:
/// a create (`prior` null) refuses an existing role and existing managed policies named
/// after it; an update that switches to managed policies refuses those without our tag.
async fn preflight(
    iam: &Iam,
    prior: &Value,
    planned: &Value,
    name: &str,
    have: Option<&Actual>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let creating = prior.is_null();
    if creating {
        iam_role::refuse_existing_role(TYPE_NAME, have, &mut diags);
    }
    let node_role = get_str(planned, "node_role_arn").and_then(|a| Arn::parse_role(a).ok());
    let (partition, account) = match have {
        Some(a) => iam_role::partition_and_account(&a.role.arn).unwrap_or_default(),
        None => node_role.map(|r| (r.partition, r.account)).unwrap_or_default(),
    };
    let fail = |e| iam_role::diagnostics("check the controller role's parts", &e);
    if managed(planned) && (prior.is_null() || !managed(prior)) && !account.is_empty() {
        let path = get_str(planned, "path").unwrap_or("/");
        let arns: Vec<String> = groups()
            .iter()
            .map(|g| group_arn(&partition, &account, path, name, g))
            .collect();
        if let Err(e) = iam_role::refuse_existing_policies(iam, TYPE_NAME, &arns, creating, &mut diags).await
        {
            diags.extend(fail(e));
        }
    }
    let attached = have.map(|a| a.attached.clone()).unwrap_or_default();
    let partition = (!partition.is_empty()).then_some(partition.as_str());
    if let Err(e) = iam_role::check_additional_policies(iam, planned, partition, &attached, &mut diags).await
    {
        diags.extend(fail(e));
    }
    diags
}

async fn apply(
    ctx: &KarpenterContext,
    iam: &Iam,
    prior: &Value,
    planned: &Value,
    name: &str,
) -> ApplyOutcome {
    let tags = tags_all::wanted(ctx, planned);
    let mut have = match read_role(iam, name).await {
        Ok(a) => a,
        Err(d) => return ApplyOutcome::failed(None, d),
    };
    let checked = preflight(iam, prior, planned, name, have.as_ref()).await;
    if checked.has_errors() {
        // Nothing was created or changed: no new state (an update keeps the prior one).
        return ApplyOutcome::failed(None, checked);
    }
    if have.is_none() {
        // Create the role first: the owned policies' ARNs need its account.
        let Some(trust) = trust_policy(planned) else {
            return ApplyOutcome::failed(
                None,
                Diagnostics::from_error(
                    "Trust policy not known",
                    "irsa and pod_identity must be known to create the role.",
                ),
            );
        };
        let tags = crate::aws::ownership::with_owner_tag(&tags, TYPE_NAME);
        let new = crate::aws::iam::NewRole {
            name,
            path: get_str(planned, "path").unwrap_or("/"),
            trust_policy: &trust,
            permissions_boundary: get_str(planned, "permissions_boundary"),
            description: Some("Karpenter controller role (managed by Terraform)"),
            tags: &tags,
        };
        if let Err(e) = iam.create_role(&new).await {
            return ApplyOutcome::failed(None, iam_role::diagnostics("create the controller role", &e));
        }
        have = match read_role(iam, name).await {
            Ok(a) => a,
            Err(d) => return ApplyOutcome::failed(None, d),
        };
    }
    let mut diags = Diagnostics::new();
    let role_arn = have.as_ref().map(|a| a.role.arn.clone()).unwrap_or_default();
    match desired(planned, name, &role_arn, have.as_ref(), tags) {
        Ok(want) => {
            if let Err(e) = iam_role::converge(iam, &want, have.as_ref()).await {
                diags.extend(iam_role::diagnostics("apply the controller role", &e));
            }
        }
        Err(d) => diags.extend(d),
    }
    match read_role(iam, name).await {
        Ok(Some(actual)) => {
            ApplyOutcome::failed(Some(state(planned, &actual, &tags_all::defaults(ctx))), diags)
        }
        Ok(None) => ApplyOutcome::failed(None, diags),
        Err(d) => {
            diags.extend(d);
            ApplyOutcome::failed(None, diags)
        }
    }
}
