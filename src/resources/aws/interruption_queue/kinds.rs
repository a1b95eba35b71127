//! The event kinds Karpenter handles, one EventBridge rule each, and the names of those rules:
//! the default prefix, shortened names, and reading a kind back from a rule's name or pattern.

use std::collections::BTreeMap;

use crate::aws_names;

/// EventBridge rule names are at most 64 characters.
pub const RULE_NAME_MAX: usize = aws_names::EVENTBRIDGE_RULE_NAME_MAX;

/// One kind of event Karpenter handles, and its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleKind {
    /// The key in `enabled_rules` and `rules`.
    pub key: &'static str,
    /// Appended to `rule_name_prefix` to form the rule name.
    pub suffix: &'static str,
    pub source: &'static str,
    pub detail_type: &'static str,
}

/// The five rules of the upstream template, in its order.
pub const RULE_KINDS: &[RuleKind] = &[
    RuleKind {
        key: "scheduled_change",
        suffix: "ScheduledChange",
        source: "aws.health",
        detail_type: "AWS Health Event",
    },
    RuleKind {
        key: "spot_interruption",
        suffix: "SpotInterruption",
        source: "aws.ec2",
        detail_type: "EC2 Spot Instance Interruption Warning",
    },
    RuleKind {
        key: "rebalance",
        suffix: "Rebalance",
        source: "aws.ec2",
        detail_type: "EC2 Instance Rebalance Recommendation",
    },
    RuleKind {
        key: "instance_state_change",
        suffix: "InstanceStateChange",
        source: "aws.ec2",
        detail_type: "EC2 Instance State-change Notification",
    },
    RuleKind {
        key: "capacity_reservation_interruption",
        suffix: "CapacityReservationInterruption",
        source: "aws.ec2",
        detail_type: "EC2 Capacity Reservation Instance Interruption Warning",
    },
];

pub(super) const KIND_KEYS: &[&str] = &[
    "scheduled_change",
    "spot_interruption",
    "rebalance",
    "instance_state_change",
    "capacity_reservation_interruption",
];

/// The longest rule-name suffix; a prefix may use the rest of the 64 characters.
pub fn max_prefix_len() -> usize {
    RULE_NAME_MAX - RULE_KINDS.iter().map(|k| k.suffix.len()).max().unwrap_or(0)
}

pub fn kind(key: &str) -> Option<&'static RuleKind> {
    RULE_KINDS.iter().find(|k| k.key == key)
}

impl RuleKind {
    /// The rule's event pattern, as compact JSON with sorted keys.
    pub fn event_pattern(&self) -> String {
        serde_json::json!({ "source": [self.source], "detail-type": [self.detail_type] }).to_string()
    }

    pub fn rule_name(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.suffix)
    }

    pub(super) fn description(&self) -> String {
        format!(
            "Karpenter interruption handling: {} events to the interruption queue",
            self.detail_type
        )
    }
}

/// Whether a tag key is the provider's bookkeeping rather than the user's.
/// FNV-1a, for a short stable suffix when a name has to be shortened.
pub(super) fn short_hash(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{:04x}", h & 0xffff)
}

/// The cluster an imported queue belongs to: the one its cluster tag names (queues this
/// provider created); else the queue's own name when its default rule prefix is the one the
/// rules carry (the upstream convention, and the only reading of a shortened, hashed prefix);
/// else the cluster spelled out in a `Karpenter-<cluster>-` prefix that is not a shortened one;
/// else the queue's name.
pub(crate) fn cluster_for_import(
    queue: &str,
    cluster_tag: Option<&str>,
    rule_prefix: Option<&str>,
) -> String {
    if let Some(cluster) = cluster_tag.filter(|c| !c.is_empty()) {
        return cluster.to_string();
    }
    let Some(p) = rule_prefix else {
        return queue.to_string();
    };
    if default_rule_prefix(queue) == p {
        return queue.to_string();
    }
    p.strip_prefix("Karpenter-")
        .and_then(|c| c.strip_suffix('-'))
        .filter(|c| !c.is_empty() && default_rule_prefix(c) == p && !is_shortened_prefix(p))
        .map_or_else(|| queue.to_string(), str::to_string)
}

/// Whether `prefix` has the shape of a shortened default prefix (`Karpenter-<head>-<4 hex>-`
/// at the full length), which no cluster name can be read back from.
pub(super) fn is_shortened_prefix(prefix: &str) -> bool {
    let Some(rest) = prefix.strip_suffix('-') else {
        return false;
    };
    let hash = rest.rsplit('-').next().unwrap_or_default();
    prefix.len() == max_prefix_len() && hash.len() == 4 && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The default rule-name prefix for a cluster: `Karpenter-<cluster>-`, shortened (with a hash
/// of the full name, so two long names stay apart) to fit the 64-character rule-name limit.
pub fn default_rule_prefix(cluster: &str) -> String {
    let full = format!("Karpenter-{cluster}-");
    let max = max_prefix_len();
    if full.len() <= max {
        return full;
    }
    // "Karpenter-" + head + "-" + 4 hex + "-"
    let head_len = max - "Karpenter-".len() - 6;
    let head: String = cluster.chars().take(head_len).collect();
    format!("Karpenter-{head}-{}-", short_hash(cluster))
}

/// The tag terraform-aws-eks's Karpenter module puts on its rules: the cluster's name.
pub(super) const MODULE_CLUSTER_TAG: &str = "ClusterName";

/// The kind of rule an event pattern is: the one whose source and detail type it names (rules
/// made by others spell the same pattern with other whitespace or key order).
pub(crate) fn kind_of_pattern(pattern: &str) -> Option<&'static RuleKind> {
    let p: serde_json::Value = serde_json::from_str(pattern).ok()?;
    let first = |key: &str| match &p[key] {
        serde_json::Value::Array(a) if a.len() == 1 => a[0].as_str().map(str::to_string),
        serde_json::Value::String(s) => Some(s.clone()),
        _ => None,
    };
    let (source, detail_type) = (first("source")?, first("detail-type")?);
    RULE_KINDS
        .iter()
        .find(|k| k.source == source && k.detail_type == detail_type)
}

/// The queue name an import id names: a queue name, or a queue URL (its last path segment).
pub fn queue_name_from_import_id(id: &str) -> Option<String> {
    let id = id.trim();
    let name = if id.starts_with("https://") || id.starts_with("http://") {
        id.trim_end_matches('/').rsplit('/').next()?
    } else {
        id
    };
    let standard = aws_names::sqs_queue_name(name) == Ok(aws_names::QueueKind::Standard);
    standard.then(|| name.to_string())
}

/// Splits a rule name into (prefix, kind) when it ends with a known kind's suffix.
pub fn split_rule_name(name: &str) -> Option<(&str, &'static RuleKind)> {
    RULE_KINDS
        .iter()
        .filter_map(|k| name.strip_suffix(k.suffix).map(|p| (p, k)))
        .find(|(p, _)| !p.is_empty())
}

/// The rule-name prefix that import reads from the names of the rules targeting a queue: that
/// of the first name ending with a kind's suffix.
pub(crate) fn rule_prefix_of<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names.into_iter().find_map(|n| split_rule_name(n).map(|(p, _)| p))
}

/// The name of the rule of kind `k` given `rule_names` and the prefix.
pub(super) fn rule_name_in(names: &BTreeMap<String, String>, prefix: &str, k: &RuleKind) -> String {
    names.get(k.key).cloned().unwrap_or_else(|| k.rule_name(prefix))
}
