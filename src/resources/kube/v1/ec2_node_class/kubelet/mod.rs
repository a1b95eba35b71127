//! The typed `kubelet` of an EC2NodeClass and its cross-field rules.
//!
//! Karpenter v1.15 opened `spec.kubelet` to every field of the upstream `KubeletConfiguration`:
//! the 12 fields Karpenter reads itself are typed here (as before, and shared with the legacy
//! Provisioner's `kubelet_configuration` in their v0.32 shape); every other upstream field
//! comes from the table of [`upstream`]. From v1.15 on `max_pods` and the values of
//! `kube_reserved` / `system_reserved` may be CEL expressions, evaluated per instance type: at
//! validation ([`expressions`]) and, through the plan's memory ([`plan`]), in the plan's notes
//! ([`notes`]; which class a pool's note is about: [`class_of_pool`]).

pub(crate) mod class_of_pool;
pub(crate) mod expressions;
pub(crate) mod families;
pub(crate) mod maps;
pub(crate) mod notes;
pub(crate) mod plan;
pub(crate) mod upstream;

use std::collections::BTreeMap;

use crate::instance_types::kubelet_cel::is_expression;
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::{int_of, invalid};
use crate::terraform::framework::Attribute;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{Type, Value};
use maps::{EVICTION_SIGNALS, RESERVED_KEYS, eviction_map, keys_in};

/// `kubelet` of an EC2NodeClass: the fields Karpenter reads (in their v1.15 shape) and every
/// other field of the upstream `KubeletConfiguration`, in name order.
pub(super) fn kubelet() -> Attribute {
    let mut attributes = karpenter_fields(Shape::V1);
    attributes.extend(upstream::attributes());
    attributes.sort_by_key(|a| a.name);
    Attribute::object("kubelet", attributes)
        .describe(
            "Kubelet settings for the nodes. The 12 settings Karpenter reads itself (`max_pods`, `pods_per_core`, \
             the reservations, the eviction settings, image garbage collection, `cluster_dns`, `cpu_cfs_quota`) work \
             with every AMI family; from Karpenter v1.15 on, every other field of the upstream kubelet configuration \
             (k8s.io/kubelet v0.36) can be set too, with the `AL2023` family (or `Custom`, whose user data must apply \
             them). On a cluster with an older Karpenter those fields are refused before the write, naming v1.15.",
        )
        .validate(kubelet_rule())
}

/// Which Karpenter API the 12 fields are shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The legacy Provisioner (v0.32): `max_pods` a number, reservations quantities.
    V1Alpha5,
    /// The EC2NodeClass from v1.15: `max_pods` a number or a CEL expression, reservations
    /// quantities or CEL expressions.
    V1,
}

/// The kubelet settings of the legacy Provisioner's `kubelet_configuration` (Karpenter v0.32's
/// webhook checked the same rules as the v1 CRD).
pub(crate) fn kubelet_attributes() -> Vec<Attribute> {
    karpenter_fields(Shape::V1Alpha5)
}

/// The 12 fields Karpenter reads itself.
fn karpenter_fields(shape: Shape) -> Vec<Attribute> {
    let reservations = match shape {
        Shape::V1Alpha5 => "as quantities",
        Shape::V1 => {
            "as quantities or, from Karpenter v1.15 with its `NodeClassCEL` feature gate, CEL expressions evaluated \
             per instance type (`\"max(60, vcpus * 30)\"`: millicores for `cpu`, MiB for `memory`, GiB for \
             `ephemeral-storage`, rounded up as Karpenter does)"
        }
    };
    let reserved = |name: &'static str, what: &'static str, kube: bool| {
        let a = Attribute::map_of(name, Type::String)
            .describe(format!(
                "Resources reserved for {what} (`cpu`, `memory`, `ephemeral-storage`, `pid`), {reservations}."
            ))
            .validate(keys_in(RESERVED_KEYS));
        let a = match shape {
            Shape::V1Alpha5 => a.validate(v::each(rules::numbers::quantity())),
            Shape::V1 => a.validate(expressions::quantities_or_expressions(kube)),
        };
        // Karpenter refuses any value that starts with `-` before it reads expressions
        // (InvalidKubeletConfiguration). From v1.15 an expression is refused so by the
        // expression check, which says how to write it: this one says it of quantities.
        a.validate(v::each(v::check("Must not be negative.", move |value| {
            let s = value.as_str()?;
            let expression = shape == Shape::V1 && is_expression(s);
            (s.starts_with('-') && !expression)
                .then(|| format!("{s:?} is negative: reserved resources must not be negative."))
        })))
    };
    vec![
            Attribute::list_of("cluster_dns", Type::String)
                .wire_name("clusterDNS")
                .describe("DNS server IP addresses the kubelet gives pods, instead of the cluster default."),
            match shape {
                Shape::V1Alpha5 => Attribute::number("max_pods")
                    .describe("Maximum number of pods per node (0 or more).")
                    .validate(rules::numbers::whole_number(Some(0), true)),
                Shape::V1 => Attribute::dynamic("max_pods")
                    .type_label("Number or String")
                    .describe(
                        "Maximum number of pods per node: a whole number (0 or more), or, from Karpenter v1.15 with \
                         its `NodeClassCEL` feature gate, a CEL expression evaluated for each instance type \
                         (`\"min(110, max_pods)\"`; see the guide on kubelet expressions). A string is always an \
                         expression to Karpenter: write `110`, not `\"110\"`, for a number.",
                    )
                    .validate(expressions::max_pods()),
            },
            Attribute::number("pods_per_core")
                .describe("Maximum number of pods per CPU core; the lower of this and `max_pods` applies (0 or more).")
                .validate(rules::numbers::whole_number(Some(0), true)),
            reserved("system_reserved", "the operating system", false),
            reserved("kube_reserved", "Kubernetes daemons", true),
            eviction_map(
                "eviction_hard",
                "Hard eviction thresholds by signal (`memory.available`, `nodefs.available`, `nodefs.inodesFree`, \
                 `imagefs.available`, `imagefs.inodesFree`, `pid.available`), as percentages or quantities.",
            ),
            eviction_map(
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
/// A soft-eviction grace period: a Go duration. Deliberately stricter than the CRD (which only
/// types it as a string): kubelet cannot parse anything else and fails to start, so the nodes
/// would never join.
pub(super) fn eviction_grace_period() -> impl Validator {
    v::go_duration_because(
        " (stricter than the CRD: kubelet cannot start with anything else)",
        " (Stricter than the CRD on purpose: kubelet cannot parse it and would not start, so the nodes would never join.)",
    )
}
