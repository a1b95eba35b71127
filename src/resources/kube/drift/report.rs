//! The warnings a plan shows about what it does to the running nodes: one per changed
//! attribute that drifts (or may drift) nodes, on that attribute, in the words "N of M nodes";
//! one for a destroy or a replacement that terminates nodes; one when the cluster could not
//! tell. A change that drifts nothing says nothing.

use super::changes::Effect;
use super::verdict::{Preview, Verdict};
use crate::k8s::plan_reads::NodeClaim;
use crate::terraform::framework::Diagnostics;

/// How many NodeClaims a message names before "and N more".
const NAMED: usize = 5;

/// A few NodeClaims by name (with their node), then how many more.
pub fn some(claims: &[&NodeClaim]) -> String {
    let mut sorted: Vec<&NodeClaim> = claims.to_vec();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut names: Vec<String> = sorted.iter().take(NAMED).map(|c| c.display()).collect();
    if sorted.len() > NAMED {
        names.push(format!("and {} more", sorted.len() - NAMED));
    }
    names.join(", ")
}

fn nodes(n: usize) -> &'static str {
    if n == 1 { "node" } else { "nodes" }
}

/// What the object is, for messages: `NodePool "general"`.
#[derive(Debug, Clone)]
pub struct Subject {
    /// `NodePool "general"`, `EC2NodeClass "default"`.
    pub label: String,
    /// The reason Karpenter gives a static drift of this kind (`NodePoolDrifted`, `NodeClassDrift`).
    pub static_reason: &'static str,
    /// The hash annotation Karpenter compares.
    pub hash_annotation: &'static str,
    /// Said after the rules when they are not confirmed from Karpenter's source (Auto Mode).
    pub caveat: Option<&'static str>,
}

/// Per-pool figures of a node class change: `(pool, drifting here, running in the pool, what
/// its budgets allow)`.
pub type PoolLines = Vec<(String, usize, usize, String)>;

