//! The AWS side of `karpenter_node_role` beyond what both roles share: its IAM client (the account
//! guards checked first for a change) and the read of its role with the parts it owns.

use crate::aws::iam::Iam;
use crate::context::KarpenterContext;
use crate::resources::aws::iam_role::{self, Actual, ReadScope};
use crate::terraform::framework::Diagnostics;

pub(super) async fn iam(ctx: &KarpenterContext) -> Result<(Iam, Option<String>), Diagnostics> {
    let aws = ctx.aws().await?;
    Ok((Iam::new(aws.iam()), aws.region().map(str::to_string)))
}

/// [`iam`] for create, update and delete: the account guards are checked first.
pub(super) async fn iam_to_change(ctx: &KarpenterContext) -> Result<(Iam, Option<String>), Diagnostics> {
    let aws = ctx.aws_to_change().await?;
    Ok((Iam::new(aws.iam()), aws.region().map(str::to_string)))
}

pub(super) async fn read_role(iam: &Iam, name: &str) -> Result<Option<Actual>, Diagnostics> {
    let scope = ReadScope {
        profile: Some(name),
        ..Default::default()
    };
    iam_role::read(iam, name, &scope)
        .await
        .map_err(|e| iam_role::diagnostics("read the node role", &e))
}
