//! AWS transport failures through the real terraform: each ends in a provider-level
//! diagnostic (no attribute snippet) that says what is wrong with the provider's AWS setup.
//! - a closed port on 127.0.0.1 as every endpoint: "could not connect", naming the endpoint;
//! - no credentials anywhere (environment empty, config files missing, IMDS disabled):
//!   "no AWS credentials found" with the sources tried, not an IMDS token failure;
//! - an https endpoint on 127.0.0.1 with a self-signed certificate: the TLS cause.
//!
//! Nothing here contacts a non-loopback address: IMDS is disabled in every case.

use std::net::TcpListener;
use std::sync::Arc;

use acceptance_tests::{Run, Workdir};

const CONFIG: &str = r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name     = "demo"
  queue_name       = "demo-queue"
  rule_name_prefix = "demo-rule"
}
"#;

fn provider_block(endpoint: &str) -> String {
    format!(
        r#"provider "karpenter" {{
  aws {{
    region = "us-east-1"
    endpoints {{
      iam    = "{endpoint}"
      sqs    = "{endpoint}"
      events = "{endpoint}"
      sts    = "{endpoint}"
    }}
  }}
}}
"#
    )
}

fn workdir(endpoint: &str, credentials: bool) -> Workdir {
    let mut work = Workdir::new(&format!("{}\n{CONFIG}", provider_block(endpoint)));
    let missing = work.path().join("no-aws-config").to_string_lossy().into_owned();
    work.env("AWS_CONFIG_FILE", &missing)
        .env("AWS_SHARED_CREDENTIALS_FILE", &missing)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9");
    if credentials {
        work.env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing");
    } else {
        work.env("AWS_ACCESS_KEY_ID", "").env("AWS_SECRET_ACCESS_KEY", "");
    }
    work
}

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Fails unless no diagnostic points at an attribute of the resource (terraform prints the
/// attribute's source line, `N:   name = ...`, for a diagnostic with an attribute path).
#[track_caller]
fn assert_no_attribute_snippet(run: &Run) {
    for attr in ["cluster_name", "queue_name", "rule_name_prefix"] {
        let snippet = regex::Regex::new(&format!(r"(?m)^\s*│?\s*\d+:\s+{attr}\s+=")).unwrap();
        assert!(
            !snippet.is_match(&run.output()),
            "diagnostic on `{attr}`:\n{}",
            run.output()
        );
    }
}

#[test]
fn closed_port_is_a_provider_level_connection_error_naming_the_endpoint() {
    let port = closed_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let work = workdir(&endpoint, true);
    let run = work.apply().failed();
    let text = run.text();
    assert!(
        text.contains("could not connect to the AWS endpoint"),
        "{}",
        run.output()
    );
    assert!(
        text.contains(&format!("127.0.0.1:{port}")),
        "endpoint not named:\n{}",
        run.output()
    );
    assert_no_attribute_snippet(&run);
}

#[test]
fn missing_credentials_list_the_sources_tried() {
    let port = closed_port();
    let work = workdir(&format!("http://127.0.0.1:{port}"), false);
    let run = work.apply().failed();
    let text = run.text();
    assert!(text.contains("no AWS credentials found"), "{}", run.output());
    for source in [
        "environment",
        "shared config",
        "web identity",
        "container metadata",
        "instance metadata",
    ] {
        assert!(
            text.contains(source),
            "source `{source}` not listed:\n{}",
            run.output()
        );
    }
    assert!(
        !text.contains("IMDS token") && !text.contains("failed to load token"),
        "talks of an IMDS token:\n{}",
        run.output()
    );
    assert_no_attribute_snippet(&run);
}

/// Serves TLS with a self-signed certificate for "localhost" on 127.0.0.1 until the test ends;
/// each handshake fails on the client side (untrusted certificate).
fn self_signed_server() -> u16 {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let der = cert.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into());
    let config = Arc::new(
        rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(vec![der], key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let config = config.clone();
            std::thread::spawn(move || {
                let Ok(mut conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                while conn.is_handshaking() {
                    if conn.complete_io(&mut stream).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn self_signed_endpoint_names_the_tls_cause() {
    let port = self_signed_server();
    let work = workdir(&format!("https://127.0.0.1:{port}"), true);
    let run = work.apply().failed();
    let text = run.text();
    assert!(
        text.contains(&format!(
            "TLS handshake with the AWS endpoint https://127.0.0.1:{port} failed"
        )),
        "{}",
        run.output()
    );
    assert!(
        text.to_lowercase().contains("certificate"),
        "cause not named:\n{}",
        run.output()
    );
    assert_no_attribute_snippet(&run);
}

/// The IAM resources (here `karpenter_node_role`) say the same, provider-level.
#[test]
fn iam_resources_name_missing_credentials_and_closed_endpoints() {
    let port = closed_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let config = format!(
        "{}\nresource \"karpenter_node_role\" \"this\" {{\n  name = \"KarpenterNodeRole-demo\"\n}}\n",
        provider_block(&endpoint)
    );
    let snippet = regex::Regex::new(r"(?m)^\s*\d+:\s+name\s+=").unwrap();
    for (credentials, expected) in [
        (false, "no AWS credentials found"),
        (true, "could not connect to the IAM endpoint"),
    ] {
        let work = workdir(&endpoint, credentials);
        work.set_config(&config);
        let run = work.apply().failed();
        let text = run.text();
        assert!(text.contains(expected), "{}", run.output());
        assert!(
            !snippet.is_match(&run.output()),
            "diagnostic on `name`:\n{}",
            run.output()
        );
    }
}
