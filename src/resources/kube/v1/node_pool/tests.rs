use serde_json::{Value as Json, json};

use super::*;
use crate::resources::kube::kind::testing::{UNKNOWN, config, diagnose, error_paths, plan_create, put};
use crate::terraform::framework::plan::plan;

/// A spot + on-demand pool with limits and two budgets (one scheduled).
pub(crate) fn realistic() -> Json {
    json!({
        "name": "general-purpose",
        "metadata": {"labels": {"team": "platform"}, "annotations": {"example.com/owner": "infra"}},
        "template": {
            "metadata": {"labels": {"workload": "general", "karpenter.sh/capacity-type": "spot"}},
            "spec": {
                "node_class_ref": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"], "min_values": 2},
                    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "NotIn", "values": ["t"]},
                    {"key": "topology.kubernetes.io/zone", "operator": "Exists"}
                ],
                "taints": [{"key": "example.com/dedicated", "value": "general", "effect": "NoSchedule"}],
                "startup_taints": [{"key": "node.cilium.io/agent-not-ready", "effect": "NoExecute",
                                    "time_added": "2024-05-01T10:00:00Z"}],
                "expire_after": "720h",
                "termination_grace_period": "48h"
            }
        },
        "disruption": {
            "consolidate_after": "1m",
            "consolidation_policy": "WhenEmptyOrUnderutilized",
            "budgets": [
                {"nodes": "10%"},
                {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": ["Drifted", "Underutilized"]}
            ]
        },
        "limits": {"cpu": "1000", "memory": "1000Gi"},
        "weight": 10
    })
}

fn static_pool() -> Json {
    json!({
        "name": "static",
        "template": {"spec": {
            "node_class_ref": {"name": "default"},
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}]
        }},
        "replicas": 3,
        "limits": {"nodes": "5"}
    })
}

fn check(json: &Json) -> Diagnostics {
    diagnose(&NODE_POOL, validate_node_pool, &config(&NODE_POOL, json))
}

/// Parity with the API server (issue #16): values the server refuses must fail at plan, values it
/// accepts must not.
#[test]
fn plan_agrees_with_the_server_on_dates_annotations_and_signed_numbers() {
    let mut pool = realistic();
    put(
        &mut pool,
        "/template/spec/startup_taints/0/time_added",
        json!("2024-02-30T10:00:00Z"),
    );
    assert_eq!(
        error_paths(&check(&pool)),
        vec!["template.spec.startup_taints[0].time_added"]
    );

    let mut pool = realistic();
    put(
        &mut pool,
        "/metadata/annotations/example.com~big",
        json!("x".repeat(256 * 1024)),
    );
    assert_eq!(error_paths(&check(&pool)), vec!["metadata.annotations"]);

    let mut pool = realistic();
    put(&mut pool, "/template/spec/requirements/2/values", json!(["+5"]));
    let d = check(&pool);
    assert!(d.is_empty(), "{d}");
}

#[test]
fn realistic_pools_are_valid() {
    for pool in [realistic(), static_pool()] {
        let d = check(&pool);
        assert!(d.is_empty(), "{d}");
    }
}

