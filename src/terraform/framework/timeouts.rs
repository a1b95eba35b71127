//! The `timeouts {}` block every long-running resource offers, and reading it.

use std::time::Duration;

use super::schema::{Attribute, Block};
use super::validate::{go_duration, parse_go_duration};
use crate::terraform::tfvalue::Value;

/// A `timeouts {}` block with one attribute per operation (`create`, `update`, `delete`),
/// each documented with its default.
pub fn block(operations: &[(&'static str, &'static str)]) -> Block {
    Block::single(
        "timeouts",
        operations
            .iter()
            .map(|(op, default)| {
                Attribute::string(op)
                    .describe(format!(
                        "How long {op} may take, e.g. `30s`, `10m`, `1h`. Default `{default}`."
                    ))
                    .validate(go_duration())
                    .not_on_wire()
            })
            .collect(),
    )
    .describe("Time limits for operations that wait on the cluster or AWS.")
}

/// The timeout for `operation` from a resource's state or plan, or `default`.
pub fn get(value: &Value, operation: &str, default: Duration) -> Duration {
    value
        .get("timeouts")
        .and_then(|t| t.get(operation))
        .and_then(Value::as_str)
        .and_then(parse_go_duration)
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::values::object;

    #[test]
    fn reads_configured_timeouts_or_defaults() {
        let v = object([(
            "timeouts",
            object([("create", Value::string("90s")), ("delete", Value::Null)]),
        )]);
        assert_eq!(
            get(&v, "create", Duration::from_secs(600)),
            Duration::from_secs(90)
        );
        assert_eq!(
            get(&v, "delete", Duration::from_secs(600)),
            Duration::from_secs(600)
        );
        assert_eq!(
            get(&Value::Null, "create", Duration::from_secs(5)),
            Duration::from_secs(5)
        );
        assert_eq!(block(&[("create", "10m")]).attributes.len(), 1);
    }
}
