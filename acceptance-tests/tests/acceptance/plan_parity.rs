//! Plan/server parity (issue #16 point 5): for generated NodePool and EC2NodeClass objects, the
//! provider's plan-time verdict must match the API server's.
//!
//! Cases are generated from the v1.14.1 CRDs: walking each CRD's OpenAPI schema alongside rich
//! valid baseline objects, every constraint met on the way (enum, pattern, min/max length,
//! minimum/maximum, min/max items and properties, `date-time` and integer formats, optional
//! fields removed, empty lists and maps) yields cases that satisfy and violate it; every CEL rule
//! (`x-kubernetes-validations`) must be seen both holding and failing by at least one case (the
//! hand-written mutations below fill the gaps the walk leaves), which the test asserts.
//!
//! Each case is judged twice:
//! - the provider: the object is turned into the resource's Terraform value (attributes by their
//!   wire names; the provider's own `to_wire` must give the object back, or the case is not
//!   expressible in Terraform and is counted apart), then every attribute validator and the
//!   resource's cross-attribute rules run in-process, exactly as at plan;
//! - the server: the test server (which evaluates the CRDs' schemas and CEL rules) is asked to
//!   create the object with `dryRun=All`.
//!
//! A false accept (plan passes, server refuses) fails the test. A false reject (plan refuses,
//! server accepts) is allowed only when the provider's diagnostic says it is deliberately
//! stricter than the CRD ("on purpose"); each such rule is listed in `acceptance-tests/reports/reliability.md`.
//! `PLAN_PARITY_LIST=1` prints every case with both verdicts.

use std::collections::{BTreeMap, BTreeSet};

use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use kube_testserver::{Config, TestServer, cel};
use serde_json::{Map, Value as Json, json};
use terraform_provider_karpenter::context::plan_memory::PlanMemory;
use terraform_provider_karpenter::k8s::served_values;
use terraform_provider_karpenter::resources::kube::v1::{
    EC2_NODE_CLASS, NODE_POOL, validate_ec2_node_class, validate_node_pool,
};
use terraform_provider_karpenter::terraform::framework::convert::{json_to_dynamic, to_wire};
use terraform_provider_karpenter::terraform::framework::plan::plan;
use terraform_provider_karpenter::terraform::framework::schema::validate_attributes;
use terraform_provider_karpenter::terraform::framework::{
    Attribute, Diagnostics, Mode, Nesting, Schema, Severity,
};
use terraform_provider_karpenter::terraform::tfvalue::{AttributePath, Number, Type, Value};

/// The words every deliberate stricter-than-CRD diagnostic carries.
const DELIBERATE: &str = "on purpose";

struct Kind {
    kind: &'static str,
    group: &'static str,
    plural: &'static str,
    crd_file: &'static str,
    schema: &'static Schema,
    cross: fn(&Value, Option<&PlanMemory>, &mut Diagnostics),
    baselines: fn() -> Vec<Json>,
    /// Hand-written mutations: (label, baseline index, edits as (JSON pointer, new value or
    /// None to remove)).
    extra: fn() -> Vec<(&'static str, usize, Edits)>,
}

fn kinds() -> Vec<Kind> {
    vec![
        Kind {
            kind: "NodePool",
            group: "karpenter.sh",
            plural: "nodepools",
            crd_file: "karpenter.sh_nodepools.yaml",
            schema: &NODE_POOL,
            cross: validate_node_pool,
            baselines: node_pool_baselines,
            extra: node_pool_extra,
        },
        Kind {
            kind: "EC2NodeClass",
            group: "karpenter.k8s.aws",
            plural: "ec2nodeclasses",
            crd_file: "karpenter.k8s.aws_ec2nodeclasses.yaml",
            schema: &EC2_NODE_CLASS,
            cross: validate_ec2_node_class,
            baselines: node_class_baselines,
            extra: node_class_extra,
        },
    ]
}

fn node_pool_baselines() -> Vec<Json> {
    vec![
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "general", "labels": {"team": "platform"}, "annotations": {"example.com/owner": "infra"}},
        "spec": {
            "template": {
                "metadata": {"labels": {"workload": "general", "karpenter.sh/capacity-type": "spot"},
                             "annotations": {"example.com/a": "b"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"], "minValues": 2},
                        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
                        {"key": "karpenter.k8s.aws/instance-category", "operator": "NotIn", "values": ["t"]},
                        {"key": "topology.kubernetes.io/zone", "operator": "Exists"}
                    ],
                    "taints": [{"key": "example.com/dedicated", "value": "general", "effect": "NoSchedule"}],
                    "startupTaints": [{"key": "node.cilium.io/agent-not-ready", "effect": "NoExecute",
                                       "timeAdded": "2024-05-01T10:00:00Z"}],
                    "expireAfter": "720h",
                    "terminationGracePeriod": "48h"
                }
            },
            "disruption": {
                "consolidateAfter": "1m",
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "budgets": [
                    {"nodes": "10%"},
                    {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "reasons": ["Drifted", "Underutilized"]}
                ]
            },
            "limits": {"cpu": "1000", "memory": "1000Gi"},
            "weight": 10
        }}),
        json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "static"},
        "spec": {
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}]
            }},
            "replicas": 3,
            "limits": {"nodes": "5"}
        }}),
    ]
}

