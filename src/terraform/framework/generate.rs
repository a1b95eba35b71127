//! Configuration from state (`GenerateResourceConfig`, Terraform 1.14+): what
//! `terraform plan -generate-config-out` and `terraform query -generate-config-out` write for
//! an imported or listed object, derived from the schema alone.
//!
//! The result must plan empty against the state it came from, and read as what a person would
//! have written:
//!
//! - computed-only attributes (status, ARNs, `tags_all`) are left out: they cannot be set;
//! - values equal to the attribute's default are left out: the plan fills the default in;
//! - everything else is kept as stored, nested attributes included, so the plan's
//!   configured values equal the prior state;
//! - blocks (`timeouts`) are left out: they hold provider-side settings with defaults.

use std::collections::BTreeMap;

use super::schema::{Attribute, Mode, Nesting, Schema};
use crate::terraform::tfvalue::Value;

/// The configuration that reproduces `state` under `schema` (null for a null state).
pub fn config_from_state(schema: &Schema, state: &Value) -> Value {
    let Value::Object(_) = state else {
        return Value::Null;
    };
    let mut out = object_config(&schema.attributes, state);
    if let Value::Object(fields) = &mut out {
        for block in &schema.blocks {
            fields.insert(block.name.to_string(), Value::Null);
        }
    }
    out
}

fn object_config(attributes: &[Attribute], state: &Value) -> Value {
    let mut out = BTreeMap::new();
    for a in attributes {
        let value = state.get(a.name).unwrap_or(&Value::Null);
        out.insert(a.name.to_string(), attribute_config(a, value));
    }
    Value::Object(out)
}

fn attribute_config(a: &Attribute, value: &Value) -> Value {
    if a.mode == Mode::Computed || a.deprecated.is_some() || !value.is_wholly_known() {
        return Value::Null;
    }
    if a.default.as_ref().is_some_and(|d| d == value) {
        return Value::Null;
    }
    let Some((nesting, nested)) = a.nested() else {
        return value.clone();
    };
    match (nesting, value) {
        (_, Value::Null) => Value::Null,
        (Nesting::Single, Value::Object(_)) => object_config(nested, value),
        (Nesting::List, Value::List(items)) => {
            Value::List(items.iter().map(|e| object_config(nested, e)).collect())
        }
        (Nesting::Set, Value::Set(items)) => {
            Value::Set(items.iter().map(|e| object_config(nested, e)).collect())
        }
        (Nesting::Map, Value::Map(entries)) => Value::Map(
            entries
                .iter()
                .map(|(k, e)| (k.clone(), object_config(nested, e)))
                .collect(),
        ),
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::plan::plan;
    use crate::terraform::framework::schema::Block;
    use crate::terraform::tfvalue::Type;

    fn schema() -> Schema {
        Schema::new(
            "test",
            vec![
                Attribute::string("name").required().replace_on_change(),
                Attribute::string("arn").computed(),
                Attribute::bool("force_destroy")
                    .optional_computed()
                    .default_value(Value::Bool(false)),
                Attribute::object(
                    "disruption",
                    vec![
                        Attribute::string("consolidate_after")
                            .optional_computed()
                            .default_value(Value::string("0s")),
                        Attribute::string("policy").optional(),
                    ],
                )
                .optional(),
                Attribute::list_of_objects(
                    "rules",
                    vec![
                        Attribute::string("id").optional(),
                        Attribute::string("state").computed(),
                    ],
                )
                .optional(),
                Attribute::map_of("labels", Type::String).optional(),
                Attribute::object("status", vec![Attribute::string("ready").computed()]).computed(),
            ],
        )
        .with_blocks(vec![Block::single(
            "timeouts",
            vec![Attribute::string("create").optional()],
        )])
    }

    fn state() -> Value {
        Value::object([
            ("name", Value::string("default")),
            ("arn", Value::string("arn:x")),
            ("force_destroy", Value::Bool(false)),
            (
                "disruption",
                Value::object([
                    ("consolidate_after", Value::string("0s")),
                    ("policy", Value::string("WhenEmpty")),
                ]),
            ),
            (
                "rules",
                Value::List(vec![Value::object([
                    ("id", Value::string("a")),
                    ("state", Value::string("on")),
                ])]),
            ),
            ("labels", Value::Null),
            ("status", Value::object([("ready", Value::string("True"))])),
            ("timeouts", Value::Null),
        ])
    }

    #[test]
    fn computed_and_default_values_are_left_out() {
        let config = config_from_state(&schema(), &state());
        assert_eq!(config.get("arn"), Some(&Value::Null));
        assert_eq!(config.get("status"), Some(&Value::Null));
        assert_eq!(config.get("force_destroy"), Some(&Value::Null));
        assert_eq!(
            config.get("disruption").and_then(|d| d.get("consolidate_after")),
            Some(&Value::Null)
        );
        assert_eq!(
            config.get("disruption").and_then(|d| d.get("policy")),
            Some(&Value::string("WhenEmpty"))
        );
        let rule = &config.get("rules").and_then(Value::as_elements).expect("rules")[0];
        assert_eq!(rule.get("state"), Some(&Value::Null));
        assert_eq!(config.get("name"), Some(&Value::string("default")));
        assert!(config.conforms_to(&schema().value_type()).is_ok());
    }

    /// What Terraform does with the generated configuration: plan it against the state it
    /// came from. Computed attributes left out keep their prior values (the proposed new
    /// state), defaults come back, and the plan equals the state.
    #[test]
    fn the_generated_configuration_plans_the_state_it_came_from() {
        let s = schema();
        let config = config_from_state(&s, &state());
        let p = plan(&s.attributes, &s.blocks, &config, &state());
        assert_eq!(p.planned, state());
        assert!(p.requires_replace.is_empty());
    }

    #[test]
    fn a_null_state_generates_a_null_configuration() {
        assert_eq!(config_from_state(&schema(), &Value::Null), Value::Null);
    }
}
