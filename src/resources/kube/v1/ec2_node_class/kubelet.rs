//! The typed `kubelet` block (shared with the legacy Provisioner's `kubelet_configuration`) and
//! its cross-field rules.

use std::collections::BTreeMap;

use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::{int_of, invalid};
use crate::terraform::framework::Attribute;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{Type, Value};

const RESERVED_KEYS: &[&str] = &["cpu", "memory", "ephemeral-storage", "pid"];
const EVICTION_SIGNALS: &[&str] = &[
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
];
/// An eviction threshold: a percentage (up to two decimals, at most 100%) or a quantity (or empty).
const EVICTION_THRESHOLD: &str = r"^(([0-9]{1,2}(\.[0-9]{1,2})?|100(\.0{1,2})?)%||(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$";

pub(super) fn kubelet() -> Attribute {
    Attribute::object("kubelet", kubelet_attributes())
        .describe("Kubelet settings for the nodes (Karpenter passes them to the node's bootstrap).")
        .validate(kubelet_rule())
}
/// The kubelet settings shared with the legacy Provisioner's `kubelet_configuration` (same
/// fields, same rules in Karpenter's v0.32 webhook and the v1 CRD).
pub(crate) fn kubelet_attributes() -> Vec<Attribute> {
    let reserved = |name: &'static str, text: &'static str| {
        Attribute::map_of(name, Type::String)
            .describe(text)
            .validate(keys_in(RESERVED_KEYS))
            .validate(v::each(rules::numbers::quantity()))
            .validate(v::each(v::check("Must not be negative.", |value| {
                let s = value.as_str()?;
                s.starts_with('-')
                    .then(|| format!("{s:?} is negative: reserved resources must not be negative."))
            })))
    };
    let eviction = |name: &'static str, text: &'static str| {
        Attribute::map_of(name, Type::String)
            .describe(text)
            .validate(keys_in(EVICTION_SIGNALS))
            .validate(v::each(v::matches(
                EVICTION_THRESHOLD,
                "a percentage such as `10%` or a quantity such as `500Mi`",
            )))
    };
    vec![
            Attribute::list_of("cluster_dns", Type::String)
                .wire_name("clusterDNS")
                .describe("DNS server IP addresses the kubelet gives pods, instead of the cluster default."),
            Attribute::number("max_pods")
                .describe("Maximum number of pods per node (0 or more).")
                .validate(rules::numbers::whole_number(Some(0), true)),
            Attribute::number("pods_per_core")
                .describe("Maximum number of pods per CPU core; the lower of this and `max_pods` applies (0 or more).")
                .validate(rules::numbers::whole_number(Some(0), true)),
            reserved(
                "system_reserved",
                "Resources reserved for the operating system (`cpu`, `memory`, `ephemeral-storage`, `pid`), as quantities.",
            ),
            reserved(
                "kube_reserved",
                "Resources reserved for Kubernetes daemons (`cpu`, `memory`, `ephemeral-storage`, `pid`), as quantities.",
            ),
            eviction(
                "eviction_hard",
                "Hard eviction thresholds by signal (`memory.available`, `nodefs.available`, `nodefs.inodesFree`, \
                 `imagefs.available`, `imagefs.inodesFree`, `pid.available`), as percentages or quantities.",
            ),
            eviction(
                "eviction_soft",
                "Soft eviction thresholds by signal (same signals as `eviction_hard`); each needs a grace period in \
                 `eviction_soft_grace_period`.",
            ),
            Attribute::map_of("eviction_soft_grace_period", Type::String)
                .describe(
                    "How long each soft eviction threshold must be exceeded before pods are evicted, by signal, as \
                     durations such as `1m30s`; each needs a threshold in `eviction_soft`.",
                )
                .validate(keys_in(EVICTION_SIGNALS))
                .validate(v::each(eviction_grace_period())),
            Attribute::number("eviction_max_pod_grace_period")
                .describe("Maximum grace period, in seconds, for pods terminated by a soft eviction.")
                .validate(rules::numbers::whole_number(None, true)),
            Attribute::number("image_gc_high_threshold_percent")
                .wire_name("imageGCHighThresholdPercent")
                .describe("Disk usage percentage (0–100) above which image garbage collection always runs; must be greater than the low threshold.")
                .validate(v::int_range(0, 100)),
            Attribute::number("image_gc_low_threshold_percent")
                .wire_name("imageGCLowThresholdPercent")
                .describe("Disk usage percentage (0–100) below which image garbage collection never runs.")
                .validate(v::int_range(0, 100)),
            Attribute::bool("cpu_cfs_quota")
                .wire_name("cpuCFSQuota")
                .describe("Whether CPU CFS quota is enforced for containers that set CPU limits."),
        ]
}
/// Kubelet cross-field rules: image GC high > low; soft eviction thresholds and grace periods pair up.
pub(crate) fn kubelet_rule() -> impl Validator {
    v::rule(
        "`image_gc_high_threshold_percent` must be greater than `image_gc_low_threshold_percent`; every `eviction_soft` signal needs an `eviction_soft_grace_period` entry and the reverse.",
        |value, path, diags| {
            if let (Some(high), Some(low)) = (
                int_of(value, "image_gc_high_threshold_percent"),
                int_of(value, "image_gc_low_threshold_percent"),
            ) && high <= low
            {
                invalid(
                    diags,
                    &path.attr("image_gc_high_threshold_percent"),
                    format!("The high threshold ({high}) must be greater than the low threshold ({low})."),
                );
            }
            let soft = value.get("eviction_soft").unwrap_or(&Value::Null);
            let grace = value.get("eviction_soft_grace_period").unwrap_or(&Value::Null);
            if soft.is_unknown() || grace.is_unknown() {
                return;
            }
            let empty = BTreeMap::new();
            let soft = soft.as_entries().unwrap_or(&empty);
            let grace = grace.as_entries().unwrap_or(&empty);
            for key in soft.keys().filter(|k| !grace.contains_key(*k)) {
                invalid(
                    diags,
                    &path.attr("eviction_soft").key(key.clone()),
                    format!(
                        "The soft eviction threshold {key:?} needs a grace period: add {key:?} to eviction_soft_grace_period."
                    ),
                );
            }
            for key in grace.keys().filter(|k| !soft.contains_key(*k)) {
                invalid(
                    diags,
                    &path.attr("eviction_soft_grace_period").key(key.clone()),
                    format!(
                        "The grace period {key:?} has no soft eviction threshold: add {key:?} to eviction_soft or remove it here."
                    ),
                );
            }
        },
    )
}
/// Map keys must be in a fixed set.
pub(super) fn keys_in(allowed: &'static [&'static str]) -> impl Validator {
    v::each_key(v::one_of(allowed))
}
/// A soft-eviction grace period: a Go duration. Deliberately stricter than the CRD (which only
/// types it as a string): kubelet cannot parse anything else and fails to start, so the nodes
/// would never join.
pub(super) fn eviction_grace_period() -> impl Validator {
    v::check(
        "Must be a duration such as `30s`, `10m` or `1h30m` (stricter than the CRD: kubelet cannot start with anything else).",
        |value| {
            let s = value.as_str()?;
            v::parse_go_duration(s).is_none().then(|| {
                format!(
                    "{s:?} is not a duration: use a number with a unit, such as \"30s\", \"10m\" or \"1h30m\". (Stricter than the CRD on purpose: kubelet cannot parse it and would not start, so the nodes would never join.)"
                )
            })
        },
    )
}
