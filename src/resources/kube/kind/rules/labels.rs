//! Label and annotation keys and values: the Kubernetes syntax, the label domains a node pool may
//! not use (and the AWS allow-list), the well-known labels with a fixed value set, and the size
//! limit of an object's annotations.

use regex::Regex;

use super::names::is_dns_subdomain;
use super::values::{Pattern, invalid};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{AttributePath, Value};

/// A label value (may be empty).
pub const LABEL_VALUE: &str = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";

/// The one label key in the `karpenter.sh` domain a node pool may use besides
/// `karpenter.sh/nodepool` (which the CRD lists but then rejects on its own, rule K2/L2).
pub const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";

/// Values Karpenter accepts for `karpenter.sh/capacity-type`.
pub const CAPACITY_TYPES: &[&str] = &["spot", "on-demand", "reserved"];

/// Label keys of the `karpenter.k8s.aws` domain the NodePool CRD allows (its CEL list), as of
/// Karpenter v1.15, which added `nitro-sandbox` (whether an instance type supports Nitro
/// Enclaves, `"true"`/`"false"`); a v1.14 cluster's CRD refuses that one at the write.
pub const AWS_ALLOWED_LABEL_KEYS: &[&str] = &[
    "karpenter.k8s.aws/instance-tenancy",
    "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-interruptible",
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/nitro-sandbox",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/placement-group-id",
    "karpenter.k8s.aws/placement-group-partition",
];

pub(super) static LABEL_VALUE_RE: Pattern = Pattern::new(|| Regex::new(LABEL_VALUE).ok());

pub(super) const LABEL_NAME: &str = r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";

static LABEL_NAME_RE: Pattern = Pattern::new(|| Regex::new(LABEL_NAME).ok());

/// Why `key` is not a valid Kubernetes label (or annotation) key, if it is not: an optional DNS
/// subdomain prefix (≤ 253) and `/`, then a name of at most 63 characters.
pub fn label_key_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty() || !is_dns_subdomain(p))
    {
        return Some(format!(
            "the prefix {p:?} of {key:?} must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)"
        ));
    }
    if name.is_empty() || name.len() > 63 || !LABEL_NAME_RE.is_match(name) {
        return Some(format!(
            "the name part {name:?} of {key:?} must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        ));
    }
    None
}

/// Why a node label key is restricted in a node pool (rules K1–K4 / L1–L4), if it is.
pub fn restricted_label_problem(key: &str) -> Option<String> {
    if key == "karpenter.sh/nodepool" {
        return Some(
            "the label \"karpenter.sh/nodepool\" is set by Karpenter and cannot be used here".into(),
        );
    }
    if key == "kubernetes.io/hostname" {
        return Some("the label \"kubernetes.io/hostname\" is restricted and cannot be used here".into());
    }
    let domain = key.split('/').next().unwrap_or_default();
    if domain.ends_with("karpenter.sh") && key != CAPACITY_TYPE {
        return Some(format!(
            "the label domain \"karpenter.sh\" is restricted: of its keys only {CAPACITY_TYPE:?} may be used, not {key:?}"
        ));
    }
    if domain.ends_with("karpenter.k8s.aws") && !AWS_ALLOWED_LABEL_KEYS.contains(&key) {
        return Some(format!(
            "the label domain \"karpenter.k8s.aws\" is restricted to Karpenter's well-known keys ({}); {key:?} is not one of them",
            AWS_ALLOWED_LABEL_KEYS.join(", ")
        ));
    }
    None
}

/// Values Karpenter accepts for a well-known label key with a fixed value set.
pub fn well_known_values(key: &str) -> Option<&'static [&'static str]> {
    match key {
        CAPACITY_TYPE => Some(CAPACITY_TYPES),
        "karpenter.k8s.aws/instance-tenancy" => Some(&["default", "dedicated"]),
        _ => None,
    }
}

