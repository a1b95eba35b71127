//! The attributes every kind's schema has in the same shape: `name`, `metadata`, `force_destroy`,
//! the `timeouts {}` block and `status.conditions`; and how a nested default is written.

use crate::resources::kube::kind::rules;
use crate::terraform::framework::schema::Block;
use crate::terraform::framework::validate as v;
use crate::terraform::framework::{Attribute, timeouts};
use crate::terraform::tfvalue::{Type, Value};

/// `name`: the object's name; changing it replaces the object.
pub(crate) fn name_attribute(kind: &str) -> Attribute {
    Attribute::string("name")
        .required()
        .replace_on_change()
        .not_on_wire()
        .describe(format!(
            "Name of the {kind} (a Kubernetes object name: lowercase letters, digits, `-` and `.`, at most 253 characters). Changing it replaces the {kind}."
        ))
        .validate(rules::names::object_name())
}

/// `metadata`: the object's own labels and annotations (not the nodes').
pub(crate) fn metadata_attribute(kind: &str) -> Attribute {
    Attribute::object(
        "metadata",
        vec![
            Attribute::map_of("labels", Type::String)
                .describe(format!("Labels on the {kind} object itself."))
                .validate(rules::labels::object_meta_keys())
                .validate(v::each(rules::labels::label_value())),
            Attribute::map_of("annotations", Type::String)
                .describe(format!("Annotations on the {kind} object itself."))
                .validate(rules::labels::object_meta_keys()),
        ],
    )
    .not_on_wire()
    .describe(format!(
        "Labels and annotations of the {kind} object itself. Entries that others (e.g. Karpenter) add are not managed here."
    ))
}

/// `force_destroy`: a provider-only switch (never sent to the cluster, so never drift) for the
/// teardown of `crate::resources::kube::teardown` when Karpenter is gone. `cleanup` says what is
/// cleaned up for this kind.
pub(crate) fn force_destroy_attribute(kind: &str, cleanup: &str) -> Attribute {
    Attribute::bool("force_destroy")
        .default_value(Value::Bool(false))
        .not_on_wire()
        .describe(format!(
            "When true and a destroy finds that no Karpenter controller is running (its leader-election Lease \
             `karpenter-leader-election` is gone, released or no longer renewed), the provider does Karpenter's \
             part of deleting the {kind} itself: {cleanup} Everything is scoped by the tags Karpenter puts on what \
             it creates, including the cluster's name, which comes from the provider's `cluster_name` \
             (or its `kubernetes {{ eks {{ cluster_name }} }}`); nothing without those tags is touched. Set it (and apply) \
             before the destroy. When false (the default), such a destroy fails within about half a minute \
             (once per run, however many objects wait), saying what is stuck. With Karpenter running, the delete is Karpenter's, whatever this says. On an EKS Auto Mode cluster (one that serves `nodeclasses.eks.amazonaws.com`), AWS runs Karpenter outside the cluster: it has no Lease, which never counts as gone there, so the delete waits for AWS's Karpenter and this does nothing."
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
