//! The requirements Karpenter v0.32's mutating admission webhook appended to every Provisioner
//! it admitted, and how they are kept out of Terraform's view.
//!
//! On create and update the webhook added, for each key no requirement constrained:
//! `kubernetes.io/os` In [linux], `kubernetes.io/arch` In [amd64], `karpenter.sh/capacity-type`
//! In [on-demand]; and, when nothing constrained the instance type, family, category or
//! generation, `karpenter.k8s.aws/instance-category` In [c, m, r] with
//! `karpenter.k8s.aws/instance-generation` Gt [2]. Read back, those entries would be a diff
//! against every configuration that leaves the keys open (the reason `kubernetes_manifest` users
//! set `computed_fields = ["spec.requirements"]`). So the state drops exactly the entries the
//! webhook would have added to the requirements Terraform wrote; anything else, including a
//! defaulted entry edited outside Terraform, stays visible as drift.

use std::collections::BTreeSet;

use crate::terraform::tfvalue::Value;

/// Instance-shape keys whose presence stops the category/generation defaults.
const INSTANCE_KEYS: &[&str] = &[
    "node.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-generation",
];

/// A requirement as the webhook wrote it.
struct Added {
    key: &'static str,
    operator: &'static str,
    values: &'static [&'static str],
}

/// The stable name of a label key (legacy beta spellings count as their stable names).
fn normalised(key: &str) -> &str {
    match key {
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/os" => "kubernetes.io/os",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        other => other,
    }
}

/// One default per key, each added when no requirement has its key.
const PER_KEY: &[Added] = &[
    Added {
        key: "kubernetes.io/os",
        operator: "In",
        values: &["linux"],
    },
    Added {
        key: "kubernetes.io/arch",
        operator: "In",
        values: &["amd64"],
    },
    Added {
        key: "karpenter.sh/capacity-type",
        operator: "In",
        values: &["on-demand"],
    },
];

/// Added together when no requirement has any of [`INSTANCE_KEYS`].
const INSTANCE_SHAPE: &[Added] = &[
    Added {
        key: "karpenter.k8s.aws/instance-category",
        operator: "In",
        values: &["c", "m", "r"],
    },
    Added {
        key: "karpenter.k8s.aws/instance-generation",
        operator: "Gt",
        values: &["2"],
    },
];

/// What the webhook appends to requirements constraining `keys` (normalised).
fn added_for(keys: &BTreeSet<&str>) -> Vec<&'static Added> {
    let mut out: Vec<&Added> = PER_KEY.iter().filter(|a| !keys.contains(a.key)).collect();
    if !INSTANCE_KEYS.iter().any(|k| keys.contains(k)) {
        out.extend(INSTANCE_SHAPE);
    }
    out
}

/// What the webhook appends to requirements on `keys`, as (key, operator, values, why).
pub fn appended_to(
    keys: &[&str],
) -> Vec<(&'static str, &'static str, &'static [&'static str], &'static str)> {
    let keys: BTreeSet<&str> = keys.iter().map(|k| normalised(k)).collect();
    added_for(&keys)
        .into_iter()
        .map(|a| {
            let why = if INSTANCE_SHAPE.iter().any(|s| std::ptr::eq(s, a)) {
                "the default Karpenter v0.32's webhook adds when no requirement names the instance type, family, \
                 category or generation"
            } else {
                "the default Karpenter v0.32's webhook adds when no requirement names this key"
            };
            (a.key, a.operator, a.values, why)
        })
        .collect()
}

fn matches(entry: &Value, added: &Added) -> bool {
    let values: Option<Vec<&str>> = entry
        .get("values")
        .and_then(Value::as_elements)
        .map(|vs| vs.iter().filter_map(Value::as_str).collect());
    entry.get("key").and_then(Value::as_str) == Some(added.key)
        && entry.get("operator").and_then(Value::as_str) == Some(added.operator)
        && values.as_deref() == Some(added.values)
}

fn keys_of(entries: &[Value]) -> BTreeSet<&str> {
    entries
        .iter()
        .filter_map(|r| r.get("key").and_then(Value::as_str))
        .map(normalised)
        .collect()
}

