//! Which running NodeClaims each [`Change`] drifts, by Karpenter's rules. Pure: the NodeClaims,
//! the object's current hash annotations and the requirements before and after in; per change,
//! the NodeClaims it drifts (with why), those it may drift (a value not known yet, a selector)
//! and those Karpenter leaves alone for want of a comparable hash.
//!
//! - **Already drifted**: a NodeClaim Karpenter marked `Drifted`, one whose hash is not the
//!   object's current one (same hash version), or, for a pool, one whose labels already fail
//!   the prior requirements. It is replaced whatever this plan does, so it is counted apart.
//! - **Static** (hashed) change: every other NodeClaim that carries both hash annotations, unless
//!   its hash version differs from the object's (Karpenter then re-hashes rather than drifts).
//! - **Requirements**: every other NodeClaim whose labels fail the planned requirements.
//! - **Dynamic**, or a value not known until apply: every other NodeClaim, as "may".

use std::collections::BTreeMap;

use super::changes::{Change, Effect};
use crate::instance_types::requirements::LabelRequirements;
use crate::k8s::plan_reads::NodeClaim;

/// The hash annotations of the object a change is about.
#[derive(Debug, Clone, Copy)]
pub struct Hashes<'a> {
    pub hash: &'a str,
    pub version: &'a str,
    /// The object's annotations as last read; `None` when it could not be read.
    pub current: Option<&'a BTreeMap<String, String>>,
}

/// The requirements before and after, for a pool (`None` while unknown or malformed).
#[derive(Debug, Clone, Copy, Default)]
pub struct Requirements<'a> {
    pub prior: Option<&'a LabelRequirements>,
    pub planned: Option<&'a LabelRequirements>,
}

/// What one change does to the running NodeClaims.
#[derive(Debug, Clone)]
pub struct Verdict<'a> {
    pub change: Change,
    /// The NodeClaims it drifts, each with why (for a requirements change).
    pub drifting: Vec<(&'a NodeClaim, Option<String>)>,
    /// The NodeClaims it may drift (selectors, values not known yet).
    pub possibly: Vec<&'a NodeClaim>,
    /// NodeClaims a static change leaves alone: no hash annotations, or another hash version.
    pub unhashed: usize,
}

/// What a plan does to the running NodeClaims of one pool or class.
#[derive(Debug, Clone)]
pub struct Preview<'a> {
    /// The NodeClaims concerned that are not being deleted.
    pub running: Vec<&'a NodeClaim>,
    /// Those Karpenter replaces anyway.
    pub already: Vec<&'a NodeClaim>,
    pub verdicts: Vec<Verdict<'a>>,
}

impl Hashes<'_> {
    /// Whether the claim's hash is stale: another value than the object's, same version.
    fn stale(&self, claim: &NodeClaim) -> bool {
        let Some(current) = self.current else {
            return false;
        };
        match (
            current.get(self.hash),
            current.get(self.version),
            claim.hashes.get(self.hash),
            claim.hashes.get(self.version),
        ) {
            (Some(h), Some(v), Some(ch), Some(cv)) => v == cv && h != ch,
            _ => false,
        }
    }

    /// Whether a change of the hash drifts the claim: it carries both annotations, with the
    /// object's hash version when that is known.
    fn comparable(&self, claim: &NodeClaim) -> bool {
        let (Some(_), Some(version)) = (claim.hashes.get(self.hash), claim.hashes.get(self.version)) else {
            return false;
        };
        self.current
            .and_then(|c| c.get(self.version))
            .is_none_or(|v| v == version)
    }
}

/// The verdict of each change over `claims` (those concerned, deleting ones included: they
/// are left out here).
pub fn preview<'a>(
    claims: &[&'a NodeClaim],
    changes: &[Change],
    hashes: Hashes<'_>,
    requirements: Requirements<'_>,
) -> Preview<'a> {
    let running: Vec<&NodeClaim> = claims.iter().copied().filter(|c| !c.deleting).collect();
    let (already, fresh): (Vec<&NodeClaim>, Vec<&NodeClaim>) = running.iter().partition(|c| {
        c.drifted.is_some()
            || hashes.stale(c)
            || requirements
                .prior
                .is_some_and(|r| r.unmet_by(&c.labels).is_some())
    });
    let verdicts = changes
        .iter()
        .map(|change| {
            let mut v = Verdict {
                change: change.clone(),
                drifting: Vec::new(),
                possibly: Vec::new(),
                unhashed: 0,
            };
            for claim in &fresh {
                match (change.effect, change.known) {
                    (Effect::Static, true) if hashes.comparable(claim) => v.drifting.push((claim, None)),
                    (Effect::Static, true) => v.unhashed += 1,
                    (Effect::Requirements, true) => match requirements.planned {
                        Some(r) => {
                            if let Some(unmet) = r.unmet_by(&claim.labels) {
                                v.drifting.push((claim, Some(unmet.describe())));
                            }
                        }
                        None => v.possibly.push(claim),
                    },
                    (Effect::Static, false) if !hashes.comparable(claim) => v.unhashed += 1,
                    _ => v.possibly.push(claim),
                }
            }
            v
        })
        .collect();
    Preview {
        running,
        already,
        verdicts,
    }
}
