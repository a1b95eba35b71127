//! What the three types' identities share: the region and account of an ARN, the refusal of an
//! identity in another account, and the explanation of an import by identity that failed
//! because the credentials are in another account.

use crate::context::KarpenterContext;
use crate::policy::arn::Arn;
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::AttributePath;

/// The region and account of an ARN (`arn:<partition>:<service>:<region>:<account>:…`), in
/// any partition.
pub fn arn_region_account(arn: &str) -> Option<(&str, &str)> {
    Arn::fields(arn).map(|[_, _, region, account, _]| (region, account))
}

fn identity_path(name: &str) -> AttributePath {
    AttributePath::root().attr(name)
}

/// The refusal of an identity naming another account than the credentials'.
pub fn account_mismatch(type_name: &str, wanted: &str, actual: &str) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.error_at(
        &identity_path("account_id"),
        "Identity in another AWS account",
        format!(
            "The identity names a {type_name} in account {wanted}, but this provider configuration's AWS credentials \
             belong to account {actual}. Import it with a provider configuration whose credentials are in account \
             {wanted} (e.g. a provider \"karpenter\" block with alias = \"other\" and aws {{ assume_role {{ role_arn = \
             \"arn:aws:iam::{wanted}:role/<role>\" }} }}, and provider = karpenter.other in the import block), or \
             correct account_id."
        ),
    );
    d
}

/// The account the provider's credentials are in (STS), when it can be asked.
async fn caller_account(ctx: &KarpenterContext) -> Option<String> {
    let aws = ctx.aws().await.ok()?;
    crate::aws::account::caller_account(aws)
        .await
        .map_err(|e| tracing::debug!(error = %e, "could not ask STS for the caller's account"))
        .ok()
}

/// After an import by name failed for an identity naming an account: when the credentials are
/// in another account, that is the reason, and the refusal says so.
pub async fn explain_failed_import(
    ctx: &KarpenterContext,
    type_name: &str,
    wanted_account: Option<&str>,
    failure: Diagnostics,
) -> Diagnostics {
    let Some(wanted) = wanted_account else {
        return failure;
    };
    match caller_account(ctx).await {
        Some(actual) if actual != wanted => account_mismatch(type_name, wanted, &actual),
        _ => failure,
    }
}
