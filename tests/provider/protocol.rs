//! Protocol tests: start the built plugin binary as Terraform does (cookie, protocol versions,
//! AutoMTLS client certificate), read its handshake, and speak gRPC to it.

use std::time::Duration;

use crate::common::*;
use tonic::Code;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

#[tokio::test(flavor = "multi_thread")]
async fn handshake_line_and_get_provider_schema_over_mtls() {
    let (plugin, hs, channel, _id) = start_and_connect().await;
    assert_eq!(hs.core, "1");
    assert_eq!(hs.app, "6");
    assert_eq!(hs.network, "unix");
    assert_eq!(hs.protocol, "grpc");
    assert_eq!(
        hs.raw.split('|').count(),
        6,
        "no 7th field without PLUGIN_MULTIPLEX_GRPC"
    );
    assert!(std::path::Path::new(&hs.address).exists());
    let cert = hs.server_cert_der.as_ref().expect("server cert in handshake");
    assert!(!hs.raw.ends_with('='), "base64 must have no padding");
    // The announced certificate parses and names localhost.
    let (_, parsed) = rcgen_parse_check(cert);
    assert!(parsed);

    let mut client = provider_client(channel);
    let schema = client
        .get_provider_schema(tfplugin6::get_provider_schema::Request {})
        .await
        .unwrap_or_else(|e| panic!("GetProviderSchema failed: {e}; stderr: {}", plugin.stderr()))
        .into_inner();
    assert!(schema.provider.is_some());
    let caps = schema.server_capabilities.expect("capabilities");
    assert!(caps.plan_destroy);
    assert!(caps.get_provider_schema_optional);
    assert!(schema.diagnostics.is_empty());

    // The real provider's types are in the schema.
    assert!(
        schema
            .data_source_schemas
            .contains_key("karpenter_controller_policy"),
        "data sources: {:?}",
        schema.data_source_schemas.keys().collect::<Vec<_>>()
    );

    // Several calls on the same connection: metadata, a call for a type that does not exist
    // (a diagnostic, not a transport error), and one the provider does not implement.
    client
        .get_metadata(tfplugin6::get_metadata::Request {})
        .await
        .unwrap();
    let read = client
        .read_resource(tfplugin6::read_resource::Request {
            type_name: "karpenter_nope".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        read.diagnostics
            .iter()
            .any(|d| d.summary.contains("Unknown resource type")),
        "{:?}",
        read.diagnostics
    );
    let err = client
        .plan_action(tfplugin6::plan_action::Request::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    // Generated configuration is the provider's own (Terraform 1.14+): a type it does not
    // have is a diagnostic too.
    let generated = client
        .generate_resource_config(tfplugin6::generate_resource_config::Request::default())
        .await
        .unwrap()
        .into_inner();
    assert!(caps.generate_resource_config);
    assert!(
        generated
            .diagnostics
            .iter()
            .any(|d| d.summary.contains("Unknown resource type")),
        "{:?}",
        generated.diagnostics
    );
}

/// Checks that `der` is an X.509 certificate whose SAN includes localhost, without pulling in
/// an X.509 parser: the DER must start with a SEQUENCE and contain the SAN bytes.
fn rcgen_parse_check(der: &[u8]) -> (usize, bool) {
    let is_sequence = der.first() == Some(&0x30);
    let has_localhost = der.windows(9).any(|w| w == b"localhost");
    (der.len(), is_sequence && has_localhost)
}

#[tokio::test(flavor = "multi_thread")]
async fn tls12_and_tls13_clients_with_the_p521_certificate_are_accepted() {
    let id = ClientIdentity::terraform_like();
    let plugin = Launch::terraform(&id).spawn();
    let hs = plugin.handshake();
    for version in [&rustls::version::TLS12, &rustls::version::TLS13] {
        let channel = connect_mtls_versions(&hs, Some(&id), &[version])
            .await
            .unwrap_or_else(|e| panic!("{version:?}: {e}; stderr: {}", plugin.stderr()));
        provider_client(channel)
            .get_provider_schema(tfplugin6::get_provider_schema::Request {})
            .await
            .unwrap_or_else(|e| panic!("{version:?}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn multiplex_request_gets_a_seventh_field_saying_false() {
    let id = ClientIdentity::terraform_like();
    let mut launch = Launch::terraform(&id);
    launch
        .extra_env
        .push(("PLUGIN_MULTIPLEX_GRPC".to_owned(), "true".to_owned()));
    let plugin = launch.spawn();
    let hs = plugin.handshake();
    assert!(hs.raw.ends_with("|false"), "{}", hs.raw);
    assert_eq!(hs.raw.split('|').count(), 7);
    // The certificate field is still the sixth and still works.
    let channel = connect_mtls(&hs, Some(&id)).await.unwrap();
    provider_client(channel)
        .get_provider_schema(tfplugin6::get_provider_schema::Request {})
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn client_without_certificate_is_refused() {
    let id = ClientIdentity::terraform_like();
    let plugin = Launch::terraform(&id).spawn();
    let hs = plugin.handshake();
    let outcome = async {
        let channel = connect_mtls(&hs, None).await?;
        provider_client(channel)
            .get_provider_schema(tfplugin6::get_provider_schema::Request {})
            .await?;
        Ok::<_, BoxError>(())
    }
    .await;
    assert!(outcome.is_err(), "a client without a certificate got an answer");
}

#[tokio::test(flavor = "multi_thread")]
async fn client_with_another_certificate_is_refused() {
    let expected = ClientIdentity::terraform_like();
    let intruder = ClientIdentity::terraform_like();
    let plugin = Launch::terraform(&expected).spawn();
    let hs = plugin.handshake();
    let outcome = async {
        let channel = connect_mtls(&hs, Some(&intruder)).await?;
        provider_client(channel)
            .get_provider_schema(tfplugin6::get_provider_schema::Request {})
            .await?;
        Ok::<_, BoxError>(())
    }
    .await;
    assert!(
        outcome.is_err(),
        "a client with the wrong certificate got an answer"
    );
    // The right certificate still works afterwards.
    let channel = connect_mtls(&hs, Some(&expected)).await.unwrap();
    provider_client(channel)
        .get_provider_schema(tfplugin6::get_provider_schema::Request {})
        .await
        .unwrap();
}

/// Calls GetProviderSchema over `channel`; any failure (handshake, transport, status) is Err.
async fn schema_call(channel: Result<tonic::transport::Channel, BoxError>) -> Result<(), BoxError> {
    provider_client(channel?)
        .get_provider_schema(tfplugin6::get_provider_schema::Request {})
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn plaintext_h2_client_is_refused() {
    let id = ClientIdentity::terraform_like();
    let plugin = Launch::terraform(&id).spawn();
    let hs = plugin.handshake();
    let outcome = schema_call(connect_plain(&hs.address).await).await;
    assert!(outcome.is_err(), "a plaintext gRPC client got an answer");
    // The process is still serving the real client.
    schema_call(connect_mtls(&hs, Some(&id)).await).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn terraforms_certificate_without_its_key_is_refused() {
    // An intruder who copied the certificate from the environment, but not the key: the
    // handshake signature is made with another key and must not verify.
    let expected = ClientIdentity::terraform_like();
    let other_key = ClientIdentity::terraform_like();
    let plugin = Launch::terraform(&expected).spawn();
    let hs = plugin.handshake();
    let chain = vec![expected.cert_der.clone()];
    let outcome = schema_call(connect_mtls_presenting(&hs, chain, other_key.key_der.clone()).await).await;
    assert!(outcome.is_err(), "the certificate without its key got an answer");
    schema_call(connect_mtls(&hs, Some(&expected)).await)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_from_another_ca_is_refused() {
    // A leaf issued by some other CA (presented with that CA), same names as Terraform's.
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let expected = ClientIdentity::terraform_like();
    let plugin = Launch::terraform(&expected).spawn();
    let hs = plugin.handshake();
    let ca_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut ca_params = CertificateParams::new(vec![]).unwrap();
    ca_params.distinguished_name.push(DnType::CommonName, "other CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut leaf_params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    leaf_params
        .distinguished_name
        .push(DnType::OrganizationName, "HashiCorp");
    let issuer = Issuer::from_params(&ca_params, &ca_key);
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
    let chain = vec![leaf.der().clone(), ca.der().clone()];
    let outcome = schema_call(connect_mtls_presenting(&hs, chain, leaf_key.serialize_der()).await).await;
    assert!(outcome.is_err(), "a certificate from another CA got an answer");
    schema_call(connect_mtls(&hs, Some(&expected)).await)
        .await
        .unwrap();
}

#[test]
fn missing_or_wrong_cookie_exits_1_with_a_message_and_no_stdout() {
    let id = ClientIdentity::terraform_like();
    for cookie in [None, Some("not-the-cookie".to_owned())] {
        let mut launch = Launch::terraform(&id);
        launch.cookie = cookie.clone();
        let (status, stdout, stderr) = run_to_exit(&launch);
        assert_eq!(status.code(), Some(1), "cookie {cookie:?}");
        assert!(stdout.is_empty(), "stdout must stay empty: {stdout:?}");
        assert!(stderr.contains("Terraform"), "stderr: {stderr}");
        assert!(
            !stderr.trim_start().starts_with('{'),
            "a human message, not JSON: {stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_reply_then_exit_0_and_socket_removed() {
    let (mut plugin, hs, channel, _id) = start_and_connect().await;
    let mut controller = go_plugin::grpc_controller_client::GrpcControllerClient::new(channel.clone());
    // Hold the long-lived streams open the way go-plugin's client does.
    let mut stdio = go_plugin::grpc_stdio_client::GrpcStdioClient::new(channel.clone())
        .stream_stdio(())
        .await
        .unwrap()
        .into_inner();
    controller.shutdown(go_plugin::Empty {}).await.unwrap();
    let status = tokio::task::spawn_blocking(move || {
        let status = plugin.wait_exit(Duration::from_secs(10));
        (status, plugin)
    })
    .await
    .unwrap();
    let (status, plugin) = status;
    let status = status.unwrap_or_else(|| panic!("still running; stderr: {}", plugin.stderr()));
    assert_eq!(status.code(), Some(0), "stderr: {}", plugin.stderr());
    assert!(
        plugin.rest_of_stdout().is_empty(),
        "nothing on stdout after the handshake"
    );
    assert!(!std::path::Path::new(&hs.address).exists(), "socket left behind");
    // The stdio stream ended (cleanly or with a transport error), it did not hang.
    let end = tokio::time::timeout(HANG_GUARD, stdio.message())
        .await
        .expect("stdio stream hung");
    assert!(!matches!(end, Ok(Some(_))), "stdio stream sent data: {end:?}");
}

#[test]
fn sigterm_stops_gracefully_and_removes_the_socket() {
    let id = ClientIdentity::terraform_like();
    let mut plugin = Launch::terraform(&id).spawn();
    let hs = plugin.handshake();
    assert!(std::path::Path::new(&hs.address).exists());
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &plugin.child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = plugin.wait_exit(HANG_GUARD).expect("still running after SIGTERM");
    assert_eq!(status.code(), Some(0), "stderr: {}", plugin.stderr());
    let socket_dir = std::path::Path::new(&hs.address).parent().unwrap();
    assert!(!socket_dir.exists(), "socket directory left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn health_reports_plugin_serving() {
    let (_plugin, _hs, channel, _id) = start_and_connect().await;
    let resp = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: "plugin".to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resp.status(), ServingStatus::Serving);
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_and_broker_streams_stay_open_and_quiet() {
    let (_plugin, _hs, channel, _id) = start_and_connect().await;
    let mut stdio = go_plugin::grpc_stdio_client::GrpcStdioClient::new(channel.clone())
        .stream_stdio(())
        .await
        .unwrap()
        .into_inner();
    let (tx, rx) = tokio::sync::mpsc::channel::<go_plugin::ConnInfo>(1);
    let mut broker = go_plugin::grpc_broker_client::GrpcBrokerClient::new(channel.clone())
        .start_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    tx.send(go_plugin::ConnInfo {
        service_id: 1,
        ..Default::default()
    })
    .await
    .unwrap();
    // Nothing arrives and neither stream ends while the plugin runs.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stdio.message())
            .await
            .is_err()
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(300), broker.message())
            .await
            .is_err()
    );
    // The provider still answers on the same connection.
    provider_client(channel)
        .get_provider_schema(tfplugin6::get_provider_schema::Request {})
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn messages_larger_than_tonics_default_4_mib_are_accepted() {
    let (_plugin, _hs, channel, _id) = start_and_connect().await;
    let big = tfplugin6::validate_provider_config::Request {
        config: Some(tfplugin6::DynamicValue {
            msgpack: vec![0xc0; 6 * 1024 * 1024],
            json: vec![],
        }),
    };
    provider_client(channel)
        .validate_provider_config(big)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_is_ignored() {
    let (plugin, _hs, channel, _id) = start_and_connect().await;
    let status = std::process::Command::new("kill")
        .args(["-INT", &plugin.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    tokio::time::sleep(Duration::from_millis(300)).await;
    provider_client(channel)
        .get_provider_schema(tfplugin6::get_provider_schema::Request {})
        .await
        .unwrap_or_else(|e| panic!("plugin died on SIGINT: {e}; stderr: {}", plugin.stderr()));
}

#[tokio::test(flavor = "multi_thread")]
async fn debug_mode_prints_reattach_and_serves_plaintext() {
    let mut launch = Launch::terraform(&ClientIdentity::terraform_like());
    launch.cookie = None;
    launch.client_cert_pem = None;
    launch.args = vec!["--debug".to_owned()];
    let mut plugin = launch.spawn();
    let mut reattach = None;
    while let Some(line) = plugin.next_stdout_line() {
        if let Some(v) = line.trim().strip_prefix("TF_REATTACH_PROVIDERS=") {
            reattach = Some(v.trim_matches('\'').to_owned());
            break;
        }
    }
    let reattach = reattach.unwrap_or_else(|| panic!("no reattach line; stderr: {}", plugin.stderr()));
    let v: serde_json::Value = serde_json::from_str(&reattach).unwrap();
    let p = &v[terraform_provider_karpenter::PROVIDER_ADDRESS];
    assert_eq!(p["Protocol"], "grpc");
    assert_eq!(p["ProtocolVersion"], 6);
    assert_eq!(p["Test"], true);
    assert_eq!(p["Pid"], plugin.child.id());
    assert_eq!(p["Addr"]["Network"], "unix");
    let addr = p["Addr"]["String"].as_str().unwrap().to_owned();

    let channel = connect_plain(&addr).await.unwrap();
    provider_client(channel.clone())
        .get_provider_schema(tfplugin6::get_provider_schema::Request {})
        .await
        .unwrap();
    go_plugin::grpc_controller_client::GrpcControllerClient::new(channel)
        .shutdown(go_plugin::Empty {})
        .await
        .unwrap();
    let status = tokio::task::spawn_blocking(move || plugin.wait_exit(Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn socket_dir_env_is_honoured() {
    let parent = tempfile::tempdir().unwrap();
    let id = ClientIdentity::terraform_like();
    let mut launch = Launch::terraform(&id);
    launch.extra_env.push((
        "PLUGIN_UNIX_SOCKET_DIR".to_owned(),
        parent.path().to_string_lossy().into_owned(),
    ));
    let plugin = launch.spawn();
    let hs = plugin.handshake();
    assert!(
        hs.address.starts_with(&*parent.path().to_string_lossy()),
        "{}",
        hs.address
    );
    let channel = connect_mtls(&hs, Some(&id)).await.unwrap();
    provider_client(channel)
        .get_provider_schema(tfplugin6::get_provider_schema::Request {})
        .await
        .unwrap();
}

#[test]
fn logs_are_hclog_json_on_stderr_only_when_asked() {
    let id = ClientIdentity::terraform_like();
    // Without TF_LOG*: silent stderr.
    let quiet = Launch::terraform(&id).spawn();
    let _ = quiet.handshake();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(quiet.stderr(), "");
    drop(quiet);

    let mut launch = Launch::terraform(&id);
    launch
        .extra_env
        .push(("TF_LOG_PROVIDER".to_owned(), "debug".to_owned()));
    let loud = launch.spawn();
    let hs = loud.handshake();
    assert_eq!(hs.app, "6");
    let deadline = std::time::Instant::now() + HANG_GUARD;
    while !loud.stderr().contains("provider plugin serving") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stderr = loud.stderr();
    let line = stderr
        .lines()
        .find(|l| l.contains("provider plugin serving"))
        .unwrap_or_else(|| panic!("no serving log line: {stderr}"));
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["@level"], "info");
    assert_eq!(v["@module"], "karpenter");
    assert_eq!(v["network"], "unix");
    assert_eq!(v["@timestamp"].as_str().unwrap().len(), 27);
}
