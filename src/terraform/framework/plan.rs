//! The generic planner: from configuration, prior state and schema to the planned state,
//! following Terraform's planning contract (see `shared/docs/plugin-protocol.md` §4).
//!
//! - Configured values are planned as configured.
//! - Unset attributes with a schema default are planned with the default (nested defaults
//!   included), so the plan shows what the server will hold.
//! - Unset computed attributes keep their prior value when nothing changes; when the object
//!   is created or changes, they become unknown unless marked `stable`.
//! - An object that still exists but is being deleted is planned as a create
//!   ([`plan_recreate`]), so the plan shows that apply recreates it.
//! - A configured value that means what the prior state holds (an attribute's `same`, e.g. a
//!   quantity written `1000` where the state holds `"1000"`) is planned as the prior value.
//! - Attributes marked `requires_replace` that differ from the prior state are reported, with
//!   their exact paths, so Terraform plans a replacement.

use std::collections::BTreeMap;

use super::schema::{Attribute, Block, Nesting};
use crate::terraform::tfvalue::{AttributePath, Value};

/// The result of planning one resource instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub planned: Value,
    pub requires_replace: Vec<AttributePath>,
}

/// Plans a resource from its configuration and prior state (`Value::Null` on create).
pub fn plan(attributes: &[Attribute], blocks: &[Block], config: &Value, prior: &Value) -> Plan {
    let mut planned = apply_config(attributes, blocks, config, prior);
    if planned != *prior {
        mark_unknown(attributes, config, prior, &mut planned);
    }
    let mut requires_replace = Vec::new();
    if !prior.is_null() {
        replacements(
            attributes,
            &planned,
            prior,
            &AttributePath::root(),
            &mut requires_replace,
        );
    }
    Plan {
        planned,
        requires_replace,
    }
}

/// Plans the recreation of an object that still exists but is being deleted
/// ([`super::ReadOutcome::BeingDeleted`]): the planned state is the one a create would plan
/// (computed attributes unknown, since the new object will have its own), while replacement
/// paths are still reported against the prior state.
pub fn plan_recreate(attributes: &[Attribute], blocks: &[Block], config: &Value, prior: &Value) -> Plan {
    let created = plan(attributes, blocks, config, &Value::Null);
    let mut requires_replace = Vec::new();
    if !prior.is_null() {
        replacements(
            attributes,
            &created.planned,
            prior,
            &AttributePath::root(),
            &mut requires_replace,
        );
    }
    Plan {
        planned: created.planned,
        requires_replace,
    }
}

/// Configured values and defaults; computed attributes left unset keep their prior value.
fn apply_config(attributes: &[Attribute], blocks: &[Block], config: &Value, prior: &Value) -> Value {
    let mut out = BTreeMap::new();
    for attribute in attributes {
        let c = config.get(attribute.name).unwrap_or(&Value::Null);
        let p = prior.get(attribute.name).unwrap_or(&Value::Null);
        out.insert(attribute.name.to_string(), plan_attribute(attribute, c, p));
    }
    for block in blocks {
        let c = config.get(block.name).cloned().unwrap_or(Value::Null);
        out.insert(block.name.to_string(), c);
    }
    Value::Object(out)
}

fn plan_attribute(attribute: &Attribute, config: &Value, prior: &Value) -> Value {
    if config.is_unknown() {
        return config.clone();
    }
    if config.is_null() {
        if let Some(default) = &attribute.default {
            return plan_nested_value(attribute, default, prior);
        }
        if attribute.is_computed() {
            return prior.clone();
        }
        return Value::Null;
    }
    if let Some(same) = attribute.same
        && !prior.is_null()
        && config.is_wholly_known()
        && same(config, prior)
    {
        // Functionally equivalent: Terraform accepts the prior value for it, and the object
        // in the API keeps what it holds.
        return prior.clone();
    }
    plan_nested_value(attribute, config, prior)
}

/// Recurses into nested attributes so defaults and computed values inside them are planned.
fn plan_nested_value(attribute: &Attribute, config: &Value, prior: &Value) -> Value {
    let Some((nesting, nested)) = attribute.nested() else {
        return config.clone();
    };
    match (nesting, config) {
        (Nesting::Single, Value::Object(_)) => apply_config(nested, &[], config, prior),
        (Nesting::List, Value::List(elements)) => Value::List(
            elements
                .iter()
                .enumerate()
                .map(|(i, e)| plan_element(nested, e, prior.as_elements().and_then(|p| p.get(i))))
                .collect(),
        ),
        (Nesting::Set, Value::Set(elements)) => {
            Value::Set(elements.iter().map(|e| plan_element(nested, e, None)).collect())
        }
        (Nesting::Map, Value::Map(entries)) => Value::Map(
            entries
                .iter()
                .map(|(k, e)| (k.clone(), plan_element(nested, e, prior.get(k))))
                .collect(),
        ),
        _ => config.clone(),
    }
}

