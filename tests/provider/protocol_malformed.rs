//! Malformed protocol input, generated systematically: every RPC field that carries a value
//! (DynamicValue, RawState) × a table of corruptions (garbage and truncated msgpack and JSON,
//! values of the wrong shape, extra and missing attributes, an unknown or null root, nesting
//! and length bombs), plus unknown type names, wrong schema versions and bad move sources —
//! sent straight to the built plugin over mTLS, as Terraform's gRPC client would.
//!
//! Each request must be answered (never a transport failure or a dropped connection) with an
//! error diagnostic; the few documented exceptions are checked for what they are instead
//! (a null state that means "absent" by the protocol, opaque private bytes we never read,
//! RPCs of features this provider does not declare, state stores and actions, which answer
//! `Unimplemented`). After the
//! whole batch the same process must still answer a schema request and validate a good
//! configuration cleanly, and its stderr must show no panic.

#[allow(unused_imports)]
use crate::common;

use std::collections::BTreeMap;

use crate::common::{provider_client, start_and_connect};
use terraform_provider_karpenter::provider::KarpenterProvider;
use terraform_provider_karpenter::terraform::framework::Provider;
use terraform_provider_karpenter::terraform::plugin::proto::tfplugin6 as pb;
use terraform_provider_karpenter::terraform::tfvalue::{Type, Value, json as tfjson, msgpack};
use tonic::transport::Channel;

type Client = pb::provider_client::ProviderClient<Channel>;

/// What a corrupted request must get back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// An error diagnostic.
    Error,
    /// An error diagnostic, or a success whose meaning the protocol defines (a null state is
    /// "absent": plan to create, plan to destroy, refresh finds nothing).
    ErrorOrNullMeaning,
}

/// One corruption of a value of type `ty`.
struct Corruption {
    name: &'static str,
    value: pb::DynamicValue,
    expect: Expect,
}

fn mp(bytes: Vec<u8>) -> pb::DynamicValue {
    pb::DynamicValue {
        msgpack: bytes,
        json: vec![],
    }
}

fn js(bytes: Vec<u8>) -> pb::DynamicValue {
    pb::DynamicValue {
        msgpack: vec![],
        json: bytes,
    }
}

fn msgpack_str(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let n = s.len();
    if n < 32 {
        out.push(0xa0 | n as u8);
    } else {
        out.push(0xd9);
        out.push(n as u8);
    }
    out.extend_from_slice(s.as_bytes());
    out
}

/// A msgpack map from already-encoded keys and values.
fn msgpack_map(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = vec![0xde];
    out.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    for (k, v) in entries {
        out.extend(msgpack_str(k));
        out.extend_from_slice(v);
    }
    out
}

/// Deterministic pseudo-random bytes (xorshift), so a failure can be replayed.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn fields(ty: &Type) -> BTreeMap<String, Type> {
    match ty {
        Type::Object(f) => f.clone(),
        _ => BTreeMap::new(),
    }
}

/// A valid value: every attribute null except the first string attributes, set to "x".
fn valid_value(ty: &Type) -> Value {
    let f = fields(ty);
    Value::Object(
        f.iter()
            .map(|(k, t)| {
                let v = if *t == Type::String && (k == "name" || k == "cluster_name") {
                    Value::string("x")
                } else {
                    Value::Null
                };
                (k.clone(), v)
            })
            .collect(),
    )
}

