//! Schema and offline validation of `karpenter_capacity_buffer` (CapacityBuffer,
//! `autoscaling.x-k8s.io/v1beta1`, the CRD Karpenter v1.14.1 ships behind the `CapacityBuffer`
//! feature gate): spare capacity kept for a pod template (`pod_template_ref`) or as a share of a
//! scalable workload (`scalable_ref`). Every `spec` field is typed and every CRD rule is checked
//! at plan (quantities in `limits`, non-negative `replicas`/`percentage`, non-empty reference
//! names, and in [`validate_capacity_buffer`] the two cross-field rules).
//!
//! CapacityBuffer is the one namespaced kind: `namespace` (default `default`, replaces on
//! change) addresses the object, and import takes `namespace/name`; the rest is the shared
//! [`super::object`] code of every kind.

use crate::context::plan_memory::PlanMemory;
use crate::resources::kube::object::STATUS_IN_PLANS;
use std::sync::LazyLock;

use crate::resources::kube::kind::attributes::{
    conditions_attribute, metadata_attribute, name_attribute, timeouts_block,
};
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::has;
use crate::resources::kube::kind::upgrades::limits_to_dynamic;
use crate::resources::kube::object::DEFAULT_NAMESPACE;
use crate::terraform::framework::validate::{self as v};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Value};

/// The CRD's default provisioning strategy.
pub const ACTIVE_CAPACITY: &str = "buffer.x-k8s.io/active-capacity";

/// The schema of the CapacityBuffer kind.
pub static CAPACITY_BUFFER: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        format!("A CapacityBuffer (`autoscaling.x-k8s.io/v1beta1`): spare capacity Karpenter keeps ready, as placeholder \
         pods shaped like a PodTemplate (`pod_template_ref`) or like the pods of a scalable workload \
         (`scalable_ref`). Needs Karpenter v1.14 or later with the `CapacityBuffer` feature gate enabled (Helm \
         value `settings.featureGates.capacityBuffer=true`); when the cluster does not have the CapacityBuffer \
         CRD, apply says so instead of waiting. Unlike the other Karpenter kinds it is namespaced: `namespace` \
         (default `default`) and `name` address it, and import takes `<namespace>/<name>`. The attributes follow \
         the CapacityBuffer `spec` field by field. Plan validates everything the CRD checks. \
         {} {}", crate::resources::kube::kind::describe::PLAN_READS_CRD, crate::resources::kube::kind::describe::PLAN_READS_HEALTH),
        vec![
            name_attribute("CapacityBuffer"),
            Attribute::string("namespace")
                .default_value(Value::string(DEFAULT_NAMESPACE))
                .replace_on_change()
                .not_on_wire()
                .describe(
                    "Namespace of the CapacityBuffer (and of the PodTemplate or workload it refers to); `default` \
                     when not set, as in the kubernetes provider. The namespace must exist. Changing it replaces \
                     the buffer.",
                )
                .validate(v::length(1, 63))
                .validate(v::matches(
                    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                    "a namespace name: lowercase letters, digits and `-`, starting and ending with a letter or digit",
                )),
            metadata_attribute("CapacityBuffer"),
            Attribute::object(
                "pod_template_ref",
                vec![Attribute::string("name")
                    .required()
                    .describe("Name of the PodTemplate.")
                    .validate(v::non_empty())],
            )
            .describe(
                "The PodTemplate (in the same namespace) one chunk of the buffer looks like. Needs `replicas` or \
                 `limits`; not together with `scalable_ref`.",
            ),
            Attribute::object(
                "scalable_ref",
                vec![
                    Attribute::string("api_group")
                        .describe("API group of the workload, e.g. `apps`; empty for the core group."),
                    Attribute::string("kind")
                        .required()
                        .describe("Kind of the workload, e.g. `Deployment`.")
                        .validate(v::non_empty()),
                    Attribute::string("name")
                        .required()
                        .describe("Name of the workload.")
                        .validate(v::non_empty()),
                ],
            )
            .describe(
                "A workload with a scale subresource (e.g. a Deployment) whose pods one chunk of the buffer looks \
                 like. Not together with `pod_template_ref`.",
            ),
            Attribute::number("replicas")
                .describe(
                    "How many chunks to keep. With `percentage` too, the smaller of the two; with neither, as many \
                     chunks as fit in `limits`.",
                )
                .validate(rules::numbers::whole_number(Some(0), true)),
            Attribute::number("percentage")
                .describe(
                    "Buffer size as a percentage of the `scalable_ref` workload's replicas, rounded up to at least \
                     one chunk. Only with `scalable_ref`.",
                )
                .validate(rules::numbers::whole_number(Some(0), true)),
            rules::numbers::quantity_map("limits").describe(
                "Upper bounds on the resources all chunks request together (`cpu`, `memory`, …, as Kubernetes \
                 quantities: a whole number or a string, each kept as written); they cap the number of chunks.",
            ),
            Attribute::string("provisioning_strategy")
                .default_value(Value::string(ACTIVE_CAPACITY))
                .describe(
                    "How the buffer is kept: `buffer.x-k8s.io/active-capacity` (the default) creates placeholder \
                     pods that make the cluster scale up.",
                ),
            status(),
        ],
    )
    .with_blocks(vec![timeouts_block()])
    .with_upgrade_steps(&[limits_to_dynamic])
});

