//! Tag reconciliation shared by every AWS part the provider manages (SQS queue, EventBridge
//! rules, IAM roles and instance profiles): from the tags a resource has and the tags it should
//! have, which keys to untag and which pairs to (re)tag. Each service then makes its own
//! untag/tag calls; this is the one place that decides what changes. Also how the provider's
//! default tags and a resource's own tags make the tags a part carries, and back.

use std::collections::BTreeMap;

/// What turns `current` tags into `wanted` tags: untag `remove`, then tag `set`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TagChanges {
    /// Keys present now and not wanted.
    pub remove: Vec<String>,
    /// Pairs missing or with another value now (tag calls upsert, so only these are sent).
    pub set: BTreeMap<String, String>,
}

impl TagChanges {
    /// Nothing to call.
    pub fn is_empty(&self) -> bool {
        self.remove.is_empty() && self.set.is_empty()
    }
}

/// The changes from `current` to `wanted`.
pub fn diff(current: &BTreeMap<String, String>, wanted: &BTreeMap<String, String>) -> TagChanges {
    TagChanges {
        remove: current
            .keys()
            .filter(|k| !wanted.contains_key(*k))
            .cloned()
            .collect(),
        set: wanted
            .iter()
            .filter(|(k, v)| current.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// The tags a part carries: the provider's default tags with the resource's own over them (a
/// resource tag wins for the same key, as in hashicorp/aws).
pub fn merge(
    defaults: &BTreeMap<String, String>,
    tags: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut all = defaults.clone();
    all.extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
    all
}

/// The resource's own part of the tags a part carries (`all`): everything but what the default
/// tags explain, i.e. a pair equal to a default one is left out unless the resource itself sets
/// it (`configured`: the resource's `tags` as last recorded), as hashicorp/aws reads `tags`.
pub fn own_part(
    all: &BTreeMap<String, String>,
    defaults: &BTreeMap<String, String>,
    configured: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    all.iter()
        .filter(|(k, v)| defaults.get(*k) != Some(*v) || configured.get(*k) == Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_tags_win_over_default_tags() {
        let all = merge(
            &map(&[("env", "prod"), ("team", "platform")]),
            &map(&[("team", "karpenter"), ("app", "k")]),
        );
        assert_eq!(all, map(&[("app", "k"), ("env", "prod"), ("team", "karpenter")]));
        assert_eq!(merge(&map(&[]), &map(&[("a", "1")])), map(&[("a", "1")]));
    }

    #[test]
    fn the_own_part_leaves_out_what_the_defaults_explain() {
        let defaults = map(&[("env", "prod"), ("team", "platform")]);
        // a default pair is not the resource's; an overridden key and an extra one are
        let all = map(&[("env", "prod"), ("team", "karpenter"), ("added", "x")]);
        assert_eq!(
            own_part(&all, &defaults, &map(&[])),
            map(&[("added", "x"), ("team", "karpenter")])
        );
        // the resource sets a pair equal to a default one: it stays the resource's
        assert_eq!(
            own_part(&all, &defaults, &map(&[("env", "prod")])),
            map(&[("added", "x"), ("env", "prod"), ("team", "karpenter")])
        );
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn equal_tags_need_no_call() {
        let tags = map(&[("a", "1"), ("b", "2")]);
        assert!(diff(&tags, &tags).is_empty());
        assert!(diff(&map(&[]), &map(&[])).is_empty());
    }

    #[test]
    fn removed_keys_are_untagged_and_only_changed_pairs_are_tagged() {
        let changes = diff(
            &map(&[("keep", "1"), ("gone", "x"), ("edit", "old")]),
            &map(&[("keep", "1"), ("edit", "new"), ("add", "2")]),
        );
        assert_eq!(changes.remove, vec!["gone".to_string()]);
        assert_eq!(changes.set, map(&[("add", "2"), ("edit", "new")]));
    }

    #[test]
    fn clearing_all_tags_only_untags() {
        let changes = diff(&map(&[("a", "1")]), &map(&[]));
        assert_eq!(changes.remove, vec!["a".to_string()]);
        assert!(changes.set.is_empty());
    }
}
