//! Schema and offline validation of `karpenter_provisioner` (karpenter.sh/v1alpha5 Provisioner,
//! CRD v0.32.10): every `spec` field as a typed attribute (no server defaults: the CRD has none),
//! and the checks Karpenter's v0.32 admission webhook made, so they fail at plan.
//!
//! Per-attribute rules are validators on the attributes; [`validate_provisioner`] adds the ones
//! that span attributes (consolidation vs. `ttl_seconds_after_empty`, `provider_json` vs.
//! `provider_ref`, taint key/effect pairs unique across `taints` and `startup_taints`).

use crate::context::plan_memory::PlanMemory;
use crate::resources::kube::object::STATUS_IN_PLANS;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::labels::{restricted_label_problem, well_known_values};
use super::status::legacy_conditions;
use crate::instance_types::Flavor;
use crate::instance_types::requirements::{Operator, Requirement};
use crate::resources::kube::kind::attributes::{
    force_destroy_attribute, metadata_attribute, name_attribute, timeouts_block,
};
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::{elements, has};
use crate::resources::kube::v1::ec2_node_class::kubelet::{kubelet_attributes, kubelet_rule};
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

/// Requirement operators Karpenter ≤ 0.32 supported (no `Gte`/`Lte`, which came with v1).
pub const OPERATORS: &[&str] = &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"];
const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// What `force_destroy` does for this kind (its docs, and the error that suggests it).
pub const PROVISIONER_CLEANUP: &str = "it terminates the EC2 instances tagged `karpenter.sh/provisioner-name` = this Provisioner's name and `kubernetes.io/cluster/<cluster name>` = `owned`, waits until they are shutting down or terminated, then removes the Kubernetes Nodes of the Provisioner and the finalizers that only Karpenter would remove.";

/// The schema of `karpenter_provisioner`.
pub static PROVISIONER: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        format!("A legacy Karpenter Provisioner (`karpenter.sh/v1alpha5`, Karpenter ≤ 0.32): which nodes Karpenter may \
         launch (requirements, labels, taints, the AWSNodeTemplate they use), when it removes them (empty-node \
         TTL, expiry, consolidation) and how much capacity it may hold. The attributes follow the Provisioner \
         `spec` field by field (`ttlSecondsAfterEmpty` → `ttl_seconds_after_empty`); `labels` and `annotations` \
         are the nodes' (spec.labels/spec.annotations), the object's own are under `metadata`. Plan checks what \
         Karpenter's admission webhook checked. {} {}", crate::resources::kube::kind::describe::PLAN_READS_CRD, crate::resources::kube::kind::describe::PLAN_READS_HEALTH),
        vec![
            name_attribute("Provisioner"),
            metadata_attribute("Provisioner"),
            Attribute::map_of("labels", Type::String)
                .describe(
                    "Labels put on every node the Provisioner launches (spec.labels). `karpenter.sh/provisioner-name` \
                     and `kubernetes.io/hostname` are not allowed; keys in the `kubernetes.io`, `k8s.io`, \
                     `karpenter.sh` and `karpenter.k8s.aws` domains must be well-known labels.",
                )
                .validate(node_label_keys())
                .validate(v::each(rules::labels::label_value())),
            Attribute::map_of("annotations", Type::String)
                .describe("Annotations put on every node the Provisioner launches (spec.annotations).")
                .validate(rules::labels::object_meta_keys()),
            requirements(),
            taints("taints", "Taints put on every node; only pods that tolerate them are provisioned for."),
            taints(
                "startup_taints",
                "Taints put on nodes when they start, which a DaemonSet or other system removes once the node is \
                 ready; pods need not tolerate them to be provisioned for.",
            ),
            Attribute::object(
                "provider_ref",
                vec![
                    Attribute::string("name")
                        .required()
                        .describe("Name of the AWSNodeTemplate, e.g. `karpenter_node_template.default.name`.")
                        .validate(v::non_empty()),
                    Attribute::string("kind")
                        .describe("Kind of the referenced object (`AWSNodeTemplate` when unset)."),
                    Attribute::string("api_version")
                        .describe("API version of the referenced object (`karpenter.k8s.aws/v1alpha1` when unset)."),
                ],
            )
            .describe("The AWSNodeTemplate holding the AWS settings of the nodes. Cannot be combined with `provider_json`."),
            Attribute::string("provider_json")
                .json_on_wire("provider")
                .describe(
                    "The deprecated inline AWS settings (spec.provider), as a JSON-encoded object \
                     (`jsonencode({ subnetSelector = { … } })`). Prefer `provider_ref`; cannot be combined with it.",
                )
                .validate(json_object()),
            Attribute::object(
                "kubelet_configuration",
                kubelet_attributes()
                    .into_iter()
                    .chain([Attribute::string("container_runtime")
                        .describe("Container runtime of the nodes, e.g. `containerd`.")])
                    .collect(),
            )
            .describe("Kubelet settings passed to the nodes' bootstrap.")
            .validate(kubelet_rule()),
            Attribute::object(
                "limits",
                vec![
                    Attribute::map_of("resources", Type::String)
                        .describe(
                            "Upper bounds on the resources all nodes of the Provisioner may hold together, by \
                             resource name (`cpu`, `memory`, `nvidia.com/gpu`, …), as Kubernetes quantities.",
                        )
                        .validate(v::each(rules::numbers::quantity())),
                ],
            )
            .describe("Bounds on the capacity the Provisioner may launch."),
            Attribute::object(
                "consolidation",
                vec![
                    Attribute::bool("enabled")
                        .describe("Whether Karpenter replaces or removes nodes to reduce cost. Excludes `ttl_seconds_after_empty`."),
                ],
            )
            .describe("Consolidation settings."),
            Attribute::number("ttl_seconds_after_empty")
                .describe(
                    "Seconds after a node became empty (no pods but daemonsets) before Karpenter deletes it; unset \
                     disables. Cannot be combined with `consolidation.enabled = true`.",
                )
                .validate(rules::numbers::whole_number(Some(0), false)),
            Attribute::number("ttl_seconds_until_expired")
                .describe(
                    "Seconds after a node was created before Karpenter replaces it (e.g. `2592000`, 30 days); unset \
                     disables expiry.",
                )
                .validate(rules::numbers::whole_number(Some(0), false)),
            Attribute::number("weight")
                .describe("Priority over other Provisioners (1–100, higher first); unset counts as 0.")
                .validate(v::int_range(1, 100)),
            status(),
            force_destroy_attribute("Provisioner", PROVISIONER_CLEANUP),
        ],
    )
    .with_blocks(vec![timeouts_block()])
});

