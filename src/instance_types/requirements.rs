//! Karpenter's requirement semantics, restated from `pkg/scheduling/requirement.go` and
//! `requirements.go` of kubernetes-sigs/karpenter: a requirement is a set of label values (or
//! its complement) with optional inclusive integer bounds; requirements on one key intersect;
//! an instance type fits a pool when, for every key both describe, its value lies in the
//! pool's set. Karpenter's corner cases are kept on purpose, so the preview says what
//! Karpenter does:
//!
//! - `Gt n` is `≥ n+1` and `Lt n` is `≤ n-1`; the bounds are kept beside a complement set;
//! - bounds that cross (`Gt 5` with `Lt 3`) turn the key into `DoesNotExist`, which types
//!   without the label satisfy;
//! - a type without a label fits only a requirement that reads as `NotIn` or `DoesNotExist`
//!   after intersection (`NotIn [8]` with `Gt 0` reads as `NotIn`, so types without GPUs fit);
//! - a bound admits only values that parse as integers.
//!
//! [`LabelRequirements`] holds a pool's requirements per (normalised) label key and answers
//! Karpenter's compatibility question for a node's labels, the test of requirement drift.

use std::collections::{BTreeMap, BTreeSet};

/// A requirement operator of the NodePool CRD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
    Gte,
    Lte,
}

impl Operator {
    /// The operator named `s` as the CRD spells it.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "In" => Self::In,
            "NotIn" => Self::NotIn,
            "Exists" => Self::Exists,
            "DoesNotExist" => Self::DoesNotExist,
            "Gt" => Self::Gt,
            "Lt" => Self::Lt,
            "Gte" => Self::Gte,
            "Lte" => Self::Lte,
            _ => return None,
        })
    }

    /// The CRD's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::In => "In",
            Self::NotIn => "NotIn",
            Self::Exists => "Exists",
            Self::DoesNotExist => "DoesNotExist",
            Self::Gt => "Gt",
            Self::Lt => "Lt",
            Self::Gte => "Gte",
            Self::Lte => "Lte",
        }
    }
}

/// One requirement as written: key, operator, values, `minValues`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    pub values: Vec<String>,
    pub min_values: Option<u32>,
}

impl Requirement {
    pub fn new(key: impl Into<String>, operator: Operator, values: &[&str]) -> Self {
        Self {
            key: key.into(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
            min_values: None,
        }
    }

    /// `key Operator [values]` for diagnostics.
    pub fn describe(&self) -> String {
        match self.operator {
            Operator::Exists | Operator::DoesNotExist => format!("{} {}", self.key, self.operator.as_str()),
            op => format!("{} {} [{}]", self.key, op.as_str(), self.values.join(", ")),
        }
    }
}

/// What the requirements on one key allow, as Karpenter holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSet {
    /// The set is every value but `values`.
    complement: bool,
    values: BTreeSet<String>,
    /// Inclusive bounds (`Gt n` is `gte n+1`).
    gte: Option<i64>,
    lte: Option<i64>,
    /// The largest `minValues` of the requirements on the key.
    pub min_values: Option<u32>,
}

/// The reading Karpenter gives a set (its `Operator()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

fn within(value: &str, gte: Option<i64>, lte: Option<i64>) -> bool {
    if gte.is_none() && lte.is_none() {
        return true;
    }
    let Ok(n) = value.parse::<i64>() else {
        return false;
    };
    gte.is_none_or(|g| n >= g) && lte.is_none_or(|l| n <= l)
}

fn max_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

impl ValueSet {
    fn does_not_exist(min_values: Option<u32>) -> Self {
        Self {
            complement: false,
            values: BTreeSet::new(),
            gte: None,
            lte: None,
            min_values,
        }
    }

    /// The set one requirement allows; `None` when a numeric operator's value is not a whole
    /// number (Karpenter refuses such a pool; the schema's validators say so).
    pub fn of(r: &Requirement) -> Option<Self> {
        let number = || r.values.first().and_then(|v| v.parse::<i64>().ok());
        let mut set = Self {
            complement: true,
            values: BTreeSet::new(),
            gte: None,
            lte: None,
            min_values: r.min_values,
        };
        match r.operator {
            Operator::In => {
                set.complement = false;
                set.values = r.values.iter().cloned().collect();
            }
            Operator::NotIn => set.values = r.values.iter().cloned().collect(),
            Operator::Exists => {}
            Operator::DoesNotExist => set.complement = false,
            Operator::Gt => match number()?.checked_add(1) {
                Some(n) => set.gte = Some(n),
                // `Gt` the largest integer matches nothing (Karpenter drops `minValues` here)
                None => return Some(Self::does_not_exist(None)),
            },
            Operator::Lt => set.lte = Some(number()?.saturating_sub(1)),
            Operator::Gte => set.gte = Some(number()?),
            Operator::Lte => set.lte = Some(number()?),
        }
        Some(set)
    }

