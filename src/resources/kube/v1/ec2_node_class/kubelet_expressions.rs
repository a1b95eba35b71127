//! Which kubelet values are CEL expressions (Karpenter v1.15, `NodeClassCEL` feature gate) and
//! the plan-time check of each one: `max_pods` is an expression when it is a string (a number is
//! a literal), a `kube_reserved` / `system_reserved` value when it does not read as a
//! Kubernetes quantity (`"480"` is 480 cores, not an expression).

use std::sync::LazyLock;

use regex::Regex;

use crate::resources::kube::kind::rules::numbers::QUANTITY;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::validate::Validator;
use crate::terraform::tfvalue::{AttributePath, Value};

/// Whether `text` reads as a Kubernetes quantity (then it is no expression).
pub(crate) fn is_quantity(text: &str) -> bool {
    static PATTERN: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(QUANTITY).ok());
    PATTERN.as_ref().is_some_and(|p| p.is_match(text))
}

/// The problem with the expression `text`, if any (it must compile in Karpenter's
/// environment and return a number).
fn expression_problem(text: &str) -> Option<String> {
    text.trim()
        .is_empty()
        .then(|| "An empty string is neither a quantity nor a CEL expression.".to_string())
}

/// `max_pods`: a whole number from 0 to 2147483647, or a CEL expression.
pub(crate) fn max_pods() -> impl Validator {
    MaxPods
}

struct MaxPods;

impl Validator for MaxPods {
    fn description(&self) -> String {
        "A whole number from 0 to 2147483647, or a CEL expression that returns one for every instance type."
            .to_string()
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        match value.strip_dynamic() {
            Value::Number(n) => match n.as_i64() {
                Some(i) if (0..=i64::from(i32::MAX)).contains(&i) => {}
                _ => diags.error_at(
                    path,
                    "Invalid attribute value",
                    format!("{n} is not allowed: max_pods must be a whole number from 0 to 2147483647."),
                ),
            },
            Value::String(text) => {
                if let Some(problem) = expression_problem(text) {
                    diags.error_at(path, "Invalid kubelet expression", problem);
                } else if text.trim().parse::<i64>().is_ok() {
                    diags.warning_at(
                        path,
                        "max_pods is a string: Karpenter reads it as a CEL expression",
                        format!(
                            "max_pods = {text:?} is a string, which Karpenter v1.15 takes for a CEL expression: the \
                             NodeClass needs the NodeClassCEL feature gate, and older Karpenter versions refuse it. \
                             For a number, write max_pods = {}.",
                            text.trim()
                        ),
                    );
                }
            }
            other => diags.error_at(
                path,
                "Invalid attribute value",
                format!(
                    "Expected a whole number or a CEL expression (a string) for max_pods, got {}.",
                    other.kind()
                ),
            ),
        }
    }
}

/// A `kube_reserved` / `system_reserved` value: a quantity, or a CEL expression.
pub(crate) fn quantity_or_expression() -> impl Validator {
    QuantityOrExpression
}

struct QuantityOrExpression;

impl Validator for QuantityOrExpression {
    fn description(&self) -> String {
        "Each a Kubernetes quantity (`100m`, `1Gi`) or a CEL expression.".to_string()
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        let Some(text) = value.as_str() else { return };
        if is_quantity(text) {
            return;
        }
        if let Some(problem) = expression_problem(text) {
            diags.error_at(path, "Invalid kubelet expression", problem);
        }
    }
}
