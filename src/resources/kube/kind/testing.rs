//! Test helpers shared by the schema tests of every kind: configs written as JSON with the Terraform
//! attribute names, turned into schema-shaped [`Value`]s (every attribute present, null when
//! not given; the string `"<unknown>"` stands for an unknown value).

use serde_json::Value as Json;

use crate::terraform::framework::plan::plan;
use crate::terraform::framework::schema::validate_attributes;
use crate::terraform::framework::schema::{AttrType, Nesting};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Number, Type, Value};

pub const UNKNOWN: &str = "<unknown>";

/// A whole config for `schema` from JSON (blocks are null unless given).
pub fn config(schema: &Schema, json: &Json) -> Value {
    let mut value = typed(&schema.attributes, json);
    if let Value::Object(fields) = &mut value {
        for b in &schema.blocks {
            fields.insert(b.name.to_string(), Value::Null);
        }
    }
    value
}

/// An object of `attributes` from a JSON object (absent attributes are null).
pub fn typed(attributes: &[Attribute], json: &Json) -> Value {
    if json.as_str() == Some(UNKNOWN) {
        return Value::unknown();
    }
    Value::Object(
        attributes
            .iter()
            .map(|a| {
                (
                    a.name.to_string(),
                    attribute(a, json.get(a.name).unwrap_or(&Json::Null)),
                )
            })
            .collect(),
    )
}

fn attribute(a: &Attribute, j: &Json) -> Value {
    if j.is_null() {
        return Value::Null;
    }
    if j.as_str() == Some(UNKNOWN) {
        return Value::unknown();
    }
    match &a.ty {
        AttrType::Plain(t) => plain(t, j),
        AttrType::Nested { nesting, attributes } => match nesting {
            Nesting::Single => typed(attributes, j),
            Nesting::List | Nesting::Set => Value::List(
                j.as_array()
                    .into_iter()
                    .flatten()
                    .map(|e| typed(attributes, e))
                    .collect(),
            ),
            Nesting::Map => Value::Map(
                j.as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, e)| (k.clone(), typed(attributes, e)))
                    .collect(),
            ),
        },
    }
}

fn plain(t: &Type, j: &Json) -> Value {
    match (t, j) {
        (_, Json::Null) => Value::Null,
        (_, Json::String(s)) if s == UNKNOWN => Value::unknown(),
        (Type::Dynamic, j) => crate::terraform::framework::convert::json_to_dynamic(j)
            .unwrap_or_else(|e| panic!("test config {j}: {e}")),
        (Type::String, Json::String(s)) => Value::string(s.clone()),
        (Type::Number, Json::Number(n)) => Value::Number(match n.as_i64() {
            Some(i) => Number::from_i64(i),
            None => n.as_f64().and_then(Number::from_f64).unwrap_or_else(Number::zero),
        }),
        (Type::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Type::List(e), Json::Array(items)) => Value::List(items.iter().map(|x| plain(e, x)).collect()),
        (Type::Map(e), Json::Object(m)) => {
            Value::Map(m.iter().map(|(k, x)| (k.clone(), plain(e, x))).collect())
        }
        _ => panic!("test config does not fit the schema: {j} for {t}"),
    }
}

/// Runs every validation Terraform would run at plan: the attribute validators and the
/// resource's cross-attribute rules.
pub fn diagnose(
    schema: &Schema,
    cross: fn(&Value, Option<&crate::context::plan_memory::PlanMemory>, &mut Diagnostics),
    config: &Value,
) -> Diagnostics {
    assert!(
        config.conforms_to(&schema.value_type()).is_ok(),
        "config does not conform: {:?}",
        config.conforms_to(&schema.value_type())
    );
    let mut d = Diagnostics::new();
    validate_attributes(
        &schema.attributes,
        &schema.blocks,
        config,
        &AttributePath::root(),
        &mut d,
    );
    cross(config, None, &mut d);
    d
}

/// The paths of the error diagnostics, as strings.
pub fn error_paths(d: &Diagnostics) -> Vec<String> {
    d.iter()
        .filter(|x| x.severity == crate::terraform::framework::Severity::Error)
        .map(|x| x.path.as_ref().map(ToString::to_string).unwrap_or_default())
        .collect()
}

/// Sets `value` at a `/`-separated path of attribute names and list indexes, creating
/// objects on the way (a list index may be one past the end, to append). `~` in a step
/// stands for `/` inside a map key (`/labels/karpenter.sh~nodepool`).
pub fn put(json: &mut Json, pointer: &str, value: Json) {
    let mut here = json;
    let steps: Vec<String> = pointer
        .trim_start_matches('/')
        .split('/')
        .map(|s| s.replace('~', "/"))
        .collect();
    for (n, step) in steps.iter().enumerate() {
        let last = n + 1 == steps.len();
        if let Ok(i) = step.parse::<usize>()
            && let Json::Array(items) = here
        {
            if i == items.len() {
                items.push(Json::Null);
            }
            if last {
                items[i] = value;
                return;
            }
            if items[i].is_null() {
                items[i] = Json::Object(Default::default());
            }
            here = &mut items[i];
            continue;
        }
        if !here.is_object() {
            *here = Json::Object(Default::default());
        }
        let Json::Object(m) = here else { unreachable!() };
        if last {
            m.insert(step.clone(), value);
            return;
        }
        here = m.entry(step.clone()).or_insert(Json::Null);
    }
}

/// Plans a create of `config`.
pub fn plan_create(schema: &Schema, config: &Value) -> Value {
    plan(&schema.attributes, &schema.blocks, config, &Value::Null).planned
}