fn plan_element(nested: &[Attribute], element: &Value, prior: Option<&Value>) -> Value {
    match element {
        Value::Object(_) => apply_config(nested, &[], element, prior.unwrap_or(&Value::Null)),
        other => other.clone(),
    }
}

/// On create or change: computed attributes the user did not set become unknown, unless stable
/// with a known prior value.
fn mark_unknown(attributes: &[Attribute], config: &Value, prior: &Value, planned: &mut Value) {
    let Value::Object(fields) = planned else { return };
    for attribute in attributes {
        let c = config.get(attribute.name).unwrap_or(&Value::Null);
        let p = prior.get(attribute.name).unwrap_or(&Value::Null);
        let Some(slot) = fields.get_mut(attribute.name) else {
            continue;
        };
        if c.is_null() && attribute.default.is_none() {
            let keep_prior = attribute.stable && !p.is_null();
            if attribute.is_computed() && !keep_prior {
                *slot = Value::unknown();
            }
            continue;
        }
        // Configured (or defaulted) nested objects may hold computed attributes of their own.
        let Some((nesting, nested)) = attribute.nested() else {
            continue;
        };
        let source = if c.is_null() {
            attribute.default.as_ref().unwrap_or(&Value::Null)
        } else {
            c
        };
        match (nesting, slot) {
            (Nesting::Single, slot @ Value::Object(_)) => mark_unknown(nested, source, p, slot),
            (Nesting::List | Nesting::Set, Value::List(elements) | Value::Set(elements)) => {
                for (i, element) in elements.iter_mut().enumerate() {
                    let ce = source
                        .as_elements()
                        .and_then(|v| v.get(i))
                        .unwrap_or(&Value::Null);
                    let pe = p.as_elements().and_then(|v| v.get(i)).unwrap_or(&Value::Null);
                    if element != pe {
                        mark_unknown(nested, ce, pe, element);
                    }
                }
            }
            (Nesting::Map, Value::Map(entries)) => {
                for (k, element) in entries.iter_mut() {
                    let ce = source.get(k).unwrap_or(&Value::Null);
                    let pe = p.get(k).unwrap_or(&Value::Null);
                    if element != pe {
                        mark_unknown(nested, ce, pe, element);
                    }
                }
            }
            _ => {}
        }
    }
}

