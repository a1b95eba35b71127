//! Create and update of `karpenter_node_role`: ownership (a create never adopts a role or an
//! instance profile found under its names) and `additional_policy_arns` checked before anything
//! is touched, then the role converged through `iam_role`, its access entry followed
//! ([`super::access_entry`]), and the state read back from what exists.

use super::access_entry;
use super::calls::{iam_to_change, read_role};
use super::model::{desired, state};
use super::schema::{DEFAULT_PREFIX, TYPE_NAME, bool_of};
use crate::aws::iam::Iam;
use crate::aws_names;
use crate::context::KarpenterContext;
use crate::resources::aws::iam_role;
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{ApplyOutcome, Diagnostics};
use crate::terraform::tfvalue::Value;

pub(super) async fn create(ctx: &KarpenterContext, planned: &Value) -> ApplyOutcome {
    let (iam, region) = match iam_to_change(ctx).await {
        Ok(c) => c,
        Err(d) => return ApplyOutcome::failed(None, d),
    };
    let partition = get_str(planned, "partition")
        .map(str::to_string)
        .unwrap_or_else(|| {
            aws_names::partition_of_region(region.as_deref().unwrap_or("us-east-1")).to_string()
        });
    let name = iam_role::resolve_name(planned, DEFAULT_PREFIX);
    iam_role::explain_partial_create(
        TYPE_NAME,
        apply(ctx, &iam, &Value::Null, planned, &name, &partition).await,
    )
}

pub(super) async fn update(ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
    let (iam, _) = match iam_to_change(ctx).await {
        Ok(c) => c,
        Err(d) => return ApplyOutcome::failed(Some(prior.clone()), d),
    };
    let name = get_str(prior, "name").unwrap_or_default().to_string();
    let partition = get_str(planned, "partition")
        .or_else(|| get_str(prior, "partition"))
        .unwrap_or("aws")
        .to_string();
    apply(ctx, &iam, prior, planned, &name, &partition).await
}

/// Converges `name` onto `planned`, then returns the state of what exists (plus errors).
async fn apply(
    ctx: &KarpenterContext,
    iam: &Iam,
    prior: &Value,
    planned: &Value,
    name: &str,
    partition: &str,
) -> ApplyOutcome {
    let mut diags = Diagnostics::new();
    let have = match read_role(iam, name).await {
        Ok(a) => a,
        Err(d) => return ApplyOutcome::failed(None, d),
    };
    // Ownership: what the state records is ours; a create never adopts anything found
    // under our names. Checked before anything is created or changed.
    let creating = prior.is_null();
    if creating {
        iam_role::refuse_existing_role(TYPE_NAME, have.as_ref(), &mut diags);
    }
    if bool_of(planned, "create_instance_profile") && !bool_of(prior, "create_instance_profile") {
        // Read with the role; looked up alone when there is no role yet.
        let profile = match have.as_ref() {
            Some(a) => Ok(a.profile.clone()),
            None => iam.get_instance_profile(name).await,
        };
        match profile {
            Ok(p) => iam_role::refuse_existing_profile(TYPE_NAME, name, p.as_ref(), creating, &mut diags),
            Err(e) => diags.extend(iam_role::diagnostics("read the instance profile", &e)),
        }
    }
    let attached = have.as_ref().map(|a| a.attached.clone()).unwrap_or_default();
    if let Err(e) =
        iam_role::check_additional_policies(iam, planned, Some(partition), &attached, &mut diags).await
    {
        diags.extend(iam_role::diagnostics("check additional_policy_arns", &e));
    }
    if diags.has_errors() {
        // Nothing was created or changed: no new state (an update keeps the prior one).
        return ApplyOutcome::failed(None, diags);
    }
    let account = have
        .as_ref()
        .and_then(|a| iam_role::partition_and_account(&a.role.arn))
        .map(|(_, acct)| acct)
        .unwrap_or_default();
    let want = desired(
        planned,
        prior,
        name,
        partition,
        &account,
        tags_all::wanted(ctx, planned),
    );
    let converged = iam_role::converge(iam, &want, have.as_ref()).await;
    if let Err(e) = &converged {
        diags.extend(iam_role::diagnostics("apply the node role", e));
    }
    match read_role(iam, name).await {
        Ok(Some(actual)) => {
            let mut new_state = state(planned, &actual, &tags_all::defaults(ctx));
            access_entry::follow_role(
                ctx,
                prior,
                planned,
                converged.is_ok(),
                &actual.role.arn,
                partition,
                &mut new_state,
                &mut diags,
            )
            .await;
            ApplyOutcome::failed(Some(new_state), diags)
        }
        Ok(None) => ApplyOutcome::failed(None, diags),
        Err(d) => {
            diags.extend(d);
            ApplyOutcome::failed(None, diags)
        }
    }
}
