//! The plan's notes stage: after the plan checks (what the installed Karpenter refuses, in
//! [`super::object`]), every note of [`NOTES`] that is about the kind says what it has to say
//! about the planned change, in this order. One stage, one memory (the context's
//! [`PlanMemory`](crate::context::plan_memory::PlanMemory)); adding a note is one file that
//! implements [`Note`] and one line here.
//!
//! - [`drift_note::DRIFT`]: which running nodes a change replaces ([`super::drift`]);
//! - [`kubelet::notes::CLASS_RANGES`]: what a node class's kubelet expressions come to over the
//!   instance-type table;
//! - [`kubelet::notes::POOL_RANGES`]: what its pools' class's expressions come to over the types
//!   each pool can launch;
//! - [`health::HEALTH`]: what Karpenter says is wrong with a refreshed object, its pool's
//!   NodeClaims, and once whether Karpenter runs.

use crate::context::KarpenterContext;
use crate::resources::kube::drift::note as drift_note;
use crate::resources::kube::health;
use crate::resources::kube::note::{Note, Planned};
use crate::resources::kube::v1::ec2_node_class::kubelet;
use crate::terraform::framework::Diagnostics;

/// Every note, in the order they speak.
pub static NOTES: &[&dyn Note] = &[
    &drift_note::DRIFT,
    &kubelet::notes::CLASS_RANGES,
    &kubelet::notes::POOL_RANGES,
    &health::HEALTH,
];

/// What the notes say about one planned change.
pub async fn say(ctx: &KarpenterContext, planned: &Planned<'_>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for note in NOTES.iter().filter(|n| n.about(planned.kind)) {
        diags.extend(note.say(ctx, planned).await);
    }
    diags
}