fn node_class_baselines() -> Vec<Json> {
    vec![
        json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "default", "labels": {"team": "platform"}},
        "spec": {
            "role": "KarpenterNodeRole-demo",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "tags": {"team": "platform"}
        }}),
        json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "gpu", "annotations": {"example.com/owner": "ml"}},
        "spec": {
            "instanceProfile": "KarpenterNodeInstanceProfile-demo",
            "amiFamily": "AL2023",
            "amiSelectorTerms": [
                {"id": "ami-0123456789abcdef0"},
                {"name": "my-ami-*", "owner": "self"},
                {"tags": {"team": "ml", "Name": "*"}},
                {"ssmParameter": "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id"}
            ],
            "subnetSelectorTerms": [{"id": "subnet-0123456789abcdef0"}, {"tags": {"Name": "private-*"}}],
            "securityGroupSelectorTerms": [{"id": "sg-0123456789abcdef0"}, {"name": "eks-cluster-sg"}],
            "capacityReservationSelectorTerms": [
                {"id": "cr-0123456789abcdef0"},
                {"tags": {"purpose": "ml"}, "ownerID": "123456789012", "instanceMatchCriteria": "targeted"}
            ],
            "placementGroupSelector": {"name": "ml-cluster"},
            "associatePublicIPAddress": false,
            "tags": {"team": "ml", "cost-center": "42"},
            "kubelet": {
                "clusterDNS": ["10.100.0.10"],
                "maxPods": 110,
                "podsPerCore": 0,
                "systemReserved": {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi"},
                "kubeReserved": {"cpu": "200m", "memory": "500Mi", "pid": "1000"},
                "evictionHard": {"memory.available": "5%", "nodefs.available": "10%"},
                "evictionSoft": {"memory.available": "500Mi"},
                "evictionSoftGracePeriod": {"memory.available": "1m30s"},
                "evictionMaxPodGracePeriod": 60,
                "imageGCHighThresholdPercent": 85,
                "imageGCLowThresholdPercent": 80,
                "cpuCFSQuota": true
            },
            "blockDeviceMappings": [
                {"deviceName": "/dev/xvda", "rootVolume": true,
                 "ebs": {"volumeSize": "100Gi", "volumeType": "gp3", "iops": 3000, "throughput": 125,
                         "encrypted": true, "kmsKeyID": "arn:aws:kms:us-east-1:123456789012:key/abcd",
                         "deleteOnTermination": true}},
                {"deviceName": "/dev/xvdb",
                 "ebs": {"snapshotID": "snap-0123456789abcdef0", "volumeInitializationRate": 200}}
            ],
            "instanceStorePolicy": "RAID0",
            "userData": "#!/bin/bash\necho hello\n",
            "detailedMonitoring": true,
            "metadataOptions": {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                                "httpPutResponseHopLimit": 2, "httpTokens": "required"},
            "networkInterfaces": [
                {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
                {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"}
            ],
            "ipPrefixCount": 1,
            "connectionTracking": {"tcpEstablishedTimeout": 3600},
            "cpuOptions": {"nestedVirtualization": "disabled"}
        }}),
    ]
}

