//! The AWS side of `karpenter_controller_role` beyond what both roles share: its IAM client
//! (the account guards checked first for a change) and the read of its role with the parts
//! it owns.

use super::model::all_group_arns;
use super::schema::INLINE_POLICY;
use crate::aws::iam::Iam;
use crate::context::KarpenterContext;
use crate::resources::aws::iam_role::{self, Actual, ReadScope};
use crate::terraform::framework::Diagnostics;

pub(super) async fn iam(ctx: &KarpenterContext) -> Result<Iam, Diagnostics> {
    Ok(Iam::new(ctx.aws().await?.iam()))
}

/// [`iam`] for create, update and delete: the account guards are checked first.
pub(super) async fn iam_to_change(ctx: &KarpenterContext) -> Result<Iam, Diagnostics> {
    Ok(Iam::new(ctx.aws_to_change().await?.iam()))
}

/// Reads the role, with its inline policy and every owned managed policy it could have.
pub(super) async fn read_role(iam: &Iam, name: &str) -> Result<Option<Actual>, Diagnostics> {
    let fail = |e| iam_role::diagnostics("read the controller role", &e);
    let Some(role) = iam.get_role(name).await.map_err(fail)? else {
        return Ok(None);
    };
    let owned = all_group_arns(&role.arn, &role.path, name);
    let inline = [INLINE_POLICY.to_string()];
    // Every inline policy's document: the resource's own, and those of
    // `additional_inline_policies` (whose names the state knows, but not a read of import).
    let scope = ReadScope {
        inline: &inline,
        every_inline: true,
        owned_arns: &owned,
        profile: None,
    };
    iam_role::read(iam, name, &scope).await.map_err(fail)
}
