//! Rules shared by the Karpenter v1 schemas: Kubernetes names, label keys and values, the
//! restricted label domains and the AWS allow-list, node-pool requirements, resource quantities,
//! Karpenter durations and budget cron schedules.
//!
//! Every function here returns a [`Validator`] (so the generated docs state the rule) or is a
//! pure check used by one. The patterns are those the v1.14.1 CRDs declare; where we are
//! stricter than the CRD (because Karpenter rejects the value at run time, or the CRD pattern is
//! looser than its own description), the function says so.
//!
//! Validators only see known values; inside lists and objects they skip unknown parts, because
//! a configuration may be partly unknown at plan time.

mod contradictions;
pub mod launchable;
pub use contradictions::{NO_INSTANCE_TYPE, NO_NODE, warn_contradictions};
use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{AttributePath, Value};

/// Kubernetes resource quantity (`100m`, `1.5Gi`, `2e3`), the CRDs' int-or-string quantity pattern.
pub const QUANTITY: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";
/// Qualified name, optionally with a DNS prefix (`example.com/name`), as the CRDs write it.
pub const QUALIFIED_NAME: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
/// A label value (may be empty).
pub const LABEL_VALUE: &str = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";
/// Karpenter duration that may also be `Never` (`expireAfter`, `consolidateAfter`).
pub const DURATION_OR_NEVER: &str = r"^(([0-9]+(s|m|h))+|Never)$";
/// Karpenter duration without `Never` (`terminationGracePeriod`).
pub const DURATION: &str = r"^([0-9]+(s|m|h))+$";
/// Budget window length: hours and/or minutes, optionally followed by `0s`.
pub const BUDGET_DURATION: &str = r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$";
/// Budget `nodes`: a percentage 0–100 or a whole number.
pub const BUDGET_NODES: &str = r"^((100|[0-9]{1,2})%|[0-9]+)$";
/// DNS subdomain (RFC 1123), the rule for Kubernetes object names.
pub const DNS_SUBDOMAIN: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// The one label key in the `karpenter.sh` domain a node pool may use besides
/// `karpenter.sh/nodepool` (which the CRD lists but then rejects on its own, rule K2/L2).
pub const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
/// Values Karpenter accepts for `karpenter.sh/capacity-type`.
pub const CAPACITY_TYPES: &[&str] = &["spot", "on-demand", "reserved"];
/// Label keys of the `karpenter.k8s.aws` domain the v1.14.1 NodePool CRD allows (its CEL list;
/// `nitro-sandbox` is only on `main`, so it is not here).
pub const AWS_ALLOWED_LABEL_KEYS: &[&str] = &[
    "karpenter.k8s.aws/instance-tenancy",
    "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-interruptible",
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
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

/// Requirement operators of the NodePool CRD.
pub const OPERATORS: &[&str] = &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"];

/// One of this module's constant patterns, compiled once. They are constants, so a failure is a
/// provider bug: the pattern then matches nothing (every value is rejected, visibly) and the
/// `patterns_compile` test catches it.
struct Pattern(LazyLock<Option<Regex>>);

impl Pattern {
    const fn new(f: fn() -> Option<Regex>) -> Self {
        Self(LazyLock::new(f))
    }
    fn is_match(&self, s: &str) -> bool {
        self.0.as_ref().is_some_and(|r| r.is_match(s))
    }
}

static QUALIFIED_NAME_RE: Pattern = Pattern::new(|| Regex::new(QUALIFIED_NAME).ok());
static LABEL_VALUE_RE: Pattern = Pattern::new(|| Regex::new(LABEL_VALUE).ok());
static DNS_SUBDOMAIN_RE: Pattern = Pattern::new(|| Regex::new(DNS_SUBDOMAIN).ok());
const LABEL_NAME: &str = r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
static LABEL_NAME_RE: Pattern = Pattern::new(|| Regex::new(LABEL_NAME).ok());

/// Whether an attribute of an object is set: `Some(true)` when known and not null,
/// `Some(false)` when null or absent, `None` when it (or the object) is not known yet.
pub fn has(object: &Value, name: &str) -> Option<bool> {
    if object.is_unknown() {
        return None;
    }
    match object.get(name) {
        None => Some(false),
        Some(v) if v.is_unknown() => None,
        Some(v) => Some(!v.is_null()),
    }
}

/// A known whole number attribute.
pub fn int_of(object: &Value, name: &str) -> Option<i64> {
    object
        .get(name)
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
}

/// The known elements of a list (empty when the list is null or unknown).
pub fn elements(value: &Value) -> &[Value] {
    value.as_elements().unwrap_or_default()
}

/// An error on the attribute at `path`: the diagnostic of every rule here.
pub fn invalid(diags: &mut Diagnostics, path: &AttributePath, detail: impl Into<String>) {
    diags.error_at(path, "Invalid attribute value", detail);
}

/// A Kubernetes object name: a DNS subdomain of at most 253 characters.
pub fn object_name() -> impl Validator {
    v::check(
        "Must be a Kubernetes object name: at most 253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit.",
        |value| {
            let s = value.as_str()?;
            (!is_dns_subdomain(s)).then(|| {
                format!(
                    "{s:?} is not a valid Kubernetes object name: use at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (e.g. \"default\")."
                )
            })
        },
    )
}

fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && DNS_SUBDOMAIN_RE.is_match(s)
}

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
/// Said by every diagnostic of a budget schedule the CRD's pattern lets through.
pub const CRON_ON_PURPOSE: &str = "(Stricter than the CRD on purpose: the CRD only counts the fields, and Karpenter cannot parse this schedule, so the budget would never take effect.)";

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