/// The corruption table for a value of object type `ty` in a slot where a null value has a
/// protocol meaning (`null_means_absent`) or not.
fn corruptions(ty: &Type, null_means_absent: bool) -> Vec<Corruption> {
    let valid = msgpack::encode(&valid_value(ty), ty).expect("valid value encodes");
    let valid_json = tfjson::encode(&valid_value(ty), ty).expect("valid value encodes as JSON");
    let f = fields(ty);
    let nulls: Vec<(String, Vec<u8>)> = f.keys().map(|k| (k.clone(), vec![0xc0])).collect();
    // An attribute to put values of the wrong type in: a string one where there is one (the
    // provider block has only nested blocks).
    let (string_attr, is_string) = f
        .iter()
        .find(|(_, t)| **t == Type::String)
        .map(|(k, _)| (k.clone(), true))
        .or_else(|| f.keys().next().map(|k| (k.clone(), false)))
        .expect("an attribute");
    let wrong_shape = if is_string {
        vec![0x81, 0xa1, b'a', 0x01]
    } else {
        msgpack_str("a string where an object belongs")
    };
    let number_attr = f
        .iter()
        .find(|(_, t)| **t == Type::Number)
        .map(|(k, _)| k.clone());
    let with = |attr: &str, encoded: Vec<u8>| -> Vec<u8> {
        let entries: Vec<(String, Vec<u8>)> = nulls
            .iter()
            .map(|(k, v)| (k.clone(), if k == attr { encoded.clone() } else { v.clone() }))
            .collect();
        msgpack_map(&entries)
    };
    let mut extra = nulls.clone();
    extra.push(("no_such_attribute".into(), vec![0xc0]));
    let mut duplicate = nulls.clone();
    duplicate.push((string_attr.clone(), msgpack_str("again")));
    let mut json_extra: serde_json::Value = serde_json::from_slice(&valid_json).expect("JSON");
    json_extra["no_such_attribute"] = serde_json::json!(1);

    let e = Expect::Error;
    let mut out = vec![
        Corruption {
            name: "msgpack: reserved marker 0xc1",
            value: mp(vec![0xc1]),
            expect: e,
        },
        Corruption {
            name: "msgpack: noise (seed 1)",
            value: mp(noise(1, 64)),
            expect: e,
        },
        Corruption {
            name: "msgpack: noise (seed 2)",
            value: mp(noise(2, 512)),
            expect: e,
        },
        Corruption {
            name: "msgpack: noise (seed 3)",
            value: mp(noise(3, 7)),
            expect: e,
        },
        Corruption {
            name: "msgpack: truncated to 1 byte",
            value: mp(valid[..1].to_vec()),
            expect: e,
        },
        Corruption {
            name: "msgpack: truncated to half",
            value: mp(valid[..valid.len() / 2].to_vec()),
            expect: e,
        },
        Corruption {
            name: "msgpack: last byte missing",
            value: mp(valid[..valid.len() - 1].to_vec()),
            expect: e,
        },
        Corruption {
            name: "msgpack: trailing bytes",
            value: mp([valid.clone(), vec![0xc0, 0xc0]].concat()),
            expect: e,
        },
        Corruption {
            name: "msgpack: string at the root",
            value: mp(msgpack_str("hello")),
            expect: e,
        },
        Corruption {
            name: "msgpack: number at the root",
            value: mp(vec![0x2a]),
            expect: e,
        },
        Corruption {
            name: "msgpack: array at the root",
            value: mp(vec![0x92, 0xc0, 0xc0]),
            expect: e,
        },
        Corruption {
            name: "msgpack: unknown at the root",
            value: mp(vec![0xd4, 0x00, 0x00]),
            expect: e,
        },
        Corruption {
            name: "msgpack: object where a string is expected (or the reverse)",
            value: mp(with(&string_attr, wrong_shape)),
            expect: e,
        },
        Corruption {
            name: "msgpack: bool where a string is expected",
            value: mp(with(&string_attr, vec![0xc3])),
            expect: e,
        },
        Corruption {
            name: "msgpack: invalid UTF-8 in a string",
            value: mp(with(&string_attr, vec![0xa2, 0xff, 0xfe])),
            expect: e,
        },
        Corruption {
            name: "msgpack: extra attribute",
            value: mp(msgpack_map(&extra)),
            expect: e,
        },
        Corruption {
            name: "msgpack: duplicate attribute",
            value: mp(msgpack_map(&duplicate)),
            expect: e,
        },
        Corruption {
            name: "msgpack: missing attributes",
            value: mp(msgpack_map(&nulls[..1])),
            expect: e,
        },
        Corruption {
            name: "msgpack: nesting bomb (100k arrays)",
            value: mp(vec![0x91; 100_000]),
            expect: e,
        },
        Corruption {
            name: "msgpack: map claiming 4G entries",
            value: mp(vec![0xdf, 0xff, 0xff, 0xff, 0xff]),
            expect: e,
        },
        Corruption {
            name: "msgpack: string claiming 4 GB",
            value: mp(with(&string_attr, vec![0xdb, 0xff, 0xff, 0xff, 0xff, b'a'])),
            expect: e,
        },
        Corruption {
            name: "JSON: not JSON",
            value: js(b"{not json".to_vec()),
            expect: e,
        },
        Corruption {
            name: "JSON: truncated",
            value: js(valid_json[..valid_json.len() / 2].to_vec()),
            expect: e,
        },
        Corruption {
            name: "JSON: array at the root",
            value: js(b"[1, 2, 3]".to_vec()),
            expect: e,
        },
        Corruption {
            name: "JSON: string at the root",
            value: js(b"\"hello\"".to_vec()),
            expect: e,
        },
        Corruption {
            name: "JSON: extra attribute",
            value: js(json_extra.to_string().into_bytes()),
            expect: e,
        },
        Corruption {
            name: "JSON: nesting bomb (100k arrays)",
            value: js(b"[".repeat(100_000)),
            expect: e,
        },
        Corruption {
            name: "JSON: invalid UTF-8",
            value: js(vec![b'"', 0xff, 0xfe, b'"']),
            expect: e,
        },
    ];
    if let Some(n) = number_attr {
        out.push(Corruption {
            name: "msgpack: NaN for a number",
            value: mp(with(&n, [vec![0xcb], f64::NAN.to_be_bytes().to_vec()].concat())),
            expect: e,
        });
        out.push(Corruption {
            name: "msgpack: string where a number is expected",
            value: mp(with(&n, msgpack_str("many"))),
            expect: e,
        });
    }
    let null_expect = if null_means_absent {
        Expect::ErrorOrNullMeaning
    } else {
        e
    };
    out.push(Corruption {
        name: "empty DynamicValue",
        value: pb::DynamicValue::default(),
        expect: null_expect,
    });
    out.push(Corruption {
        name: "msgpack: nil at the root",
        value: mp(vec![0xc0]),
        expect: null_expect,
    });
    out
}

