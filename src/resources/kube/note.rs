//! What a plan note is: one thing the plan says beyond the plan itself, about the planned
//! changes of the kinds it is about, learning from (and keeping what it learns in) the
//! command's [`PlanMemory`](crate::context::plan_memory::PlanMemory). The stage that asks every
//! note is [`super::notes`]; this file is below it, so a note anywhere in `resources/kube`
//! implements [`Note`] without reaching up to the list that names it.

use async_trait::async_trait;

use crate::context::KarpenterContext;
use crate::k8s::kinds::Kind;
use crate::terraform::framework::schema::Schema;
use crate::terraform::framework::{Diagnostics, PlanToCheck};

/// One planned change of a Kubernetes kind, as a note sees it.
pub struct Planned<'a> {
    /// The resource type (`karpenter_node_pool`).
    pub type_name: &'a str,
    pub kind: &'a Kind,
    /// The resource type's schema.
    pub schema: &'a Schema,
    pub change: &'a PlanToCheck<'a>,
}

/// A plan note (see the module docs). Notes are warnings, never errors: a plan never fails on
/// one, and one that cannot tell says so, or nothing.
#[async_trait]
pub trait Note: Send + Sync {
    /// Whether it has anything to say about changes of `kind`.
    fn about(&self, kind: &Kind) -> bool;

    /// What it says about one planned change.
    async fn say(&self, ctx: &KarpenterContext, planned: &Planned<'_>) -> Diagnostics;
}
