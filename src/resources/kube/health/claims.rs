//! The nodes a pool cannot launch or that never join: its NodeClaims (from the plan's one list
//! of them, shared with the drift preview) whose launch failed — `Launched` not True, with the
//! reason Karpenter gave (`LaunchFailed`, `InsufficientFreeAddressesInSubnet`, `Unauthorized`,
//! …: kubernetes-sigs/karpenter `pkg/controllers/nodeclaim/lifecycle/launch.go`) — or that
//! launched and did not register within Karpenter's registration timeout (15 minutes,
//! `lifecycle/liveness.go`; Karpenter then deletes them and tries again). Summed up in one
//! warning: how many, the most recent reason and message, the instance types involved.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::conditions::ago;
use crate::k8s::conditions::Condition;
use crate::k8s::plan_reads::NodeClaim;

/// Karpenter's registration timeout.
pub(super) const REGISTRATION_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The instance-type label Karpenter puts on a launched NodeClaim.
const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";

/// Why one NodeClaim is in trouble.
struct Trouble<'c> {
    claim: &'c NodeClaim,
    condition: &'c Condition,
}

/// The launch failed: Karpenter wrote a reason on a `Launched` that is not True.
fn launch_failed(claim: &NodeClaim) -> Option<&Condition> {
    claim
        .launched
        .as_ref()
        .filter(|c| !c.is_true() && !c.reason.is_empty() && c.reason != "AwaitingReconciliation")
}

/// Launched, and not registered within the timeout.
fn never_joined(claim: &NodeClaim, now: Timestamp) -> Option<&Condition> {
    if !claim.launched.as_ref().is_some_and(Condition::is_true) {
        return None;
    }
    let registered = claim.registered.as_ref();
    if registered.is_some_and(Condition::is_true) {
        return None;
    }
    let created: Timestamp = claim.created.parse().ok()?;
    let age = Duration::try_from(now.duration_since(created)).ok()?;
    (age >= REGISTRATION_TIMEOUT).then_some(registered.or(claim.launched.as_ref())?)
}

