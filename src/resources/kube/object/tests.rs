use kube::api::DynamicObject;
use serde_json::{Value as Json, json};

use super::KubeObjectType;
use super::delete::FORCE_DESTROY;
use super::values::{
    keep_defaults_the_cluster_lacks, keep_prior_status, merge_known, valid_namespace, valid_object_name,
    wire_path_to_attribute,
};
use crate::k8s;
use crate::terraform::framework::convert::from_wire;
use crate::terraform::framework::schema::Attribute;
use crate::terraform::framework::values::object;
use crate::terraform::tfvalue::{AttributePath, Type, Value};

fn attrs() -> Vec<Attribute> {
    vec![
        Attribute::string("name").not_on_wire(),
        Attribute::object(
            "template",
            vec![Attribute::object(
                "spec",
                vec![Attribute::list_of_objects(
                    "requirements",
                    vec![
                        Attribute::string("operator"),
                        Attribute::list_of("values", Type::String),
                    ],
                )],
            )],
        ),
        Attribute::map_of("limits", Type::String),
    ]
}

#[test]
fn maps_api_field_paths_to_attributes() {
    let a = attrs();
    let p = wire_path_to_attribute(&a, "spec.template.spec.requirements[1].operator").expect("path");
    assert_eq!(p.to_string(), "template.spec.requirements[1].operator");
    assert_eq!(
        wire_path_to_attribute(&a, "spec.limits[cpu]")
            .map(|p| p.to_string())
            .as_deref(),
        Some("limits[\"cpu\"]")
    );
    assert_eq!(
        wire_path_to_attribute(&a, "metadata.labels")
            .map(|p| p.to_string())
            .as_deref(),
        Some("metadata.labels")
    );
    assert_eq!(wire_path_to_attribute(&a, "spec.unknownField"), None);
    assert_eq!(wire_path_to_attribute(&a, "status.conditions"), None);
}

#[test]
fn merge_keeps_known_plan_values() {
    let planned = object([("a", Value::string("x")), ("s", Value::unknown())]);
    let actual = object([("a", Value::string("X")), ("s", Value::string("ready"))]);
    assert_eq!(
        merge_known(&planned, &actual),
        object([("a", Value::string("x")), ("s", Value::string("ready"))])
    );
}

/// #16 point 2: a default the cluster's CRD lacks was left out of the write; reading the
/// object back keeps the planned default instead of showing `default → null` forever. A
/// field the object has, or a prior without the default, is read as stored.
#[test]
fn a_default_the_cluster_lacks_is_kept_from_the_prior_state() {
    let attrs = vec![
        Attribute::string("name").not_on_wire(),
        Attribute::string("expire_after").default_value(Value::string("720h")),
        Attribute::object(
            "disruption",
            vec![Attribute::string("consolidate_after").default_value(Value::string("0s"))],
        ),
    ];
    let base = object([
        ("name", Value::string("a")),
        ("expire_after", Value::string("720h")),
        ("disruption", object([("consolidate_after", Value::string("0s"))])),
    ]);
    let read = |spec: Json, base: &Value| {
        let spec = spec.as_object().cloned().unwrap_or_default();
        let mut state = from_wire(&attrs, &spec, base, &AttributePath::root()).expect("from_wire");
        keep_defaults_the_cluster_lacks(&attrs, &spec, &mut state, base);
        state
    };
    // The cluster's CRD has neither field: both defaults are kept.
    let state = read(json!({"disruption": {}}), &base);
    assert_eq!(state.get("expire_after"), Some(&Value::string("720h")));
    assert_eq!(
        state.get("disruption").and_then(|d| d.get("consolidate_after")),
        Some(&Value::string("0s"))
    );
    // Stored values win; a prior without the default (import) reads as stored.
    let state = read(
        json!({"expireAfter": "24h", "disruption": {"consolidateAfter": "5m"}}),
        &base,
    );
    assert_eq!(state.get("expire_after"), Some(&Value::string("24h")));
    let state = read(json!({}), &object([("expire_after", Value::Null)]));
    assert!(state.get("expire_after").is_none_or(Value::is_null));
}

