//! Karpenter's drift rules, one table per rule, written from Karpenter's docs and source
//! (kubernetes-sigs/karpenter and aws/karpenter-provider-aws v1.14: `NodePool.Hash`,
//! `EC2NodeClass.Hash` and their `hash:"ignore"` fields, `areStaticFieldsDrifted`,
//! `areRequirementsDrifted`, the budget arithmetic, and their tests' cases).

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use super::budgets::{self, Budget};
use super::changes::{Change, Effect, changes, duration_seconds};
use super::report::{self, BudgetText, Subject};
use super::rules::{DriftRules, EC2_NODE_CLASS, EKS_NODE_CLASS, NODE_POOL};
use super::verdict::{Hashes, Requirements, preview};
use super::{belongs, pool_budgets, pool_requirements};
use crate::k8s::plan_reads::{ClassRef, NodeClaim};
use crate::resources::kube::eks::EKS_NODE_CLASS as EKS_SCHEMA;
use crate::resources::kube::kind::testing::{UNKNOWN, config, plan_create, put};
use crate::resources::kube::v1::{EC2_NODE_CLASS as EC2_SCHEMA, NODE_POOL as POOL_SCHEMA};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::schema::Schema;
use crate::terraform::tfvalue::{AttributePath, Value};

fn pool() -> Json {
    json!({
        "name": "general",
        "template": {
            "metadata": {"labels": {"team": "platform"}, "annotations": {"example.com/owner": "infra"}},
            "spec": {
                "node_class_ref": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"], "min_values": 1}
                ],
                "taints": [
                    {"key": "example.com/a", "value": "x", "effect": "NoSchedule"},
                    {"key": "example.com/b", "effect": "NoExecute"}
                ],
                "startup_taints": [{"key": "node.cilium.io/agent-not-ready", "effect": "NoExecute"}],
                "expire_after": "720h",
                "termination_grace_period": "48h"
            }
        },
        "disruption": {"consolidate_after": "1m", "budgets": [{"nodes": "10%"}]},
        "limits": {"cpu": "1000"},
        "weight": 10
    })
}

fn class() -> Json {
    json!({
        "name": "default",
        "role": "KarpenterNodeRole",
        "ami_selector_terms": [{"alias": "al2023@latest"}],
        "subnet_selector_terms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "security_group_selector_terms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "tags": {"team": "platform"},
        "user_data": "echo hi",
        "block_device_mappings": [{"device_name": "/dev/xvda", "ebs": {"volume_size": "20Gi", "volume_type": "gp3"}}],
        "metadata_options": {"http_tokens": "required"},
        "kubelet": {"max_pods": 110},
        "detailed_monitoring": false,
        "associate_public_ip_address": false,
        "ip_prefix_count": 1,
        "instance_store_policy": "RAID0",
        "context": "c-1",
        "wait_for_ready": false
    })
}

/// The planned state of `json` (defaults applied, as Terraform stores it).
fn planned(schema: &Schema, json: &Json) -> Value {
    plan_create(schema, &config(schema, json))
}

/// The changes between `before` and `before` edited at `pointer`.
fn edit(rules: &DriftRules, schema: &Schema, before: &Json, pointer: &str, value: Json) -> Vec<Change> {
    let mut after = before.clone();
    put(&mut after, pointer, value);
    changes(rules, schema, &planned(schema, before), &planned(schema, &after))
}

fn path(dotted: &str) -> AttributePath {
    dotted
        .split('.')
        .fold(AttributePath::root(), |p, step| p.attr(step))
}