/// The warning about pool `pool`'s NodeClaims, when some are in trouble: (summary, detail).
pub(super) fn trouble(pool: &str, claims: &[NodeClaim], now: Timestamp) -> Option<(String, String)> {
    let mine: Vec<&NodeClaim> = claims
        .iter()
        .filter(|c| c.pool() == Some(pool) && !c.deleting)
        .collect();
    let failed: Vec<Trouble<'_>> = mine
        .iter()
        .filter_map(|claim| launch_failed(claim).map(|condition| Trouble { claim, condition }))
        .collect();
    let unjoined: Vec<Trouble<'_>> = mine
        .iter()
        .filter_map(|claim| never_joined(claim, now).map(|condition| Trouble { claim, condition }))
        .collect();
    if failed.is_empty() && unjoined.is_empty() {
        return None;
    }
    let latest = failed
        .iter()
        .chain(&unjoined)
        .max_by(|a, b| a.condition.since.cmp(&b.condition.since))?;
    let types: BTreeSet<&str> = failed
        .iter()
        .chain(&unjoined)
        .filter_map(|t| t.claim.labels.get(INSTANCE_TYPE).map(String::as_str))
        .collect();
    let mut counts = Vec::new();
    if !failed.is_empty() {
        counts.push(format!("{} could not launch", failed.len()));
    }
    if !unjoined.is_empty() {
        counts.push(format!(
            "{} launched but did not join the cluster within Karpenter's {} minutes",
            unjoined.len(),
            REGISTRATION_TIMEOUT.as_secs() / 60
        ));
    }
    let when = ago(&latest.condition.since, now).map_or_else(String::new, |a| format!(", {a} ago"));
    let types = if types.is_empty() {
        "none chosen yet (Karpenter sets a NodeClaim's type when its launch succeeds)".to_string()
    } else {
        types.into_iter().collect::<Vec<_>>().join(", ")
    };
    let summary = format!(
        "NodePool {pool:?}: {} of its {} NodeClaims are failing",
        failed.len() + unjoined.len(),
        mine.len()
    );
    let detail = format!(
        "Of the {} NodeClaims of this pool, {}. The most recent, {} ({}{when}): {}{}. Instance types involved: {types}. \
         Karpenter retries (it deletes a NodeClaim whose launch or registration times out); `kubectl describe \
         nodeclaim {}` shows the whole story.",
        mine.len(),
        counts.join(" and "),
        latest.claim.name,
        if latest.condition.reason.is_empty() {
            latest.condition.kind.as_str()
        } else {
            latest.condition.reason.as_str()
        },
        latest.condition.message,
        if latest.condition.message.ends_with('.') {
            ""
        } else {
            "."
        },
        latest.claim.name,
    );
    Some((summary, detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(
        name: &str,
        launched: Option<(&str, &str, &str)>,
        registered: Option<&str>,
        created: &str,
    ) -> NodeClaim {
        let condition = |kind: &str, status: &str, reason: &str, message: &str| Condition {
            kind: kind.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            since: created.into(),
            observed_generation: Some(1),
        };
        NodeClaim {
            name: name.into(),
            labels: [("karpenter.sh/nodepool".to_string(), "general".to_string())]
                .into_iter()
                .collect(),
            launched: launched.map(|(s, r, m)| condition("Launched", s, r, m)),
            registered: registered.map(|s| {
                condition(
                    "Registered",
                    s,
                    "NodeNotFound",
                    "Node not registered with cluster",
                )
            }),
            created: created.into(),
            ..NodeClaim::default()
        }
    }

    #[test]
    fn failed_launches_and_nodes_that_never_joined_are_summed_up() {
        let now: Timestamp = "2026-11-28T12:00:00Z".parse().expect("time");
        let mut joined_late = claim(
            "general-c",
            Some(("True", "Launched", "")),
            Some("Unknown"),
            "2026-11-28T11:30:00Z",
        );
        joined_late.labels.insert(INSTANCE_TYPE.into(), "m5.large".into());
        let claims = vec![
            claim(
                "general-a",
                Some(("Unknown", "LaunchFailed", "Instance launch failed")),
                None,
                "2026-11-28T11:58:00Z",
            ),
            claim(
                "general-b",
                Some(("True", "Launched", "")),
                Some("True"),
                "2026-11-28T10:00:00Z",
            ),
            joined_late,
            // launched 5 minutes ago: within the timeout
            claim(
                "general-d",
                Some(("True", "Launched", "")),
                Some("Unknown"),
                "2026-11-28T11:55:00Z",
            ),
        ];
        let (summary, detail) = trouble("general", &claims, now).expect("trouble");
        assert_eq!(summary, "NodePool \"general\": 2 of its 4 NodeClaims are failing");
        assert!(
            detail.contains("1 could not launch and 1 launched but did not join"),
            "{detail}"
        );
        assert!(
            detail.contains("general-a (LaunchFailed, 2m ago): Instance launch failed."),
            "{detail}"
        );
        assert!(detail.contains("Instance types involved: m5.large"), "{detail}");
        assert!(trouble("other", &claims, now).is_none());
    }

    #[test]
    fn a_healthy_pool_says_nothing() {
        let now: Timestamp = "2026-11-28T12:00:00Z".parse().expect("time");
        let claims = vec![claim(
            "general-b",
            Some(("True", "Launched", "")),
            Some("True"),
            "2026-11-28T10:00:00Z",
        )];
        assert!(trouble("general", &claims, now).is_none());
        let awaiting = vec![claim(
            "general-e",
            Some(("Unknown", "AwaitingReconciliation", "")),
            None,
            "2026-11-28T11:59:00Z",
        )];
        assert!(trouble("general", &awaiting, now).is_none());
    }
}