/// A qualified name (the CRD pattern for requirement and taint keys).
pub fn qualified_name(what: &'static str) -> impl Validator {
    v::check(
        format!(
            "Must be {what}: an optional DNS prefix and `/`, then letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit."
        ),
        move |value| {
            let s = value.as_str()?;
            (!QUALIFIED_NAME_RE.is_match(s)).then(|| {
                format!(
                    "{s:?} is not {what}: use an optional DNS prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit (e.g. \"example.com/gpu\")."
                )
            })
        },
    )
}

/// A requirement key: the CRD's qualified-name pattern, at most 316 characters, outside the
/// restricted label domains (K1–K4).
pub fn requirement_key() -> impl Validator {
    v::check(
        "Must be a label key (at most 316 characters) outside the restricted domains: not `karpenter.sh/nodepool` or `kubernetes.io/hostname`; in the `karpenter.sh` domain only `karpenter.sh/capacity-type`; in the `karpenter.k8s.aws` domain only Karpenter's well-known labels.",
        |value| {
            let key = value.as_str()?;
            if key.len() > 316 || !QUALIFIED_NAME_RE.is_match(key) {
                return Some(format!(
                    "{key:?} is not a label key: use at most 316 characters, an optional DNS prefix and '/', then letters, digits, '-', '_' or '.' (e.g. \"node.kubernetes.io/instance-type\")."
                ));
            }
            restricted_label_problem(key).map(|p| format!("Requirement key not allowed: {p}."))
        },
    )
}

/// A Kubernetes resource quantity (`500m`, `4`, `16Gi`).
pub fn quantity() -> impl Validator {
    v::matches(
        QUANTITY,
        "a Kubernetes resource quantity such as `500m`, `4`, `16Gi` or `1e3`",
    )
}

/// A Karpenter duration or `Never`.
pub fn duration_or_never() -> impl Validator {
    v::matches(
        DURATION_OR_NEVER,
        "a duration of whole hours, minutes and seconds such as `720h`, `1h30m` or `30s`, or `Never`",
    )
}

/// A Karpenter duration (`Never` not allowed).
pub fn duration() -> impl Validator {
    v::matches(
        DURATION,
        "a duration of whole hours, minutes and seconds such as `48h`, `1h30m` or `30s` (`Never` is not allowed)",
    )
}

/// A budget window length.
pub fn budget_duration() -> impl Validator {
    v::matches(
        BUDGET_DURATION,
        "a duration of whole hours and/or minutes such as `8h`, `30m` or `1h30m` (seconds are not allowed)",
    )
}

