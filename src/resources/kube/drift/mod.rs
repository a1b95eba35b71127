//! What a plan does to the running nodes (issue #51): when a NodePool or a node class is
//! updated, which of its NodeClaims Karpenter will mark drifted and replace; when a NodePool is
//! destroyed or replaced, which nodes go with it. Said at plan, as warnings on the attribute
//! that causes it, from one list of the cluster's NodeClaims per plan
//! ([`crate::k8s::plan_reads`]). Best effort: an unreachable cluster is a warning, never an
//! error; a plan that changes nothing that drifts makes no request.
//!
//! Karpenter's rules (kubernetes-sigs/karpenter and aws/karpenter-provider-aws v1.14; the
//! guide "What will this change do to my nodes" says them in full):
//!
//! - a NodePool's `template` is hashed (`karpenter.sh/nodepool-hash`), but not its
//!   `requirements`: a change of a hashed field drifts every NodeClaim that carries the pool's
//!   current hash at the same hash version; `disruption`, `limits`, `weight` and `replicas` drift
//!   nothing;
//! - the requirements drift the NodeClaims whose labels no longer meet them;
//! - a node class's spec is hashed except its selector terms (resolved, so drift depends on what
//!   they resolve to: said as "may replace up to"), and, for an EC2NodeClass, `amiFamily` (whose
//!   resolved value is hashed instead) and `ipPrefixCount`. Fields added to a class later are
//!   hashed unless listed here.
//!
//! Files: [`rules`] (each kind's), [`changes`] (which attributes changed, and their effect), [`verdict`] (which NodeClaims
//! each change drifts), [`budgets`] (what the pool's budgets allow at a time), [`report`]
//! (the warnings) and [`note`] (the preview as a note of the plan's notes stage).

pub mod budgets;
pub mod changes;
pub mod note;
pub mod report;
pub mod rules;
pub mod verdict;

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::context::KarpenterContext;
use crate::instance_types::requirements::LabelRequirements;
use crate::k8s::plan_reads::{NODE_POOL_LABEL, NodeClaim};
use crate::resources::kube::kind::rules::launchable::written_requirements;
use crate::terraform::framework::convert::to_wire;
use crate::terraform::framework::schema::Schema;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{Diagnostics, PlanToCheck};
use crate::terraform::tfvalue::{AttributePath, Value};
use changes::Effect;
use report::{BudgetText, Subject};
use rules::{DriftRules, Scope};
use verdict::{Hashes, Requirements};

/// The warnings for one planned change of a pool or class (see the module docs).
pub async fn check(
    ctx: &KarpenterContext,
    rules: &DriftRules,
    schema: &Schema,
    change: &PlanToCheck<'_>,
) -> Diagnostics {
    let (prior, planned) = (change.prior, change.planned);
    if prior.is_null() {
        return Diagnostics::new();
    }
    let name = get_str(prior, "name").unwrap_or_default().to_string();
    let label = format!("{} {name:?}", rules.kind.kind);
    let removal = planned.is_null() || change.replaces;
    let found = if removal {
        Vec::new()
    } else {
        changes::changes(rules, schema, prior, planned)
    };
    if !removal && found.is_empty() {
        return Diagnostics::new();
    }
    let started = std::time::Instant::now();
    let diags = preview(ctx, rules, schema, change, &name, &label, &found).await;
    // What the bench reads for the preview's cost: the list (when this plan makes it), the
    // verdicts and the warnings.
    tracing::debug!(
        kind = rules.kind.kind,
        name = %name,
        micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        warnings = diags.len(),
        "drift preview"
    );
    diags
}