fn status() -> Attribute {
    Attribute::object(
        "status",
        vec![
            conditions_attribute(),
            Attribute::number("replicas")
                .computed()
                .describe("Number of chunks currently provisioned."),
            Attribute::object(
                "pod_template_ref",
                vec![
                    Attribute::string("name")
                        .computed()
                        .describe("Name of the PodTemplate."),
                ],
            )
            .computed()
            .describe("The PodTemplate the buffer was last provisioned from."),
            Attribute::number("pod_template_generation")
                .computed()
                .describe("Generation of that PodTemplate."),
            Attribute::string("provisioning_strategy")
                .computed()
                .describe("The provisioning strategy in effect."),
        ],
    )
    .computed()
    .not_on_wire()
    .describe(format!(
        "What the buffer controller reports (read only). {STATUS_IN_PLANS}"
    ))
}

/// The CRD's cross-field rules: a `pod_template_ref` needs `replicas` or `limits`, and
/// `pod_template_ref` and `scalable_ref` exclude each other. Unknown values decide nothing.
pub fn validate_capacity_buffer(config: &Value, _memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    let template = has(config, "pod_template_ref");
    if template == Some(true) && has(config, "scalable_ref") == Some(true) {
        diags.error_at(
            &root.attr("scalable_ref"),
            "Conflicting attributes",
            "pod_template_ref and scalable_ref cannot both be set: a buffer copies either a PodTemplate or a workload. Keep one of them.",
        );
    }
    if template == Some(true)
        && has(config, "replicas") == Some(false)
        && has(config, "limits") == Some(false)
    {
        diags.error_at(
            &root.attr("pod_template_ref"),
            "Missing attribute",
            "A buffer with pod_template_ref needs replicas or limits to know how many chunks to keep: set one of them.",
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::*;
    use crate::resources::kube::kind::testing::{config, diagnose, error_paths};

    fn check(json: &Json) -> Vec<String> {
        error_paths(&diagnose(
            &CAPACITY_BUFFER,
            validate_capacity_buffer,
            &config(&CAPACITY_BUFFER, json),
        ))
    }

    #[test]
    fn realistic_buffers_are_valid() {
        for ok in [
            json!({"name": "ci", "namespace": "ci", "pod_template_ref": {"name": "runner"}, "replicas": 3}),
            json!({"name": "web", "namespace": "web", "scalable_ref": {"api_group": "apps", "kind": "Deployment", "name": "web"}, "percentage": 20}),
            json!({"name": "cap", "namespace": "a", "pod_template_ref": {"name": "t"}, "limits": {"cpu": "10", "memory": "20Gi"}}),
        ] {
            assert!(check(&ok).is_empty(), "{ok}: {:?}", check(&ok));
        }
    }

    #[test]
    fn each_crd_rule_fails_on_its_attribute() {
        let cases: Vec<(Json, &str)> = vec![
            (
                json!({"pod_template_ref": {"name": "t"}, "replicas": 1, "scalable_ref": {"kind": "Deployment", "name": "w"}}),
                "scalable_ref",
            ),
            (json!({"pod_template_ref": {"name": "t"}}), "pod_template_ref"),
            (
                json!({"pod_template_ref": {"name": ""}, "replicas": 1}),
                "pod_template_ref.name",
            ),
            (
                json!({"scalable_ref": {"kind": "", "name": "w"}}),
                "scalable_ref.kind",
            ),
            (
                json!({"scalable_ref": {"kind": "Deployment", "name": "w"}, "replicas": -1}),
                "replicas",
            ),
            (
                json!({"scalable_ref": {"kind": "Deployment", "name": "w"}, "percentage": 2147483648u64}),
                "percentage",
            ),
            (
                json!({"scalable_ref": {"kind": "Deployment", "name": "w"}, "limits": {"cpu": "lots"}}),
                "limits[\"cpu\"]",
            ),
            (
                json!({"namespace": "Not_A_Namespace", "scalable_ref": {"kind": "D", "name": "w"}}),
                "namespace",
            ),
        ];
        for (patch, path) in cases {
            let mut j = json!({"name": "b", "namespace": "default"});
            for (k, val) in patch.as_object().into_iter().flatten() {
                j[k] = val.clone();
            }
            assert_eq!(check(&j), vec![path.to_string()], "{j}");
        }
    }

    #[test]
    fn unknown_values_decide_nothing() {
        let j = json!({"name": "b", "namespace": "d", "pod_template_ref": {"name": "t"}, "replicas": "<unknown>"});
        assert!(check(&j).is_empty(), "{:?}", check(&j));
    }
}

/// Checks the schema against the CapacityBuffer CRD of v1.14.1 (the only release that ships it).
#[cfg(test)]
mod crd_coverage {
    use super::CAPACITY_BUFFER;
    use crate::resources::kube::kind::crd_coverage::{compare_root, load_version};

    #[test]
    fn capacity_buffer_covers_the_crd() {
        for dir in ["v1-alpha", "versions/v1.14.1"] {
            let root = load_version(dir, "v1beta1", "autoscaling.x-k8s.io_capacitybuffers.yaml");
            let problems = compare_root(&CAPACITY_BUFFER, &root, "CapacityBuffer", &[]);
            assert!(problems.is_empty(), "{dir}: {}", problems.join("\n"));
        }
    }

    /// The comparison sees both directions for this schema: a CRD field without an attribute,
    /// an attribute the CRD does not have, and a default that differs from the CRD's.
    #[test]
    fn the_comparison_fails_on_a_missing_an_extra_and_a_wrong_default() {
        use crate::terraform::framework::Attribute;
        use crate::terraform::tfvalue::Value;
        let root = load_version("v1-alpha", "v1beta1", "autoscaling.x-k8s.io_capacitybuffers.yaml");
        let mut changed = CAPACITY_BUFFER.clone();
        changed.attributes.retain(|a| a.name != "percentage");
        changed.attributes.push(Attribute::number("min_replicas"));
        for a in &mut changed.attributes {
            if a.name == "provisioning_strategy" {
                a.default = Some(Value::string("buffer.x-k8s.io/other"));
            }
        }
        let problems = compare_root(&changed, &root, "CapacityBuffer", &[]).join("\n");
        for expected in [
            "spec.percentage has no attribute",
            "spec.minReplicas is not a CRD field",
            "spec.provisioningStrategy defaults to",
        ] {
            assert!(
                problems.contains(expected),
                "{expected:?} missing from:\n{problems}"
            );
        }
    }
}
