//! Karpenter's status conditions as read from an object (`status.conditions`): what a plan's
//! health notes and the drift preview need of each — its type, status, reason, message, when it
//! last changed and which generation of the spec Karpenter observed when it wrote it.

use serde_json::Value as Json;

/// One status condition.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Condition {
    pub kind: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    pub reason: String,
    pub message: String,
    /// RFC 3339, as written (`lastTransitionTime`).
    pub since: String,
    /// The `metadata.generation` Karpenter observed when it wrote the condition.
    pub observed_generation: Option<i64>,
}

impl Condition {
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }

    pub fn is_false(&self) -> bool {
        self.status == "False"
    }
}

/// The conditions of an object's `status` (none when it has no status yet).
pub fn of_status(status: Option<&Json>) -> Vec<Condition> {
    let text = |c: &Json, key: &str| c.get(key).and_then(Json::as_str).unwrap_or_default().to_string();
    status
        .and_then(|s| s.get("conditions"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|c| Condition {
            kind: text(c, "type"),
            status: text(c, "status"),
            reason: text(c, "reason"),
            message: text(c, "message"),
            since: text(c, "lastTransitionTime"),
            observed_generation: c.get("observedGeneration").and_then(Json::as_i64),
        })
        .collect()
}

/// The condition of type `kind`, if there is one.
pub fn find<'c>(conditions: &'c [Condition], kind: &str) -> Option<&'c Condition> {
    conditions.iter().find(|c| c.kind == kind)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{find, of_status};

    #[test]
    fn conditions_are_read_with_their_generation() {
        let status = json!({"conditions": [
            {"type": "SubnetsReady", "status": "False", "reason": "SubnetsNotFound",
             "message": "SubnetSelector did not match any Subnets", "lastTransitionTime": "2026-01-01T00:00:00Z",
             "observedGeneration": 3},
            {"type": "Ready", "status": "False"}
        ]});
        let conditions = of_status(Some(&status));
        let subnets = find(&conditions, "SubnetsReady").expect("SubnetsReady");
        assert!(subnets.is_false());
        assert_eq!(subnets.observed_generation, Some(3));
        assert_eq!(subnets.since, "2026-01-01T00:00:00Z");
        assert_eq!(find(&conditions, "Ready").map(|c| c.reason.as_str()), Some(""));
        assert!(of_status(None).is_empty());
    }
}