/// [`check`] once it is known that the cluster must be asked.
async fn preview(
    ctx: &KarpenterContext,
    rules: &DriftRules,
    schema: &Schema,
    change: &PlanToCheck<'_>,
    name: &str,
    label: &str,
    found: &[changes::Change],
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let (prior, planned) = (change.prior, change.planned);
    let removal = planned.is_null() || change.replaces;
    let client = match ctx.kube().await {
        Ok(c) => c,
        Err(e) => {
            report::cannot_tell(label, &e.to_string(), &mut diags);
            return diags;
        }
    };
    let claims = match ctx.plan.reads.node_claims(client).await {
        Ok(c) => c,
        Err(why) => {
            report::cannot_tell(label, &why, &mut diags);
            return diags;
        }
    };
    let mine: Vec<&NodeClaim> = claims.iter().filter(|c| belongs(rules, name, c)).collect();
    let running: Vec<&NodeClaim> = mine.iter().copied().filter(|c| !c.deleting).collect();
    if removal {
        match rules.scope {
            Scope::Pool => report::pool_removal(label, change.replaces, &running, &mut diags),
            Scope::Class(_) => report::class_removal(label, change.replaces, &running, &mut diags),
        }
        return diags;
    }
    if running.is_empty() {
        return diags;
    }
    let current = if found.iter().any(|c| c.effect == Effect::Static) {
        ctx.plan.reads.hashes_of(client, &rules.kind, name).await
    } else {
        None
    };
    let hashes = Hashes {
        hash: rules.hash,
        version: rules.hash_version,
        current: current.as_ref(),
    };
    let subject = Subject {
        label: label.to_string(),
        static_reason: rules.static_reason,
        hash_annotation: rules.hash,
        caveat: match &rules.scope {
            Scope::Class(c) => c.caveat,
            Scope::Pool => None,
        },
    };
    match rules.scope {
        Scope::Pool => {
            let prior_req = pool_requirements(prior);
            let planned_req = pool_requirements(planned);
            let requirements = Requirements {
                prior: prior_req.as_ref(),
                planned: planned_req.as_ref(),
            };
            let preview = verdict::preview(&mine, found, hashes, requirements);
            let budgets = pool_budgets(schema, planned);
            let allowance = |_: &verdict::Verdict<'_>| {
                BudgetText::Pool(budgets::allowance(&budgets, preview.running.len()))
            };
            report::preview(&subject, &preview, &allowance, &mut diags);
        }
        Scope::Class(_) => {
            let preview = verdict::preview(&mine, found, hashes, Requirements::default());
            let touched = preview
                .verdicts
                .iter()
                .any(|v| !v.drifting.is_empty() || !v.possibly.is_empty());
            if !touched {
                return diags;
            }
            let pools = ctx.plan.reads.node_pools(client).await;
            let allowance = |v: &verdict::Verdict<'_>| match &pools {
                Ok(pools) => BudgetText::Pools(per_pool(v, &claims, pools)),
                Err(why) => BudgetText::Unknown(why.clone()),
            };
            report::preview(&subject, &preview, &allowance, &mut diags);
        }
    }
    diags
}

/// Whether a NodeClaim is one of the pool's or was launched from the class.
fn belongs(rules: &DriftRules, name: &str, claim: &NodeClaim) -> bool {
    match rules.scope {
        Scope::Pool => claim.pool() == Some(name),
        Scope::Class(_) => claim.class.as_ref().is_some_and(|r| {
            r.name == name && r.kind == rules.kind.kind && (r.group.is_empty() || r.group == rules.kind.group)
        }),
    }
}

/// A pool's requirements combined per key; `None` while unknown or malformed.
fn pool_requirements(v: &Value) -> Option<LabelRequirements> {
    let list = v
        .get("template")
        .and_then(|t| t.get("spec"))
        .and_then(|s| s.get("requirements"))
        .unwrap_or(&Value::Null);
    LabelRequirements::new(&written_requirements(list)?)
}

/// The planned pool's budgets (API form of `disruption`).
fn pool_budgets(schema: &Schema, planned: &Value) -> Vec<budgets::Budget> {
    let disruption = schema
        .attribute("disruption")
        .and_then(|a| to_wire(std::slice::from_ref(a), planned, &AttributePath::root()).ok())
        .and_then(|mut m| m.remove("disruption"))
        .unwrap_or(Json::Null);
    budgets::from_disruption(&disruption)
}

/// For a class change: per pool, how many of its nodes the change drifts (or may), how many
/// it runs, and what its budgets allow.
fn per_pool(
    v: &verdict::Verdict<'_>,
    claims: &[NodeClaim],
    pools: &[crate::k8s::plan_reads::PoolDisruption],
) -> report::PoolLines {
    let mut touched: BTreeMap<&str, usize> = BTreeMap::new();
    let affected = v
        .drifting
        .iter()
        .map(|(c, _)| *c)
        .chain(v.possibly.iter().copied());
    for claim in affected {
        *touched.entry(claim.pool().unwrap_or_default()).or_default() += 1;
    }
    touched
        .into_iter()
        .map(|(pool, here)| {
            let total = claims
                .iter()
                .filter(|c| !c.deleting && c.labels.get(NODE_POOL_LABEL).map(String::as_str) == Some(pool))
                .count();
            let allowance = match pools.iter().find(|p| p.name == pool) {
                Some(p) => budgets::allowance(&budgets::from_disruption(&p.disruption), total),
                None => "what its budgets allow (the NodePool was not found)".to_string(),
            };
            (pool.to_string(), here, total, allowance)
        })
        .collect()
}

#[cfg(test)]
mod tests;