type Edits = Vec<(&'static str, Option<Json>)>;

/// Combinations the per-field walk cannot produce (two fields at once).
fn node_pool_extra() -> Vec<(&'static str, usize, Edits)> {
    vec![
        (
            "annotations over 256 KiB",
            0,
            vec![(
                "/metadata/annotations/example.com~1big",
                Some(json!("x".repeat(256 * 1024))),
            )],
        ),
        (
            "annotations at 256 KiB",
            1,
            vec![(
                "/metadata/annotations",
                Some(json!({"a": "x".repeat(256 * 1024 - 1)})),
            )],
        ),
        ("replicas with weight", 1, vec![("/spec/weight", Some(json!(10)))]),
        (
            "replicas with a cpu limit",
            1,
            vec![("/spec/limits/cpu", Some(json!("10")))],
        ),
        (
            "Gt with +5",
            0,
            vec![("/spec/template/spec/requirements/2/values", Some(json!(["+5"])))],
        ),
        (
            "Gt with -0",
            0,
            vec![("/spec/template/spec/requirements/2/values", Some(json!(["-0"])))],
        ),
        (
            "Gt with two values",
            0,
            vec![(
                "/spec/template/spec/requirements/2/values",
                Some(json!(["1", "2"])),
            )],
        ),
        (
            "Lt with a word",
            0,
            vec![
                ("/spec/template/spec/requirements/2/operator", Some(json!("Lt"))),
                ("/spec/template/spec/requirements/2/values", Some(json!(["five"]))),
            ],
        ),
        (
            "minValues above the values",
            0,
            vec![("/spec/template/spec/requirements/1/minValues", Some(json!(3)))],
        ),
        (
            "In without values",
            0,
            vec![("/spec/template/spec/requirements/0/values", None)],
        ),
        (
            "budget schedule without duration",
            0,
            vec![("/spec/disruption/budgets/1/duration", None)],
        ),
        (
            "budget duration without schedule",
            0,
            vec![("/spec/disruption/budgets/1/schedule", None)],
        ),
        (
            "a cron that cannot fire",
            0,
            vec![("/spec/disruption/budgets/1/schedule", Some(json!("0 0 31 2 *")))],
        ),
        (
            "a cron with a bad field",
            0,
            vec![("/spec/disruption/budgets/1/schedule", Some(json!("61 * * * *")))],
        ),
    ]
}

/// Combinations the per-field walk cannot produce (two fields at once).
fn node_class_extra() -> Vec<(&'static str, usize, Edits)> {
    vec![
        (
            "role and instanceProfile",
            0,
            vec![("/spec/instanceProfile", Some(json!("profile")))],
        ),
        (
            "annotations over 256 KiB",
            0,
            vec![(
                "/metadata/annotations",
                Some(json!({"a": "x".repeat(128 * 1024), "b": "x".repeat(128 * 1024)})),
            )],
        ),
        ("neither role nor instanceProfile", 0, vec![("/spec/role", None)]),
        (
            "alias with id",
            0,
            vec![(
                "/spec/amiSelectorTerms/0/id",
                Some(json!("ami-0123456789abcdef0")),
            )],
        ),
        (
            "alias and another term",
            0,
            vec![(
                "/spec/amiSelectorTerms/1",
                Some(json!({"id": "ami-0123456789abcdef0"})),
            )],
        ),
        (
            "id with tags",
            1,
            vec![("/spec/amiSelectorTerms/0/tags", Some(json!({"a": "b"})))],
        ),
        (
            "windows alias not latest",
            0,
            vec![(
                "/spec/amiSelectorTerms/0/alias",
                Some(json!("windows2022@v20240101")),
            )],
        ),
        (
            "windows alias latest",
            0,
            vec![(
                "/spec/amiSelectorTerms/0/alias",
                Some(json!("windows2022@latest")),
            )],
        ),
        (
            "alias family against amiFamily",
            0,
            vec![("/spec/amiFamily", Some(json!("Bottlerocket")))],
        ),
        (
            "alias family with Custom",
            0,
            vec![("/spec/amiFamily", Some(json!("Custom")))],
        ),
        ("no alias and no amiFamily", 1, vec![("/spec/amiFamily", None)]),
        (
            "placement group name and id",
            1,
            vec![(
                "/spec/placementGroupSelector/id",
                Some(json!("pg-0123456789abcdef0")),
            )],
        ),
        (
            "subnet id with tags",
            1,
            vec![("/spec/subnetSelectorTerms/0/tags", Some(json!({"a": "b"})))],
        ),
        (
            "security group id with name",
            1,
            vec![("/spec/securityGroupSelectorTerms/0/name", Some(json!("x")))],
        ),
        (
            "capacity reservation id with owner",
            1,
            vec![(
                "/spec/capacityReservationSelectorTerms/0/ownerID",
                Some(json!("123456789012")),
            )],
        ),
        (
            "two root volumes",
            1,
            vec![("/spec/blockDeviceMappings/1/rootVolume", Some(json!(true)))],
        ),
        (
            "volumeInitializationRate without snapshot",
            1,
            vec![
                ("/spec/blockDeviceMappings/1/ebs/snapshotID", None),
                ("/spec/blockDeviceMappings/1/ebs/volumeSize", Some(json!("20Gi"))),
            ],
        ),
        (
            "no primary interface",
            1,
            vec![("/spec/networkInterfaces/0/deviceIndex", Some(json!(1)))],
        ),
        (
            "two interfaces at one index",
            1,
            vec![("/spec/networkInterfaces/1/networkCardIndex", Some(json!(0)))],
        ),
        (
            "eviction soft without grace period",
            1,
            vec![("/spec/kubelet/evictionSoft/nodefs.available", Some(json!("10%")))],
        ),
        (
            "grace period without eviction soft",
            1,
            vec![(
                "/spec/kubelet/evictionSoftGracePeriod/nodefs.available",
                Some(json!("1m")),
            )],
        ),
        (
            "image GC high at low",
            1,
            vec![("/spec/kubelet/imageGCHighThresholdPercent", Some(json!(80)))],
        ),
        (
            "an eviction grace period kubelet cannot parse",
            1,
            vec![(
                "/spec/kubelet/evictionSoftGracePeriod/memory.available",
                Some(json!("1x")),
            )],
        ),
        (
            "empty connection tracking",
            1,
            vec![("/spec/connectionTracking", Some(json!({})))],
        ),
        (
            "block device without size or snapshot",
            1,
            vec![("/spec/blockDeviceMappings/0/ebs/volumeSize", None)],
        ),
    ]
}

/// One generated case.
#[derive(Clone)]
struct Case {
    label: String,
    object: Json,
}

fn set_pointer(obj: &mut Json, pointer: &str, value: Option<Json>) {
    let steps: Vec<String> = pointer
        .trim_start_matches('/')
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let mut here = obj;
    for (n, step) in steps.iter().enumerate() {
        let last = n + 1 == steps.len();
        match here {
            Json::Array(items) => {
                let Ok(i) = step.parse::<usize>() else { return };
                if last {
                    match value {
                        Some(v) if i < items.len() => items[i] = v,
                        Some(v) => items.push(v),
                        None if i < items.len() => {
                            items.remove(i);
                        }
                        None => {}
                    }
                    return;
                }
                let Some(next) = items.get_mut(i) else { return };
                here = next;
            }
            Json::Object(m) => {
                if last {
                    match value {
                        Some(v) => {
                            m.insert(step.clone(), v);
                        }
                        None => {
                            m.remove(step);
                        }
                    }
                    return;
                }
                here = m.entry(step.clone()).or_insert_with(|| json!({}));
            }
            _ => return,
        }
    }
}

fn esc(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

/// The string literals of the CEL rules of a schema (and, for `domain/key` literals, another key
/// of the same domain): values and keys that make the rules flip.
fn cel_literals(schema: &Json) -> Vec<String> {
    let mut out = BTreeSet::new();
    for (_, rule, _, _) in cel::inventory(schema) {
        for quote in ['\'', '"'] {
            let parts: Vec<&str> = rule.split(quote).collect();
            for lit in parts.iter().skip(1).step_by(2) {
                if lit.is_empty() || lit.starts_with('^') || lit.len() > 80 {
                    continue;
                }
                out.insert(lit.to_string());
                if let Some((domain, _)) = lit.split_once('/') {
                    out.insert(format!("{domain}/unlisted-key"));
                    out.insert(format!("sub.{domain}/unlisted-key"));
                }
            }
        }
    }
    out.into_iter().collect()
}

thread_local! {
    static LITERALS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Mutations of one value from the constraints of its schema node (`ruled`: the node carries
/// CEL rules, so the rules' literals are tried too).
fn mutations(s: &Json, v: &Json, ruled: bool) -> Vec<(String, Json)> {
    let mut out = Vec::new();
    let literals = if ruled {
        LITERALS.with(|l| l.borrow().clone())
    } else {
        Vec::new()
    };
    let get_u = |k: &str| s.get(k).and_then(Json::as_u64);
    if let Some(en) = s.get("enum").and_then(Json::as_array) {
        for e in en.iter().filter(|e| *e != v) {
            out.push((format!("enum value {e}"), e.clone()));
        }
        out.push(("not in enum".into(), json!("NotAnEnumValue")));
    }
    match v {
        Json::String(st) => {
            out.push(("empty string".into(), json!("")));
            for l in &literals {
                out.push((format!("CEL literal {l:?}"), json!(l)));
            }
            if s.get("pattern").is_some() || s.get("x-kubernetes-int-or-string").is_some() {
                out.push(("negative".into(), json!(format!("-{st}"))));
                out.push(("breaks pattern".into(), json!("!bad value!")));
                out.push(("empty".into(), json!("")));
                out.push(("signed".into(), json!(format!("+{st}"))));
                out.push(("trailing space".into(), json!(format!("{st} "))));
            }
            if let Some(m) = get_u("maxLength") {
                let m = m as usize;
                out.push(("at maxLength".into(), json!("a".repeat(m))));
                out.push(("over maxLength".into(), json!("a".repeat(m + 1))));
            }
            if get_u("minLength").is_some() {
                out.push(("under minLength".into(), json!("")));
            }
            if s.get("format").and_then(Json::as_str) == Some("date-time") {
                out.push(("not a real date".into(), json!("2024-02-30T10:00:00Z")));
                out.push(("leap day".into(), json!("2024-02-29T23:59:59+01:00")));
                out.push(("second 60".into(), json!("2024-01-01T10:00:60Z")));
            }
        }
        Json::Number(n) => {
            let x = n.as_i64().unwrap_or_default();
            if let Some(min) = s.get("minimum").and_then(Json::as_i64) {
                out.push(("at minimum".into(), json!(min)));
                out.push(("under minimum".into(), json!(min - 1)));
            } else {
                out.push(("negative".into(), json!(-1)));
            }
            if let Some(max) = s.get("maximum").and_then(Json::as_i64) {
                out.push(("at maximum".into(), json!(max)));
                out.push(("over maximum".into(), json!(max + 1)));
            }
            if s.get("format").and_then(Json::as_str) == Some("int32") {
                out.push(("over int32".into(), json!(i64::from(i32::MAX) + 1)));
            }
            out.push(("plus one".into(), json!(x + 1)));
        }
        Json::Array(a) => {
            out.push(("empty list".into(), json!([])));
            if let Some(max) = get_u("maxItems")
                && let Some(first) = a.first()
            {
                let over: Vec<Json> = (0..=max).map(|_| first.clone()).collect();
                out.push(("over maxItems (copies)".into(), Json::Array(over)));
            }
            if let Some(first) = a.first() {
                let mut dup = a.clone();
                dup.push(first.clone());
                out.push(("duplicate first".into(), Json::Array(dup)));
            }
        }
        Json::Object(o) if s.get("additionalProperties").is_some() => {
            out.push(("empty map".into(), json!({})));
            if let Some(first) = o.values().next() {
                let keys = ["bad key!", "", "example.com/extra", "-lead", "a/b/c"];
                for key in keys
                    .iter()
                    .map(ToString::to_string)
                    .chain(literals.iter().cloned())
                {
                    let mut m = o.clone();
                    m.insert(key.clone(), first.clone());
                    out.push((format!("extra key {key:?}"), Json::Object(m)));
                }
                for k in o.keys() {
                    let mut m = o.clone();
                    m.insert(k.clone(), json!(""));
                    out.push((format!("empty value at {k:?}"), Json::Object(m.clone())));
                    if let Some(st) = o[k].as_str() {
                        m.insert(k.clone(), json!(format!("-{st}")));
                        out.push((format!("negative value at {k:?}"), Json::Object(m)));
                    }
                }
                if let Some(max) = get_u("maxProperties") {
                    let mut m = o.clone();
                    for i in 0..=max {
                        m.insert(format!("k{i}"), first.clone());
                    }
                    out.push(("over maxProperties".into(), Json::Object(m)));
                }
            }
        }
        _ => {}
    }
    out
}

/// Walk `v` (at `pointer`) with its schema `s`, collecting mutated copies of `root`.
fn walk(s: &Json, v: &Json, pointer: &str, root: &Json, label: &str, out: &mut Vec<(String, Json)>) {
    let ruled = s.get("x-kubernetes-validations").is_some();
    for (what, nv) in mutations(s, v, ruled) {
        let mut obj = root.clone();
        set_pointer(&mut obj, pointer, Some(nv));
        out.push((format!("{label}{pointer}: {what}"), obj));
    }
    match v {
        Json::Object(o) => {
            let props = s.get("properties").and_then(Json::as_object);
            let addl = s.get("additionalProperties").filter(|a| a.is_object());
            for (k, c) in o {
                let cp = format!("{pointer}/{}", esc(k));
                if let Some(ps) = props.and_then(|p| p.get(k)) {
                    let mut obj = root.clone();
                    set_pointer(&mut obj, &cp, None);
                    out.push((format!("{label}{cp}: removed"), obj));
                    walk(ps, c, &cp, root, label, out);
                } else if let Some(a) = addl {
                    walk(a, c, &cp, root, label, out);
                }
            }
        }
        Json::Array(a) => {
            if let Some(items) = s.get("items") {
                for (i, c) in a.iter().enumerate() {
                    walk(items, c, &format!("{pointer}/{i}"), root, label, out);
                }
            }
        }
        _ => {}
    }
}

fn load_crd(file: &str) -> Json {
    let path = TestServer::shared_crds_dir("v1").join(file);
    let text = std::fs::read_to_string(&path).expect("CRD file");
    serde_saphyr::from_str(&text).expect("CRD YAML")
}

fn openapi(crd: &Json) -> Json {
    crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == "v1"))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .expect("v1 schema")
}

// ---------- the provider's verdict ----------

/// JSON (wire) → the Terraform value of `attributes`, keeping empty collections; `None` when the
/// JSON does not fit the attribute types (not expressible in Terraform).
fn to_tf(attributes: &[Attribute], json: &Map<String, Json>) -> Option<Value> {
    let mut out = BTreeMap::new();
    for a in attributes {
        let v = match a.wire_field().and_then(|f| json.get(&f)) {
            None | Some(Json::Null) => Value::Null,
            Some(j) => match a.nested() {
                Some((Nesting::Single, nested)) => to_tf(nested, j.as_object()?)?,
                Some((Nesting::List | Nesting::Set, nested)) => {
                    let mut items = Vec::new();
                    for e in j.as_array()? {
                        items.push(to_tf(nested, e.as_object()?)?);
                    }
                    Value::List(items)
                }
                Some((Nesting::Map, nested)) => {
                    let mut m = BTreeMap::new();
                    for (k, e) in j.as_object()? {
                        m.insert(k.clone(), to_tf(nested, e.as_object()?)?);
                    }
                    Value::Map(m)
                }
                None => plain(&a.value_type(), j)?,
            },
        };
        out.insert(a.name.to_string(), v);
    }
    Some(Value::Object(out))
}

fn plain(t: &Type, j: &Json) -> Option<Value> {
    Some(match (t, j) {
        (_, Json::Null) => Value::Null,
        // An int-or-string field: each value with its own type, as Terraform passes it.
        (Type::Dynamic, j) => json_to_dynamic(j).ok()?,
        (Type::String, Json::String(s)) => Value::String(s.clone()),
        (Type::Number, Json::Number(n)) => Value::Number(match n.as_i64() {
            Some(i) => Number::from_i64(i),
            None => Number::from_f64(n.as_f64()?)?,
        }),
        (Type::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Type::List(e) | Type::Set(e), Json::Array(a)) => {
            Value::List(a.iter().map(|x| plain(e, x)).collect::<Option<_>>()?)
        }
        (Type::Map(e), Json::Object(m)) => Value::Map(
            m.iter()
                .map(|(k, x)| plain(e, x).map(|v| (k.clone(), v)))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// The provider's verdict: `Ok(errors)` (path and detail of each error), or `Err` when the object
/// cannot be written as this resource's configuration.
fn provider_verdict(k: &Kind, obj: &Json) -> Result<(Vec<(String, String)>, Json), String> {
    let spec = obj["spec"].as_object().ok_or("no spec")?;
    let wire_attrs: Vec<Attribute> = k
        .schema
        .attributes
        .iter()
        .filter(|a| a.wire_field().is_some())
        .cloned()
        .collect();
    let Some(Value::Object(mut fields)) = to_tf(&k.schema.attributes, spec) else {
        return Err("does not fit the attribute types".into());
    };
    // name and metadata are off the wire: taken from the object's metadata
    let meta = &obj["metadata"];
    fields.insert(
        "name".into(),
        meta["name"]
            .as_str()
            .map_or(Value::Null, |n| Value::String(n.into())),
    );
    let part = |p: &str| {
        meta.get(p).and_then(Json::as_object).map_or(Value::Null, |m| {
            Value::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.as_str().unwrap_or_default().into())))
                    .collect(),
            )
        })
    };
    let (labels, annotations) = (part("labels"), part("annotations"));
    fields.insert(
        "metadata".into(),
        if labels.is_null() && annotations.is_null() {
            Value::Null
        } else {
            Value::Object(BTreeMap::from([
                ("labels".to_string(), labels),
                ("annotations".to_string(), annotations),
            ]))
        },
    );
    for b in &k.schema.blocks {
        fields.insert(b.name.to_string(), Value::Null);
    }
    let config = Value::Object(fields);
    config
        .conforms_to(&k.schema.value_type())
        .map_err(|(p, m)| format!("does not conform at {p}: {m}"))?;
    // the provider's own conversion must give the object's spec back
    let back = to_wire(&wire_attrs, &config, &AttributePath::root()).map_err(|e| e.to_string())?;
    if Json::Object(back.clone()) != Json::Object(spec.clone()) {
        return Err(format!("to_wire gives another object: {}", Json::Object(back)));
    }
    let mut d = Diagnostics::new();
    validate_attributes(
        &k.schema.attributes,
        &k.schema.blocks,
        &config,
        &AttributePath::root(),
        &mut d,
    );
    (k.cross)(&config, None, &mut d);
    required(&k.schema.attributes, &config, &AttributePath::root(), &mut d);
    let errors: Vec<(String, String)> = d
        .iter()
        .filter(|x| x.severity == Severity::Error)
        .map(|x| {
            (
                x.path.as_ref().map(ToString::to_string).unwrap_or_default(),
                x.detail.clone(),
            )
        })
        .collect();
    // what apply would send: the planned value (defaults filled in) through the provider's own
    // conversion
    let planned = plan(&k.schema.attributes, &k.schema.blocks, &config, &Value::Null).planned;
    let sent = match to_wire(&wire_attrs, &planned, &AttributePath::root()) {
        Ok(spec) => {
            let mut o = obj.clone();
            o["spec"] = Json::Object(spec);
            o
        }
        // only when plan refused the value anyway; the server then judges the object as is
        Err(_) => obj.clone(),
    };
    Ok((errors, sent))
}

/// Terraform's own check of required attributes (before any validator runs).
fn required(attributes: &[Attribute], value: &Value, path: &AttributePath, d: &mut Diagnostics) {
    for a in attributes {
        let v = value.get(a.name).unwrap_or(&Value::Null);
        let here = path.attr(a.name);
        if v.is_null() {
            if a.mode == Mode::Required {
                d.error_at(
                    &here,
                    "Missing required argument",
                    format!("The argument \"{}\" is required.", a.name),
                );
            }
            continue;
        }
        match (a.nested(), v) {
            (Some((Nesting::Single, nested)), _) => required(nested, v, &here, d),
            (Some((Nesting::List | Nesting::Set, nested)), Value::List(items)) => {
                for (i, e) in items.iter().enumerate() {
                    required(nested, e, &here.index(i), d);
                }
            }
            (Some((Nesting::Map, nested)), Value::Map(m)) => {
                for (key, e) in m {
                    required(nested, e, &here.key(key.clone()), d);
                }
            }
            _ => {}
        }
    }
}

// ---------- CEL coverage ----------

/// The values at an inventory path (`spec.template.spec.requirements[*].key`) of an object.
fn values_at<'a>(v: &'a Json, path: &str) -> Vec<&'a Json> {
    let mut here = vec![v];
    if path.is_empty() {
        return here;
    }
    for seg in path.split('.') {
        let (name, stars) = match seg.find("[*]") {
            Some(i) => (&seg[..i], seg[i..].matches("[*]").count()),
            None => (seg, 0),
        };
        let mut next: Vec<&Json> = here.iter().filter_map(|x| x.get(name)).collect();
        for _ in 0..stars {
            next = next
                .into_iter()
                .flat_map(|x| match x {
                    Json::Array(a) => a.iter().collect::<Vec<_>>(),
                    Json::Object(o) => o.values().collect(),
                    _ => Vec::new(),
                })
                .collect();
        }
        here = next;
    }
    here
}

