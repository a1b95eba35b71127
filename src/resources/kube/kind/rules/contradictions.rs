//! Requirements that can never hold together. Karpenter intersects the requirements on one
//! key, so `karpenter.sh/capacity-type In [spot]` beside `… In [on-demand]` applies cleanly and
//! then never launches a node. Such a pair is a warning at plan, on the requirement that makes
//! the key impossible, saying why.

use std::collections::BTreeSet;

use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

/// What the requirements seen so far allow for one key.
#[derive(Debug, Default)]
struct Allowed {
    /// An `In`, `Exists` or comparison requires the label.
    required: bool,
    /// A `DoesNotExist` requires it to be absent.
    forbidden: bool,
    /// The values `In` allows (the intersection of every `In`).
    within: Option<BTreeSet<String>>,
    excluded: BTreeSet<String>,
    /// Inclusive bounds from `Gt`/`Gte`/`Lt`/`Lte`.
    low: Option<i64>,
    high: Option<i64>,
}

impl Allowed {
    /// Adds a requirement; says why the key can no longer hold, if it cannot.
    fn add(&mut self, operator: &str, values: &[String]) -> Option<String> {
        let number = || {
            values
                .first()
                .and_then(|v| v.trim_start_matches('+').parse::<i64>().ok())
        };
        match operator {
            "In" => {
                let set: BTreeSet<String> = values.iter().cloned().collect();
                self.within = Some(match self.within.take() {
                    Some(before) => before.intersection(&set).cloned().collect(),
                    None => set,
                });
                self.required = true;
            }
            "NotIn" => self.excluded.extend(values.iter().cloned()),
            "Exists" => self.required = true,
            "DoesNotExist" => self.forbidden = true,
            "Gt" | "Gte" => {
                let n = number()?;
                let low = if operator == "Gt" { n.saturating_add(1) } else { n };
                self.low = Some(self.low.map_or(low, |l| l.max(low)));
                self.required = true;
            }
            "Lt" | "Lte" => {
                let n = number()?;
                let high = if operator == "Lt" { n.saturating_sub(1) } else { n };
                self.high = Some(self.high.map_or(high, |h| h.min(high)));
                self.required = true;
            }
            _ => return None,
        }
        self.impossible(operator)
    }

    /// Why the key can no longer hold, after a requirement with `operator` was added.
    fn impossible(&self, operator: &str) -> Option<String> {
        if self.required && self.forbidden {
            return Some(if operator == "DoesNotExist" {
                "it requires the label to be absent, and an earlier requirement requires it".into()
            } else {
                "it requires the label, and an earlier requirement (DoesNotExist) requires it to be absent"
                    .into()
            });
        }
        if let (Some(low), Some(high)) = (self.low, self.high)
            && low > high
        {
            return Some(format!("no whole number is at least {low} and at most {high}"));
        }
        let within = self.within.as_ref()?;
        let left: Vec<&String> = within
            .iter()
            .filter(|v| !self.excluded.contains(*v))
            .filter(|v| match v.trim_start_matches('+').parse::<i64>() {
                Ok(n) => self.low.is_none_or(|l| n >= l) && self.high.is_none_or(|h| n <= h),
                Err(_) => self.low.is_none() && self.high.is_none(),
            })
            .collect();
        left.is_empty().then(|| {
            if within.is_empty() {
                "no value is in every `In` list of this key".to_string()
            } else {
                "every value its `In` lists allow is excluded by another requirement on this key".to_string()
            }
        })
    }
}

/// What a pool's impossible requirements cost.
pub const NO_NODE: &str = "no node can satisfy them, so Karpenter launches none for them and pods that need them \
     stay pending";
/// What an overlay's impossible requirements cost.
pub const NO_INSTANCE_TYPE: &str = "no instance type can satisfy them, so the overlay applies to nothing";