/// Node labels: valid label keys and values, outside the era's restricted keys and domains, and
/// the fixed values of `karpenter.sh/capacity-type`.
fn node_label_keys() -> impl Validator {
    v::rule(
        "Keys must be valid label keys; `karpenter.sh/provisioner-name` and `kubernetes.io/hostname` are not allowed; keys of the `kubernetes.io`, `k8s.io`, `karpenter.sh` and `karpenter.k8s.aws` domains (except `node.kubernetes.io`, `node-restriction.kubernetes.io`, `kops.k8s.io`) must be well-known labels; `karpenter.sh/capacity-type` is `spot` or `on-demand`.",
        |value, path, diags| {
            for (key, val) in value.as_entries().into_iter().flatten() {
                let here = path.key(key.clone());
                if let Some(problem) =
                    rules::labels::label_key_problem(key).or_else(|| restricted_label_problem(key))
                {
                    invalid(diags, &here, format!("Label key not allowed: {problem}."));
                } else if let (Some(allowed), Some(s)) = (well_known_values(key), val.as_str())
                    && !allowed.contains(&s)
                {
                    invalid(
                        diags,
                        &here,
                        format!(
                            "{s:?} is not a valid value for {key:?}: use one of {}.",
                            allowed.join(", ")
                        ),
                    );
                }
            }
        },
    )
}

fn requirement_key() -> impl Validator {
    v::check(
        "Must be a label key outside the restricted keys and domains (see `labels`).",
        |value| {
            let key = value.as_str()?;
            rules::labels::label_key_problem(key)
                .or_else(|| restricted_label_problem(key))
                .map(|p| format!("Requirement key not allowed: {p}."))
        },
    )
}