#[test]
fn every_static_field_of_the_pool_template_is_a_static_change() {
    let cases: &[(&str, Json, &str)] = &[
        (
            "/template/metadata/labels/team",
            json!("core"),
            "template.metadata.labels",
        ),
        (
            "/template/metadata/annotations/example.com~owner",
            json!("apps"),
            "template.metadata.annotations",
        ),
        (
            "/template/spec/taints/0/effect",
            json!("NoExecute"),
            "template.spec.taints",
        ),
        (
            "/template/spec/startup_taints/0/key",
            json!("example.com/c"),
            "template.spec.startup_taints",
        ),
        (
            "/template/spec/node_class_ref/name",
            json!("other"),
            "template.spec.node_class_ref",
        ),
        (
            "/template/spec/expire_after",
            json!("24h"),
            "template.spec.expire_after",
        ),
        (
            "/template/spec/expire_after",
            json!("Never"),
            "template.spec.expire_after",
        ),
        (
            "/template/spec/termination_grace_period",
            json!("1h"),
            "template.spec.termination_grace_period",
        ),
        (
            "/template/spec/termination_grace_period",
            Json::Null,
            "template.spec.termination_grace_period",
        ),
    ];
    for (pointer, value, expected) in cases {
        let found = edit(&NODE_POOL, &POOL_SCHEMA, &pool(), pointer, value.clone());
        assert_eq!(
            found,
            vec![Change {
                path: path(expected),
                effect: Effect::Static,
                known: true
            }],
            "{pointer} = {value}"
        );
    }
}

#[test]
fn behavioural_fields_and_what_hashes_alike_change_nothing() {
    let mut reordered = pool();
    let taints = reordered["template"]["spec"]["taints"].clone();
    let flipped: Vec<Json> = taints.as_array().into_iter().flatten().rev().cloned().collect();
    reordered["template"]["spec"]["taints"] = Json::Array(flipped);
    let reqs = reordered["template"]["spec"]["requirements"].clone();
    let flipped: Vec<Json> = reqs.as_array().into_iter().flatten().rev().cloned().collect();
    reordered["template"]["spec"]["requirements"] = Json::Array(flipped);
    let cases: &[(&str, Json)] = &[
        ("/weight", json!(50)),
        ("/limits/cpu", json!("2000")),
        ("/limits/memory", json!("1Ti")),
        ("/disruption/consolidate_after", json!("Never")),
        ("/disruption/consolidation_policy", json!("WhenEmpty")),
        ("/disruption/budgets/0/nodes", json!("0")),
        (
            "/disruption/budgets/1",
            json!({"nodes": "1", "reasons": ["Drifted"]}),
        ),
        ("/metadata/labels/owner", json!("sre")),
        ("/force_destroy", json!(true)),
        // Durations hash by their length.
        ("/template/spec/expire_after", json!("43200m")),
        ("/template/spec/termination_grace_period", json!("2880m")),
        // minValues never drifts a node.
        ("/template/spec/requirements/1/min_values", json!(1)),
        ("/template/spec/requirements/0/min_values", json!(2)),
    ];
    for (pointer, value) in cases {
        let found = edit(&NODE_POOL, &POOL_SCHEMA, &pool(), pointer, value.clone());
        assert!(found.is_empty(), "{pointer} = {value}: {found:?}");
    }
    let before = planned(&POOL_SCHEMA, &pool());
    let after = planned(&POOL_SCHEMA, &reordered);
    assert!(
        changes(&NODE_POOL, &POOL_SCHEMA, &before, &after).is_empty(),
        "taints and requirements are sets"
    );
}

#[test]
fn requirements_and_unknown_values_are_said_as_such() {
    let found = edit(
        &NODE_POOL,
        &POOL_SCHEMA,
        &pool(),
        "/template/spec/requirements/1/values",
        json!(["arm64"]),
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].effect, Effect::Requirements);
    assert_eq!(found[0].path, path("template.spec.requirements"));
    let found = edit(
        &NODE_POOL,
        &POOL_SCHEMA,
        &pool(),
        "/template/spec/node_class_ref/name",
        json!(UNKNOWN),
    );
    assert_eq!(
        found,
        vec![Change {
            path: path("template.spec.node_class_ref"),
            effect: Effect::Static,
            known: false
        }]
    );
}

