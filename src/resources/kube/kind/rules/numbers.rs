//! Numbers: Kubernetes resource quantities and whole numbers in the CRDs' integer formats.

use std::sync::Arc;

use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::framework::{Attribute, Diagnostics};
use crate::terraform::tfvalue::{AttributePath, Value};

/// Kubernetes resource quantity (`100m`, `1.5Gi`, `2e3`), the CRDs' int-or-string quantity pattern.
pub const QUANTITY: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// A Kubernetes resource quantity (`500m`, `4`, `16Gi`).
pub fn quantity() -> impl Validator {
    v::matches(
        QUANTITY,
        "a Kubernetes resource quantity such as `500m`, `4`, `16Gi` or `1e3`",
    )
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

/// The text of a Kubernetes int-or-string quantity as written: a string as it is, a whole
/// number in decimal (`1000`). `None` for anything else (a fraction, a list, …).
pub fn quantity_text(value: &Value) -> Option<String> {
    match value.strip_dynamic() {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => n.as_i64().map(|i| i.to_string()),
        _ => None,
    }
}

/// Whether two maps of int-or-string quantities hold the same quantities under the same keys,
/// whatever the spelling: `{ cpu = 1000 }` and `{ cpu = "1000" }` are the same limit.
pub fn same_quantities(a: &Value, b: &Value) -> bool {
    match (a.as_entries(), b.as_entries()) {
        (Some(a), Some(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, va)| {
                    b.get(k).is_some_and(|vb| {
                        quantity_text(va).is_some() && quantity_text(va) == quantity_text(vb)
                    })
                })
        }
        _ => false,
    }
}

/// A map of Kubernetes int-or-string quantities (`limits = { cpu = 1000, memory = "1000Gi" }`),
/// as the CRDs declare them (`x-kubernetes-int-or-string`). Each value keeps its type on the way
/// to the cluster and back, so an object written `cpu: 100` by kubectl imports as
/// `cpu = 100`, and re-created from that configuration it is the same object; a configuration
/// that changes only the spelling (`1000` for `"1000"`) changes nothing.
pub fn quantity_map(name: &'static str) -> Attribute {
    Attribute::dynamic(name)
        .type_label("Map of Number or String")
        .same_when(same_quantities)
        .validate(v::check(
            "A map from names to quantities, each a whole number (`1000`) or a string (`\"1000\"`, `\"500m\"`, `\"16Gi\"`).",
            |value| match value {
                Value::Map(_) | Value::Object(_) => None,
                other => Some(format!(
                    "Expected a map such as {{ cpu = \"1000\", memory = \"1000Gi\" }}, got {}.",
                    other.kind()
                )),
            },
        ))
        .validate(v::each(quantity_or_whole_number()))
}

/// An int-or-string quantity: a string in the quantity syntax, or a whole number (a fraction
/// has no JSON integer form; write it as a string, `"0.5"` or `"500m"`).
pub fn quantity_or_whole_number() -> impl Validator {
    QuantityOrWholeNumber(Arc::new(quantity()))
}

/// See [`quantity_or_whole_number`]: strings go to the quantity pattern.
struct QuantityOrWholeNumber(Arc<dyn Validator>);

impl Validator for QuantityOrWholeNumber {
    fn description(&self) -> String {
        "A Kubernetes resource quantity: a whole number, or a string such as `\"500m\"`, `\"4\"`, `\"16Gi\"`."
            .to_string()
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        let detail = match value.strip_dynamic() {
            Value::String(_) => return self.0.validate(value, path, diags),
            Value::Number(n) if n.as_i64().is_some() => return,
            Value::Number(n) => format!(
                "{n} is not a whole number: write a fraction as a quantity string, such as \"{n}\" or \"500m\"."
            ),
            other => format!(
                "Expected a quantity (a whole number or a string), got {}.",
                other.kind()
            ),
        };
        diags.error_at(path, "Invalid attribute value", detail);
    }
    fn self_check(&self) -> Result<(), String> {
        self.0.self_check()
    }
}