/// (what is changed, value, where the error must be).
pub(crate) fn invalid_cases() -> Vec<(&'static str, Json, &'static str)> {
    let long = "a".repeat(64);
    vec![
        ("/name", json!("Default_Pool"), "name"),
        ("/name", json!("a".repeat(254)), "name"),
        (
            "/metadata/labels/bad key",
            json!("x"),
            "metadata.labels[\"bad key\"]",
        ),
        (
            "/template/metadata/labels/karpenter.sh~nodepool",
            json!("x"),
            "template.metadata.labels[\"karpenter.sh/nodepool\"]",
        ),
        (
            "/template/metadata/labels/kubernetes.io~hostname",
            json!("x"),
            "template.metadata.labels[\"kubernetes.io/hostname\"]",
        ),
        (
            "/template/metadata/labels/karpenter.k8s.aws~instance-pods",
            json!("4"),
            "template.metadata.labels[\"karpenter.k8s.aws/instance-pods\"]",
        ),
        (
            "/template/metadata/labels/workload",
            json!("not a value!"),
            "template.metadata.labels[\"workload\"]",
        ),
        (
            "/template/metadata/labels/karpenter.sh~capacity-type",
            json!("cheap"),
            "template.metadata.labels[\"karpenter.sh/capacity-type\"]",
        ),
        (
            "/template/spec/node_class_ref/group",
            json!("karpenter.k8s.aws/v1"),
            "template.spec.node_class_ref.group",
        ),
        (
            "/template/spec/node_class_ref/kind",
            json!(""),
            "template.spec.node_class_ref.kind",
        ),
        (
            "/template/spec/node_class_ref/name",
            json!(""),
            "template.spec.node_class_ref.name",
        ),
        (
            "/template/spec/requirements/0/key",
            json!("karpenter.sh/foo"),
            "template.spec.requirements[0].key",
        ),
        (
            "/template/spec/requirements/0/key",
            json!("karpenter.k8s.aws/nitro-enclaves"),
            "template.spec.requirements[0].key",
        ),
        (
            "/template/spec/requirements/0/key",
            json!("kubernetes.io/hostname"),
            "template.spec.requirements[0].key",
        ),
        (
            "/template/spec/requirements/0/key",
            json!("karpenter.sh/nodepool"),
            "template.spec.requirements[0].key",
        ),
        (
            "/template/spec/requirements/0/key",
            json!("-bad-"),
            "template.spec.requirements[0].key",
        ),
        (
            "/template/spec/requirements/1/operator",
            json!("Equals"),
            "template.spec.requirements[1].operator",
        ),
        (
            "/template/spec/requirements/0/values",
            json!([]),
            "template.spec.requirements[0].values",
        ),
        (
            "/template/spec/requirements/4/operator",
            json!("In"),
            "template.spec.requirements[4].values",
        ),
        (
            "/template/spec/requirements/2/values",
            json!(["2", "3"]),
            "template.spec.requirements[2].values",
        ),
        (
            "/template/spec/requirements/2/values",
            json!(["-1"]),
            "template.spec.requirements[2].values[0]",
        ),
        (
            "/template/spec/requirements/2/values",
            json!(["abc"]),
            "template.spec.requirements[2].values[0]",
        ),
        (
            "/template/spec/requirements/2/values",
            json!(["1.5"]),
            "template.spec.requirements[2].values[0]",
        ),
        (
            "/template/spec/requirements/0/values/1",
            json!("preemptible"),
            "template.spec.requirements[0].values[1]",
        ),
        (
            "/template/spec/requirements/1/min_values",
            json!(3),
            "template.spec.requirements[1].values",
        ),
        (
            "/template/spec/requirements/1/min_values",
            json!(51),
            "template.spec.requirements[1].min_values",
        ),
        (
            "/template/spec/requirements/1/values/0",
            json!(long),
            "template.spec.requirements[1].values[0]",
        ),
        (
            "/template/spec/taints/0/effect",
            json!("NoRun"),
            "template.spec.taints[0].effect",
        ),
        (
            "/template/spec/taints/0/key",
            json!(""),
            "template.spec.taints[0].key",
        ),
        (
            "/template/spec/taints/0/value",
            json!("a b"),
            "template.spec.taints[0].value",
        ),
        (
            "/template/spec/startup_taints/0/time_added",
            json!("yesterday"),
            "template.spec.startup_taints[0].time_added",
        ),
        (
            "/template/spec/expire_after",
            json!("30d"),
            "template.spec.expire_after",
        ),
        (
            "/template/spec/termination_grace_period",
            json!("Never"),
            "template.spec.termination_grace_period",
        ),
        (
            "/disruption/consolidate_after",
            json!("1 minute"),
            "disruption.consolidate_after",
        ),
        (
            "/disruption/consolidation_policy",
            json!("Always"),
            "disruption.consolidation_policy",
        ),
        (
            "/disruption/budgets/0/nodes",
            json!("110%"),
            "disruption.budgets[0].nodes",
        ),
        (
            "/disruption/budgets/1/duration",
            Json::Null,
            "disruption.budgets[1].duration",
        ),
        (
            "/disruption/budgets/1/schedule",
            Json::Null,
            "disruption.budgets[1].schedule",
        ),
        (
            "/disruption/budgets/1/schedule",
            json!("0 25 * * *"),
            "disruption.budgets[1].schedule",
        ),
        (
            "/disruption/budgets/1/schedule",
            json!("@every 1h"),
            "disruption.budgets[1].schedule",
        ),
        (
            "/disruption/budgets/1/duration",
            json!("30s"),
            "disruption.budgets[1].duration",
        ),
        (
            "/disruption/budgets/1/reasons/0",
            json!("Expired"),
            "disruption.budgets[1].reasons[0]",
        ),
        (
            "/disruption/budgets/1/reasons/1",
            json!("Drifted"),
            "disruption.budgets[1].reasons[1]",
        ),
        ("/limits/cpu", json!("lots"), "limits[\"cpu\"]"),
        ("/weight", json!(0), "weight"),
        ("/weight", json!(101), "weight"),
        ("/replicas", json!(-1), "replicas"),
        // S2 and S3: a static pool limits only nodes and has no weight.
        ("/replicas", json!(3), "limits[\"cpu\"]"),
        ("/replicas", json!(3), "weight"),
    ]
}