/// An RFC 3339 date-time (`2024-05-01T10:00:00Z`), the CRD's `date-time` format: the API
/// server parses the value, so the date must exist (`2024-02-30` does not) and the seconds are
/// 0–59.
pub fn date_time() -> impl Validator {
    v::check(
        "Must be an RFC 3339 date-time of a real calendar date, such as `2024-05-01T10:00:00Z`.",
        |value| {
            let s = value.as_str()?;
            date_time_problem(s).map(|p| {
                format!("{s:?} is not an RFC 3339 date-time: {p}. Use e.g. \"2024-05-01T10:00:00Z\".")
            })
        },
    )
}

static DATE_TIME_RE: Pattern = Pattern::new(|| {
    Regex::new(
        r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-]([0-9]{2}):([0-9]{2}))$",
    )
    .ok()
});

/// Why `s` is not an RFC 3339 date-time the API server accepts, if it is not.
pub fn date_time_problem(s: &str) -> Option<String> {
    let Some(caps) = DATE_TIME_RE.0.as_ref().and_then(|re| re.captures(s)) else {
        return Some("the form is YYYY-MM-DDThh:mm:ss, optional fractional seconds, then Z or ±hh:mm".into());
    };
    let n = |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    let (Some(year), Some(month), Some(day)) = (n(1), n(2), n(3)) else {
        return Some("the date is not numeric".into());
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Some(format!("there is no month {month}")),
    };
    if day == 0 || day > days {
        return Some(format!("{year:04}-{month:02} has no day {day}"));
    }
    if n(4).is_none_or(|h| h > 23) || n(5).is_none_or(|m| m > 59) || n(6).is_none_or(|x| x > 59) {
        return Some("the time must be 00:00:00 to 23:59:59".into());
    }
    if caps.get(9).is_some() && (n(9).is_none_or(|h| h > 23) || n(10).is_none_or(|m| m > 59)) {
        return Some("the zone offset must be -23:59 to +23:59".into());
    }
    None
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

/// A whole number that fits the CRD's integer format (int32 or int64), with an optional minimum.
pub fn whole_number(min: Option<i64>, int32: bool) -> impl Validator {
    let max = if int32 { i64::from(i32::MAX) } else { i64::MAX };
    let low = min.unwrap_or(if int32 { i64::from(i32::MIN) } else { i64::MIN });
    let description = match min {
        Some(m) => format!("Must be a whole number of at least {m}."),
        None => "Must be a whole number.".to_string(),
    };
    v::check(description.clone(), move |value| {
        let n = value.as_number()?;
        match n.as_i64() {
            Some(i) if i >= low && i <= max => None,
            _ => Some(format!("{n} is not allowed. {description}")),
        }
    })
}

/// No element appears twice (the CRD's list-type `set`).
pub fn unique() -> impl Validator {
    v::rule("Elements must be unique.", |value, path, diags| {
        let mut seen = BTreeSet::new();
        for (i, e) in elements(value).iter().enumerate() {
            if let Some(s) = e.as_str()
                && !seen.insert(s)
            {
                invalid(
                    diags,
                    &path.index(i),
                    format!("{s:?} is listed twice; list each value once."),
                );
            }
        }
    })
}

/// Map keys and values must not be empty; at most 20 entries (AWS tag selectors).
pub fn selector_tags() -> impl Validator {
    v::rule(
        "At most 20 tags; keys and values must not be empty.",
        |value, path, diags| {
            let Some(entries) = value.as_entries() else { return };
            if entries.len() > 20 {
                invalid(
                    diags,
                    path,
                    format!(
                        "{} tags given: a selector term may match on at most 20 tags.",
                        entries.len()
                    ),
                );
            }
            for (k, val) in entries {
                if k.is_empty() {
                    invalid(diags, &path.key(k.clone()), "Tag keys must not be empty.");
                } else if val.as_str() == Some("") {
                    invalid(
                        diags,
                        &path.key(k.clone()),
                        format!(
                            "The tag {k:?} has an empty value; empty tag values are not supported (use \"*\" to match any value)."
                        ),
                    );
                }
            }
        },
    )
}

/// A budget schedule: one of the `@` shorthands, or a standard five-field cron expression
/// (minute, hour, day of month, month, day of week). Stricter than the CRD pattern (which only
/// counts fields): each field is parsed the way Karpenter's cron parser does, so a typo fails at
/// plan rather than in the controller.
pub fn cron_schedule() -> impl Validator {
    v::check(
        "Must be a cron schedule: `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, or five fields (minute hour day-of-month month day-of-week) such as `0 9 * * 1-5`.",
        |value| {
            let s = value.as_str()?;
            cron_problem(s).map(|p| {
                format!(
                    "{s:?} is not a cron schedule: {p}. Use five fields (minute hour day-of-month month day-of-week), e.g. \"0 9 * * mon-fri\", or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly. {CRON_ON_PURPOSE}"
                )
            })
        },
    )
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// Why `s` is not a valid cron schedule, if it is not.
pub fn cron_problem(s: &str) -> Option<String> {
    if s.starts_with('@') {
        return match s {
            "@annually" | "@yearly" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly" => None,
            _ => Some(format!("{s:?} is not a known shorthand")),
        };
    }
    let fields: Vec<&str> = s.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!("it has {} field(s), not 5", fields.len()));
    }
    let specs: [(&str, u32, u32, &[&str], u32); 5] = [
        ("minute", 0, 59, &[], 0),
        ("hour", 0, 23, &[], 0),
        ("day of month", 1, 31, &[], 0),
        ("month", 1, 12, MONTHS, 1),
        ("day of week", 0, 6, DAYS, 0),
    ];
    for (field, (what, min, max, names, name_base)) in fields.iter().zip(specs) {
        for part in field.split(',') {
            if let Some(p) = cron_part_problem(part, what, min, max, names, name_base) {
                return Some(p);
            }
        }
    }
    None
}

