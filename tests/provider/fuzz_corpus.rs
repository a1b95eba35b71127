//! The fuzz corpus (`fuzz/corpus/<target>/`) as regular tests.
//!
//! - `corpus_replays_clean`: every committed input (seeds, what the fuzzer kept, and the
//!   reproducers of crashes it found) runs through the same checks as its fuzz target
//!   (`fuzz/src/`), uninstrumented, in the normal test build. A crash that comes back fails here.
//! - The seeds are made from real values: Karpenter objects as the API server returns them,
//!   the Terraform states read from them (msgpack and JSON), the source states of `moved {}`
//!   blocks, ARNs, IAM policy documents and durations. `seeds_are_real_inputs` checks that the
//!   code each target fuzzes accepts them, so they stay meaningful when schemas change; the
//!   ignored `write_seeds` writes them (`cargo test --test provider -- fuzz_corpus:: --ignored write_seeds`,
//!   then `scripts/fuzz.sh cmin` to minimise).

#[path = "../../fuzz/src/lib.rs"]
mod shared;

use std::path::Path;

use kube::api::DynamicObject;
use serde_json::{Value as Json, json};
use shared::{KINDS, TARGETS, TYPES};
use terraform_provider_karpenter::terraform::framework::{MoveSource, Resource};
use terraform_provider_karpenter::terraform::tfvalue::{Type, Value, json as tfjson, msgpack};

/// One object per kind (in the order of [`KINDS`]), with status and foreign metadata as a
/// live cluster has them.
fn manifests() -> [Json; 4] {
    [
        json!({
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {
                "name": "default",
                "uid": "0b6f7c52-7b2e-4f1e-9d51-3d0f3f3c9d10",
                "resourceVersion": "4711",
                "generation": 2,
                "labels": {"team": "platform"},
                "annotations": {"karpenter.sh/nodepool-hash": "123", "note": "x"}
            },
            "spec": {
                "template": {
                    "metadata": {"labels": {"workload": "general"}},
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "requirements": [
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4"], "minValues": 2}
                        ],
                        "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                        "expireAfter": "720h",
                        "terminationGracePeriod": "48h"
                    }
                },
                "disruption": {
                    "consolidationPolicy": "WhenEmptyOrUnderutilized",
                    "consolidateAfter": "1m",
                    "budgets": [{"nodes": "10%"}, {"nodes": "0", "schedule": "@daily", "duration": "10m", "reasons": ["Drifted"]}]
                },
                "limits": {"cpu": "1000", "memory": "1000Gi"},
                "weight": 10
            },
            "status": {
                "resources": {"cpu": "16", "memory": "64Gi", "nodes": "2"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z", "observedGeneration": 2}]
            }
        }),
        json!({
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": "default", "labels": {"team": "platform"}},
            "spec": {
                "role": "KarpenterNodeRole-demo",
                "amiFamily": "AL2023",
                "amiSelectorTerms": [{"alias": "al2023@latest"}, {"id": "ami-0123456789abcdef0"}],
                "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"id": "subnet-0123"}],
                "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}, {"name": "sg-nodes"}],
                "capacityReservationSelectorTerms": [{"id": "cr-0123"}],
                "tags": {"team": "platform", "env": "prod"},
                "kubelet": {"maxPods": 110, "systemReserved": {"cpu": "100m"}, "evictionHard": {"memory.available": "5%"}, "clusterDNS": ["10.0.0.10"]},
                "blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": true, "ebs": {"volumeSize": "100Gi", "volumeType": "gp3", "iops": 3000, "throughput": 125, "encrypted": true, "deleteOnTermination": true, "kmsKeyID": "arn:aws:kms:us-east-1:123456789012:key/abc"}}],
                "metadataOptions": {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1, "httpTokens": "required"},
                "userData": "#!/bin/bash\necho hello\n",
                "detailedMonitoring": false,
                "associatePublicIPAddress": false,
                "instanceStorePolicy": "RAID0"
            },
            "status": {
                "instanceProfile": "demo_123",
                "amis": [{"id": "ami-0123456789abcdef0", "name": "al2023", "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}],
                "subnets": [{"id": "subnet-0123", "zone": "us-east-1a", "zoneID": "use1-az1"}],
                "securityGroups": [{"id": "sg-0123", "name": "sg-nodes"}],
                "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}]
            }
        }),
        json!({
            "apiVersion": "karpenter.sh/v1alpha5",
            "kind": "Provisioner",
            "metadata": {"name": "default", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
                "limits": {"resources": {"cpu": "1000"}},
                "providerRef": {"name": "default"},
                "labels": {"team": "platform"},
                "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                "startupTaints": [{"key": "init", "effect": "NoExecute"}],
                "ttlSecondsAfterEmpty": 30,
                "ttlSecondsUntilExpired": 2592000,
                "weight": 5,
                "consolidation": {"enabled": false},
                "kubeletConfiguration": {"containerRuntime": "containerd", "maxPods": 58}
            },
            "status": {"resources": {"cpu": "4"}, "lastScaleTime": "2024-01-01T00:00:00Z"}
        }),
        json!({
            "apiVersion": "karpenter.k8s.aws/v1alpha1",
            "kind": "AWSNodeTemplate",
            "metadata": {"name": "default"},
            "spec": {
                "subnetSelector": {"karpenter.sh/discovery": "demo"},
                "securityGroupSelector": {"karpenter.sh/discovery": "demo"},
                "amiFamily": "AL2",
                "amiSelector": {"aws-ids": "ami-0123"},
                "instanceProfile": "KarpenterNodeInstanceProfile",
                "tags": {"team": "platform"},
                "userData": "echo hi",
                "detailedMonitoring": true,
                "metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 2},
                "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "volumeType": "gp3", "encrypted": true, "snapshotID": "snap-1"}}]
            },
            "status": {
                "subnets": [{"id": "subnet-0123", "zone": "us-east-1a"}],
                "securityGroups": [{"id": "sg-0123", "name": "nodes"}],
                "amis": [{"id": "ami-0123", "name": "al2", "requirements": []}]
            }
        }),
    ]
}

