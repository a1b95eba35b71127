//! What a plan says once, however many of Karpenter's objects it manages: whether Karpenter
//! runs at all (its leader-election Lease: absent, released or not renewed; the verdicts the
//! teardown uses, from one look — [`karpenter_liveness::at_a_glance`]; on EKS Auto Mode AWS
//! runs it, never "not running"), and which of the health reads the cluster refused.
//!
//! Said on one resource, chosen the same way in every plan of a configuration: the first, by
//! type and name, of the configuration's Karpenter objects whose name the files write as a value
//! the provider can read (the configuration as written, read once per plan); when no name can be
//! read, the first one planned. Only when that resource was refreshed by this plan: a plan that
//! creates it (Karpenter may be installed by the same apply) or that does not refresh
//! (`-refresh=false`) reads nothing and says nothing.

use k8s_openapi::jiff::Timestamp;

use crate::context::KarpenterContext;
use crate::k8s::karpenter_liveness::{self, Liveness, Seen};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::config_scan::BlockKind;
use crate::terraform::tfvalue::Value;

/// Whether the resource `type_name` named `name` is the one that says what is said once.
pub(super) fn is_the_one(ctx: &KarpenterContext, type_name: &str, name: &str) -> bool {
    let written = ctx.plan.written();
    let first = ctx
        .plan
        .written_types()
        .flat_map(|t| {
            written
                .blocks(BlockKind::Resource, t)
                .iter()
                .flat_map(|b| &b.instances)
                .filter_map(move |v| Some((t, v.get("name").and_then(Value::as_str)?)))
        })
        .min();
    match first {
        Some((t, n)) => t == type_name && n == name,
        None => ctx.plan.first_time("the resource that says what is said once"),
    }
}

/// What is said once (see the module docs).
pub(super) async fn say(ctx: &KarpenterContext, now: Timestamp) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let client = match ctx.kube().await {
        Ok(c) => c,
        Err(e) => {
            tracing::debug!(error = %e, "no cluster to read Karpenter's health from");
            return diags;
        }
    };
    let seen = karpenter_liveness::look(client).await;
    match karpenter_liveness::at_a_glance(&seen, now) {
        Liveness::Running => {}
        Liveness::Gone(why) => diags.warning(
            "Karpenter is not running in this cluster",
            format!(
                "This configuration manages Karpenter's objects, but {why}. Nothing acts on them: no node launches, \
                 no node is replaced, and a destroy waits on Karpenter's finalizers (or fails fast; force_destroy \
                 does Karpenter's cleanup). Install or start Karpenter (the karpenter chart), or check its pods."
            ),
        ),
        Liveness::Unknown => {
            let why = match &seen {
                Seen::Unreadable(why) => why.clone(),
                _ => "no answer".to_string(),
            };
            tracing::debug!(%why, "Karpenter's Lease could not be read at plan");
            diags.warning(
                "Whether Karpenter runs was not read",
                format!(
                    "The plan reads Karpenter's leader-election Lease to say whether Karpenter runs, and that read \
                     failed: {why}. Grant list on leases (coordination.k8s.io) to the provider's identity \
                     (see the least-privilege guide), or set plan_health = false in the provider block."
                ),
            );
        }
    }
    let claims = ctx.plan.reads.node_claims(client).await;
    if let Err(why) = claims {
        tracing::debug!(%why, "the NodeClaims could not be listed at plan");
        diags.warning(
            "The NodeClaims were not read",
            format!(
                "The plan lists Karpenter's NodeClaims to say which nodes a pool cannot launch, and that list failed: \
                 {why}. Grant list on nodeclaims (karpenter.sh) to the provider's identity (see the least-privilege \
                 guide), or set plan_health = false in the provider block."
            ),
        );
    }
    diags
}