fn cron_part_problem(
    part: &str,
    what: &str,
    min: u32,
    max: u32,
    names: &[&str],
    name_base: u32,
) -> Option<String> {
    let (range, step) = match part.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (part, None),
    };
    if let Some(step) = step {
        match step.parse::<u32>() {
            Ok(n) if n >= 1 => {}
            _ => {
                return Some(format!(
                    "the {what} step {step:?} must be a whole number of at least 1"
                ));
            }
        }
    }
    let value = |t: &str| -> Option<u32> {
        if let Ok(n) = t.parse::<u32>() {
            return Some(n);
        }
        let lower = t.to_ascii_lowercase();
        names
            .iter()
            .position(|n| *n == lower)
            .and_then(|i| u32::try_from(i).ok())
            .map(|i| i + name_base)
    };
    if range == "*" || (range == "?" && (what == "day of month" || what == "day of week")) {
        return None;
    }
    let (lo, hi) = match range.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (range, None),
    };
    let Some(lo_v) = value(lo) else {
        return Some(format!("{lo:?} is not a valid {what}"));
    };
    let hi_v = match hi {
        Some(h) => match value(h) {
            Some(n) => n,
            None => return Some(format!("{h:?} is not a valid {what}")),
        },
        None => lo_v,
    };
    if lo_v < min || hi_v > max {
        return Some(format!("the {what} {range:?} is outside {min}–{max}"));
    }
    if lo_v > hi_v {
        return Some(format!("the {what} range {range:?} ends before it starts"));
    }
    None
}

/// Node-pool requirements (rules R1–R3, plus the value rules Karpenter applies at run time):
/// `In` needs values; `Gt`/`Lt`/`Gte`/`Lte` need exactly one non-negative integer value;
/// `In` with `min_values` needs at least that many values; well-known keys with a fixed value set
/// (`karpenter.sh/capacity-type`, `karpenter.k8s.aws/instance-tenancy`) only take those values.
pub fn requirements() -> impl Validator {
    v::rule(
        "Operator `In` needs at least one value (and at least `min_values` values when set); `Gt`, `Lt`, `Gte` and `Lte` need exactly one value, a non-negative whole number; `karpenter.sh/capacity-type` values are `spot`, `on-demand` or `reserved`; `karpenter.k8s.aws/instance-tenancy` values are `default` or `dedicated`. Values of the other operators must be label values (stricter than the CRD, which does not apply its label-value pattern to each value: Karpenter refuses such a requirement at run time).",
        |value, path, diags| {
            for (i, r) in elements(value).iter().enumerate() {
                if r.is_unknown() || r.is_null() {
                    continue;
                }
                check_requirement(r, &path.index(i), diags, well_known_values);
                check_label_values(r, &path.index(i), diags);
            }
            warn_contradictions(value, path, NO_NODE, diags);
        },
    )
}

