//! The status parts both legacy kinds share.

use crate::terraform::framework::Attribute;

/// `status.conditions` in the knative-style shape of the legacy kinds (with `severity`).
pub(crate) fn legacy_conditions() -> Attribute {
    Attribute::list_of_objects(
        "conditions",
        vec![
            Attribute::string("type")
                .computed()
                .describe("Condition type, e.g. `Active`."),
            Attribute::string("status")
                .computed()
                .describe("`True`, `False` or `Unknown`."),
            Attribute::string("severity")
                .computed()
                .describe("How a failure of this condition is treated (`Error` when empty)."),
            Attribute::string("reason")
                .computed()
                .describe("Machine-readable reason for the last transition."),
            Attribute::string("message")
                .computed()
                .describe("Human-readable detail of the last transition."),
            Attribute::string("last_transition_time")
                .computed()
                .describe("When the status last changed."),
        ],
    )
    .computed()
    .describe("Conditions Karpenter reports about the object.")
}
