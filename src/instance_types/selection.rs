//! Which instance types a list of requirements selects, and the three ways a pool can select
//! nothing useful: requirements that match no type (and which one removed the last
//! candidates), a `minValues` the matching types cannot meet, and `limits` that no matching
//! type fits under.
//!
//! Requirements are taken in order; those on keys the data does not describe ([`described`])
//! are skipped. Indexes in the answers are positions in the slice given, so a caller that
//! appends labels or defaults after the written requirements can say where each came from.

use std::collections::{BTreeMap, BTreeSet};

use super::requirements::{Requirement, ValueSet};
use super::{Flavor, InstanceType, described};

/// The combined requirements of a pool on the keys the data describes.
#[derive(Debug, Clone)]
pub struct Filter {
    keys: BTreeMap<usize, ValueSet>,
}

impl Filter {
    /// The requirements combined per key as Karpenter combines them; `None` when one on a
    /// described key is malformed (a numeric operator without a whole number).
    pub fn new(requirements: &[Requirement], flavor: Flavor) -> Option<Self> {
        let mut keys: BTreeMap<usize, ValueSet> = BTreeMap::new();
        for r in requirements {
            let Some(index) = described(&r.key, flavor) else {
                continue;
            };
            let set = ValueSet::of(r)?;
            let combined = match keys.remove(&index) {
                Some(before) => set.intersect(&before),
                None => set,
            };
            keys.insert(index, combined);
        }
        Some(Self { keys })
    }

    /// Whether `t` fits every combined requirement.
    pub fn admits<T: InstanceType + ?Sized>(&self, t: &T) -> bool {
        self.keys.iter().all(|(index, set)| set.admits(t.label(*index)))
    }

    /// The largest `minValues` per described key (label index), where one is set.
    fn min_values(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.keys
            .iter()
            .filter_map(|(index, set)| set.min_values.map(|m| (*index, m)))
    }
}

/// The types of `types` that `requirements` select, in order; `None` when a requirement on a
/// described key is malformed.
pub fn select<'a, T: InstanceType>(
    types: &'a [T],
    requirements: &[Requirement],
    flavor: Flavor,
) -> Option<Vec<&'a T>> {
    let filter = Filter::new(requirements, flavor)?;
    Some(types.iter().filter(|t| filter.admits(*t)).collect())
}

/// How many of `types` the requirements select (without collecting them).
fn count<T: InstanceType>(types: &[T], filter: &Filter) -> usize {
    types.iter().filter(|t| filter.admits(*t)).count()
}

/// The requirement whose addition removed the last candidates, and what the ones before it
/// left.
#[derive(Debug)]
pub struct Emptied<'a, T> {
    /// Position of the requirement in the slice given.
    pub index: usize,
    /// The types the requirements before it selected (never empty).
    pub before: Vec<&'a T>,
}

/// When `requirements` select none of `types`: the last requirement before which something was
/// still selected. (Karpenter's intersections are not always monotone, e.g. a `NotIn` after a
/// bound lets types without the label back in, so this looks for the last non-empty prefix, not
/// the first empty one.) `None` when something is selected or a requirement is malformed.
pub fn what_emptied<'a, T: InstanceType>(
    types: &'a [T],
    requirements: &[Requirement],
    flavor: Flavor,
) -> Option<Emptied<'a, T>> {
    let all = Filter::new(requirements, flavor)?;
    if count(types, &all) > 0 || types.is_empty() {
        return None;
    }
    let mut last_non_empty = 0;
    // The prefix before the first requirement selects everything.
    let mut previous_non_empty = true;
    for end in 1..requirements.len() {
        // A requirement on a key left alone changes nothing: its prefix selects what the one
        // before did.
        if described(&requirements[end - 1].key, flavor).is_some() {
            let prefix = Filter::new(&requirements[..end], flavor)?;
            previous_non_empty = count(types, &prefix) > 0;
        }
        if previous_non_empty {
            last_non_empty = end;
        }
    }
    let before = Filter::new(&requirements[..last_non_empty], flavor)?;
    Some(Emptied {
        index: last_non_empty,
        before: types.iter().filter(|t| before.admits(*t)).collect(),
    })
}

/// A `minValues` the selected types cannot meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinValuesShort {
    /// Position of the requirement that asks for the largest `minValues` on the key.
    pub index: usize,
    pub key: String,
    pub wanted: u32,
    /// The distinct values of the key among the selected types.
    pub found: BTreeSet<String>,
}

/// Every described key whose (largest) `minValues` the `selected` types do not meet: they have
/// fewer distinct values of the key than asked (Karpenter's `SatisfiesMinValues`, before it cuts
/// the list to the cheapest 600 types).
pub fn min_values_short<T: InstanceType>(
    selected: &[&T],
    requirements: &[Requirement],
    flavor: Flavor,
) -> Vec<MinValuesShort> {
    let Some(filter) = Filter::new(requirements, flavor) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (label, wanted) in filter.min_values() {
        let found: BTreeSet<String> = selected
            .iter()
            .filter_map(|t| t.label(label).map(str::to_string))
            .collect();
        if found.len() >= wanted as usize {
            continue;
        }
        let Some(index) = requirements
            .iter()
            .position(|r| described(&r.key, flavor) == Some(label) && r.min_values == Some(wanted))
        else {
            continue;
        };
        out.push(MinValuesShort {
            index,
            key: requirements[index].key.clone(),
            wanted,
            found,
        });
    }
    out
}

/// A pool limit no selected type fits under.
#[derive(Debug, Clone, PartialEq)]
pub enum LimitMiss {
    /// Every selected type holds more of `resource` than the limit; `smallest` is the type with
    /// the least of it, and how much.
    One {
        resource: String,
        limit: f64,
        smallest: String,
        smallest_capacity: f64,
    },
    /// Each limit alone lets some type through, but no type fits under all of them at once.
    Together { resources: Vec<String> },
}

/// The limits (resource, value in base units) under which none of the `selected` types fits,
/// as Karpenter compares a type's capacity with what the pool may still add. Resources whose
/// capacity is not known here (`ephemeral-storage`, `nodes`, unknown extended resources) are
/// left alone; so is an empty selection (that is the no-match error's case).
pub fn limit_misses<T: InstanceType>(selected: &[&T], limits: &[(String, f64)]) -> Vec<LimitMiss> {
    if selected.is_empty() {
        return Vec::new();
    }
    let known: Vec<&(String, f64)> = limits
        .iter()
        .filter(|(r, _)| selected.iter().all(|t| t.capacity(r).is_some()))
        .collect();
    let mut misses = Vec::new();
    for (resource, limit) in &known {
        let fits = |t: &&T| t.capacity(resource).is_some_and(|c| c <= *limit);
        if selected.iter().any(fits) {
            continue;
        }
        let smallest = selected
            .iter()
            .filter_map(|t| Some((t.name().to_string(), t.capacity(resource)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((name, capacity)) = smallest {
            misses.push(LimitMiss::One {
                resource: resource.clone(),
                limit: *limit,
                smallest: name,
                smallest_capacity: capacity,
            });
        }
    }
    if misses.is_empty() && known.len() > 1 {
        let fits_all = |t: &&T| {
            known
                .iter()
                .all(|(r, limit)| t.capacity(r).is_some_and(|c| c <= *limit))
        };
        if !selected.iter().any(fits_all) {
            misses.push(LimitMiss::Together {
                resources: known.iter().map(|(r, _)| r.clone()).collect(),
            });
        }
    }
    misses
}