fn requirements() -> Attribute {
    Attribute::list_of_objects(
        "requirements",
        vec![
            Attribute::string("key")
                .required()
                .describe(
                    "Label key the requirement is about, e.g. `karpenter.sh/capacity-type`, \
                     `node.kubernetes.io/instance-type`, `karpenter.k8s.aws/instance-family`.",
                )
                .validate(requirement_key()),
            Attribute::string("operator")
                .required()
                .describe("`In`, `NotIn`, `Exists`, `DoesNotExist`, or the numeric `Gt`, `Lt`.")
                .validate(v::one_of(OPERATORS)),
            Attribute::list_of("values", Type::String)
                .describe(
                    "Values for the operator: at least one for `In`, exactly one non-negative whole number for \
                     `Gt`/`Lt`. Each is a label value (at most 63 characters).",
                )
                .validate(v::each(rules::labels::label_value())),
        ],
    )
    .describe(
        "Constraints on the nodes the Provisioner may launch, as label requirements, layered with `labels`. \
         Pods' own scheduling constraints narrow them further. The defaults Karpenter v0.32's webhook appends \
         for keys left open (`kubernetes.io/os` linux, `kubernetes.io/arch` amd64, `karpenter.sh/capacity-type` \
         on-demand, instance category c/m/r with generation > 2) are not shown as drift.",
    )
    .validate(v::rule(
        "Operator `In` needs at least one value; `Gt` and `Lt` need exactly one value, a non-negative whole number; `karpenter.sh/capacity-type` values are `spot` or `on-demand`.",
        |value, path, diags| {
            for (i, r) in elements(value).iter().enumerate() {
                if !r.is_unknown() && !r.is_null() {
                    rules::requirements::check_requirement(r, &path.index(i), diags, well_known_values);
                }
            }
            rules::contradictions::warn_contradictions(value, path, rules::contradictions::NO_NODE, diags);
        },
    ))
}

fn taints(name: &'static str, description: &'static str) -> Attribute {
    Attribute::list_of_objects(
        name,
        vec![
            Attribute::string("key")
                .required()
                .describe("Taint key, e.g. `nvidia.com/gpu`.")
                .validate(v::non_empty())
                .validate(rules::names::qualified_name("a taint key")),
            Attribute::string("value")
                .describe("Taint value (optional).")
                .validate(v::check(
                    "When not empty, must be a qualified name (letters, digits, `-`, `_`, `.`, optional DNS prefix and `/`).",
                    |value| {
                        let s = value.as_str()?;
                        if s.is_empty() {
                            return None;
                        }
                        rules::labels::label_key_problem(s).map(|p| format!("Taint value not allowed: {p}."))
                    },
                )),
            Attribute::string("effect")
                .required()
                .describe("`NoSchedule`, `PreferNoSchedule` or `NoExecute`.")
                .validate(v::one_of(TAINT_EFFECTS)),
            Attribute::string("time_added")
                .describe("When the taint was added (RFC 3339); only meaningful for `NoExecute`.")
                .validate(rules::time::date_time()),
        ],
    )
    .describe(description)
}

/// A JSON-encoded object.
fn json_object() -> impl Validator {
    v::check(
        "Must be a JSON-encoded object (use `jsonencode({ … })`).",
        |value| {
            let s = value.as_str()?;
            match serde_json::from_str::<serde_json::Value>(s) {
                Ok(serde_json::Value::Object(_)) => None,
                Ok(_) => {
                    Some("provider_json must encode a JSON object ({ … }), not another JSON value.".into())
                }
                Err(e) => Some(format!(
                    "provider_json is not valid JSON ({e}); use jsonencode({{ … }})."
                )),
            }
        },
    )
}

fn status() -> Attribute {
    Attribute::object(
        "status",
        vec![
            legacy_conditions(),
            Attribute::string("last_scale_time")
                .computed()
                .describe("When the Provisioner last scaled its nodes."),
            Attribute::map_of("resources", Type::String)
                .computed()
                .describe("Resources the Provisioner's nodes hold together (quantities by resource name)."),
        ],
    )
    .computed()
    .not_on_wire()
    .describe(format!(
        "What Karpenter reports about the Provisioner (read only). {STATUS_IN_PLANS}"
    ))
}

fn invalid(diags: &mut Diagnostics, path: &AttributePath, detail: impl Into<String>) {
    diags.error_at(path, "Invalid attribute value", detail);
}

