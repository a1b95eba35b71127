//! The interruption queue nobody reads. Karpenter consumes its queue continuously: one
//! long-poll `ReceiveMessage` after another (up to 10 messages each, waiting up to 20 s), and it
//! deletes every message it reads, unparseable ones included (aws/karpenter-provider-aws
//! `pkg/providers/sqs/sqs.go`, `pkg/controllers/interruption/controller.go`). So a running
//! Karpenter never leaves a full batch waiting: when the refresh finds [`FULL_BATCH`] or more
//! messages waiting (SQS's `ApproximateNumberOfMessages`), no Karpenter reads this queue — the
//! chart's `settings.interruptionQueue` does not name it, or Karpenter is not running — and the
//! plan says so on the resource. Fewer tells nothing (SQS's counts lag up to a minute, and an
//! empty queue is what a quiet account has too); nothing is read beyond the refresh's own
//! `GetQueueAttributes`, and a plan that does not refresh says nothing.

use crate::context::KarpenterContext;
use crate::terraform::framework::{Diagnostics, PlanToCheck};
use crate::terraform::tfvalue::{AttributePath, Value};

/// The most messages one receive of Karpenter's takes.
pub(super) const FULL_BATCH: u64 = 10;

/// The warning about the refreshed queue's backlog, when there is one.
pub(super) fn backlog_note(ctx: &KarpenterContext, change: &PlanToCheck<'_>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if ctx.settings.no_plan_health || change.planned.is_null() {
        return diags;
    }
    let Some(queue) = change.prior.get("queue_name").and_then(Value::as_str) else {
        return diags;
    };
    let Some(backlog) = ctx.plan.queue_backlog(queue) else {
        return diags;
    };
    if backlog.waiting < FULL_BATCH {
        return diags;
    }
    diags.warning_at(
        &AttributePath::root().attr("queue_name"),
        format!("Interruption queue {queue:?}: {} messages wait, and nothing reads them", backlog.waiting),
        format!(
            "SQS counts {} messages waiting in {queue:?} ({} more received and not deleted). A running Karpenter reads \
             its interruption queue continuously, {FULL_BATCH} messages at a time, and deletes each one it reads, so it \
             never leaves a full batch waiting: no Karpenter reads this queue, and spot interruptions, rebalance \
             recommendations, scheduled maintenance and instance state changes reach no one. Set the karpenter \
             chart's settings.interruptionQueue to {queue:?} (the usage stack passes \
             karpenter_interruption_queue.<name>.queue_name), check that Karpenter runs, and that its controller role \
             allows sqs:ReceiveMessage and sqs:DeleteMessage on this queue (karpenter_controller_role with \
             interruption_queue_arn).",
            backlog.waiting, backlog.in_flight
        ),
    );
    diags
}
