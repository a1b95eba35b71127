//! `terraform plan` as Karpenter's health check (#59): when a plan refreshes one of Karpenter's
//! objects, what Karpenter itself says is wrong with it — in its own words, where the review of
//! the change happens, instead of in `kubectl describe` after the apply. A note of the plan's
//! notes stage ([`super::notes`]), read through the plan's memory:
//!
//! - the object's status conditions that fail for its current spec, with Karpenter's reason and
//!   message, how long ago, and the attribute to look at ([`conditions`]);
//! - for a NodePool, its NodeClaims that could not launch or never joined ([`claims`]), from the
//!   plan's one NodeClaim list (shared with the drift preview);
//! - once per plan, whether Karpenter runs at all, and which reads the cluster refused
//!   ([`once`]).
//!
//! Never in the way: warnings only, from what the refresh read (no refresh, as with
//! `-refresh=false`, reads and says nothing; an object the plan creates has no health yet);
//! `plan_health = false` in the provider block turns it off. A healthy object says nothing.

mod claims;
mod conditions;
mod once;

use async_trait::async_trait;
use k8s_openapi::jiff::Timestamp;

use crate::context::KarpenterContext;
use crate::k8s::kinds::{self, Kind};
use crate::k8s::plan_reads::Observed;
use crate::resources::kube::note::{Note, Planned};
use crate::resources::kube::object::DEFAULT_NAMESPACE;
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};
use conditions::{ago, failing, hint};

/// The note.
pub struct Health;

/// [`NOTES`](crate::resources::kube::notes::NOTES)' entry.
pub static HEALTH: Health = Health;

#[async_trait]
impl Note for Health {
    /// Every kind: a kind whose objects carry no conditions says nothing.
    fn about(&self, _kind: &Kind) -> bool {
        true
    }

    async fn say(&self, ctx: &KarpenterContext, planned: &Planned<'_>) -> Diagnostics {
        let mut diags = Diagnostics::new();
        let change = planned.change;
        if ctx.settings.no_plan_health || change.planned.is_null() {
            return diags;
        }
        let Some(name) = change.prior.get("name").and_then(Value::as_str) else {
            return diags;
        };
        // A namespaced kind's object is known by its namespace too (the default when the
        // configuration names none), so two of one name in two namespaces never mix.
        let namespace = planned.kind.namespaced.then(|| {
            change
                .prior
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or(DEFAULT_NAMESPACE)
        });
        let Some(observed) = ctx.plan.reads.observed(planned.kind, namespace, name) else {
            return diags;
        };
        let now = Timestamp::now();
        diags.extend(object(planned.kind, name, &observed, now));
        if *planned.kind == kinds::NODE_POOL
            && let Ok(client) = ctx.kube().await
            && let Ok(claims) = ctx.plan.reads.node_claims(client).await
            && let Some((summary, detail)) = claims::trouble(name, &claims, now)
        {
            diags.warning(summary, detail);
        }
        if once::is_the_one(ctx, planned.type_name, name) {
            diags.extend(once::say(ctx, now).await);
        }
        diags
    }
}

/// The warning about an object's failing conditions, on the attribute of the first whose cause
/// is in the configuration.
fn object(kind: &Kind, name: &str, observed: &Observed, now: Timestamp) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let failing = failing(observed);
    if failing.is_empty() {
        return diags;
    }
    let mut at = None;
    let lines: Vec<String> = failing
        .iter()
        .map(|c| {
            let hint = hint(kind, c);
            if at.is_none() {
                at = hint.as_ref().and_then(|h| h.attribute);
            }
            let since = ago(&c.since, now).map_or_else(String::new, |a| format!(" for {a}"));
            let reason = if c.reason.is_empty() {
                String::new()
            } else {
                format!(" ({})", c.reason)
            };
            let message = if c.message.is_empty() {
                String::new()
            } else {
                format!(": {}", c.message)
            };
            let advice = hint.map_or_else(String::new, |h| format!(" {}", h.advice));
            format!("- {} is False{since}{reason}{message}.{advice}", c.kind)
        })
        .collect();
    let summary = format!("{} {name:?}: Karpenter reports it is not healthy", kind.kind);
    let detail = format!(
        "Karpenter's status conditions of this {}, as this plan's refresh read them:\n{}",
        kind.kind,
        lines.join("\n")
    );
    match at {
        Some(dotted) => {
            let path = dotted
                .split('.')
                .fold(AttributePath::root(), |p, step| p.attr(step));
            diags.warning_at(&path, summary, detail);
        }
        None => diags.warning(summary, detail),
    }
    diags
}