fn object(m: &Json) -> DynamicObject {
    serde_json::from_value(m.clone()).expect("a Kubernetes object")
}

/// The states read from [`manifests`] (import: no prior state).
fn states() -> Vec<Value> {
    KINDS
        .iter()
        .zip(manifests())
        .map(|(kind, m)| kind.state_from_object(&object(&m), &Value::Null).expect("state"))
        .collect()
}

fn type_index(ty: &Type) -> usize {
    TYPES
        .iter()
        .position(|t| t == ty)
        .expect("type in the fuzzed set")
}

fn selector(n: usize) -> u8 {
    u8::try_from(n).expect("selector fits a byte")
}

fn with(sel: usize, body: &[u8]) -> Vec<u8> {
    let mut v = vec![selector(sel)];
    v.extend_from_slice(body);
    v
}

/// Every seed, as (target, bytes).
fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    let manifests = manifests();
    let states = states();
    // Small values of the generic types.
    let generic: [(Type, Value); 5] = [
        (
            Type::Dynamic,
            Value::dynamic(
                Type::object([("a", Type::String), ("n", Type::Number)]),
                Value::object([("a", Value::string("x")), ("n", Value::number(1))]),
            ),
        ),
        (
            Type::list(Type::String),
            Value::List(vec![Value::string("a"), Value::Null]),
        ),
        (
            Type::map(Type::Bool),
            Value::Map([("k".to_string(), Value::Bool(true))].into()),
        ),
        (
            Type::Tuple(vec![Type::String, Type::Dynamic, Type::list(Type::Bool)]),
            Value::Tuple(vec![
                Value::string("s"),
                Value::dynamic(Type::Number, Value::number(2)),
                Value::List(vec![Value::Bool(false)]),
            ]),
        ),
        (
            Type::set(Type::Number),
            Value::Set(vec![Value::number(1), Value::number(2)]),
        ),
    ];
    for (ty, v) in &generic {
        let i = type_index(ty);
        out.push((
            "tfvalue_msgpack",
            with(i, &msgpack::encode(v, ty).expect("msgpack")),
        ));
        out.push((
            "tfvalue_json",
            with(i << 1, &tfjson::encode(v, ty).expect("json")),
        ));
    }
    // An unknown, as in a plan.
    out.push((
        "tfvalue_msgpack",
        with(
            type_index(&Type::String),
            &msgpack::encode(&Value::unknown(), &Type::String).expect("msgpack"),
        ),
    ));
    for (k, (kind, state)) in KINDS.iter().zip(&states).enumerate() {
        let ty = kind.schema.value_type();
        let i = type_index(&ty);
        let packed = msgpack::encode(state, &ty).expect("msgpack");
        let text = tfjson::encode(state, &ty).expect("json");
        out.push(("tfvalue_msgpack", with(i, &packed)));
        out.push(("tfvalue_json", with(i << 1, &text)));
        out.push(("tfvalue_json", with((i << 1) | 1, &text)));
        out.push(("kube_write", with(k, &packed)));
        let wire = serde_json::to_vec(&manifests[k]).expect("json");
        out.push(("kube_read", with(k, &wire)));
        out.push(("kube_read", with(k | 4, &wire)));
        // move_state: kubectl_manifest (YAML, which JSON also is), kubernetes_manifest wrapped
        // in its dynamic form and bare.
        let yaml = serde_json::to_string_pretty(&manifests[k]).expect("json");
        let kubectl = serde_json::to_vec(&json!({"yaml_body": yaml, "id": "x"})).expect("json");
        out.push(("move_state", with(k, &kubectl)));
        let wrapped = json!({"manifest": {"value": manifests[k], "type": ["object", {}]}});
        out.push((
            "move_state",
            with(k | 8, &serde_json::to_vec(&wrapped).expect("json")),
        ));
        let bare = json!({"object": manifests[k]});
        out.push((
            "move_state",
            with(k | 8, &serde_json::to_vec(&bare).expect("json")),
        ));
    }
    let pool_yaml = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\n  labels:\n    team: platform\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"spot\"]\n  limits:\n    cpu: \"100\"\n";
    let kubectl = serde_json::to_vec(&json!({"yaml_body": pool_yaml})).expect("json");
    out.push(("move_state", with(4, &kubectl)));
    // The other schemas (provider, IAM resources, data source) as stored state with nothing set.
    for ty in TYPES.iter().skip(13) {
        out.push(("tfvalue_json", with((type_index(ty) << 1) | 1, b"{}")));
    }
    for arn in [
        "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo",
        "arn:aws-cn:iam::123456789012:role/path/to/Role",
        "arn:aws:sqs:us-east-1:123456789012:karpenter-demo",
        "arn:aws-us-gov:sqs:us-gov-west-1:123456789012:q",
    ] {
        out.push(("policy_text", with(0, arn.as_bytes())));
    }
    let document = "%7B%22Version%22%3A%222012-10-17%22%2C%22Statement%22%3A%5B%7B%22Effect%22%3A%22Allow%22%2C%22Principal%22%3A%7B%22Service%22%3A%22ec2.amazonaws.com%22%7D%2C%22Action%22%3A%22sts%3AAssumeRole%22%7D%5D%7D";
    out.push(("policy_text", with(1, document.as_bytes())));
    for d in ["10m", "1h30m", "1.5s", "0", "300ms", "2µs"] {
        out.push(("policy_text", with(2, d.as_bytes())));
    }
    out
}

