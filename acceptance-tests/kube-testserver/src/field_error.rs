//! How a validation failure is reported: one [`FieldError`] per failing field, shaped like a
//! `metav1.StatusCause`, and values shown as the real API server shows them. Below both the
//! schema walk and the CEL rules, which report through it.

use serde_json::Value;

/// One validation failure, shaped like a `metav1.StatusCause`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueTypeInvalid`, …
    pub reason: &'static str,
    /// Field path, e.g. `spec.template.spec.requirements[0].operator`.
    pub field: String,
    /// Message without the field prefix, e.g. `Required value`.
    pub message: String,
}

impl FieldError {
    pub fn new(reason: &'static str, field: &str, message: String) -> Self {
        Self {
            reason,
            field: field.to_string(),
            message,
        }
    }
    /// `field: message`, as the real server joins them in `Status.message`.
    pub fn full(&self) -> String {
        format!("{}: {}", self.field, self.message)
    }
}

/// The JSON type name of a value, as Go's OpenAPI validator names them.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// How a value is shown after `Invalid value:` in error messages.
pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        Value::Array(_) | Value::Object(_) => format!("\"{}\"", type_name(v)),
        other => other.to_string(),
    }
}