/// The answer to one request: its diagnostics, or the gRPC status it failed with.
type Answer = Result<Vec<pb::Diagnostic>, tonic::Status>;

fn diags<T>(
    r: Result<tonic::Response<T>, tonic::Status>,
    get: impl FnOnce(&T) -> &Vec<pb::Diagnostic>,
) -> Answer {
    r.map(|r| get(r.get_ref()).clone())
}

fn has_error(d: &[pb::Diagnostic]) -> bool {
    d.iter()
        .any(|d| d.severity == pb::diagnostic::Severity::Error as i32)
}

/// The tally of the run.
#[derive(Default)]
struct Tally {
    total: usize,
    errors: usize,
    null_meaning: usize,
    unimplemented: usize,
    failures: Vec<String>,
    by_rpc: BTreeMap<String, usize>,
}

impl Tally {
    fn record(&mut self, rpc: &str, what: &str, expect: Expect, answer: Answer) {
        self.total += 1;
        *self.by_rpc.entry(rpc.to_string()).or_default() += 1;
        match answer {
            Ok(d) if has_error(&d) => self.errors += 1,
            Ok(_) if expect == Expect::ErrorOrNullMeaning => self.null_meaning += 1,
            Ok(d) => self
                .failures
                .push(format!("{rpc} / {what}: no error diagnostic (got {d:?})")),
            Err(s) => self.failures.push(format!(
                "{rpc} / {what}: gRPC failure {:?}: {}",
                s.code(),
                s.message()
            )),
        }
    }

    fn record_unimplemented(&mut self, rpc: &str, answer: Result<(), tonic::Status>) {
        self.total += 1;
        *self.by_rpc.entry(rpc.to_string()).or_default() += 1;
        match answer {
            Err(s) if s.code() == tonic::Code::Unimplemented => self.unimplemented += 1,
            Err(s) => self
                .failures
                .push(format!("{rpc}: gRPC failure {:?}: {}", s.code(), s.message())),
            Ok(()) => self
                .failures
                .push(format!("{rpc}: answered for an undeclared feature")),
        }
    }
}

/// A list of type names with their value types.
type NamedTypes = Vec<(String, Type)>;

fn schemas() -> (Type, NamedTypes, NamedTypes) {
    let p = KarpenterProvider::new();
    (
        p.schema().value_type(),
        p.resources()
            .iter()
            .map(|r| (r.type_name().to_string(), r.schema().value_type()))
            .collect(),
        p.data_sources()
            .iter()
            .map(|d| (d.type_name().to_string(), d.schema().value_type()))
            .collect(),
    )
}