/// Cross-attribute rules of Karpenter's v0.32 Provisioner webhook:
/// `consolidation.enabled = true` and `ttl_seconds_after_empty` exclude each other;
/// `provider_json` and `provider_ref` exclude each other; a taint key/effect pair appears once
/// across `taints` and `startup_taints`.
pub fn validate_provisioner(config: &Value, _memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    check_launchable(config, diags);
    let consolidation = config
        .get("consolidation")
        .and_then(|c| c.get("enabled"))
        .and_then(Value::as_bool);
    if consolidation == Some(true) && has(config, "ttl_seconds_after_empty") == Some(true) {
        invalid(
            diags,
            &root.attr("ttl_seconds_after_empty"),
            "ttl_seconds_after_empty cannot be combined with consolidation.enabled = true: consolidation already removes empty nodes. Remove one of them.",
        );
    }
    if has(config, "provider_json") == Some(true) && has(config, "provider_ref") == Some(true) {
        invalid(
            diags,
            &root.attr("provider_json"),
            "Set provider_ref or provider_json, not both: provider_ref points at an AWSNodeTemplate that holds the same settings.",
        );
    }
    let mut seen = BTreeSet::new();
    for list in ["taints", "startup_taints"] {
        let Some(taints) = config.get(list) else { continue };
        for (i, t) in elements(taints).iter().enumerate() {
            let (Some(key), Some(effect)) = (
                t.get("key").and_then(Value::as_str),
                t.get("effect").and_then(Value::as_str),
            ) else {
                continue;
            };
            if !seen.insert((key.to_string(), effect.to_string())) {
                invalid(
                    diags,
                    &root.attr(list).index(i),
                    format!(
                        "The taint {key}:{effect} is listed twice (across taints and startup_taints); each key/effect pair may appear once."
                    ),
                );
            }
        }
    }
}