    /// What both sets allow (Karpenter's `Intersection`).
    pub fn intersect(&self, other: &Self) -> Self {
        let complement = self.complement && other.complement;
        let mut gte = max_opt(self.gte, other.gte);
        let mut lte = min_opt(self.lte, other.lte);
        let min_values = max_opt(self.min_values, other.min_values);
        if let (Some(g), Some(l)) = (gte, lte)
            && g > l
        {
            return Self::does_not_exist(min_values);
        }
        let mut values: BTreeSet<String> = match (self.complement, other.complement) {
            (true, true) => self.values.union(&other.values).cloned().collect(),
            (true, false) => other.values.difference(&self.values).cloned().collect(),
            (false, true) => self.values.difference(&other.values).cloned().collect(),
            (false, false) => self.values.intersection(&other.values).cloned().collect(),
        };
        values.retain(|v| within(v, gte, lte));
        if !complement {
            gte = None;
            lte = None;
        }
        Self {
            complement,
            values,
            gte,
            lte,
            min_values,
        }
    }

    fn reading(&self) -> Reading {
        match (self.complement, self.values.is_empty()) {
            (true, false) => Reading::NotIn,
            (true, true) => Reading::Exists,
            (false, false) => Reading::In,
            (false, true) => Reading::DoesNotExist,
        }
    }

    /// Whether an instance type whose label has `value` (`None`: the type has no such label,
    /// which Karpenter describes as `DoesNotExist`) fits this set (Karpenter's `Intersects`
    /// of the type's requirement, `In [value]` or `DoesNotExist`, with this one).
    pub fn admits(&self, value: Option<&str>) -> bool {
        match value {
            Some(v) => {
                let listed = self.values.contains(v);
                (listed != self.complement) && within(v, self.gte, self.lte)
            }
            None => matches!(self.reading(), Reading::NotIn | Reading::DoesNotExist),
        }
    }
}

/// Karpenter's `NormalizedLabels`: the deprecated label keys it reads as their current names,
/// in requirements and in node labels alike.
pub fn normalized_key(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/zone" => "topology.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/os" => "kubernetes.io/os",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        other => other,
    }
}

/// A list of requirements combined per label key (keys normalised), as Karpenter holds a
/// pool's requirements, with what was written for each key (for messages).
#[derive(Debug, Clone)]
pub struct LabelRequirements {
    keys: BTreeMap<String, (ValueSet, Vec<String>)>,
}

impl LabelRequirements {
    /// `None` when a numeric requirement has no whole number (Karpenter refuses such a pool).
    pub fn new(requirements: &[Requirement]) -> Option<Self> {
        let mut keys: BTreeMap<String, (ValueSet, Vec<String>)> = BTreeMap::new();
        for r in requirements {
            let set = ValueSet::of(r)?;
            let key = normalized_key(&r.key).to_string();
            match keys.remove(&key) {
                Some((before, mut written)) => {
                    written.push(r.describe());
                    keys.insert(key, (set.intersect(&before), written));
                }
                None => {
                    keys.insert(key, (set, vec![r.describe()]));
                }
            }
        }
        Some(Self { keys })
    }

    /// Whether a node with `labels` meets every requirement (Karpenter's `Compatible` of the
    /// node's labels, each an `In [value]`, with the pool's requirements: a key the node lacks
    /// passes only a requirement that reads as `NotIn` or `DoesNotExist`, a value must lie in
    /// the key's set and bounds). `None` when it does; otherwise the first key it fails, with
    /// the node's value and the requirements written on that key.
    pub fn unmet_by(&self, labels: &BTreeMap<String, String>) -> Option<Unmet> {
        let normalised: BTreeMap<&str, &str> = labels
            .iter()
            .map(|(k, v)| (normalized_key(k), v.as_str()))
            .collect();
        self.keys.iter().find_map(|(key, (set, written))| {
            let value = normalised.get(key.as_str()).copied();
            (!set.admits(value)).then(|| Unmet {
                key: key.clone(),
                value: value.map(str::to_string),
                requirements: written.clone(),
            })
        })
    }
}

