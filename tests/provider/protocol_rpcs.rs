//! RPC behaviour over the wire, against the built plugin over mTLS: malformed values in every
//! RPC that carries one become diagnostics (and the plugin keeps serving), unknown provider
//! configuration is accepted, refresh keeps the prior state (or defers, when the client allows
//! it), and state upgrades answer in msgpack.

#[allow(unused_imports)]
use crate::common;

use std::collections::BTreeMap;

use crate::common::{provider_client, start_and_connect};
use terraform_provider_karpenter::provider::config::SCHEMA as PROVIDER_SCHEMA;
use terraform_provider_karpenter::resources::kube::v1::NODE_POOL;
use terraform_provider_karpenter::terraform::plugin::proto::tfplugin6 as pb;
use terraform_provider_karpenter::terraform::tfvalue::{Type, Value, msgpack};

fn nulls(ty: &Type) -> BTreeMap<String, Value> {
    match ty {
        Type::Object(fields) => fields.keys().map(|k| (k.clone(), Value::Null)).collect(),
        _ => BTreeMap::new(),
    }
}

fn dynamic(value: &Value, ty: &Type) -> Option<pb::DynamicValue> {
    Some(pb::DynamicValue {
        msgpack: msgpack::encode(value, ty).expect("encode"),
        json: vec![],
    })
}

fn garbage() -> Option<pb::DynamicValue> {
    Some(pb::DynamicValue {
        msgpack: vec![0x85, 0xa1, b'x', 0xc1, 0xff],
        json: vec![],
    })
}

fn has_error(diags: &[pb::Diagnostic], needle: &str) -> bool {
    diags.iter().any(|d| {
        d.severity == pb::diagnostic::Severity::Error as i32
            && (d.summary.contains(needle) || d.detail.contains(needle))
    })
}

/// Provider configuration whose kubernetes.host is unknown (from a cluster not created yet).
fn unknown_host_config() -> Value {
    let ty = PROVIDER_SCHEMA.value_type();
    let mut config = nulls(&ty);
    let Type::Object(fields) = &ty else { unreachable!() };
    let mut kube = nulls(&fields["kubernetes"]);
    kube.insert("host".into(), Value::unknown());
    config.insert("kubernetes".into(), Value::Object(kube));
    Value::Object(config)
}

