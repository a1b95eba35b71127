//! The drift preview as a plan note: for a kind with drift rules ([`super::rules::of`]), which
//! running nodes the planned change replaces ([`super::check`]).

use async_trait::async_trait;

use super::rules;
use crate::context::KarpenterContext;
use crate::k8s::kinds::Kind;
use crate::resources::kube::note::{Note, Planned};
use crate::terraform::framework::Diagnostics;

/// The note.
pub struct Drift;

/// [`NOTES`](crate::resources::kube::notes::NOTES)' entry.
pub static DRIFT: Drift = Drift;

#[async_trait]
impl Note for Drift {
    fn about(&self, kind: &Kind) -> bool {
        rules::of(kind).is_some()
    }

    async fn say(&self, ctx: &KarpenterContext, planned: &Planned<'_>) -> Diagnostics {
        match rules::of(planned.kind) {
            Some(rules) => super::check(ctx, rules, planned.schema, planned.change).await,
            None => Diagnostics::new(),
        }
    }
}