#[test]
fn every_ec2_node_class_field_but_karpenters_exclusions_is_hashed() {
    let stat: &[(&str, Json, &str)] = &[
        ("/role", json!("OtherRole"), "role"),
        ("/tags/team", json!("core"), "tags"),
        ("/user_data", json!("echo bye"), "user_data"),
        (
            "/block_device_mappings/0/ebs/volume_size",
            json!("40Gi"),
            "block_device_mappings",
        ),
        (
            "/metadata_options/http_tokens",
            json!("optional"),
            "metadata_options",
        ),
        ("/kubelet/max_pods", json!(50), "kubelet"),
        ("/detailed_monitoring", json!(true), "detailed_monitoring"),
        (
            "/associate_public_ip_address",
            json!(true),
            "associate_public_ip_address",
        ),
        ("/instance_store_policy", Json::Null, "instance_store_policy"),
        ("/context", json!("c-2"), "context"),
        (
            "/placement_group_selector",
            json!({"name": "pg"}),
            "placement_group_selector",
        ),
        (
            "/cpu_options",
            json!({"nested_virtualization": "enabled"}),
            "cpu_options",
        ),
        // The family an alias resolves to is hashed.
        (
            "/ami_selector_terms/0/alias",
            json!("bottlerocket@latest"),
            "ami_selector_terms",
        ),
        ("/ami_family", json!("Custom"), "ami_family"),
    ];
    for (pointer, value, expected) in stat {
        let found = edit(&EC2_NODE_CLASS, &EC2_SCHEMA, &class(), pointer, value.clone());
        assert_eq!(
            found,
            vec![Change {
                path: path(expected),
                effect: Effect::Static,
                known: true
            }],
            "{pointer} = {value}"
        );
    }
    let dynamic: &[(&str, Json, &str)] = &[
        (
            "/subnet_selector_terms/0/tags/karpenter.sh~discovery",
            json!("d"),
            "subnet_selector_terms",
        ),
        (
            "/security_group_selector_terms/0/id",
            json!("sg-1"),
            "security_group_selector_terms",
        ),
        (
            "/capacity_reservation_selector_terms",
            json!([{"id": "cr-1"}]),
            "capacity_reservation_selector_terms",
        ),
        (
            "/ami_selector_terms/0/alias",
            json!("al2023@v20240807"),
            "ami_selector_terms",
        ),
    ];
    for (pointer, value, expected) in dynamic {
        let found = edit(&EC2_NODE_CLASS, &EC2_SCHEMA, &class(), pointer, value.clone());
        assert_eq!(
            found,
            vec![Change {
                path: path(expected),
                effect: Effect::Dynamic,
                known: true
            }],
            "{pointer} = {value}"
        );
    }
    let nothing: &[(&str, Json)] = &[
        ("/ip_prefix_count", json!(4)),
        // Naming the family the alias already resolves to hashes alike.
        ("/ami_family", json!("AL2023")),
        ("/wait_for_ready", json!(true)),
        ("/metadata/labels/team", json!("x")),
    ];
    for (pointer, value) in nothing {
        let found = edit(&EC2_NODE_CLASS, &EC2_SCHEMA, &class(), pointer, value.clone());
        assert!(found.is_empty(), "{pointer} = {value}: {found:?}");
    }
}

#[test]
fn an_auto_mode_node_class_resolves_its_selectors_and_hashes_the_rest() {
    let base = json!({
        "name": "private",
        "role": "AutoNodeRole",
        "subnet_selector_terms": [{"id": "subnet-1"}],
        "security_group_selector_terms": [{"id": "sg-1"}],
        "tags": {"team": "a"}
    });
    let found = edit(&EKS_NODE_CLASS, &EKS_SCHEMA, &base, "/tags/team", json!("b"));
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].effect, found[0].path.to_string()),
        (Effect::Static, "tags".into())
    );
    let found = edit(
        &EKS_NODE_CLASS,
        &EKS_SCHEMA,
        &base,
        "/subnet_selector_terms/0/id",
        json!("subnet-2"),
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].effect, Effect::Dynamic);
}