/// Warns on each requirement of `requirements` (a list of `{ key, operator, values }`) that
/// makes its key impossible together with the ones before it, saying what that costs
/// (`consequence`). Unknown values are skipped.
pub fn warn_contradictions(
    requirements: &Value,
    path: &AttributePath,
    consequence: &str,
    diags: &mut Diagnostics,
) {
    let Some(items) = requirements.as_elements() else {
        return;
    };
    let mut keys: std::collections::BTreeMap<String, (Allowed, Vec<usize>, bool)> = Default::default();
    for (i, r) in items.iter().enumerate() {
        let (Some(key), Some(operator)) = (
            r.get("key").and_then(Value::as_str),
            r.get("operator").and_then(Value::as_str),
        ) else {
            continue;
        };
        let values = r.get("values").unwrap_or(&Value::Null);
        if values.is_unknown()
            || values
                .as_elements()
                .is_some_and(|v| v.iter().any(Value::is_unknown))
        {
            continue;
        }
        let values: Vec<String> = values
            .as_elements()
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let (allowed, seen, warned) = keys.entry(key.to_string()).or_default();
        let why = allowed.add(operator, &values);
        seen.push(i);
        if let Some(why) = why
            && !*warned
        {
            *warned = true;
            let earlier: Vec<String> = seen[..seen.len() - 1]
                .iter()
                .map(|j| path.index(*j).to_string())
                .collect();
            diags.warning_at(
                &path.index(i),
                format!("Requirements on {key} can never hold together"),
                format!(
                    "This requirement on {key} ({operator} {values:?}) contradicts {}: {why}. Karpenter intersects \
                     the requirements on one key: {consequence}. Keep one requirement per key, or values that \
                     overlap.",
                    earlier.join(", ")
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(j: &serde_json::Value) -> Value {
        match j {
            serde_json::Value::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), value(v))).collect())
            }
            serde_json::Value::Array(a) => Value::List(a.iter().map(value).collect()),
            serde_json::Value::String(s) => Value::string(s.clone()),
            _ => Value::Null,
        }
    }

    fn warnings(requirements: serde_json::Value) -> Vec<(String, String)> {
        let value = value(&requirements);
        let mut d = Diagnostics::new();
        warn_contradictions(
            &value,
            &AttributePath::root().attr("requirements"),
            NO_NODE,
            &mut d,
        );
        d.iter()
            .map(|d| {
                (
                    d.path.as_ref().map(ToString::to_string).unwrap_or_default(),
                    d.detail.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn disjoint_in_lists_warn_on_the_second() {
        let w = warnings(json!([
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ]));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].0, "requirements[2]");
        assert!(w[0].1.contains("contradicts requirements[0]"), "{w:?}");
    }

    #[test]
    fn other_impossible_pairs_and_possible_ones() {
        let one = |a: serde_json::Value, b: serde_json::Value| warnings(json!([a, b])).len();
        let r = |op: &str, values: &[&str]| json!({"key": "k", "operator": op, "values": values});
        assert_eq!(one(r("In", &["a"]), r("NotIn", &["a"])), 1);
        assert_eq!(one(r("Exists", &[]), r("DoesNotExist", &[])), 1);
        assert_eq!(one(r("DoesNotExist", &[]), r("In", &["a"])), 1);
        assert_eq!(one(r("Gt", &["5"]), r("Lt", &["6"])), 1);
        assert_eq!(one(r("In", &["2", "3"]), r("Gt", &["3"])), 1);
        assert_eq!(one(r("In", &["a", "b"]), r("In", &["b"])), 0);
        assert_eq!(one(r("In", &["a", "b"]), r("NotIn", &["a"])), 0);
        assert_eq!(one(r("Gt", &["2"]), r("Lt", &["4"])), 0);
        assert_eq!(one(r("Gte", &["3"]), r("Lte", &["3"])), 0);
        assert_eq!(one(r("NotIn", &["a"]), r("DoesNotExist", &[])), 0);
    }
}
