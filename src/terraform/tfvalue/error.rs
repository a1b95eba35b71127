//! Errors of the value codecs: where in the value it happened and what went wrong.

use super::path::AttributePath;

/// Bytes that do not hold a value of the expected type (msgpack or JSON).
///
/// Displays as `<message>` at the root and `<path>: <message>` below it, e.g.
/// `spec.limits: object is missing attribute "cpu"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", located(&self.path, &self.message))]
pub struct DecodeError {
    /// Where in the value the problem is (root when it is not inside anything).
    pub path: AttributePath,
    pub message: String,
}

/// A value that cannot be encoded as the given type (it does not conform to it, or it holds
/// something the format cannot carry, such as an unknown in JSON).
///
/// Displays like [`DecodeError`]: `<path>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", located(&self.path, &self.message))]
pub struct EncodeError {
    pub path: AttributePath,
    pub message: String,
}

/// Bytes that are not a valid cty type JSON.
///
/// Displays as `invalid type JSON: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid type JSON: {message}")]
pub struct TypeJsonError {
    pub message: String,
}

fn located(path: &AttributePath, message: &str) -> String {
    if path.is_root() {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}
