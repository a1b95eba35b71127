//! How IAM failures and a provider configuration whose `aws` block is not known yet reach the
//! user.

use crate::aws::iam::IamError;
use crate::terraform::framework::Diagnostics;

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