/// One warning per change that drifts or may drift a node.
pub fn preview(
    subject: &Subject,
    preview: &Preview<'_>,
    budgets: &dyn Fn(&Verdict<'_>) -> BudgetText,
    diags: &mut Diagnostics,
) {
    let m = preview.running.len();
    let already = match preview.already.len() {
        0 => String::new(),
        n => format!(
            " Already drifted, and replaced whatever this plan does: {} {}: {}.",
            n,
            nodes(n),
            some(&preview.already)
        ),
    };
    for v in &preview.verdicts {
        let path = &v.change.path;
        let drifting: Vec<&NodeClaim> = v.drifting.iter().map(|(c, _)| *c).collect();
        let budget = budgets(v);
        if !drifting.is_empty() {
            let why = match v.change.effect {
                Effect::Requirements => {
                    let reasons: Vec<String> = v
                        .drifting
                        .iter()
                        .take(NAMED)
                        .map(|(c, why)| format!("{}: {}", c.display(), why.as_deref().unwrap_or_default()))
                        .collect();
                    let more = drifting.len().saturating_sub(NAMED);
                    format!(
                        "Their labels no longer meet the planned requirements, so Karpenter marks them drifted \
                         (RequirementsDrifted) and replaces them. {}{}.",
                        reasons.join("; "),
                        if more > 0 {
                            format!("; and {more} more")
                        } else {
                            String::new()
                        }
                    )
                }
                _ => format!(
                    "Karpenter hashes {path} into the {} annotation: once it changes, every NodeClaim launched \
                     with the old value is marked drifted ({}) and its node replaced: {}.",
                    subject.hash_annotation,
                    subject.static_reason,
                    some(&drifting)
                ),
            };
            let unhashed = match v.unhashed {
                0 => String::new(),
                n => format!(
                    " {n} {} no {} annotation of this hash version, so Karpenter does not drift {} for this change.",
                    if n == 1 {
                        "NodeClaim carries"
                    } else {
                        "NodeClaims carry"
                    },
                    subject.hash_annotation,
                    if n == 1 { "it" } else { "them" }
                ),
            };
            diags.warning_at(
                path,
                format!(
                    "This change replaces {} of {m} nodes of {}",
                    drifting.len(),
                    subject.label
                ),
                format!(
                    "{why}{already}{unhashed} {}{}",
                    budget.sentence(drifting.len()),
                    subject.caveat.unwrap_or_default()
                ),
            );
        } else if !v.possibly.is_empty() {
            let why = if v.change.known {
                format!(
                    "Karpenter does not hash {path}: it resolves it (to subnets, security groups, AMIs or \
                     capacity reservations) and replaces the nodes whose resolved values no longer match. The \
                     provider does not resolve selectors at plan, so it cannot tell how many of these"
                )
            } else {
                format!(
                    "The planned {path} is not known until apply; if its value changes, Karpenter replaces the \
                     nodes launched with the old one"
                )
            };
            diags.warning_at(
                path,
                format!(
                    "This change may replace up to {} of {m} nodes of {}",
                    v.possibly.len(),
                    subject.label
                ),
                format!(
                    "{why}: {}.{already} {}{}",
                    some(&v.possibly),
                    budget.sentence(v.possibly.len()),
                    subject.caveat.unwrap_or_default()
                ),
            );
        }
    }
}

/// What the budgets allow, for one pool or per pool of a class.
pub enum BudgetText {
    /// A pool: what its budgets allow at a time.
    Pool(String),
    /// A node class: per pool.
    Pools(PoolLines),
    /// The pools' budgets could not be read.
    Unknown(String),
}

impl BudgetText {
    fn sentence(&self, n: usize) -> String {
        match self {
            Self::Pool(allowance) => format!(
                "The pool's disruption budgets let Karpenter replace {allowance}; the {n} {} {} replaced in turn, \
                 each once its replacement is ready.",
                nodes(n),
                if n == 1 { "is" } else { "are" }
            ),
            Self::Pools(lines) => {
                let per: Vec<String> = lines
                    .iter()
                    .map(|(pool, here, total, allowance)| {
                        format!(
                            "NodePool {pool:?}: {here} of its {total} {}, {allowance}",
                            nodes(*total)
                        )
                    })
                    .collect();
                format!(
                    "By pool, with what its disruption budgets let Karpenter replace: {}.",
                    per.join("; ")
                )
            }
            Self::Unknown(why) => format!("The pools' disruption budgets could not be read ({why})."),
        }
    }
}

/// A destroy or a replacement of a NodePool with running nodes.
pub fn pool_removal(label: &str, replaces: bool, running: &[&NodeClaim], diags: &mut Diagnostics) {
    let n = running.len();
    if n == 0 {
        return;
    }
    let (verb, after) = if replaces {
        (
            "Replacing",
            " The new NodePool launches nodes for the pods that become pending.",
        )
    } else {
        ("Destroying", " Their pods need another NodePool to run on.")
    };
    diags.warning(
        format!("{verb} {label} terminates its {n} {}", nodes(n)),
        format!(
            "Deleting a NodePool deletes the NodeClaims it owns (Kubernetes garbage collection, through their owner \
             references): Karpenter drains and terminates each node, without waiting for disruption budgets and \
             without launching replacements for it: {}.{after}",
            some(running)
        ),
    );
}

/// A destroy or a replacement of a node class that running nodes were launched from.
pub fn class_removal(label: &str, replaces: bool, running: &[&NodeClaim], diags: &mut Diagnostics) {
    let n = running.len();
    if n == 0 {
        return;
    }
    let mut pools: Vec<&str> = running.iter().filter_map(|c| c.pool()).collect();
    pools.sort_unstable();
    pools.dedup();
    diags.warning(
        format!(
            "{} {label}: {n} running {} {} launched from it",
            if replaces { "Replacing" } else { "Destroying" },
            nodes(n),
            if n == 1 { "was" } else { "were" }
        ),
        format!(
            "Its deletion waits until they are gone (Karpenter keeps its finalizer while a NodeClaim uses it); \
             they go when their NodePools ({}) are destroyed or stop using it: {}.",
            pools.join(", "),
            some(running)
        ),
    );
}

/// The cluster could not say (not reachable, not known yet): the plan goes on.
pub fn cannot_tell(label: &str, why: &str, diags: &mut Diagnostics) {
    diags.warning(
        format!("Could not tell what this change to {label} does to the running nodes"),
        format!(
            "The provider reads the NodeClaims at plan to say which nodes a change replaces, and that failed: \
             {why}. The plan goes on without it; Karpenter still applies its drift rules after the apply."
        ),
    );
}
