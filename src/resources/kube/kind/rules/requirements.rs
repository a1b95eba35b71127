//! Node-pool requirements: operators, keys, value counts and values (rules R1–R3, and the value
//! rules Karpenter applies at run time).

use super::contradictions::{NO_NODE, warn_contradictions};
use super::labels::{LABEL_VALUE_RE, WELL_KNOWN_ON_PURPOSE, restricted_label_problem, well_known_values};
use super::names::QUALIFIED_NAME_RE;
use super::values::{elements, int_of, invalid};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{AttributePath, Value};

/// Requirement operators of the NodePool CRD.
pub const OPERATORS: &[&str] = &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"];

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