fn replacements(
    attributes: &[Attribute],
    planned: &Value,
    prior: &Value,
    path: &AttributePath,
    out: &mut Vec<AttributePath>,
) {
    for attribute in attributes {
        let pl = planned.get(attribute.name).unwrap_or(&Value::Null);
        let pr = prior.get(attribute.name).unwrap_or(&Value::Null);
        if pl == pr {
            continue;
        }
        let here = path.attr(attribute.name);
        if attribute.requires_replace {
            out.push(here);
            continue;
        }
        let Some((nesting, nested)) = attribute.nested() else {
            continue;
        };
        match nesting {
            Nesting::Single => replacements(nested, pl, pr, &here, out),
            Nesting::List => {
                let (Some(a), Some(b)) = (pl.as_elements(), pr.as_elements()) else {
                    continue;
                };
                for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                    replacements(nested, x, y, &here.index(i), out);
                }
            }
            Nesting::Map => {
                let (Some(a), Some(b)) = (pl.as_entries(), pr.as_entries()) else {
                    continue;
                };
                for (k, x) in a {
                    if let Some(y) = b.get(k) {
                        replacements(nested, x, y, &here.key(k.clone()), out);
                    }
                }
            }
            Nesting::Set => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::schema::Attribute;
    use crate::terraform::tfvalue::Type;

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    fn attrs() -> Vec<Attribute> {
        vec![
            Attribute::string("name").required().replace_on_change(),
            Attribute::string("policy").default_value(Value::string("WhenEmpty")),
            Attribute::string("uid").computed().stable(),
            Attribute::string("phase").computed(),
            Attribute::object(
                "disruption",
                vec![Attribute::string("after").default_value(Value::string("0s"))],
            )
            .default_value(obj(&[("after", Value::Null)])),
            Attribute::map_of("labels", Type::String),
        ]
    }

    /// What the state holds after applying `configured(name)`.
    fn applied(name: &str) -> Value {
        obj(&[
            ("name", Value::string(name)),
            ("policy", Value::string("WhenEmpty")),
            ("uid", Value::string("u-1")),
            ("phase", Value::string("Ready")),
            ("disruption", obj(&[("after", Value::string("0s"))])),
            ("labels", Value::Null),
        ])
    }

    /// A configuration that sets only `name`.
    fn configured(name: &str) -> Value {
        obj(&[
            ("name", Value::string(name)),
            ("policy", Value::Null),
            ("uid", Value::Null),
            ("phase", Value::Null),
            ("disruption", Value::Null),
            ("labels", Value::Null),
        ])
    }

    #[test]
    fn create_plans_defaults_and_unknown_computed() {
        let config = configured("a");
        let p = plan(&attrs(), &[], &config, &Value::Null);
        assert_eq!(p.planned.get("policy"), Some(&Value::string("WhenEmpty")));
        assert!(p.planned.get("uid").is_some_and(Value::is_unknown));
        assert!(p.planned.get("phase").is_some_and(Value::is_unknown));
        assert_eq!(
            p.planned.get("disruption").and_then(|d| d.get("after")),
            Some(&Value::string("0s"))
        );
        assert_eq!(p.planned.get("labels"), Some(&Value::Null));
        assert!(p.requires_replace.is_empty());
    }

    #[test]
    fn unchanged_object_plans_exactly_the_prior_state() {
        let prior = applied("a");
        let config = configured("a");
        let p = plan(&attrs(), &[], &config, &prior);
        assert_eq!(p.planned, prior);
    }

    #[test]
    fn change_keeps_stable_and_unknowns_the_rest() {
        let prior = applied("a");
        let config = configured("b");
        let p = plan(&attrs(), &[], &config, &prior);
        assert_eq!(p.planned.get("uid"), Some(&Value::string("u-1")));
        assert!(p.planned.get("phase").is_some_and(Value::is_unknown));
        assert_eq!(p.requires_replace, vec![AttributePath::root().attr("name")]);
    }

    /// An object being deleted plans as a create even when the configuration matches the
    /// prior state (stable computed attributes too: the new object has its own), and a name
    /// change still replaces.
    #[test]
    fn recreate_plans_computed_unknown_against_an_unchanged_prior() {
        let prior = applied("a");
        let config = configured("a");
        assert_eq!(plan(&attrs(), &[], &config, &prior).planned, prior);
        let p = plan_recreate(&attrs(), &[], &config, &prior);
        assert!(p.planned.get("uid").is_some_and(Value::is_unknown));
        assert!(p.planned.get("phase").is_some_and(Value::is_unknown));
        assert_eq!(p.planned.get("policy"), Some(&Value::string("WhenEmpty")));
        assert!(p.requires_replace.is_empty());
        let p = plan_recreate(&attrs(), &[], &configured("b"), &prior);
        assert_eq!(p.requires_replace, vec![AttributePath::root().attr("name")]);
    }

    /// Two spellings of one value (an attribute's `same`): the configured one is planned as the
    /// prior when they mean the same, and as configured otherwise or on create.
    #[test]
    fn a_configured_value_that_means_the_prior_is_planned_as_the_prior() {
        fn same_number(a: &Value, b: &Value) -> bool {
            let n = |v: &Value| match v.strip_dynamic() {
                Value::String(s) => s.parse::<i64>().ok(),
                Value::Number(n) => n.as_i64(),
                _ => None,
            };
            n(a).is_some() && n(a) == n(b)
        }
        let attrs = vec![Attribute::dynamic("cpu").same_when(same_number)];
        let prior = obj(&[("cpu", Value::dynamic(Type::String, Value::string("1000")))]);
        let config = obj(&[("cpu", Value::dynamic(Type::Number, Value::number(1000)))]);
        assert_eq!(plan(&attrs, &[], &config, &prior).planned, prior);
        let other = obj(&[("cpu", Value::dynamic(Type::Number, Value::number(2000)))]);
        assert_eq!(plan(&attrs, &[], &other, &prior).planned, other);
        assert_eq!(plan(&attrs, &[], &config, &Value::Null).planned, config);
    }
}