#[derive(Default)]
struct Figures {
    cases: usize,
    agree: usize,
    agree_accept: usize,
    agree_reject: usize,
    false_accepts: Vec<String>,
    false_rejects: Vec<String>,
    deliberate: BTreeMap<String, usize>,
    not_expressible: usize,
    /// Accepted as a Karpenter v1.15 kubelet expression, refused by the older CRD before the write.
    v1_15_expressions: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_verdicts_match_the_api_server() {
    let server = TestServer::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        ..Config::default()
    })
    .await
    .expect("test server");
    let client = server.client().await.expect("client");
    let list = std::env::var_os("PLAN_PARITY_LIST").is_some();
    let started = std::time::Instant::now();
    let mut provider_time = std::time::Duration::ZERO;
    let mut server_time = std::time::Duration::ZERO;

    let mut cel_rules_total = 0;
    let mut transition_rules = Vec::new();
    let mut uncovered = Vec::new();
    let mut figures = Figures::default();

    for k in &kinds() {
        let crd = load_crd(k.crd_file);
        let schema = openapi(&crd);
        let literals = cel_literals(&schema);
        LITERALS.with(|l| *l.borrow_mut() = literals);
        let ar = ApiResource {
            group: k.group.into(),
            version: "v1".into(),
            api_version: format!("{}/v1", k.group),
            kind: k.kind.into(),
            plural: k.plural.into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);

        // generate
        let baselines = (k.baselines)();
        let mut cases: Vec<Case> = Vec::new();
        for (bi, b) in baselines.iter().enumerate() {
            cases.push(Case {
                label: format!("{} baseline {bi}", k.kind),
                object: b.clone(),
            });
            let mut out = Vec::new();
            walk(
                &schema["properties"]["spec"],
                &b["spec"],
                "/spec",
                b,
                &format!("{} b{bi} ", k.kind),
                &mut out,
            );
            walk(
                &json!({"type": "object", "additionalProperties": {"type": "string"}}),
                b["metadata"].get("labels").unwrap_or(&json!({"a": "b"})),
                "/metadata/labels",
                b,
                &format!("{} b{bi} ", k.kind),
                &mut out,
            );
            cases.extend(out.into_iter().map(|(label, object)| Case { label, object }));
        }
        for (label, bi, edits) in (k.extra)() {
            let mut obj = baselines[bi].clone();
            for (p, v) in edits {
                set_pointer(&mut obj, p, v);
            }
            cases.push(Case {
                label: format!("{} b{bi} {label}", k.kind),
                object: obj,
            });
        }
        // dedupe identical objects
        let mut seen = BTreeSet::new();
        cases.retain(|c| seen.insert(c.object.to_string()));

        // CEL coverage: every rule seen holding and failing
        for (path, rule, transition, err) in cel::inventory(&schema) {
            cel_rules_total += 1;
            assert!(err.is_none(), "rule does not compile: {rule}: {err:?}");
            if transition {
                transition_rules.push(format!("{}: {path}: {rule}", k.kind));
                continue;
            }
            let (mut holds, mut fails) = (false, false);
            for c in &cases {
                if holds && fails {
                    break;
                }
                for v in values_at(&c.object, &path) {
                    match cel::evaluate(&rule, v) {
                        cel::Verdict::Holds => holds = true,
                        _ => fails = true,
                    }
                }
            }
            if !(holds && fails) {
                uncovered.push(format!(
                    "{}: {path}: {rule} (holds seen: {holds}, fails seen: {fails})",
                    k.kind
                ));
            }
        }

        // judge
        // the provider's verdicts first (in-process), then the server's, a few requests at a time
        let mut judged = Vec::new();
        for c in &cases {
            figures.cases += 1;
            let t0 = std::time::Instant::now();
            let verdict = provider_verdict(k, &c.object);
            provider_time += t0.elapsed();
            match verdict {
                Ok((provider, sent)) => judged.push((c, provider, sent)),
                Err(why) => {
                    figures.not_expressible += 1;
                    if list {
                        println!("N/A  {}: {why}", c.label);
                    }
                }
            }
        }
        let t0 = std::time::Instant::now();
        let mut answers: Vec<Option<Option<String>>> = vec![None; judged.len()];
        for chunk in (0..judged.len()).collect::<Vec<_>>().chunks(8) {
            let mut set = tokio::task::JoinSet::new();
            for &i in chunk {
                let api = api.clone();
                let obj: DynamicObject = serde_json::from_value(judged[i].2.clone()).expect("object");
                let label = judged[i].0.label.clone();
                set.spawn(async move {
                    let pp = PostParams {
                        dry_run: true,
                        ..PostParams::default()
                    };
                    let verdict = match api.create(&pp, &obj).await {
                        Ok(_) => None,
                        Err(kube::Error::Api(e)) if e.code == 422 => Some(e.message),
                        Err(e) => panic!("{label}: unexpected server answer: {e}"),
                    };
                    (i, verdict)
                });
            }
            while let Some(done) = set.join_next().await {
                let (i, verdict) = done.expect("server request task");
                answers[i] = Some(verdict);
            }
        }
        server_time += t0.elapsed();
        for ((c, provider, _), answer) in judged.iter().zip(answers) {
            let server_verdict = answer.expect("every case answered");
            let line = format!(
                "{} | plan: {} | server: {}",
                c.label,
                if provider.is_empty() {
                    "ok".to_string()
                } else {
                    provider
                        .iter()
                        .map(|(p, d)| format!("{p}: {d}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                },
                server_verdict.as_deref().unwrap_or("ok")
            );
            if list {
                println!("{line}");
            }
            match (provider.is_empty(), server_verdict.is_none()) {
                (true, true) => {
                    figures.agree += 1;
                    figures.agree_accept += 1;
                }
                (false, false) => {
                    figures.agree += 1;
                    figures.agree_reject += 1;
                }
                // Karpenter v1.15 takes a reservation that is no quantity for a CEL expression,
                // which the v1.14.1 CRD judged here refuses: the provider accepts it offline (it
                // cannot know the cluster's Karpenter) and refuses it before the write on a
                // cluster whose CRD refuses it, which is checked here with that same CRD.
                (true, false)
                    if c.label.contains("Reserved/")
                        && !served_values::refused(
                            &schema,
                            &served_values::Patterns::default(),
                            &c.object,
                        )
                        .is_empty() =>
                {
                    figures.v1_15_expressions += 1;
                }
                (true, false) => figures.false_accepts.push(line),
                (false, true) => {
                    if provider.iter().all(|(_, d)| d.contains(DELIBERATE)) {
                        for (p, _) in provider {
                            let generic = p
                                .chars()
                                .map(|ch| if ch.is_ascii_digit() { '#' } else { ch })
                                .collect::<String>();
                            *figures.deliberate.entry(generic).or_default() += 1;
                        }
                    } else {
                        figures.false_rejects.push(line);
                    }
                }
            }
        }
    }

    let deliberate_total: usize = figures.deliberate.values().sum();
    println!(
        "plan/server parity: {} cases, {} judged ({} not expressible in Terraform), {} agree ({} accepted by both, {} refused by both), {} false accepts, {} false rejects, {} deliberate stricter rejects {:?}",
        figures.cases,
        figures.cases - figures.not_expressible,
        figures.not_expressible,
        figures.agree,
        figures.agree_accept,
        figures.agree_reject,
        figures.false_accepts.len(),
        figures.false_rejects.len(),
        deliberate_total,
        figures.deliberate
    );
    println!(
        "{} reservations that are no quantity: Karpenter v1.15 expressions, refused before the write by the v1.14.1 CRD",
        figures.v1_15_expressions
    );
    println!(
        "judged in {:.1} s (provider {:.1} s, server {:.1} s)",
        started.elapsed().as_secs_f64(),
        provider_time.as_secs_f64(),
        server_time.as_secs_f64()
    );
    println!(
        "CEL rules: {cel_rules_total} in the two CRDs, {} evaluated on create, {} transition rules (oldSelf, update only): {transition_rules:#?}",
        cel_rules_total - transition_rules.len(),
        transition_rules.len()
    );
    let mut problems = Vec::new();
    if !uncovered.is_empty() {
        problems.push(format!(
            "CEL rules not exercised both ways:\n{}",
            uncovered.join("\n")
        ));
    }
    if !figures.false_accepts.is_empty() {
        problems.push(format!(
            "plan accepts what the server refuses:\n{}",
            figures.false_accepts.join("\n")
        ));
    }
    if !figures.false_rejects.is_empty() {
        problems.push(format!(
            "plan refuses what the server accepts (and does not say it is deliberate):\n{}",
            figures.false_rejects.join("\n")
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(
        figures.agree_accept >= 4 && figures.agree_reject > 100,
        "too few cases judged"
    );
}