fn apply_case(pointer: &str, value: Json) -> Json {
    let mut pool = realistic();
    put(&mut pool, pointer, value);
    pool
}

#[test]
fn invalid_inputs_fail_at_their_attribute() {
    let cases = invalid_cases();
    assert!(cases.len() >= 45, "{} cases", cases.len());
    for (pointer, value, expected) in cases {
        let pool = apply_case(pointer, value.clone());
        let d = check(&pool);
        let paths = error_paths(&d);
        assert!(
            paths.iter().any(|p| p == expected),
            "{pointer} = {value}: expected an error at {expected}, got {paths:?}"
        );
    }
}

#[test]
fn too_many_requirements() {
    let mut pool = realistic();
    let one = json!({"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]});
    pool["template"]["spec"]["requirements"] = Json::Array(vec![one; 101]);
    assert_eq!(error_paths(&check(&pool)), vec!["template.spec.requirements"]);
}

#[test]
fn errors_say_what_is_allowed() {
    let d = check(&apply_case(
        "/template/spec/requirements/0/values/1",
        json!("preemptible"),
    ));
    let text = d.to_string();
    assert!(text.contains("spot, on-demand, reserved"), "{text}");
    let d = check(&apply_case(
        "/template/spec/requirements/0/key",
        json!("karpenter.k8s.aws/nitro-enclaves"),
    ));
    assert!(d.to_string().contains("karpenter.k8s.aws/instance-family"), "{d}");
}

#[test]
fn unknown_values_are_not_judged() {
    let mut pool = realistic();
    put(&mut pool, "/template/spec/requirements/0/values", json!(UNKNOWN));
    put(
        &mut pool,
        "/template/spec/requirements/1/values/0",
        json!(UNKNOWN),
    );
    put(&mut pool, "/template/spec/requirements/2", json!(UNKNOWN));
    put(&mut pool, "/template/spec/requirements/3/key", json!(UNKNOWN));
    put(&mut pool, "/disruption/budgets/1/duration", json!(UNKNOWN));
    put(&mut pool, "/replicas", json!(UNKNOWN));
    put(&mut pool, "/limits", json!(UNKNOWN));
    put(&mut pool, "/template/metadata/labels", json!(UNKNOWN));
    let d = check(&pool);
    assert!(d.is_empty(), "{d}");
    let mut pool = realistic();
    put(&mut pool, "/template", json!(UNKNOWN));
    put(&mut pool, "/disruption", json!(UNKNOWN));
    assert!(check(&pool).is_empty());
}

fn minimal() -> Json {
    json!({
        "name": "default",
        "template": {"spec": {
            "node_class_ref": {"name": "default"},
            "requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
        }}
    })
}

#[test]
fn create_plans_the_server_defaults() {
    let planned = plan_create(&NODE_POOL, &config(&NODE_POOL, &minimal()));
    let disruption = planned.get("disruption").expect("disruption");
    assert_eq!(disruption.get("consolidate_after"), Some(&Value::string("0s")));
    assert_eq!(
        disruption.get("consolidation_policy"),
        Some(&Value::string("WhenEmptyOrUnderutilized"))
    );
    let budgets = disruption
        .get("budgets")
        .and_then(Value::as_elements)
        .expect("budgets");
    assert_eq!(budgets.len(), 1);
    assert_eq!(budgets[0].get("nodes"), Some(&Value::string("10%")));
    for f in ["schedule", "duration", "reasons"] {
        assert_eq!(budgets[0].get(f), Some(&Value::Null), "{f}");
    }
    let spec = planned.get("template").and_then(|t| t.get("spec")).expect("spec");
    assert_eq!(spec.get("expire_after"), Some(&Value::string("720h")));
    assert_eq!(spec.get("termination_grace_period"), Some(&Value::Null));
    let r = spec.get("node_class_ref").expect("ref");
    assert_eq!(r.get("group"), Some(&Value::string("karpenter.k8s.aws")));
    assert_eq!(r.get("kind"), Some(&Value::string("EC2NodeClass")));
    assert!(planned.get("status").is_some_and(Value::is_unknown));
    assert_eq!(planned.get("weight"), Some(&Value::Null));
    assert!(planned.conforms_to(&NODE_POOL.value_type()).is_ok());
}

/// What the API server does to a partial `disruption`: missing fields get their defaults,
/// a budget without `nodes` gets `10%`.
#[test]
fn partial_disruption_gets_nested_defaults() {
    let mut pool = minimal();
    pool["disruption"] = json!({
        "consolidate_after": "5m",
        "budgets": [{"schedule": "@daily", "duration": "1h"}]
    });
    let planned = plan_create(&NODE_POOL, &config(&NODE_POOL, &pool));
    let disruption = planned.get("disruption").expect("disruption");
    assert_eq!(disruption.get("consolidate_after"), Some(&Value::string("5m")));
    assert_eq!(
        disruption.get("consolidation_policy"),
        Some(&Value::string("WhenEmptyOrUnderutilized"))
    );
    let budgets = disruption
        .get("budgets")
        .and_then(Value::as_elements)
        .expect("budgets");
    assert_eq!(budgets[0].get("nodes"), Some(&Value::string("10%")));
    assert_eq!(budgets[0].get("schedule"), Some(&Value::string("@daily")));
}

/// After apply, the state holds the planned values plus status; planning the same config
/// against it changes nothing.
#[test]
fn second_plan_is_empty() {
    let cfg = config(&NODE_POOL, &realistic());
    let mut state = plan_create(&NODE_POOL, &cfg);
    if let Value::Object(fields) = &mut state {
        let status = crate::resources::kube::kind::testing::typed(
            NODE_POOL
                .attribute("status")
                .and_then(|a| a.nested())
                .map(|(_, n)| n)
                .expect("status"),
            &json!({"nodes": 2, "resources": {"cpu": "4"}, "node_class_observed_generation": 1,
                    "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                                    "last_transition_time": "2024-05-01T10:00:00Z", "observed_generation": 1}]}),
        );
        fields.insert("status".into(), status);
    }
    assert!(state.is_wholly_known());
    let again = plan(&NODE_POOL.attributes, &NODE_POOL.blocks, &cfg, &state);
    assert_eq!(again.planned, state);
    assert!(again.requires_replace.is_empty());
}

#[test]
fn node_class_group_and_kind_replace() {
    let cfg = config(&NODE_POOL, &realistic());
    let state = plan_create(&NODE_POOL, &cfg);
    let mut changed = realistic();
    put(
        &mut changed,
        "/template/spec/node_class_ref/kind",
        json!("OtherNodeClass"),
    );
    put(&mut changed, "/template/spec/node_class_ref/name", json!("other"));
    let p = plan(
        &NODE_POOL.attributes,
        &NODE_POOL.blocks,
        &config(&NODE_POOL, &changed),
        &state,
    );
    let paths: Vec<String> = p.requires_replace.iter().map(ToString::to_string).collect();
    assert_eq!(paths, vec!["template.spec.node_class_ref.kind"]);
}

#[test]
fn static_and_dynamic_do_not_convert_in_place() {
    let dynamic = plan_create(&NODE_POOL, &config(&NODE_POOL, &minimal()));
    let mut with_replicas = minimal();
    with_replicas["replicas"] = json!(2);
    let static_ = plan_create(&NODE_POOL, &config(&NODE_POOL, &with_replicas));
    let replicas = vec![AttributePath::root().attr("replicas")];
    assert_eq!(node_pool_replacements(&dynamic, &static_), replicas);
    assert_eq!(node_pool_replacements(&static_, &dynamic), replicas);
    let mut more = with_replicas.clone();
    more["replicas"] = json!(5);
    let scaled = plan_create(&NODE_POOL, &config(&NODE_POOL, &more));
    assert!(node_pool_replacements(&static_, &scaled).is_empty());
    assert!(node_pool_replacements(&Value::Null, &static_).is_empty());
    let mut unknown = minimal();
    unknown["replicas"] = json!(UNKNOWN);
    let unknown = plan_create(&NODE_POOL, &config(&NODE_POOL, &unknown));
    assert!(node_pool_replacements(&dynamic, &unknown).is_empty());
}

/// With the plan's memory, pools that ask the same of the instance-type data are checked
/// once, and each gets the same answer as without it.
#[test]
fn identical_pools_are_checked_once_per_plan() {
    let memory = crate::context::plan_memory::PlanMemory::default();
    let mut narrow = minimal();
    narrow["template"]["spec"]["requirements"] =
        json!([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["no-such-family"]}]);
    for pool in [minimal(), minimal(), narrow.clone(), narrow] {
        let config = config(&NODE_POOL, &pool);
        let mut with = Diagnostics::new();
        validate_node_pool(&config, Some(&memory), &mut with);
        let mut without = Diagnostics::new();
        validate_node_pool(&config, None, &mut without);
        assert_eq!(with, without);
    }
    assert_eq!(memory.pool_checks.computed(), 2);
}
