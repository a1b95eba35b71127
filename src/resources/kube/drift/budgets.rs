//! What a NodePool's disruption budgets let Karpenter replace at a time for drift, in words.
//! Karpenter's arithmetic: a budget counts for drift when it names no reasons or names
//! `Drifted` (an empty list names none); a percentage is of the pool's nodes, rounded up; the
//! smallest of the active budgets wins; none active, nothing limits it. A budget with a
//! `schedule` is active only in its window (UTC cron, for `duration`), so it is said as a
//! window rather than evaluated against the clock.

use serde_json::Value as Json;

/// The reason Karpenter disrupts drifted nodes under (`Drifted` in a budget's `reasons`).
const DRIFTED: &str = "Drifted";

/// One budget, as on the API object (`spec.disruption.budgets[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    pub nodes: String,
    pub schedule: Option<String>,
    pub duration: Option<String>,
    pub reasons: Option<Vec<String>>,
}

/// The budgets of a NodePool's `spec.disruption` (API form); the CRD's default, one budget of
/// `10%`, when it has none.
pub fn from_disruption(disruption: &Json) -> Vec<Budget> {
    let Some(list) = disruption.get("budgets").and_then(Json::as_array) else {
        return vec![Budget {
            nodes: "10%".into(),
            schedule: None,
            duration: None,
            reasons: None,
        }];
    };
    let text = |b: &Json, k: &str| b.get(k).and_then(Json::as_str).map(str::to_string);
    list.iter()
        .map(|b| Budget {
            nodes: text(b, "nodes").unwrap_or_else(|| "10%".into()),
            schedule: text(b, "schedule"),
            duration: text(b, "duration"),
            reasons: b
                .get("reasons")
                .and_then(Json::as_array)
                .map(|r| r.iter().filter_map(Json::as_str).map(str::to_string).collect()),
        })
        .collect()
}

impl Budget {
    fn applies_to_drift(&self) -> bool {
        self.reasons
            .as_ref()
            .is_none_or(|r| r.iter().any(|x| x == DRIFTED))
    }

    /// How many of `nodes` nodes it allows at a time: a whole number as written, a percentage
    /// of the nodes rounded up. `None` for a value Karpenter would refuse.
    pub fn allowed(&self, nodes: usize) -> Option<usize> {
        match self.nodes.strip_suffix('%') {
            Some(pct) => {
                let pct: usize = pct.parse().ok().filter(|p| *p <= 100)?;
                Some((pct * nodes).div_ceil(100))
            }
            None => self.nodes.parse().ok(),
        }
    }

    fn how(&self, nodes: usize) -> String {
        if self.nodes.ends_with('%') {
            format!("budget {} of {nodes} nodes, rounded up", self.nodes)
        } else {
            format!("budget {}", self.nodes)
        }
    }
}

/// What the budgets let Karpenter replace at a time for drift, among `nodes` nodes:
/// "at most 1 node at a time (budget 10% of 5 nodes, rounded up); 0 while the budget
/// scheduled `0 9 * * 1-5` (UTC) for 8h is active".
pub fn allowance(budgets: &[Budget], nodes: usize) -> String {
    let drift: Vec<&Budget> = budgets.iter().filter(|b| b.applies_to_drift()).collect();
    let always = drift
        .iter()
        .filter(|b| b.schedule.is_none())
        .filter_map(|b| b.allowed(nodes).map(|n| (n, b)))
        .min_by_key(|(n, _)| *n);
    let mut text = match always {
        Some((n, b)) => format!(
            "at most {n} {} at a time ({})",
            if n == 1 { "node" } else { "nodes" },
            b.how(nodes)
        ),
        None => "as many at a time as it can place the pods of (no budget limits drift)".to_string(),
    };
    for b in drift.iter().filter(|b| b.schedule.is_some()) {
        let n = b
            .allowed(nodes)
            .map_or_else(|| b.nodes.clone(), |n| n.to_string());
        text.push_str(&format!(
            "; {n} while the budget scheduled `{}` (UTC) for {} is active",
            b.schedule.as_deref().unwrap_or_default(),
            b.duration.as_deref().unwrap_or("its duration")
        ));
    }
    text
}