#[test]
fn corpus_replays_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let mut total = 0;
    for (target, run) in TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{target} has an empty corpus");
        for f in files {
            let bytes = std::fs::read(&f).expect("read");
            let outcome = std::panic::catch_unwind(|| run(&bytes));
            assert!(outcome.is_ok(), "{target} fails on {}", f.display());
            total += 1;
        }
    }
    assert!(total >= TARGETS.len());
}

#[test]
fn seeds_are_real_inputs() {
    let manifests = manifests();
    for (kind, state) in KINDS.iter().zip(states()) {
        let ty = kind.schema.value_type();
        assert_eq!(state.conforms_to(&ty), Ok(()), "{}", kind.type_name);
        let back = msgpack::decode(&msgpack::encode(&state, &ty).expect("encode"), &ty).expect("decode");
        assert_eq!(back, state, "{}", kind.type_name);
    }
    for (k, kind) in KINDS.iter().enumerate() {
        let state_json = serde_json::to_vec(&json!({"manifest": manifests[k]})).expect("json");
        let moved = kind.move_state(&MoveSource {
            provider_address: "registry.terraform.io/hashicorp/kubernetes",
            type_name: "kubernetes_manifest",
            schema_version: 0,
            state_json: &state_json,
        });
        assert!(moved.is_ok(), "{}: {moved:?}", kind.type_name);
    }
    let seeds = seeds();
    assert!(seeds.len() > 40, "{}", seeds.len());
    for (target, bytes) in &seeds {
        let (sel, body) = shared::split(bytes);
        match *target {
            "tfvalue_msgpack" => {
                assert!(
                    msgpack::decode(body, &TYPES[sel % TYPES.len()]).is_ok(),
                    "{target} {sel}"
                )
            }
            "tfvalue_json" => {
                let ty = &TYPES[(sel >> 1) % TYPES.len()];
                assert!(tfjson::decode_lenient(body, ty).is_ok(), "{target} {sel}")
            }
            _ => {}
        }
    }
}

#[test]
#[ignore = "writes fuzz/corpus; run by hand after a schema change"]
fn write_seeds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for (n, (target, bytes)) in seeds().into_iter().enumerate() {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join(format!("seed-{n:03}")), bytes).expect("write");
    }
}