/// Deliberately stricter than the CRD: values of a requirement whose operator does not compare
/// numbers must be label values. The CRD states the label-value pattern on the `values` list
/// (where the API server does not apply it to the elements); Karpenter checks each value when it
/// validates the node pool at run time and does not use a pool that fails, so we check at plan.
/// `Gt`/`Lt`/`Gte`/`Lte` values are numbers (`+5` included), checked by [`check_requirement`].
pub fn check_label_values(r: &Value, path: &AttributePath, diags: &mut Diagnostics) {
    let Some(op) = r.get("operator").and_then(Value::as_str) else {
        return;
    };
    if matches!(op, "Gt" | "Lt" | "Gte" | "Lte") {
        return;
    }
    for (j, x) in elements(r.get("values").unwrap_or(&Value::Null))
        .iter()
        .enumerate()
    {
        if let Some(s) = x.as_str()
            && (s.len() > 63 || !LABEL_VALUE_RE.is_match(s))
        {
            invalid(
                diags,
                &path.attr("values").index(j),
                format!(
                    "{s:?} is not a valid label value: use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit. (Stricter than the CRD on purpose: Karpenter refuses this requirement at run time, and the node pool would never launch nodes.)"
                ),
            );
        }
    }
}

/// Checks one requirement object at `path`: value counts per operator (`In` at least one, and
/// at least `min_values` when that attribute exists and is set; `Gt`/`Lt`/`Gte`/`Lte` exactly one
/// non-negative whole number) and, for keys `values_of` knows, the allowed values. Shared with
/// the legacy Provisioner, whose Karpenter-era well-known values differ.
pub fn check_requirement(
    r: &Value,
    path: &AttributePath,
    diags: &mut Diagnostics,
    values_of: fn(&str) -> Option<&'static [&'static str]>,
) {
    let here = path.attr("values");
    let values = r.get("values").unwrap_or(&Value::Null);
    if values.is_unknown() {
        return;
    }
    let list = elements(values);
    let all_known = list.iter().all(|x| !x.is_unknown());
    let operator = r.get("operator").and_then(Value::as_str);
    match operator {
        Some("In") => {
            if list.is_empty() {
                invalid(
                    diags,
                    &here,
                    "Operator \"In\" needs at least one value in `values`.",
                );
            }
            if let Some(min) = int_of(r, "min_values")
                && i64::try_from(list.len()).is_ok_and(|n| n < min)
            {
                invalid(
                    diags,
                    &here,
                    format!(
                        "min_values is {min} but only {} value(s) are listed: list at least {min} values, or lower min_values.",
                        list.len()
                    ),
                );
            }
        }
        Some(op @ ("Gt" | "Lt" | "Gte" | "Lte")) => {
            if list.len() != 1 {
                invalid(
                    diags,
                    &here,
                    format!(
                        "Operator {op:?} needs exactly one value, a non-negative whole number; {} given.",
                        list.len()
                    ),
                );
            } else if let Some(s) = list[0].as_str()
                && !s.parse::<i64>().is_ok_and(|n| n >= 0)
            {
                invalid(
                    diags,
                    &here.index(0),
                    format!(
                        "Operator {op:?} compares numbers: {s:?} must be a non-negative whole number such as \"4\"."
                    ),
                );
            }
        }
        _ => {}
    }
    if let Some(key) = r.get("key").and_then(Value::as_str)
        && let Some(allowed) = values_of(key)
        && all_known
    {
        for (j, x) in list.iter().enumerate() {
            if let Some(s) = x.as_str()
                && !allowed.contains(&s)
            {
                invalid(
                    diags,
                    &here.index(j),
                    format!(
                        "{s:?} is not a value of {key:?}: use {}. {WELL_KNOWN_ON_PURPOSE}",
                        allowed.join(", ")
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