/// The apply body against a cluster CRD that lacks fields: a planned default the CRD does
/// not have is left out (nothing to fail on), a configured field the CRD does not have is
/// an error on its attribute naming the release that added it.
#[test]
fn writes_fit_the_served_schema() {
    use crate::resources::kube::kind::crd_coverage::load_version;
    use crate::resources::kube::kind::testing::{config, plan_create};
    use crate::resources::kube::v1::NODE_POOL;
    let resource = KubeObjectType::new("karpenter_node_pool", k8s::kinds::NODE_POOL, &NODE_POOL);
    let mut served = load_version("versions/v1.0.14", "v1", "karpenter.sh_nodepools.yaml");
    // A cluster whose CRD has no `expireAfter` (as if it were newer than v1.0).
    served["properties"]["spec"]["properties"]["template"]["properties"]["spec"]["properties"]
        .as_object_mut()
        .expect("template.spec")
        .remove("expireAfter");
    let minimal = json!({"name": "a", "template": {"spec": {
        "node_class_ref": {"name": "default"},
        "requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
    }}});
    let planned = plan_create(&NODE_POOL, &config(&NODE_POOL, &minimal));
    let manifest = resource.manifest(&planned).expect("manifest");
    assert_eq!(
        manifest.pointer("/spec/template/spec/expireAfter"),
        Some(&json!("720h"))
    );
    let fitted = resource
        .fit_to_cluster(
            manifest,
            &planned,
            &crate::k8s::gate::Served::new(Some(served.clone())),
        )
        .expect("a default is not an error");
    assert_eq!(fitted.pointer("/spec/template/spec/expireAfter"), None);
    assert!(fitted.pointer("/spec/disruption/consolidateAfter").is_some());

    // Configured: expire_after set to a non-default value, and replicas (v1.8).
    let mut configured = minimal.clone();
    configured["template"]["spec"]["expire_after"] = json!("24h");
    configured["replicas"] = json!(2);
    let planned = plan_create(&NODE_POOL, &config(&NODE_POOL, &configured));
    let manifest = resource.manifest(&planned).expect("manifest");
    let d = resource
        .fit_to_cluster(
            manifest,
            &planned,
            &crate::k8s::gate::Served::new(Some(served.clone())),
        )
        .expect_err("configured fields the CRD lacks");
    let errors: Vec<(String, String)> = d
        .iter()
        .map(|x| {
            (
                x.path.as_ref().map(ToString::to_string).unwrap_or_default(),
                x.detail.clone(),
            )
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    let replicas = errors
        .iter()
        .find(|(p, _)| p == "replicas")
        .expect("replicas error");
    assert!(
        replicas.1.contains("Karpenter added it in v1.8"),
        "{}",
        replicas.1
    );
    // The way to upgrade CRDs is the karpenter-crd chart: the karpenter chart never upgrades its
    // CRDs, so the message must not offer it as a way.
    assert!(
        replicas.1.contains("with the karpenter-crd chart")
            && !replicas.1.contains("or the karpenter chart")
            && replicas.1.contains("docs/guides/upgrading-karpenter.md"),
        "{}",
        replicas.1
    );
    assert!(
        errors.iter().any(|(p, _)| p == "template.spec.expire_after"),
        "{errors:?}"
    );
}

/// #18, #28: an update keeps the prior status in the plan (labels, provider-side settings
/// and spec changes alike), except the status fields that follow a changed spec attribute; a
/// create plans it unknown.
#[test]
fn status_is_kept_on_update_and_unknown_on_create() {
    use crate::resources::kube::kind::testing::config;
    use crate::resources::kube::v1::NODE_POOL;
    use crate::terraform::framework::plan::plan;
    let base = json!({"name": "a", "template": {"spec": {
        "node_class_ref": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]
    }}});
    let created = plan(
        &NODE_POOL.attributes,
        &NODE_POOL.blocks,
        &config(&NODE_POOL, &base),
        &Value::Null,
    );
    let status = object([
        ("conditions", Value::Null),
        ("resources", Value::Null),
        ("nodes", Value::number(3)),
        ("node_class_observed_generation", Value::Null),
    ]);
    let prior = match created.planned {
        Value::Object(mut m) => {
            m.insert("status".into(), status.clone());
            Value::Object(m)
        }
        other => other,
    };
    let planned_for = |json: &Json| {
        let cfg = config(&NODE_POOL, json);
        let mut p = plan(&NODE_POOL.attributes, &NODE_POOL.blocks, &cfg, &prior).planned;
        keep_prior_status(&prior, &mut p, &[("nodes", &["weight"])]);
        p
    };
    let mut labels = base.clone();
    labels["metadata"] = json!({"labels": {"team": "a"}});
    labels["force_destroy"] = json!(true);
    let p = planned_for(&labels);
    assert_ne!(p, prior);
    assert_eq!(p.get("status"), Some(&status));

    let mut spec = base.clone();
    spec["limits"] = json!({"cpu": "5"});
    assert_eq!(planned_for(&spec).get("status"), Some(&status));
    // A status field that follows a changed spec attribute is read anew.
    spec["weight"] = json!(5);
    let followed = planned_for(&spec);
    let kept = followed.get("status").expect("status");
    assert!(kept.get("nodes").is_some_and(Value::is_unknown), "{kept:?}");
    assert_eq!(kept.get("conditions"), status.get("conditions"));
    let mut create = created_planned_status(&base);
    keep_prior_status(&Value::Null, &mut create, &[]);
    assert!(create.get("status").is_some_and(Value::is_unknown));
}

fn created_planned_status(json: &Json) -> Value {
    use crate::resources::kube::kind::testing::config;
    use crate::resources::kube::v1::NODE_POOL;
    use crate::terraform::framework::plan::plan;
    plan(
        &NODE_POOL.attributes,
        &NODE_POOL.blocks,
        &config(&NODE_POOL, json),
        &Value::Null,
    )
    .planned
}

#[test]
fn object_names() {
    assert!(valid_object_name("default") && valid_object_name("a.b-c"));
    assert!(!valid_object_name("Default") && !valid_object_name("-a") && !valid_object_name(""));
    assert!(valid_namespace("kube-system") && !valid_namespace("a.b") && !valid_namespace(&"a".repeat(64)));
}

fn capacity_buffer() -> KubeObjectType {
    KubeObjectType::new(
        "karpenter_capacity_buffer",
        k8s::kinds::CAPACITY_BUFFER,
        &crate::resources::kube::capacity_buffer::CAPACITY_BUFFER,
    )
}

/// A namespaced kind is imported by `namespace/name`; a cluster-scoped one by its name.
#[test]
fn import_ids_follow_the_scope() {
    let buffer = capacity_buffer();
    assert!(matches!(
        buffer.import_id("ci/runners"),
        Ok((Some("ci"), "runners"))
    ));
    for bad in [
        "runners",
        "ci/",
        "/runners",
        "Ci/runners",
        "a.b/runners",
        "ci/runners/x",
    ] {
        let d = buffer.import_id(bad).expect_err(bad);
        let text = d.iter().map(|x| x.detail.clone()).collect::<String>();
        assert!(text.contains("<namespace>/<name>"), "{bad}: {text}");
    }
    let pool = KubeObjectType::new(
        "karpenter_node_pool",
        k8s::kinds::NODE_POOL,
        &crate::resources::kube::v1::NODE_POOL,
    );
    assert!(matches!(pool.import_id("default"), Ok((None, "default"))));
    assert!(pool.import_id("ci/default").is_err());
}

/// The manifest of a namespaced kind carries `metadata.namespace` (the default when the
/// configuration names none) and no `namespace` in `spec`; reading the object back takes
/// the namespace from its metadata.
#[test]
fn namespaced_objects_are_addressed_by_their_namespace() {
    use crate::resources::kube::capacity_buffer::CAPACITY_BUFFER;
    use crate::resources::kube::kind::testing::{config, plan_create};
    let buffer = capacity_buffer();
    let planned = plan_create(
        &CAPACITY_BUFFER,
        &config(
            &CAPACITY_BUFFER,
            &json!({"name": "b", "pod_template_ref": {"name": "t"}, "replicas": 2}),
        ),
    );
    assert_eq!(buffer.namespace_of(&planned), Some("default"));
    let manifest = buffer.manifest(&planned).expect("manifest");
    assert_eq!(manifest["metadata"], json!({"name": "b", "namespace": "default"}));
    assert_eq!(manifest["apiVersion"], "autoscaling.x-k8s.io/v1beta1");
    assert!(manifest["spec"].get("namespace").is_none(), "{manifest}");

    let stored: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
        "metadata": {"name": "b", "namespace": "ci"},
        "spec": {"podTemplateRef": {"name": "t"}, "replicas": 2, "provisioningStrategy": "buffer.x-k8s.io/active-capacity"}
    }))
    .expect("object");
    let state = buffer.adopted_state(&stored).expect("state");
    assert_eq!(state.get("namespace"), Some(&Value::string("ci")));
    assert_eq!(buffer.label(&state), "ci/b");
    let pool = KubeObjectType::new(
        "karpenter_node_pool",
        k8s::kinds::NODE_POOL,
        &crate::resources::kube::v1::NODE_POOL,
    );
    assert_eq!(pool.namespace_of(&state), None);
}

/// A kind offers `force_destroy` in its schema exactly when it says what `force_destroy` does:
/// the error that suggests it and the attribute it points at must agree.
#[test]
fn force_destroy_attribute_and_cleanup_text_come_together() {
    use crate::resources::kube as k;
    for kind in [
        k::node_pool(),
        k::ec2_node_class(),
        k::provisioner(),
        k::node_template(),
        k::node_overlay(),
        k::capacity_buffer(),
    ] {
        assert_eq!(
            kind.schema.attribute(FORCE_DESTROY).is_some(),
            kind.force_destroy_cleanup.is_some(),
            "{}",
            kind.type_name
        );
    }
}