fn good(value: &Value, ty: &Type) -> Option<pb::DynamicValue> {
    Some(mp(msgpack::encode(value, ty).expect("encode")))
}

const BAD_TYPE_NAMES: [&str; 4] = ["karpenter_nope", "", "karpenter_node_pool\u{0}", "aws_instance"];

async fn resource_rpcs(client: &mut Client, tally: &mut Tally, type_name: &str, ty: &Type) {
    let ok = good(&valid_value(ty), ty);
    for c in corruptions(ty, false) {
        let r = client
            .validate_resource_config(pb::validate_resource_config::Request {
                type_name: type_name.into(),
                config: Some(c.value.clone()),
                ..Default::default()
            })
            .await;
        tally.record(
            "ValidateResourceConfig.config",
            c.name,
            c.expect,
            diags(r, |r| &r.diagnostics),
        );
    }
    for c in corruptions(ty, true) {
        // PlanResourceChange: one field corrupted at a time, the others valid.
        for slot in ["prior_state", "proposed_new_state", "config"] {
            let mut req = pb::plan_resource_change::Request {
                type_name: type_name.into(),
                prior_state: ok.clone(),
                proposed_new_state: ok.clone(),
                config: ok.clone(),
                ..Default::default()
            };
            let field = match slot {
                "prior_state" => &mut req.prior_state,
                "proposed_new_state" => &mut req.proposed_new_state,
                _ => &mut req.config,
            };
            *field = Some(c.value.clone());
            // A null configuration is meaningful only with a null proposed state (destroy).
            let expect = if slot == "config" { Expect::Error } else { c.expect };
            let r = client.plan_resource_change(req).await;
            tally.record(
                &format!("PlanResourceChange.{slot}"),
                c.name,
                expect,
                diags(r, |r| &r.diagnostics),
            );
        }
        for slot in ["prior_state", "planned_state", "config"] {
            let mut req = pb::apply_resource_change::Request {
                type_name: type_name.into(),
                prior_state: ok.clone(),
                planned_state: ok.clone(),
                config: ok.clone(),
                ..Default::default()
            };
            let field = match slot {
                "prior_state" => &mut req.prior_state,
                "planned_state" => &mut req.planned_state,
                _ => &mut req.config,
            };
            *field = Some(c.value.clone());
            // The provider is not configured here, so even a request that decodes must end in
            // an error ("not configured"): nothing may be applied.
            let r = client.apply_resource_change(req).await;
            tally.record(
                &format!("ApplyResourceChange.{slot}"),
                c.name,
                Expect::Error,
                diags(r, |r| &r.diagnostics),
            );
        }
        let r = client
            .read_resource(pb::read_resource::Request {
                type_name: type_name.into(),
                current_state: Some(c.value.clone()),
                ..Default::default()
            })
            .await;
        tally.record(
            "ReadResource.current_state",
            c.name,
            c.expect,
            diags(r, |r| &r.diagnostics),
        );
    }
}

