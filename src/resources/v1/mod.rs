//! Typed schemas and offline validation for the Karpenter v1 kinds: `karpenter_node_pool`
//! (karpenter.sh/v1 NodePool) and `karpenter_ec2_node_class` (karpenter.k8s.aws/v1 EC2NodeClass),
//! following the released v1.14.1 CRDs field by field.
//!
//! Shape (design.md §1): `name`, `metadata = { labels, annotations }` (the object's own metadata,
//! mapped by the resource, not part of `spec`), every `spec` field as a top-level attribute
//! (snake_case of the CRD's camelCase name; explicit wire names where that rule would not give
//! the CRD name), `status` (computed), and a `timeouts {}` block. This module holds the parts
//! both kinds share; `rules` holds the shared validators.

pub mod ec2_node_class;
pub mod node_pool;
pub mod rules;

pub use ec2_node_class::{EC2_NODE_CLASS, validate_ec2_node_class};
pub use node_pool::{NODE_POOL, node_pool_replacements, validate_node_pool};

use crate::framework::schema::Block;
use crate::framework::validate as v;
use crate::framework::{Attribute, timeouts};
use crate::tfvalue::{Type, Value};

/// `name`: the object's name; changing it replaces the object.
pub(crate) fn name_attribute(kind: &str) -> Attribute {
    Attribute::string("name")
        .required()
        .replace_on_change()
        .not_on_wire()
        .describe(format!(
            "Name of the {kind} (a Kubernetes object name: lowercase letters, digits, `-` and `.`, at most 253 characters). Changing it replaces the {kind}."
        ))
        .validate(rules::object_name())
}

/// `metadata`: the object's own labels and annotations (not the nodes').
pub(crate) fn metadata_attribute(kind: &str) -> Attribute {
    Attribute::object(
        "metadata",
        vec![
            Attribute::map_of("labels", Type::String)
                .describe(format!("Labels on the {kind} object itself."))
                .validate(rules::object_meta_keys())
                .validate(v::each(rules::label_value())),
            Attribute::map_of("annotations", Type::String)
                .describe(format!("Annotations on the {kind} object itself."))
                .validate(rules::object_meta_keys()),
        ],
    )
    .not_on_wire()
    .describe(format!(
        "Labels and annotations of the {kind} object itself. Entries that others (e.g. Karpenter) add are not managed here."
    ))
}

/// The `timeouts {}` block both kinds offer.
pub(crate) fn timeouts_block() -> Block {
    timeouts::block(&[("create", "10m"), ("update", "10m"), ("delete", "15m")])
}

/// `status.conditions`: the condition list both kinds report.
pub(crate) fn conditions_attribute() -> Attribute {
    Attribute::list_of_objects(
        "conditions",
        vec![
            Attribute::string("type")
                .computed()
                .describe("Condition type, e.g. `Ready`."),
            Attribute::string("status")
                .computed()
                .describe("`True`, `False` or `Unknown`."),
            Attribute::string("reason")
                .computed()
                .describe("Machine-readable reason for the last transition."),
            Attribute::string("message")
                .computed()
                .describe("Human-readable detail of the last transition."),
            Attribute::string("last_transition_time")
                .computed()
                .describe("When the status last changed (RFC 3339)."),
            Attribute::number("observed_generation")
                .computed()
                .describe("The object generation the condition was computed for."),
        ],
    )
    .computed()
    .describe("Conditions Karpenter reports; `Ready` summarises the others.")
}

/// An object value with every attribute of `attributes` null except the given ones: how a
/// default for a nested object is written (every attribute must be present).
pub(crate) fn object_with(attributes: &[Attribute], set: &[(&str, Value)]) -> Value {
    Value::Object(
        attributes
            .iter()
            .map(|a| {
                let value = set
                    .iter()
                    .find(|(n, _)| *n == a.name)
                    .map_or(Value::Null, |(_, v)| v.clone());
                (a.name.to_string(), value)
            })
            .collect(),
    )
}