/// Node labels in a node pool template: valid label keys outside the restricted domains, and
/// fixed values for well-known keys. (The CRD checks only the restricted domains on the keys;
/// Karpenter rejects malformed keys at run time, so we check them here.)
pub fn node_label_keys() -> impl Validator {
    v::rule(
        "Keys must be valid label keys; `karpenter.sh/nodepool`, `kubernetes.io/hostname`, other keys of the `karpenter.sh` domain than `karpenter.sh/capacity-type`, and keys of the `karpenter.k8s.aws` domain that are not Karpenter's well-known labels are restricted.",
        |value, path, diags| {
            for (key, val) in value.as_entries().into_iter().flatten() {
                let here = path.key(key.clone());
                if let Some(problem) = restricted_label_problem(key) {
                    invalid(diags, &here, format!("Label key not allowed: {problem}."));
                } else if let Some(problem) = label_key_problem(key) {
                    invalid(
                        diags,
                        &here,
                        format!("Label key not allowed: {problem}. {NODE_KEY_ON_PURPOSE}"),
                    );
                } else if let (Some(allowed), Some(s)) = (well_known_values(key), val.as_str())
                    && !allowed.contains(&s)
                {
                    invalid(
                        diags,
                        &here,
                        format!(
                            "{s:?} is not a valid value for {key:?}: use one of {}. {WELL_KNOWN_ON_PURPOSE}",
                            allowed.join(", ")
                        ),
                    );
                }
            }
        },
    )
}

/// Said by every diagnostic of a node label or annotation key the CRD lets through but
/// Kubernetes refuses on a Node.
pub const NODE_KEY_ON_PURPOSE: &str = "(Stricter than the CRD on purpose: Kubernetes refuses this key on a Node, so the nodes Karpenter launches for this pool could not register.)";

/// Said by every diagnostic of a well-known label value Karpenter does not know.
pub const WELL_KNOWN_ON_PURPOSE: &str = "(Stricter than the CRD on purpose: Karpenter has no capacity with another value, so the pool would never launch a node.)";

/// Annotation keys of the nodes a pool launches (`template.metadata.annotations`): the CRD does
/// not check them, but Kubernetes refuses a Node with a malformed annotation key, so they are
/// checked here on purpose.
pub fn node_annotation_keys() -> impl Validator {
    v::each_key(v::check(
        "Keys must be valid Kubernetes keys: an optional DNS-subdomain prefix and `/`, then 1 to 63 letters, digits, `-`, `_` or `.` (stricter than the CRD: Kubernetes refuses other keys on a Node).",
        |value| {
            let key = value.as_str()?;
            label_key_problem(key).map(|p| format!("Key not allowed: {p}. {NODE_KEY_ON_PURPOSE}"))
        },
    ))
}

/// Object labels or annotation keys (`metadata.labels`, `metadata.annotations`).
pub fn object_meta_keys() -> impl Validator {
    v::each_key(v::check(
        "Keys must be valid Kubernetes keys: an optional DNS-subdomain prefix and `/`, then 1 to 63 letters, digits, `-`, `_` or `.`.",
        |value| {
            let key = value.as_str()?;
            label_key_problem(key).map(|p| format!("Key not allowed: {p}."))
        },
    ))
}

/// A label value: at most 63 letters, digits, `-`, `_` or `.`, starting and ending with a
/// letter or digit, or empty.
pub fn label_value() -> impl Validator {
    v::check(
        "Must be a label value: at most 63 letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit (or empty).",
        |value| {
            let s = value.as_str()?;
            (s.len() > 63 || !LABEL_VALUE_RE.is_match(s)).then(|| {
                format!(
                    "{s:?} is not a valid label value: use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit."
                )
            })
        },
    )
}

/// What the API server allows for all annotations of one object together (keys and values).
pub const TOTAL_ANNOTATION_BYTES: usize = 256 * 1024;

/// The API server refuses an object whose annotations (keys plus values) exceed 256 KiB in
/// total. A cross-attribute check: call it from the resource's validate function with the path of
/// the annotations map.
pub fn annotations_total_size(annotations: Option<&Value>, path: &AttributePath, diags: &mut Diagnostics) {
    let Some(entries) = annotations.and_then(Value::as_entries) else {
        return;
    };
    let mut total = 0usize;
    for (k, val) in entries {
        if val.is_unknown() {
            return;
        }
        total += k.len() + val.as_str().map_or(0, str::len);
    }
    if total > TOTAL_ANNOTATION_BYTES {
        invalid(
            diags,
            path,
            format!(
                "The annotations total {total} bytes (keys and values); Kubernetes allows at most {TOTAL_ANNOTATION_BYTES} bytes (256 KiB) per object. Move large content elsewhere (e.g. a ConfigMap)."
            ),
        );
    }
}
