//! Create and update of `karpenter_interruption_queue`: every part converged onto the plan
//! within the operation's timeout, and what exists recorded even when that fails midway.

use std::time::{Duration, Instant};

use super::calls::{clients_to_change, converge};
use super::model::{Current, Desired, set_attr};
use crate::context::KarpenterContext;
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{ApplyOutcome, Diagnostics, timeouts};
use crate::terraform::tfvalue::Value;

pub(super) async fn apply(ctx: &KarpenterContext, prior: &Value, planned: &Value, op: &str) -> ApplyOutcome {
    let desired = match Desired::from_plan(planned) {
        Ok(d) => Desired {
            prior_kms: get_str(prior, "kms_master_key_id").is_some(),
            tags: tags_all::wanted(ctx, planned),
            ..d
        },
        Err(diags) => return ApplyOutcome::failed(None, diags),
    };
    let c = match clients_to_change(ctx).await {
        Ok(c) => c,
        Err(diags) => return ApplyOutcome::failed(None, diags),
    };
    let timeout = timeouts::get(planned, op, Duration::from_secs(300));
    let deadline = Instant::now() + timeout;
    let mut cur = Current::from_state(prior);
    let creating = prior.is_null();
    let mut notes = Diagnostics::new();
    let result = tokio::time::timeout(
        timeout,
        converge(&c, &desired, prior, &mut cur, deadline, &mut notes),
    )
    .await;
    let mut diags = match result {
        Ok(Ok(())) => Diagnostics::new(),
        Ok(Err(d)) => d,
        Err(_) => Diagnostics::from_error(
            format!("Timed out during {op}"),
            format!(
                "The interruption queue was not finished within {timeout:?}; what exists is recorded, apply again to finish."
            ),
        ),
    };
    diags.extend(notes);
    if creating && cur.queue_url.is_none() {
        // Nothing was created.
        return ApplyOutcome::failed(None, diags);
    }
    let mut state = cur.to_state(planned, &desired.queue_name);
    set_attr(
        &mut state,
        tags_all::TAGS_ALL,
        crate::terraform::framework::values::string_map(desired.tags.iter()),
    );
    ApplyOutcome {
        state: Some(state),
        diagnostics: diags,
    }
}
