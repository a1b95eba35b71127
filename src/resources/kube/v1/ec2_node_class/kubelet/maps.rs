//! What the kubelet's maps take, shared by the settings Karpenter reads (`kubelet/mod.rs`) and
//! the upstream fields ([`super::upstream`]): the reservable resources, the eviction signals and
//! their thresholds.

use crate::terraform::framework::Attribute;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::Type;

pub(crate) const RESERVED_KEYS: &[&str] = &["cpu", "memory", "ephemeral-storage", "pid"];
pub(crate) const EVICTION_SIGNALS: &[&str] = &[
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
];
/// An eviction threshold: a percentage (up to two decimals, at most 100%) or a quantity (or empty).
pub(crate) const EVICTION_THRESHOLD: &str = r"^(([0-9]{1,2}(\.[0-9]{1,2})?|100(\.0{1,2})?)%||(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$";

/// A map from eviction signals (`memory.available`, …) to thresholds: percentages such as
/// `10%` or quantities such as `500Mi`.
pub(crate) fn eviction_map(name: &'static str, text: &'static str) -> Attribute {
    Attribute::map_of(name, Type::String)
        .describe(text)
        .validate(keys_in(EVICTION_SIGNALS))
        .validate(v::each(v::matches(
            EVICTION_THRESHOLD,
            "a percentage such as `10%` or a quantity such as `500Mi`",
        )))
}

/// Map keys must be in a fixed set.
pub(crate) fn keys_in(allowed: &'static [&'static str]) -> impl Validator {
    v::each_key(v::one_of(allowed))
}