/// What the Provisioner can launch, against the offline instance-type data
/// ([`rules::launchable`]): its requirements, its node labels and the defaults Karpenter
/// v0.32's webhook appends for the keys they leave open.
fn check_launchable(config: &Value, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    let requirements = config.get("requirements").unwrap_or(&Value::Null);
    let Some(written) = rules::launchable::written_requirements(requirements) else {
        return;
    };
    let keys: Vec<&str> = written.iter().map(|r| r.key.as_str()).collect();
    let defaults = super::webhook_defaults::appended_to(&keys)
        .into_iter()
        .filter_map(|(key, operator, values, why)| {
            Some((
                Requirement::new(key, Operator::parse(operator)?, values),
                why.to_string(),
            ))
        })
        .collect();
    let limits = config
        .get("limits")
        .and_then(|l| l.get("resources"))
        .map(|r| (r, root.attr("limits").attr("resources")));
    rules::launchable::check(
        &rules::launchable::Pool {
            requirements,
            requirements_path: root.attr("requirements"),
            labels: config.get("labels").map(|l| (l, root.attr("labels"))),
            defaults,
            limits,
            flavor: Flavor::SelfManaged,
        },
        diags,
    );
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::*;
    use crate::resources::kube::kind::testing::{UNKNOWN, config, diagnose, error_paths, plan_create, put};
    use crate::terraform::framework::plan::plan;

    /// A pool restricted by instance family, size and zone, with labels and taints,
    /// consolidation on, a 30-day expiry and kubelet max pods.
    pub(crate) fn restricted_pool() -> Json {
        json!({
            "name": "default",
            "metadata": {"labels": {"team": "platform"}},
            "labels": {"workload": "general", "node.kubernetes.io/lifecycle": "normal"},
            "annotations": {"example.com/owner": "infra"},
            "requirements": [
                {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "m6i", "c6i"]},
                {"key": "karpenter.k8s.aws/instance-size", "operator": "NotIn", "values": ["nano", "micro", "small"]},
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a", "eu-west-1b"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
            ],
            "taints": [{"key": "example.com/dedicated", "value": "general", "effect": "NoSchedule"}],
            "startup_taints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}],
            "provider_ref": {"name": "default"},
            "consolidation": {"enabled": true},
            "ttl_seconds_until_expired": 2_592_000,
            "kubelet_configuration": {
                "max_pods": 110,
                "pods_per_core": 10,
                "system_reserved": {"cpu": "100m", "memory": "100Mi"},
                "kube_reserved": {"cpu": "200m", "memory": "300Mi", "ephemeral-storage": "1Gi"},
                "eviction_hard": {"memory.available": "5%", "nodefs.available": "10%"},
                "eviction_soft": {"memory.available": "500Mi"},
                "eviction_soft_grace_period": {"memory.available": "1m30s"},
                "eviction_max_pod_grace_period": 60,
                "image_gc_high_threshold_percent": 85,
                "image_gc_low_threshold_percent": 80,
                "cluster_dns": ["10.100.0.10"],
                "container_runtime": "containerd",
                "cpu_cfs_quota": true
            },
            "limits": {"resources": {"cpu": "1000", "memory": "1000Gi"}},
            "weight": 50
        })
    }

    /// Spot only, with a CPU limit and an empty-node TTL.
    fn spot_pool() -> Json {
        json!({
            "name": "spot",
            "requirements": [
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
            ],
            "limits": {"resources": {"cpu": "100"}},
            "ttl_seconds_after_empty": 30,
            "provider_ref": {"name": "default", "kind": "AWSNodeTemplate", "api_version": "karpenter.k8s.aws/v1alpha1"}
        })
    }

    /// Category and generation requirements with `Gt`, plus the inline (legacy) provider.
    fn generation_pool() -> Json {
        json!({
            "name": "compute",
            "requirements": [
                {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
                {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
                {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["33"]},
                {"key": "kubernetes.io/os", "operator": "Exists"},
                {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"}
            ],
            "provider_json": "{\"subnetSelector\":{\"karpenter.sh/discovery\":\"demo\"},\"securityGroupSelector\":{\"karpenter.sh/discovery\":\"demo\"}}",
            "consolidation": {"enabled": false},
            "ttl_seconds_after_empty": 0
        })
    }

    fn check(json: &Json) -> Diagnostics {
        diagnose(&PROVISIONER, validate_provisioner, &config(&PROVISIONER, json))
    }

    #[test]
    fn realistic_provisioners_are_valid() {
        for p in [
            restricted_pool(),
            spot_pool(),
            generation_pool(),
            json!({"name": "minimal"}),
        ] {
            let d = check(&p);
            assert!(d.is_empty(), "{p}: {d}");
        }
    }

    /// (what is changed, value, where the error must be).
    fn invalid_cases() -> Vec<(&'static str, Json, &'static str)> {
        vec![
            ("/name", json!("Default_Pool"), "name"),
            (
                "/metadata/labels/bad key",
                json!("x"),
                "metadata.labels[\"bad key\"]",
            ),
            (
                "/labels/karpenter.sh~provisioner-name",
                json!("x"),
                "labels[\"karpenter.sh/provisioner-name\"]",
            ),
            (
                "/labels/kubernetes.io~hostname",
                json!("x"),
                "labels[\"kubernetes.io/hostname\"]",
            ),
            (
                "/labels/karpenter.sh~team",
                json!("x"),
                "labels[\"karpenter.sh/team\"]",
            ),
            (
                "/labels/karpenter.k8s.aws~instance-foo",
                json!("x"),
                "labels[\"karpenter.k8s.aws/instance-foo\"]",
            ),
            (
                "/labels/kubernetes.io~team",
                json!("x"),
                "labels[\"kubernetes.io/team\"]",
            ),
            ("/labels/workload", json!("not a value!"), "labels[\"workload\"]"),
            (
                "/labels/karpenter.sh~capacity-type",
                json!("reserved"),
                "labels[\"karpenter.sh/capacity-type\"]",
            ),
            ("/annotations/bad key", json!("x"), "annotations[\"bad key\"]"),
            (
                "/requirements/0/operator",
                json!("Gte"),
                "requirements[0].operator",
            ),
            (
                "/requirements/0/operator",
                json!("Equals"),
                "requirements[0].operator",
            ),
            ("/requirements/0/values", json!([]), "requirements[0].values"),
            (
                "/requirements/0/key",
                json!("karpenter.sh/provisioner-name"),
                "requirements[0].key",
            ),
            (
                "/requirements/0/key",
                json!("kubernetes.io/hostname"),
                "requirements[0].key",
            ),
            (
                "/requirements/0/key",
                json!("karpenter.k8s.aws/nitro"),
                "requirements[0].key",
            ),
            ("/requirements/0/key", json!("-bad-"), "requirements[0].key"),
            (
                "/requirements/1/values/0",
                json!("not valid!"),
                "requirements[1].values[0]",
            ),
            (
                "/requirements/3/values/0",
                json!("reserved"),
                "requirements[3].values[0]",
            ),
            (
                "/requirements/4/operator",
                json!("Gt"),
                "requirements[4].values[0]",
            ),
            (
                "/requirements/4",
                json!({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["-1"]}),
                "requirements[4].values[0]",
            ),
            (
                "/requirements/4",
                json!({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4", "8"]}),
                "requirements[4].values",
            ),
            ("/taints/0/effect", json!("NoRun"), "taints[0].effect"),
            ("/taints/0/key", json!(""), "taints[0].key"),
            ("/taints/0/value", json!("a b"), "taints[0].value"),
            (
                "/startup_taints/0/time_added",
                json!("yesterday"),
                "startup_taints[0].time_added",
            ),
            (
                "/startup_taints/1",
                json!({"key": "example.com/dedicated", "effect": "NoSchedule"}),
                "startup_taints[1]",
            ),
            ("/provider_ref/name", json!(""), "provider_ref.name"),
            ("/provider_json", json!("{}"), "provider_json"),
            ("/ttl_seconds_after_empty", json!(30), "ttl_seconds_after_empty"),
            (
                "/ttl_seconds_until_expired",
                json!(-1),
                "ttl_seconds_until_expired",
            ),
            ("/weight", json!(0), "weight"),
            ("/weight", json!(101), "weight"),
            (
                "/limits/resources/cpu",
                json!("lots"),
                "limits.resources[\"cpu\"]",
            ),
            (
                "/kubelet_configuration/max_pods",
                json!(-1),
                "kubelet_configuration.max_pods",
            ),
            (
                "/kubelet_configuration/pods_per_core",
                json!(-2),
                "kubelet_configuration.pods_per_core",
            ),
            (
                "/kubelet_configuration/image_gc_high_threshold_percent",
                json!(101),
                "kubelet_configuration.image_gc_high_threshold_percent",
            ),
            (
                "/kubelet_configuration/image_gc_low_threshold_percent",
                json!(90),
                "kubelet_configuration.image_gc_high_threshold_percent",
            ),
            (
                "/kubelet_configuration/eviction_soft/nodefs.available",
                json!("10%"),
                "kubelet_configuration.eviction_soft[\"nodefs.available\"]",
            ),
            (
                "/kubelet_configuration/eviction_soft_grace_period/imagefs.available",
                json!("1m"),
                "kubelet_configuration.eviction_soft_grace_period[\"imagefs.available\"]",
            ),
            (
                "/kubelet_configuration/eviction_hard/memory.free",
                json!("5%"),
                "kubelet_configuration.eviction_hard[\"memory.free\"]",
            ),
            (
                "/kubelet_configuration/system_reserved/cpu",
                json!("-100m"),
                "kubelet_configuration.system_reserved[\"cpu\"]",
            ),
        ]
    }

    #[test]
    fn invalid_inputs_fail_at_their_attribute() {
        let cases = invalid_cases();
        assert!(cases.len() >= 30, "{} cases", cases.len());
        for (pointer, value, expected) in cases {
            let mut p = restricted_pool();
            put(&mut p, pointer, value.clone());
            if pointer == "/ttl_seconds_after_empty" {
                // consolidation is on in the base config: the two exclude each other.
                assert_eq!(p["consolidation"]["enabled"], json!(true));
            }
            if pointer == "/provider_json" {
                assert!(p["provider_ref"].is_object());
            }
            let paths = error_paths(&check(&p));
            assert!(
                paths.iter().any(|x| x == expected),
                "{pointer} = {value}: expected an error at {expected}, got {paths:?}"
            );
        }
    }

    #[test]
    fn provider_json_must_be_an_object() {
        for bad in ["[1]", "not json", "\"x\""] {
            let mut p = generation_pool();
            put(&mut p, "/provider_json", json!(bad));
            assert_eq!(error_paths(&check(&p)), vec!["provider_json"], "{bad}");
        }
    }

    #[test]
    fn errors_say_what_is_allowed() {
        let mut p = restricted_pool();
        put(&mut p, "/requirements/3/values/0", json!("reserved"));
        assert!(check(&p).to_string().contains("spot, on-demand"));
        let mut p = restricted_pool();
        put(&mut p, "/ttl_seconds_after_empty", json!(30));
        assert!(check(&p).to_string().contains("consolidation"));
        let mut p = restricted_pool();
        put(&mut p, "/requirements/0/operator", json!("Gte"));
        let text = check(&p).to_string();
        assert!(text.contains("`DoesNotExist`, `Gt`, `Lt`."), "{text}");
    }

    #[test]
    fn consolidation_off_allows_empty_ttl() {
        let mut p = restricted_pool();
        put(&mut p, "/consolidation/enabled", json!(false));
        put(&mut p, "/ttl_seconds_after_empty", json!(30));
        assert!(check(&p).is_empty());
        put(&mut p, "/consolidation/enabled", json!(UNKNOWN));
        assert!(check(&p).is_empty());
    }

    #[test]
    fn unknown_values_are_not_judged() {
        let mut p = restricted_pool();
        put(&mut p, "/requirements/0/values", json!(UNKNOWN));
        put(&mut p, "/requirements/1/values/0", json!(UNKNOWN));
        put(&mut p, "/requirements/2/key", json!(UNKNOWN));
        put(&mut p, "/labels", json!(UNKNOWN));
        put(&mut p, "/weight", json!(UNKNOWN));
        put(&mut p, "/ttl_seconds_after_empty", json!(UNKNOWN));
        put(
            &mut p,
            "/kubelet_configuration/image_gc_low_threshold_percent",
            json!(UNKNOWN),
        );
        put(&mut p, "/taints/0/effect", json!(UNKNOWN));
        put(&mut p, "/provider_json", json!(UNKNOWN));
        let d = check(&p);
        assert!(d.is_empty(), "{d}");
        let mut p = restricted_pool();
        put(&mut p, "/requirements", json!(UNKNOWN));
        put(&mut p, "/kubelet_configuration", json!(UNKNOWN));
        put(&mut p, "/consolidation", json!(UNKNOWN));
        assert!(check(&p).is_empty());
    }

    /// No defaults: what is not set is planned null; status is unknown until apply.
    #[test]
    fn create_plans_no_server_defaults() {
        let planned = plan_create(&PROVISIONER, &config(&PROVISIONER, &spot_pool()));
        for f in [
            "consolidation",
            "weight",
            "ttl_seconds_until_expired",
            "kubelet_configuration",
            "labels",
        ] {
            assert_eq!(planned.get(f), Some(&Value::Null), "{f}");
        }
        assert_eq!(
            planned
                .get("ttl_seconds_after_empty")
                .and_then(Value::as_number)
                .and_then(|n| n.as_i64()),
            Some(30)
        );
        let r = planned.get("provider_ref").expect("provider_ref");
        assert_eq!(r.get("kind"), Some(&Value::string("AWSNodeTemplate")));
        assert!(planned.get("status").is_some_and(Value::is_unknown));
        assert!(planned.conforms_to(&PROVISIONER.value_type()).is_ok());
        let d = crate::resources::kube::kind::testing::config(&PROVISIONER, &json!({"name": "x"}));
        let planned = plan_create(&PROVISIONER, &d);
        assert_eq!(planned.get("provider_ref"), Some(&Value::Null));
    }

    #[test]
    fn second_plan_is_empty_and_name_replaces() {
        let cfg = config(&PROVISIONER, &restricted_pool());
        let mut state = plan_create(&PROVISIONER, &cfg);
        if let Value::Object(fields) = &mut state {
            let status = crate::resources::kube::kind::testing::typed(
                PROVISIONER
                    .attribute("status")
                    .and_then(|a| a.nested())
                    .map(|(_, n)| n)
                    .expect("status"),
                &json!({"last_scale_time": "2024-05-01T10:00:00Z", "resources": {"cpu": "4"},
                        "conditions": [{"type": "Active", "status": "True", "severity": "", "reason": "",
                                        "message": "", "last_transition_time": "2024-05-01T10:00:00Z"}]}),
            );
            fields.insert("status".into(), status);
        }
        assert!(state.is_wholly_known());
        let again = plan(&PROVISIONER.attributes, &PROVISIONER.blocks, &cfg, &state);
        assert_eq!(again.planned, state);
        assert!(again.requires_replace.is_empty());
        let mut renamed = restricted_pool();
        put(&mut renamed, "/name", json!("other"));
        let p = plan(
            &PROVISIONER.attributes,
            &PROVISIONER.blocks,
            &config(&PROVISIONER, &renamed),
            &state,
        );
        let paths: Vec<String> = p.requires_replace.iter().map(ToString::to_string).collect();
        assert_eq!(paths, vec!["name"]);
    }
}
