//! Numbers: Kubernetes resource quantities and whole numbers in the CRDs' integer formats.

use crate::terraform::framework::validate::{self as v, Validator};

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