/// A NodeClaim of pool "general" and class "default", labelled as Karpenter labels one (an
/// on-demand amd64 m5.large) but for `labels`, which replace or add to those.
fn claim(name: &str, labels: &[(&str, &str)]) -> NodeClaim {
    let karpenters = [
        ("karpenter.sh/nodepool", "general"),
        ("karpenter.k8s.aws/ec2nodeclass", "default"),
        ("karpenter.sh/capacity-type", "on-demand"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/os", "linux"),
        ("node.kubernetes.io/instance-type", "m5.large"),
        ("karpenter.k8s.aws/instance-family", "m5"),
        ("topology.kubernetes.io/zone", "us-east-1a"),
    ];
    let all: BTreeMap<String, String> = karpenters
        .iter()
        .chain(labels)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    NodeClaim {
        name: name.into(),
        labels: all,
        hashes: [
            ("karpenter.sh/nodepool-hash", "111"),
            ("karpenter.sh/nodepool-hash-version", "v3"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        class: Some(ClassRef {
            group: "karpenter.k8s.aws".into(),
            kind: "EC2NodeClass".into(),
            name: "default".into(),
        }),
        ..NodeClaim::default()
    }
}

fn pool_hashes() -> BTreeMap<String, String> {
    [
        ("karpenter.sh/nodepool-hash", "111"),
        ("karpenter.sh/nodepool-hash-version", "v3"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Requirement drift of one NodeClaim with `label` (absent: `None`) under `operator values`
/// on the key `k`, the way Karpenter checks it (`Compatible` of the NodeClaim's labels).
fn requirement_drifts(operator: &str, values: &[&str], label: Option<&str>) -> bool {
    let mut p = pool();
    p["template"]["spec"]["requirements"] =
        json!([{"key": "example.com/k", "operator": operator, "values": values}]);
    let before = planned(&POOL_SCHEMA, &pool());
    let after = planned(&POOL_SCHEMA, &p);
    let labels: Vec<(&str, &str)> = label.map(|v| ("example.com/k", v)).into_iter().collect();
    let c = claim("general-a", &labels);
    let found = changes(&NODE_POOL, &POOL_SCHEMA, &before, &after);
    let (old, new) = (pool_requirements(&before), pool_requirements(&after));
    let claims = [&c];
    let hashes = pool_hashes();
    let p = preview(
        &claims,
        &found,
        Hashes {
            hash: NODE_POOL.hash,
            version: NODE_POOL.hash_version,
            current: Some(&hashes),
        },
        Requirements {
            prior: old.as_ref(),
            planned: new.as_ref(),
        },
    );
    assert!(p.already.is_empty(), "the claim met the prior requirements");
    p.verdicts.iter().any(|v| !v.drifting.is_empty())
}

#[test]
fn requirement_drift_per_operator() {
    let cases: &[(&str, &[&str], Option<&str>, bool)] = &[
        ("In", &["a", "b"], Some("a"), false),
        ("In", &["b"], Some("a"), true),
        ("In", &["a"], None, true),
        ("NotIn", &["a"], Some("a"), true),
        ("NotIn", &["b"], Some("a"), false),
        ("NotIn", &["a"], None, false),
        ("Exists", &[], Some("a"), false),
        ("Exists", &[], None, true),
        ("DoesNotExist", &[], Some("a"), true),
        ("DoesNotExist", &[], None, false),
        ("Gt", &["2"], Some("5"), false),
        ("Gt", &["10"], Some("5"), true),
        ("Gt", &["2"], Some("x"), true),
        ("Gt", &["2"], None, true),
        ("Lt", &["5"], Some("2"), false),
        ("Lt", &["1"], Some("2"), true),
        ("Lt", &["5"], None, true),
        ("Gte", &["5"], Some("5"), false),
        ("Gte", &["6"], Some("5"), true),
        ("Lte", &["5"], Some("5"), false),
        ("Lte", &["4"], Some("5"), true),
        ("Lte", &["4"], None, true),
    ];
    for (op, values, label, drifts) in cases {
        assert_eq!(
            requirement_drifts(op, values, *label),
            *drifts,
            "{op} {values:?} on {label:?}"
        );
    }
}

#[test]
fn requirement_drift_follows_karpenters_own_cases() {
    // Karpenter's drift tests: an expanded In set does not drift, a narrowed one that leaves
    // the node's value out does; a key the node lacks drifts; deprecated keys are normalised.
    let run = |reqs: Json, labels: &[(&str, &str)]| {
        let mut p = pool();
        p["template"]["spec"]["requirements"] = reqs;
        let before = planned(&POOL_SCHEMA, &pool());
        let after = planned(&POOL_SCHEMA, &p);
        let c = claim("general-a", labels);
        let claims = [&c];
        let found = changes(&NODE_POOL, &POOL_SCHEMA, &before, &after);
        let new = pool_requirements(&after);
        let p = preview(
            &claims,
            &found,
            Hashes {
                hash: NODE_POOL.hash,
                version: NODE_POOL.hash_version,
                current: None,
            },
            Requirements {
                prior: None,
                planned: new.as_ref(),
            },
        );
        p.verdicts
            .iter()
            .flat_map(|v| v.drifting.iter().map(|(_, why)| why.clone().unwrap_or_default()))
            .collect::<Vec<String>>()
    };
    let it = "node.kubernetes.io/instance-type";
    assert!(
        run(
            json!([{"key": it, "operator": "In", "values": ["m5.large", "m5.2xlarge"]}]),
            &[(it, "m5.large")]
        )
        .is_empty()
    );
    let why = run(
        json!([{"key": it, "operator": "In", "values": ["c5.large"]}]),
        &[(it, "m5.large")],
    );
    assert_eq!(
        why,
        vec![
            "its label node.kubernetes.io/instance-type=m5.large, which node.kubernetes.io/instance-type In [c5.large] requires"
        ]
    );
    let why = run(
        json!([{"key": "example.com/gpu", "operator": "Exists"}]),
        &[(it, "m5.large")],
    );
    assert_eq!(
        why,
        vec!["it has no example.com/gpu label, which example.com/gpu Exists requires"]
    );
    let beta = run(
        json!([{"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]),
        &[("kubernetes.io/arch", "amd64")],
    );
    assert!(beta.is_empty(), "{beta:?}");
}

/// The static verdict for one NodeClaim with `hashes` (pool at `111`/`v3`, or unknown).
fn static_fate(
    claim_hashes: &[(&str, &str)],
    drifted: Option<&str>,
    pool_known: bool,
) -> (usize, usize, usize) {
    let mut c = claim("general-a", &[]);
    c.hashes = claim_hashes
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    c.drifted = drifted.map(str::to_string);
    let claims = [&c];
    let change = Change {
        path: path("template.metadata.labels"),
        effect: Effect::Static,
        known: true,
    };
    let current = pool_hashes();
    let p = preview(
        &claims,
        &[change],
        Hashes {
            hash: NODE_POOL.hash,
            version: NODE_POOL.hash_version,
            current: pool_known.then_some(&current),
        },
        Requirements::default(),
    );
    (
        p.verdicts[0].drifting.len(),
        p.already.len(),
        p.verdicts[0].unhashed,
    )
}

#[test]
fn a_static_change_drifts_exactly_the_claims_with_the_pools_current_hash() {
    let h = "karpenter.sh/nodepool-hash";
    let v = "karpenter.sh/nodepool-hash-version";
    // (claim's annotations, Drifted condition, pool's annotations read) → (drifts, already, unhashed)
    type Case<'a> = (
        &'a [(&'a str, &'a str)],
        Option<&'a str>,
        bool,
        (usize, usize, usize),
    );
    let cases: &[Case<'_>] = &[
        (&[(h, "111"), (v, "v3")], None, true, (1, 0, 0)),
        (&[(h, "999"), (v, "v3")], None, true, (0, 1, 0)),
        (&[(h, "111"), (v, "v3")], Some("NodeClassDrift"), true, (0, 1, 0)),
        (&[(h, "999"), (v, "v2")], None, true, (0, 0, 1)),
        (&[(h, "111")], None, true, (0, 0, 1)),
        (&[(v, "v3")], None, true, (0, 0, 1)),
        (&[], None, true, (0, 0, 1)),
        // The pool could not be read: a claim with both annotations is taken as current.
        (&[(h, "999"), (v, "v2")], None, false, (1, 0, 0)),
    ];
    for (annotations, drifted, known, expected) in cases {
        assert_eq!(
            static_fate(annotations, *drifted, *known),
            *expected,
            "{annotations:?} drifted={drifted:?} pool read={known}"
        );
    }
}

#[test]
fn deleting_claims_are_not_running_and_selectors_may_drift() {
    let mut gone = claim("general-gone", &[]);
    gone.deleting = true;
    let live = claim("general-b", &[]);
    let claims = [&gone, &live];
    let change = Change {
        path: path("subnet_selector_terms"),
        effect: Effect::Dynamic,
        known: true,
    };
    let p = preview(
        &claims,
        &[change],
        Hashes {
            hash: EC2_NODE_CLASS.hash,
            version: EC2_NODE_CLASS.hash_version,
            current: None,
        },
        Requirements::default(),
    );
    assert_eq!(p.running.len(), 1);
    assert_eq!(p.verdicts[0].possibly.len(), 1);
    assert!(p.verdicts[0].drifting.is_empty());
}

#[test]
fn claims_belong_to_their_pool_or_class() {
    let c = claim("general-a", &[]);
    assert!(belongs(&NODE_POOL, "general", &c));
    assert!(!belongs(&NODE_POOL, "other", &c));
    assert!(belongs(&EC2_NODE_CLASS, "default", &c));
    assert!(!belongs(&EC2_NODE_CLASS, "other", &c));
    assert!(!belongs(&EKS_NODE_CLASS, "default", &c));
}

fn budget(nodes: &str, schedule: Option<&str>, reasons: Option<&[&str]>) -> Budget {
    Budget {
        nodes: nodes.into(),
        schedule: schedule.map(str::to_string),
        duration: schedule.map(|_| "8h".to_string()),
        reasons: reasons.map(|r| r.iter().map(|x| x.to_string()).collect()),
    }
}

#[test]
fn budgets_for_drift_follow_karpenters_arithmetic() {
    let cases: &[(Vec<Budget>, usize, &str)] = &[
        (
            vec![budget("10%", None, None)],
            5,
            "at most 1 node at a time (budget 10% of 5 nodes, rounded up)",
        ),
        (
            vec![budget("10%", None, None)],
            40,
            "at most 4 nodes at a time (budget 10% of 40 nodes, rounded up)",
        ),
        (
            vec![budget("50%", None, None), budget("3", None, None)],
            40,
            "at most 3 nodes at a time (budget 3)",
        ),
        (
            vec![
                budget("0", None, Some(&["Underutilized"])),
                budget("2", None, Some(&["Drifted"])),
            ],
            10,
            "at most 2 nodes at a time (budget 2)",
        ),
        (
            vec![budget("0", None, Some(&[]))],
            10,
            "as many at a time as it can place the pods of (no budget limits drift)",
        ),
        (
            vec![
                budget("10%", None, None),
                budget("0", Some("0 9 * * mon-fri"), Some(&["Drifted"])),
            ],
            10,
            "at most 1 node at a time (budget 10% of 10 nodes, rounded up); 0 while the budget scheduled \
             `0 9 * * mon-fri` (UTC) for 8h is active",
        ),
    ];
    for (budgets, nodes, expected) in cases {
        assert_eq!(budgets::allowance(budgets, *nodes), *expected, "{budgets:?}");
    }
    assert_eq!(
        budgets::from_disruption(&Json::Null),
        vec![budget("10%", None, None)],
        "the CRD's default"
    );
    let planned = planned(&POOL_SCHEMA, &pool());
    assert_eq!(
        pool_budgets(&POOL_SCHEMA, &planned),
        vec![budget("10%", None, None)]
    );
}

#[test]
fn durations_are_read_as_karpenter_reads_them() {
    assert_eq!(duration_seconds("720h"), Some(720 * 3600));
    assert_eq!(duration_seconds("1h30m15s"), Some(5415));
    assert_eq!(duration_seconds("Never"), None);
    assert_eq!(duration_seconds("5"), None);
}

fn subject() -> Subject {
    Subject {
        label: "NodePool \"general\"".into(),
        static_reason: "NodePoolDrifted",
        hash_annotation: NODE_POOL.hash,
        caveat: None,
    }
}

#[test]
fn the_warning_says_n_of_m_nodes_on_the_attribute_and_nothing_when_nothing_drifts() {
    let a = claim("general-a", &[]);
    let mut b = claim("general-b", &[]);
    b.node_name = Some("ip-10-0-0-2.ec2.internal".into());
    let mut c = claim("general-c", &[]);
    c.hashes.clear();
    let claims = [&a, &b, &c];
    let change = Change {
        path: path("template.metadata.labels"),
        effect: Effect::Static,
        known: true,
    };
    let current = pool_hashes();
    let hashes = Hashes {
        hash: NODE_POOL.hash,
        version: NODE_POOL.hash_version,
        current: Some(&current),
    };
    let p = preview(&claims, &[change], hashes, Requirements::default());
    let mut d = Diagnostics::new();
    let budgets = |_: &super::verdict::Verdict<'_>| {
        BudgetText::Pool("at most 1 node at a time (budget 10% of 3 nodes, rounded up)".into())
    };
    report::preview(&subject(), &p, &budgets, &mut d);
    let all: Vec<_> = d.iter().collect();
    assert_eq!(all.len(), 1);
    assert_eq!(
        all[0].summary,
        "This change replaces 2 of 3 nodes of NodePool \"general\""
    );
    assert_eq!(
        all[0].path.as_ref().map(ToString::to_string).as_deref(),
        Some("template.metadata.labels")
    );
    for phrase in [
        "general-a, general-b (ip-10-0-0-2.ec2.internal)",
        "NodePoolDrifted",
        "1 NodeClaim carries no karpenter.sh/nodepool-hash annotation",
        "at most 1 node at a time",
    ] {
        assert!(all[0].detail.contains(phrase), "{phrase:?} in {}", all[0].detail);
    }

    // A requirements change that every node still meets says nothing.
    let change = Change {
        path: path("template.spec.requirements"),
        effect: Effect::Requirements,
        known: true,
    };
    let reqs = pool_requirements(&planned(&POOL_SCHEMA, &pool()));
    let p = preview(
        &claims,
        &[change],
        hashes,
        Requirements {
            prior: None,
            planned: reqs.as_ref(),
        },
    );
    let mut d = Diagnostics::new();
    report::preview(&subject(), &p, &budgets, &mut d);
    assert!(d.is_empty(), "{d:?}");
}

#[test]
fn a_destroy_names_the_nodes_it_terminates() {
    let a = claim("general-a", &[]);
    let mut d = Diagnostics::new();
    report::pool_removal("NodePool \"general\"", false, &[&a], &mut d);
    let all: Vec<_> = d.iter().collect();
    assert_eq!(
        all[0].summary,
        "Destroying NodePool \"general\" terminates its 1 node"
    );
    assert!(all[0].detail.contains("general-a"));
    let mut d = Diagnostics::new();
    report::pool_removal("NodePool \"general\"", true, &[], &mut d);
    assert!(d.is_empty());
}