async fn upgrade_and_move(client: &mut Client, tally: &mut Tally, type_name: &str) {
    let raw = |json: &[u8]| pb::RawState {
        json: json.to_vec(),
        flatmap: Default::default(),
    };
    let deep = b"[".repeat(100_000);
    let cases: Vec<(&str, i64, pb::RawState)> = vec![
        ("raw_state JSON: not JSON", 0, raw(b"{not json")),
        ("raw_state JSON: truncated", 0, raw(br#"{"name": "x", "templ"#)),
        ("raw_state JSON: array", 0, raw(b"[1, 2]")),
        ("raw_state JSON: string", 0, raw(b"\"state\"")),
        (
            "raw_state JSON: wrong type for an attribute",
            0,
            raw(br#"{"name": {"a": 1}}"#),
        ),
        ("raw_state JSON: nesting bomb", 0, raw(&deep)),
        (
            "raw_state JSON: invalid UTF-8",
            0,
            raw(&[b'{', b'"', 0xff, b'"', b':', b'1', b'}']),
        ),
        (
            "raw_state flatmap only",
            0,
            pb::RawState {
                json: vec![],
                flatmap: [
                    ("name".to_string(), "x".to_string()),
                    ("%".to_string(), "1".to_string()),
                ]
                .into(),
            },
        ),
        ("raw_state empty", 0, raw(b"")),
        ("schema version from a newer provider", 99, raw(b"{}")),
        ("schema version i64::MAX", i64::MAX, raw(b"{}")),
        ("negative schema version", -1, raw(b"{}")),
    ];
    for (what, version, raw_state) in cases {
        let r = client
            .upgrade_resource_state(pb::upgrade_resource_state::Request {
                type_name: type_name.into(),
                version,
                raw_state: Some(raw_state),
            })
            .await;
        tally.record(
            "UpgradeResourceState.raw_state",
            what,
            Expect::Error,
            diags(r, |r| &r.diagnostics),
        );
    }
    let kubectl = "registry.terraform.io/gavinbunney/kubectl";
    let moves: Vec<(&str, &str, &str, Vec<u8>)> = vec![
        (
            "source_state: not JSON",
            kubectl,
            "kubectl_manifest",
            b"{not json".to_vec(),
        ),
        (
            "source_state: truncated",
            kubectl,
            "kubectl_manifest",
            br#"{"yaml_body": "api"#.to_vec(),
        ),
        ("source_state: array", kubectl, "kubectl_manifest", b"[]".to_vec()),
        ("source_state: empty", kubectl, "kubectl_manifest", Vec::new()),
        (
            "source_state: nesting bomb",
            kubectl,
            "kubectl_manifest",
            deep.clone(),
        ),
        (
            "source_state: yaml_body not YAML",
            kubectl,
            "kubectl_manifest",
            br#"{"yaml_body": "a: [b"}"#.to_vec(),
        ),
        (
            "source_state: yaml_body nesting bomb",
            kubectl,
            "kubectl_manifest",
            serde_json::json!({ "yaml_body": "[".repeat(100_000) })
                .to_string()
                .into_bytes(),
        ),
        (
            "source_state: yaml_body of another kind",
            kubectl,
            "kubectl_manifest",
            serde_json::json!({ "yaml_body": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n" })
                .to_string()
                .into_bytes(),
        ),
        (
            "source_state: yaml_body a scalar",
            kubectl,
            "kubectl_manifest",
            serde_json::json!({ "yaml_body": "42" }).to_string().into_bytes(),
        ),
        (
            "source_state: manifest of the wrong shape",
            "registry.terraform.io/hashicorp/kubernetes",
            "kubernetes_manifest",
            br#"{"manifest": {"value": "not an object", "type": "string"}}"#.to_vec(),
        ),
        ("unknown source type", kubectl, "kubectl_nope", b"{}".to_vec()),
        (
            "unknown source provider",
            "registry.terraform.io/x/y",
            "kubectl_manifest",
            b"{}".to_vec(),
        ),
    ];
    for (what, provider, source_type, state) in moves {
        let r = client
            .move_resource_state(pb::move_resource_state::Request {
                source_provider_address: provider.into(),
                source_type_name: source_type.into(),
                source_schema_version: 0,
                source_state: Some(pb::RawState {
                    json: state,
                    flatmap: Default::default(),
                }),
                target_type_name: type_name.into(),
                ..Default::default()
            })
            .await;
        tally.record(
            "MoveResourceState.source_state",
            what,
            Expect::Error,
            diags(r, |r| &r.diagnostics),
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_malformed_value_in_every_rpc_is_a_diagnostic_and_the_plugin_keeps_serving() {
    let (mut plugin, _hs, channel, _id) = start_and_connect().await;
    let mut client = provider_client(channel);
    let (provider_ty, resources, data_sources) = schemas();
    let mut tally = Tally::default();

    for c in corruptions(&provider_ty, false) {
        let r = client
            .validate_provider_config(pb::validate_provider_config::Request {
                config: Some(c.value.clone()),
            })
            .await;
        tally.record(
            "ValidateProviderConfig.config",
            c.name,
            c.expect,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .configure_provider(pb::configure_provider::Request {
                config: Some(c.value.clone()),
                ..Default::default()
            })
            .await;
        tally.record(
            "ConfigureProvider.config",
            c.name,
            c.expect,
            diags(r, |r| &r.diagnostics),
        );
    }
    for (type_name, ty) in &data_sources {
        for c in corruptions(ty, false) {
            let r = client
                .validate_data_resource_config(pb::validate_data_resource_config::Request {
                    type_name: type_name.clone(),
                    config: Some(c.value.clone()),
                })
                .await;
            tally.record(
                "ValidateDataResourceConfig.config",
                c.name,
                c.expect,
                diags(r, |r| &r.diagnostics),
            );
            let r = client
                .read_data_source(pb::read_data_source::Request {
                    type_name: type_name.clone(),
                    config: Some(c.value.clone()),
                    ..Default::default()
                })
                .await;
            tally.record(
                "ReadDataSource.config",
                c.name,
                c.expect,
                diags(r, |r| &r.diagnostics),
            );
        }
    }
    for (type_name, ty) in &resources {
        resource_rpcs(&mut client, &mut tally, type_name, ty).await;
        upgrade_and_move(&mut client, &mut tally, type_name).await;
        let long = "x".repeat(100_000);
        for id in ["", "no/such/namespace/or/name/at/all", "\u{0}", long.as_str()] {
            let r = client
                .import_resource_state(pb::import_resource_state::Request {
                    type_name: type_name.clone(),
                    id: id.to_string(),
                    identity: Some(pb::ResourceIdentityData {
                        identity_data: Some(mp(noise(9, 32))),
                    }),
                    ..Default::default()
                })
                .await;
            tally.record(
                "ImportResourceState.id/identity",
                "bad id",
                Expect::Error,
                diags(r, |r| &r.diagnostics),
            );
        }
    }

    // Unknown type names in every RPC that names a type.
    let (_, np_ty) = &resources[0];
    let np_ok = good(&valid_value(np_ty), np_ty);
    for name in BAD_TYPE_NAMES {
        let t = || name.to_string();
        let e = Expect::Error;
        let r = client
            .validate_resource_config(pb::validate_resource_config::Request {
                type_name: t(),
                config: np_ok.clone(),
                ..Default::default()
            })
            .await;
        tally.record(
            "ValidateResourceConfig.type_name",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .validate_data_resource_config(pb::validate_data_resource_config::Request {
                type_name: t(),
                config: np_ok.clone(),
            })
            .await;
        tally.record(
            "ValidateDataResourceConfig.type_name",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .plan_resource_change(pb::plan_resource_change::Request {
                type_name: t(),
                prior_state: np_ok.clone(),
                proposed_new_state: np_ok.clone(),
                config: np_ok.clone(),
                ..Default::default()
            })
            .await;
        tally.record(
            "PlanResourceChange.type_name",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .apply_resource_change(pb::apply_resource_change::Request {
                type_name: t(),
                prior_state: np_ok.clone(),
                planned_state: np_ok.clone(),
                config: np_ok.clone(),
                ..Default::default()
            })
            .await;
        tally.record(
            "ApplyResourceChange.type_name",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .read_resource(pb::read_resource::Request {
                type_name: t(),
                current_state: np_ok.clone(),
                ..Default::default()
            })
            .await;
        tally.record("ReadResource.type_name", name, e, diags(r, |r| &r.diagnostics));
        let r = client
            .read_data_source(pb::read_data_source::Request {
                type_name: t(),
                config: np_ok.clone(),
                ..Default::default()
            })
            .await;
        tally.record("ReadDataSource.type_name", name, e, diags(r, |r| &r.diagnostics));
        let r = client
            .upgrade_resource_state(pb::upgrade_resource_state::Request {
                type_name: t(),
                version: 0,
                raw_state: Some(pb::RawState {
                    json: b"{}".to_vec(),
                    ..Default::default()
                }),
            })
            .await;
        tally.record(
            "UpgradeResourceState.type_name",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .import_resource_state(pb::import_resource_state::Request {
                type_name: t(),
                id: "default".into(),
                ..Default::default()
            })
            .await;
        tally.record(
            "ImportResourceState.type_name",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .move_resource_state(pb::move_resource_state::Request {
                source_provider_address: "registry.terraform.io/gavinbunney/kubectl".into(),
                source_type_name: "kubectl_manifest".into(),
                source_state: Some(pb::RawState {
                    json: b"{}".to_vec(),
                    ..Default::default()
                }),
                target_type_name: t(),
                ..Default::default()
            })
            .await;
        tally.record(
            "MoveResourceState.target_type_name",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .upgrade_resource_identity(pb::upgrade_resource_identity::Request {
                type_name: t(),
                version: 0,
                raw_identity: Some(pb::RawState {
                    json: b"{not json".to_vec(),
                    ..Default::default()
                }),
            })
            .await;
        tally.record(
            "UpgradeResourceIdentity.raw_identity",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let garbage = Some(mp(noise(5, 40)));
        let r = client
            .validate_ephemeral_resource_config(pb::validate_ephemeral_resource_config::Request {
                type_name: t(),
                config: garbage.clone(),
            })
            .await;
        tally.record(
            "ValidateEphemeralResourceConfig.config",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .open_ephemeral_resource(pb::open_ephemeral_resource::Request {
                type_name: t(),
                config: garbage.clone(),
                ..Default::default()
            })
            .await;
        tally.record(
            "OpenEphemeralResource.config",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .validate_list_resource_config(pb::validate_list_resource_config::Request {
                type_name: t(),
                config: garbage.clone(),
                ..Default::default()
            })
            .await;
        tally.record(
            "ValidateListResourceConfig.config",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .call_function(pb::call_function::Request {
                name: t(),
                arguments: vec![mp(noise(6, 40)), pb::DynamicValue::default()],
            })
            .await;
        tally.total += 1;
        *tally.by_rpc.entry("CallFunction.arguments".into()).or_default() += 1;
        match r {
            Ok(r) if r.get_ref().error.is_some() => tally.errors += 1,
            other => tally.failures.push(format!("CallFunction / {name}: {other:?}")),
        }
        let r = client
            .generate_resource_config(pb::generate_resource_config::Request {
                type_name: t(),
                state: garbage.clone(),
            })
            .await;
        tally.record(
            "GenerateResourceConfig.state",
            name,
            e,
            diags(r, |r| &r.diagnostics),
        );
        let r = client
            .plan_action(pb::plan_action::Request {
                action_type: t(),
                config: garbage.clone(),
                ..Default::default()
            })
            .await;
        tally.record_unimplemented("PlanAction.config", r.map(|_| ()));
        // A listing whose configuration does not decode is one event with the error.
        let r = client
            .list_resource(pb::list_resource::Request {
                type_name: t(),
                config: garbage.clone(),
                include_resource_object: true,
                limit: 10,
            })
            .await;
        let first = match r {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                stream
                    .message()
                    .await
                    .map(|m| m.map(|e| e.diagnostic).unwrap_or_default())
            }
            Err(s) => Err(s),
        };
        tally.record("ListResource.config", name, e, first);
    }

    println!(
        "malformed protocol input: {} requests, {} answered with an error diagnostic, {} null values accepted with their protocol meaning, {} Unimplemented (undeclared features), {} failures\nby RPC field: {:#?}",
        tally.total,
        tally.errors,
        tally.null_meaning,
        tally.unimplemented,
        tally.failures.len(),
        tally.by_rpc
    );

    // Still alive and serving: the schema, and a clean validation of a good configuration.
    let schema = client
        .get_provider_schema(pb::get_provider_schema::Request {})
        .await
        .expect("still serving after the batch");
    assert!(
        schema
            .get_ref()
            .resource_schemas
            .contains_key("karpenter_node_pool")
    );
    let ok_pool = terraform_provider_karpenter::terraform::tfvalue::json::decode_lenient(
        br#"{"name": "ok", "template": {"spec": {"node_class_ref": {"name": "default"},
            "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}"#,
        np_ty,
    )
    .expect("good node pool");
    let r = client
        .validate_resource_config(pb::validate_resource_config::Request {
            type_name: "karpenter_node_pool".into(),
            config: good(&ok_pool, np_ty),
            ..Default::default()
        })
        .await
        .expect("still serving");
    assert!(
        r.get_ref().diagnostics.is_empty(),
        "{:?}",
        r.get_ref().diagnostics
    );
    assert!(
        plugin.wait_exit(std::time::Duration::from_millis(100)).is_none(),
        "the plugin exited"
    );
    let stderr = plugin.stderr();
    assert!(!stderr.contains("panicked"), "the plugin panicked:\n{stderr}");

    assert!(
        tally.failures.is_empty(),
        "{} of {} requests were not answered with a diagnostic:\n{}",
        tally.failures.len(),
        tally.total,
        tally.failures.join("\n")
    );
    assert!(tally.total >= 500, "only {} requests", tally.total);
}