fn node_pool_state() -> Value {
    let mut state = nulls(&NODE_POOL.value_type());
    state.insert("name".into(), Value::string("default"));
    Value::Object(state)
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_values_are_diagnostics_and_the_plugin_keeps_serving() {
    let (mut plugin, _hs, channel, _id) = start_and_connect().await;
    let mut client = provider_client(channel);
    let np = "karpenter_node_pool".to_string();

    let r = client
        .validate_provider_config(pb::validate_provider_config::Request { config: garbage() })
        .await
        .expect("rpc");
    assert!(
        has_error(&r.get_ref().diagnostics, "Malformed"),
        "{:?}",
        r.get_ref().diagnostics
    );
    let r = client
        .configure_provider(pb::configure_provider::Request {
            config: garbage(),
            ..Default::default()
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "Malformed"));
    let r = client
        .validate_resource_config(pb::validate_resource_config::Request {
            type_name: np.clone(),
            config: garbage(),
            ..Default::default()
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "Malformed"));
    let r = client
        .validate_data_resource_config(pb::validate_data_resource_config::Request {
            type_name: "karpenter_controller_policy".into(),
            config: garbage(),
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "Malformed"));
    let r = client
        .plan_resource_change(pb::plan_resource_change::Request {
            type_name: np.clone(),
            prior_state: garbage(),
            proposed_new_state: garbage(),
            config: garbage(),
            ..Default::default()
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "Malformed"));
    let r = client
        .apply_resource_change(pb::apply_resource_change::Request {
            type_name: np.clone(),
            prior_state: garbage(),
            planned_state: garbage(),
            config: garbage(),
            ..Default::default()
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "Malformed"));
    let r = client
        .read_resource(pb::read_resource::Request {
            type_name: np.clone(),
            current_state: garbage(),
            ..Default::default()
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "Malformed"));
    let r = client
        .read_data_source(pb::read_data_source::Request {
            type_name: "karpenter_controller_policy".into(),
            config: garbage(),
            ..Default::default()
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "Malformed"));
    let r = client
        .upgrade_resource_state(pb::upgrade_resource_state::Request {
            type_name: np.clone(),
            version: 0,
            raw_state: Some(pb::RawState {
                json: b"{\"name\": [1, 2".to_vec(),
                ..Default::default()
            }),
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "Unreadable state"));
    let r = client
        .upgrade_resource_state(pb::upgrade_resource_state::Request {
            type_name: np.clone(),
            version: 99,
            raw_state: Some(pb::RawState {
                json: b"{}".to_vec(),
                ..Default::default()
            }),
        })
        .await
        .expect("rpc");
    assert!(has_error(&r.get_ref().diagnostics, "newer provider"));

    // Still alive and answering.
    let schema = client
        .get_provider_schema(pb::get_provider_schema::Request {})
        .await
        .expect("still serving");
    assert!(
        schema
            .get_ref()
            .resource_schemas
            .contains_key("karpenter_node_pool")
    );
    assert!(
        plugin.wait_exit(std::time::Duration::from_millis(100)).is_none(),
        "the plugin exited"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_configuration_keeps_prior_state_or_defers() {
    let (_plugin, _hs, channel, _id) = start_and_connect().await;
    let mut client = provider_client(channel);
    let r = client
        .configure_provider(pb::configure_provider::Request {
            config: dynamic(&unknown_host_config(), &PROVIDER_SCHEMA.value_type()),
            ..Default::default()
        })
        .await
        .expect("rpc");
    assert!(
        r.get_ref().diagnostics.is_empty(),
        "unknown configuration is accepted: {:?}",
        r.get_ref().diagnostics
    );

    let ty = NODE_POOL.value_type();
    let state = dynamic(&node_pool_state(), &ty);
    let read = |deferral_allowed: bool| pb::read_resource::Request {
        type_name: "karpenter_node_pool".into(),
        current_state: state.clone(),
        client_capabilities: Some(pb::ClientCapabilities {
            deferral_allowed,
            ..Default::default()
        }),
        ..Default::default()
    };

    let r = client.read_resource(read(false)).await.expect("rpc").into_inner();
    assert!(r.deferred.is_none());
    assert_eq!(r.new_state, state, "prior state kept");
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.severity == pb::diagnostic::Severity::Warning as i32
                && d.detail.contains("kubernetes.host")),
        "{:?}",
        r.diagnostics
    );

    let r = client.read_resource(read(true)).await.expect("rpc").into_inner();
    assert_eq!(
        r.deferred.map(|d| d.reason),
        Some(pb::deferred::Reason::ProviderConfigUnknown as i32)
    );
    assert_eq!(r.new_state, state);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
}

#[tokio::test(flavor = "multi_thread")]
async fn upgrade_resource_state_answers_msgpack_with_missing_attributes_null() {
    let (_plugin, _hs, channel, _id) = start_and_connect().await;
    let mut client = provider_client(channel);
    let r = client
        .upgrade_resource_state(pb::upgrade_resource_state::Request {
            type_name: "karpenter_node_pool".into(),
            version: 0,
            raw_state: Some(pb::RawState {
                json: br#"{"name":"default","weight":10,"gone_attribute":1}"#.to_vec(),
                ..Default::default()
            }),
        })
        .await
        .expect("rpc")
        .into_inner();
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let upgraded = r.upgraded_state.expect("state");
    assert!(upgraded.json.is_empty() && !upgraded.msgpack.is_empty());
    let value =
        msgpack::decode(&upgraded.msgpack, &NODE_POOL.value_type()).expect("decodes against the schema");
    assert_eq!(value.get("name"), Some(&Value::string("default")));
    assert_eq!(value.get("template"), Some(&Value::Null));
}

/// A data source has no prior state to keep: with an unknown provider configuration it defers
/// when the client allows it (computed attributes unknown), and otherwise fails saying why.
#[tokio::test(flavor = "multi_thread")]
async fn data_sources_defer_or_say_why_when_the_configuration_is_unknown() {
    use terraform_provider_karpenter::resources::kube::data_sources::object::NODE_POOL as NODE_POOL_DATA;

    let (_plugin, _hs, channel, _id) = start_and_connect().await;
    let mut client = provider_client(channel);
    client
        .configure_provider(pb::configure_provider::Request {
            config: dynamic(&unknown_host_config(), &PROVIDER_SCHEMA.value_type()),
            ..Default::default()
        })
        .await
        .expect("rpc");
    let ty = NODE_POOL_DATA.value_type();
    let mut config = nulls(&ty);
    config.insert("name".into(), Value::string("default"));
    let config = dynamic(&Value::Object(config), &ty);
    let read = |deferral_allowed: bool| pb::read_data_source::Request {
        type_name: "karpenter_node_pool".into(),
        config: config.clone(),
        client_capabilities: Some(pb::ClientCapabilities {
            deferral_allowed,
            ..Default::default()
        }),
        ..Default::default()
    };

    let r = client
        .read_data_source(read(false))
        .await
        .expect("rpc")
        .into_inner();
    assert!(r.deferred.is_none());
    assert!(
        has_error(&r.diagnostics, "kubernetes.host"),
        "{:?}",
        r.diagnostics
    );
    assert!(
        has_error(&r.diagnostics, "Cannot read NodePool"),
        "{:?}",
        r.diagnostics
    );

    let r = client
        .read_data_source(read(true))
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(
        r.deferred.map(|d| d.reason),
        Some(pb::deferred::Reason::ProviderConfigUnknown as i32)
    );
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let state = msgpack::decode(&r.state.expect("state").msgpack, &ty).expect("decodes against the schema");
    assert_eq!(state.get("name"), Some(&Value::string("default")));
    assert!(state.get("status").is_some_and(Value::is_unknown));
    assert!(state.get("template").is_some_and(Value::is_unknown));
}