/// Removes from `state.requirements` the entries the webhook appended to the requirements
/// Terraform wrote, as known from `base` (the planned value after an apply, the prior state on
/// refresh). Where `base` has no requirements (none configured, or an import, where what was
/// written is unknown), the appended entries are the longest tail that is exactly what the
/// webhook adds to the entries before it.
pub fn drop_webhook_defaults(state: &mut Value, base: &Value) {
    let written = base
        .get("requirements")
        .filter(|r| r.is_wholly_known())
        .and_then(Value::as_elements);
    let Value::Object(fields) = state else {
        return;
    };
    let Some(Value::List(entries)) = fields.get_mut("requirements") else {
        return;
    };
    let kept: Vec<Value> = match written {
        Some(written) => {
            // Each default the webhook added to what was written removes one equal entry; an
            // entry edited outside Terraform matches none and stays visible as drift.
            let mut candidates = added_for(&keys_of(written));
            entries
                .drain(..)
                .filter(|entry| match candidates.iter().position(|c| matches(entry, c)) {
                    Some(i) => {
                        candidates.remove(i);
                        false
                    }
                    None => true,
                })
                .collect()
        }
        None => {
            let appended = (0..=entries.len())
                .rev()
                .find(|&k| {
                    let (before, tail) = entries.split_at(entries.len() - k);
                    let added = added_for(&keys_of(before));
                    added.len() == tail.len() && tail.iter().zip(&added).all(|(e, a)| matches(e, a))
                })
                .unwrap_or(0);
            entries.truncate(entries.len() - appended);
            std::mem::take(entries)
        }
    };
    fields.insert(
        "requirements".into(),
        if kept.is_empty() && written.is_none() {
            Value::Null
        } else {
            Value::List(kept)
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::values::{object, string_list};

    fn req(key: &str, op: &str, values: &[&str]) -> Value {
        object([
            ("key", Value::string(key)),
            ("operator", Value::string(op)),
            ("values", string_list(values.iter().copied())),
        ])
    }

    fn with(reqs: Vec<Value>) -> Value {
        object([("requirements", Value::List(reqs))])
    }

    fn defaults() -> Vec<Value> {
        vec![
            req("kubernetes.io/os", "In", &["linux"]),
            req("kubernetes.io/arch", "In", &["amd64"]),
            req("karpenter.sh/capacity-type", "In", &["on-demand"]),
            req("karpenter.k8s.aws/instance-category", "In", &["c", "m", "r"]),
            req("karpenter.k8s.aws/instance-generation", "Gt", &["2"]),
        ]
    }

    #[test]
    fn all_defaults_added_to_no_requirements_are_dropped() {
        let mut state = with(defaults());
        drop_webhook_defaults(&mut state, &object([("requirements", Value::Null)]));
        assert_eq!(state.get("requirements"), Some(&Value::Null));
    }

    #[test]
    fn defaults_for_constrained_keys_are_kept_as_the_users() {
        let spot = req("karpenter.sh/capacity-type", "In", &["spot"]);
        let arm = req("beta.kubernetes.io/arch", "In", &["arm64"]);
        let base = with(vec![spot.clone(), arm.clone()]);
        let mut state = with(
            [
                vec![spot.clone(), arm.clone()],
                vec![defaults()[0].clone()],
                defaults()[3..].to_vec(),
            ]
            .concat(),
        );
        drop_webhook_defaults(&mut state, &base);
        assert_eq!(state, with(vec![spot, arm]));
    }

    #[test]
    fn a_users_entry_equal_to_a_default_stays_when_the_base_has_its_key() {
        let on_demand = req("karpenter.sh/capacity-type", "In", &["on-demand"]);
        let base = with(vec![on_demand.clone()]);
        let mut state = with(vec![on_demand.clone()]);
        drop_webhook_defaults(&mut state, &base);
        assert_eq!(state, with(vec![on_demand]));
    }

    #[test]
    fn without_a_base_only_a_tail_the_webhook_would_add_is_dropped() {
        let on_demand = req("karpenter.sh/capacity-type", "In", &["on-demand"]);
        let family = req("karpenter.k8s.aws/instance-family", "In", &["m5"]);
        // Imported from a cluster without the webhook: nothing looks appended.
        let mut state = with(vec![on_demand.clone(), family.clone()]);
        drop_webhook_defaults(&mut state, &object([("requirements", Value::Null)]));
        assert_eq!(state, with(vec![on_demand.clone(), family.clone()]));
        // Imported with the webhook's os and arch appended to the user's two entries.
        let mut state = with(vec![
            on_demand.clone(),
            family.clone(),
            defaults()[0].clone(),
            defaults()[1].clone(),
        ]);
        drop_webhook_defaults(&mut state, &Value::Null);
        assert_eq!(state, with(vec![on_demand, family]));
        // An out-of-band edit of a default with no base: the edited entry is kept.
        let windows = req("kubernetes.io/os", "In", &["windows"]);
        let mut state = with([vec![windows.clone()], defaults()[1..].to_vec()].concat());
        drop_webhook_defaults(&mut state, &Value::Null);
        assert_eq!(state, with(vec![windows]));
    }

    #[test]
    fn a_defaulted_key_edited_outside_terraform_stays_visible() {
        let windows = req("kubernetes.io/os", "In", &["windows"]);
        let mut state = with([vec![windows.clone()], defaults()[1..].to_vec()].concat());
        drop_webhook_defaults(&mut state, &with(vec![]));
        assert_eq!(state, with(vec![windows]));
    }
}