/// A requirement a node's labels do not meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmet {
    pub key: String,
    /// The node's value, `None` when it has no such label.
    pub value: Option<String>,
    /// The requirements written on the key, e.g. `["kubernetes.io/arch In [arm64]"]`.
    pub requirements: Vec<String>,
}

impl Unmet {
    /// "its label kubernetes.io/arch=amd64 does not meet kubernetes.io/arch In [arm64]".
    pub fn describe(&self) -> String {
        let what = match &self.value {
            Some(v) => format!("its label {}={v}", self.key),
            None => format!("it has no {} label", self.key),
        };
        format!("{what}, which {} requires", self.requirements.join(" and "))
    }
}

#[cfg(test)]
mod tests {
    use super::{Operator, Requirement, ValueSet};

    fn set(op: Operator, values: &[&str]) -> ValueSet {
        ValueSet::of(&Requirement::new("k", op, values)).expect("valid requirement")
    }

    #[test]
    fn each_operator_on_a_value_and_on_no_label() {
        use Operator::*;
        let cases: &[(Operator, &[&str], Option<&str>, bool)] = &[
            (In, &["a", "b"], Some("a"), true),
            (In, &["a"], Some("c"), false),
            (In, &["a"], None, false),
            (NotIn, &["a"], Some("a"), false),
            (NotIn, &["a"], Some("b"), true),
            (NotIn, &["a"], None, true),
            (Exists, &[], Some("x"), true),
            (Exists, &[], None, false),
            (DoesNotExist, &[], Some("x"), false),
            (DoesNotExist, &[], None, true),
            (Gt, &["4"], Some("5"), true),
            (Gt, &["4"], Some("4"), false),
            (Gt, &["4"], Some("x"), false),
            (Gt, &["4"], None, false),
            (Gte, &["4"], Some("4"), true),
            (Lt, &["4"], Some("3"), true),
            (Lt, &["4"], Some("4"), false),
            (Lte, &["4"], Some("4"), true),
            (Gt, &["+4"], Some("5"), true),
        ];
        for (op, values, label, fits) in cases {
            assert_eq!(
                set(*op, values).admits(*label),
                *fits,
                "{op:?} {values:?} on {label:?}"
            );
        }
    }

    #[test]
    fn intersections_keep_karpenters_corner_cases() {
        use Operator::*;
        let both = |a: ValueSet, b: ValueSet| a.intersect(&b);
        // Crossed bounds read as DoesNotExist: a type without the label fits.
        let crossed = both(set(Gt, &["5"]), set(Lt, &["3"]));
        assert!(crossed.admits(None) && !crossed.admits(Some("4")));
        // NotIn beside a bound reads as NotIn: a type without the label fits.
        let not_in_bounded = both(set(NotIn, &["8"]), set(Gt, &["0"]));
        assert!(not_in_bounded.admits(None));
        assert!(not_in_bounded.admits(Some("4")) && !not_in_bounded.admits(Some("8")));
        assert!(!not_in_bounded.admits(Some("0")));
        // A bound alone reads as Exists: it does not.
        assert!(!set(Gt, &["0"]).admits(None));
        // In lists intersect; bounds filter an In list and then drop.
        assert!(both(set(In, &["a", "b"]), set(In, &["b", "c"])).admits(Some("b")));
        let in_bounded = both(set(In, &["2", "4", "x"]), set(Gt, &["3"]));
        assert!(
            in_bounded.admits(Some("4")) && !in_bounded.admits(Some("2")) && !in_bounded.admits(Some("x"))
        );
        // Disjoint In lists leave an empty In: DoesNotExist.
        assert!(both(set(In, &["a"]), set(In, &["b"])).admits(None));
        // min_values is the largest.
        let mut a = Requirement::new("k", In, &["a", "b"]);
        a.min_values = Some(2);
        let mut b = Requirement::new("k", Exists, &[]);
        b.min_values = Some(3);
        let ab = ValueSet::of(&a).map(|x| x.intersect(&ValueSet::of(&b).expect("valid")));
        assert_eq!(ab.and_then(|s| s.min_values), Some(3));
    }

    #[test]
    fn malformed_numbers_are_not_a_set() {
        assert!(ValueSet::of(&Requirement::new("k", Operator::Gt, &["x"])).is_none());
        assert!(ValueSet::of(&Requirement::new("k", Operator::Gt, &[])).is_none());
        let top = ValueSet::of(&Requirement::new("k", Operator::Gt, &[&i64::MAX.to_string()]));
        assert!(top.is_some_and(|s| s.admits(None)));
    }
}
