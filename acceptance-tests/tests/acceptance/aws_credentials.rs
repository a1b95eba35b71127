//! The `aws {}` credential settings hashicorp/aws users know (issue #21), through the real
//! terraform against moto, each proven by what AWS saw rather than by the config parsing:
//!
//! - every call goes through a recording proxy ([`FaultProxy`]) that notes the access key
//!   each request was signed with and its body, so a test sees which credentials were used
//!   and what STS was asked;
//! - moto files what an assumed role creates under the role's account, so a queue ARN in
//!   the state names the account of the credentials that created it;
//! - `custom_ca_bundle` puts a TLS terminator with a throwaway CA in front of the proxy.
//!
//! The workdirs carry the harness's dummy environment keys (`testing`) throughout: the
//! configured credentials must win over them.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use acceptance_tests::Workdir;
use acceptance_tests::moto::{Fault, FaultProxy, Moto, ProxyCall, configure_env};

const QUEUE: &str = r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "creds"
}

output "queue_arn" {
  value = karpenter_interruption_queue.this.queue_arn
}
"#;

/// A provider block with every endpoint at `endpoint` and `extra` inside `aws {}`.
fn provider(endpoint: &str, extra: &str) -> String {
    format!(
        r#"provider "karpenter" {{
  aws {{
    region = "us-east-1"
{extra}
    endpoints {{
      iam    = "{endpoint}"
      sqs    = "{endpoint}"
      events = "{endpoint}"
      sts    = "{endpoint}"
    }}
  }}
}}
{QUEUE}"#
    )
}

struct Env {
    _moto: Moto,
    proxy: FaultProxy,
}

impl Env {
    fn start() -> Env {
        let moto = Moto::start();
        let proxy = FaultProxy::start(moto.port());
        Env { _moto: moto, proxy }
    }

    fn workdir(&self, extra: &str) -> Workdir {
        let mut work = Workdir::new(&provider(&self.proxy.endpoint(), extra));
        configure_env(&mut work);
        work
    }

    /// The calls other than STS's, i.e. those the resources made.
    fn resource_calls(&self) -> Vec<ProxyCall> {
        self.proxy
            .calls()
            .into_iter()
            .filter(|c| !c.operation.contains("AssumeRole"))
            .collect()
    }

    fn sts_call(&self, action: &str) -> ProxyCall {
        let want = format!("Action={action}");
        self.proxy
            .calls()
            .into_iter()
            .find(|c| c.operation == want)
            .unwrap_or_else(|| panic!("no {action} call: {:?}", self.proxy.log()))
    }
}

fn queue_arn(work: &Workdir) -> String {
    work.outputs()["queue_arn"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The keys the resource calls were signed with, each once.
fn keys(calls: &[ProxyCall]) -> Vec<String> {
    let mut keys: Vec<String> = calls
        .iter()
        .map(|c| c.access_key_id.clone().unwrap_or_else(|| "(unsigned)".into()))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

#[test]
fn static_keys_in_the_configuration_win_over_the_environment() {
    let env = Env::start();
    let work = env.workdir(
        r#"    access_key = "AKIACONFIGURED000001"
    secret_key = "configured-secret"
    token      = "configured-session-token""#,
    );
    work.apply().ok();
    let calls = env.resource_calls();
    assert!(calls.len() >= 5, "{:?}", env.proxy.log());
    assert_eq!(
        keys(&calls),
        ["AKIACONFIGURED000001"],
        "the environment's `testing` key was used"
    );
    // the session token travels with them
    work.destroy().ok();

    // one part of the pair alone is refused at validate, on the missing attribute
    work.set_config(&provider(
        &env.proxy.endpoint(),
        r#"    access_key = "AKIACONFIGURED000001""#,
    ));
    let run = work.validate().failed();
    let text = run.text();
    assert!(
        text.contains("Incomplete static AWS credentials"),
        "{}",
        run.output()
    );
    assert!(text.contains("secret_key"), "{}", run.output());
    assert!(
        text.contains("or remove access_key to use the credential chain"),
        "{}",
        run.output()
    );
}

#[test]
fn assume_role_sends_its_session_settings_and_uses_the_role() {
    let env = Env::start();
    let work = env.workdir(
        r#"    assume_role {
      role_arn            = "arn:aws:iam::111111111111:role/karpenter-admin"
      session_name        = "acc-assume"
      duration            = "30m"
      policy              = jsonencode({ Version = "2012-10-17", Statement = [{ Effect = "Allow", Action = "sqs:*", Resource = "*" }] })
      policy_arns         = ["arn:aws:iam::aws:policy/AmazonSQSFullAccess"]
      tags                = { team = "platform" }
      transitive_tag_keys = ["team"]
    }"#,
    );
    work.apply().ok();
    // moto files what the role's credentials create under the role's account
    assert_eq!(queue_arn(&work), "arn:aws:sqs:us-east-1:111111111111:creds");
    let assume = env.sts_call("AssumeRole");
    assert_eq!(
        assume.access_key_id.as_deref(),
        Some("testing"),
        "the chain's keys assume the role"
    );
    for part in [
        "RoleSessionName=acc-assume",
        "DurationSeconds=1800",
        "PolicyArns.member.1.arn=arn%3Aaws%3Aiam%3A%3Aaws%3Apolicy%2FAmazonSQSFullAccess",
        "Tags.member.1.Key=team",
        "Tags.member.1.Value=platform",
        "TransitiveTagKeys.member.1=team",
        "Policy=%7B%22",
    ] {
        assert!(
            assume.body.contains(part),
            "{part} not in AssumeRole: {}",
            assume.body
        );
    }
    let used = keys(&env.resource_calls());
    assert_eq!(used.len(), 1, "{used:?}");
    assert!(
        used[0] != "testing",
        "resources were called with the chain's keys, not the role's"
    );
    work.destroy().ok();

    // a session STS would refuse is a diagnostic on the attribute, before any call
    work.set_config(&provider(
        &env.proxy.endpoint(),
        r#"    assume_role {
      role_arn = "arn:aws:iam::111111111111:role/karpenter-admin"
      duration = "5m"
    }"#,
    ));
    let run = work.validate().failed();
    let text = run.text();
    assert!(text.contains("assume_role"), "{}", run.output());
    assert!(
        text.contains(r#""5m" is outside what STS allows"#),
        "{}",
        run.output()
    );
}

#[test]
fn a_region_that_is_not_an_aws_region_is_refused_at_plan() {
    // refused on the attribute before the provider is configured: no AWS endpoint is reached
    let config =
        provider("http://127.0.0.1:9", "").replacen(r#"region = "us-east-1""#, r#"region = "moon-base""#, 1);
    let run = Workdir::new(&config).plan().failed();
    let text = run.text();
    assert!(text.contains(r#"region = "moon-base""#), "{}", run.output());
    assert!(
        text.contains(r#""moon-base" is not an AWS region name"#),
        "{}",
        run.output()
    );
}

#[test]
fn web_identity_from_a_file_or_inline_then_assume_role() {
    let env = Env::start();
    let token_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token_file.path(), "eyJ.file-token.sig\n").unwrap();
    let mut work = env.workdir(&format!(
        r#"    assume_role_with_web_identity {{
      role_arn                = "arn:aws:iam::222222222222:role/web"
      web_identity_token_file = "{}"
      duration                = "15m"
    }}"#,
        token_file.path().display()
    ));
    work.apply().ok();
    assert_eq!(queue_arn(&work), "arn:aws:sqs:us-east-1:222222222222:creds");
    let web = env.sts_call("AssumeRoleWithWebIdentity");
    assert_eq!(
        web.access_key_id, None,
        "AssumeRoleWithWebIdentity must be unsigned"
    );
    for part in [
        "WebIdentityToken=eyJ.file-token.sig&",
        "DurationSeconds=900",
        "RoleSessionName=terraform-provider-karpenter",
    ] {
        assert!(web.body.contains(part), "{part} not in {}", web.body);
    }
    work.destroy().ok();

    // inline token, then the web identity's credentials assume a second role
    env.proxy.clear_log();
    work.set_config(&provider(
        &env.proxy.endpoint(),
        r#"    assume_role_with_web_identity {
      role_arn           = "arn:aws:iam::222222222222:role/web"
      session_name       = "inline"
      web_identity_token = "eyJ.inline-token.sig"
    }
    assume_role {
      role_arn = "arn:aws:iam::333333333333:role/target"
    }"#,
    ));
    work.apply().ok();
    assert_eq!(queue_arn(&work), "arn:aws:sqs:us-east-1:333333333333:creds");
    let web = env.sts_call("AssumeRoleWithWebIdentity");
    assert!(
        web.body.contains("WebIdentityToken=eyJ.inline-token.sig"),
        "{}",
        web.body
    );
    let assume = env.sts_call("AssumeRole");
    let signer = assume.access_key_id.unwrap_or_default();
    assert!(
        signer != "testing" && !signer.is_empty(),
        "AssumeRole signed by {signer:?}"
    );
    work.destroy().ok();

    // everything from the environment, as on EKS with IRSA
    env.proxy.clear_log();
    work.set_config(&provider(
        &env.proxy.endpoint(),
        "    assume_role_with_web_identity {}",
    ));
    work.env("AWS_ROLE_ARN", "arn:aws:iam::444444444444:role/irsa")
        .env(
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            &token_file.path().to_string_lossy(),
        )
        .env("AWS_ROLE_SESSION_NAME", "from-env");
    work.apply().ok();
    assert_eq!(queue_arn(&work), "arn:aws:sqs:us-east-1:444444444444:creds");
    assert!(
        env.sts_call("AssumeRoleWithWebIdentity")
            .body
            .contains("RoleSessionName=from-env")
    );
    work.destroy().ok();

    // a missing token file is a configure-time diagnostic naming the attribute
    work.set_config(&provider(
        &env.proxy.endpoint(),
        r#"    assume_role_with_web_identity {
      role_arn                = "arn:aws:iam::222222222222:role/web"
      web_identity_token_file = "/nonexistent/token"
    }"#,
    ));
    let run = work.plan().failed();
    let text = run.text();
    assert!(
        text.contains("Unreadable web identity token file"),
        "{}",
        run.output()
    );
    assert!(text.contains("/nonexistent/token"), "{}", run.output());
}

#[test]
fn shared_files_are_read_from_the_configured_paths_with_home_expanded() {
    let env = Env::start();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("aws")).unwrap();
    std::fs::write(
        home.path().join("aws/credentials"),
        "[ci]\naws_access_key_id = AKIASHAREDFILE000001\naws_secret_access_key = from-file\n",
    )
    .unwrap();
    std::fs::write(
        home.path().join("aws/config"),
        "[profile ci]\nregion = us-east-1\n",
    )
    .unwrap();
    let mut work = env.workdir(
        r#"    profile                  = "ci"
    shared_config_files      = ["~/aws/config"]
    shared_credentials_files = ["~/aws/credentials"]"#,
    );
    // the environment's keys come first in the chain: take them away (and point HOME here)
    work.env("AWS_ACCESS_KEY_ID", "")
        .env("AWS_SECRET_ACCESS_KEY", "")
        .env("AWS_SESSION_TOKEN", "")
        .env("HOME", &home.path().to_string_lossy());
    work.apply().ok();
    assert_eq!(keys(&env.resource_calls()), ["AKIASHAREDFILE000001"]);
    work.destroy().ok();

    work.set_config(&provider(
        &env.proxy.endpoint(),
        r#"    shared_credentials_files = ["~/aws/credentials", "~/aws/missing"]"#,
    ));
    let run = work.plan().failed();
    let text = run.text();
    assert!(text.contains("Unreadable shared AWS file"), "{}", run.output());
    assert!(text.contains("~/aws/missing cannot be read"), "{}", run.output());
    assert!(text.contains("aws.shared_credentials_files"), "{}", run.output());
}

#[test]
fn max_retries_sets_the_attempts_of_a_throttled_call() {
    let env = Env::start();
    let work = env.workdir("    max_retries = 1");
    env.proxy
        .arm(Fault::new("AmazonSQS.CreateQueue", 1, 400, "ThrottlingException"));
    let run = work.apply().failed();
    assert!(run.text().contains("Throttling"), "{}", run.output());
    let creates = env
        .proxy
        .log()
        .iter()
        .filter(|(op, _)| op == "AmazonSQS.CreateQueue")
        .count();
    assert_eq!(
        creates,
        1,
        "max_retries = 1 is one attempt: {:?}",
        env.proxy.log()
    );

    // four throttles: more than the default 3 attempts absorb, fewer than 5
    env.proxy.clear_log();
    work.set_config(&provider(&env.proxy.endpoint(), "    max_retries = 5"));
    env.proxy
        .arm(Fault::new("AmazonSQS.CreateQueue", 4, 400, "ThrottlingException"));
    work.apply().ok();
    assert_eq!(env.proxy.pending(), 0);
    work.destroy().ok();
}

/// A TLS terminator on 127.0.0.1 serving a certificate of a throwaway CA and forwarding the
/// plain bytes to `upstream`; returns its port and the CA's PEM.
fn tls_front(upstream: u16) -> (u16, String) {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let bundle = kube_testserver::tls::generate().unwrap();
    let config = kube_testserver::tls::server_config(&bundle).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let config = config.clone();
            std::thread::spawn(move || pipe(stream, config, upstream));
        }
    });
    (port, bundle.ca_pem)
}

/// Relays one TLS connection to `upstream` in plain text until either side closes.
fn pipe(stream: TcpStream, config: Arc<rustls::ServerConfig>, upstream: u16) {
    let Ok(conn) = rustls::ServerConnection::new(config) else {
        return;
    };
    let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    let poll = Some(Duration::from_millis(10));
    if stream.set_read_timeout(poll).is_err() || up.set_read_timeout(poll).is_err() {
        return;
    }
    let mut tls = rustls::StreamOwned::new(conn, stream);
    let mut buf = vec![0u8; 64 * 1024];
    let idle = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    loop {
        match tls.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if up.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => return,
        }
        match up.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tls.write_all(&buf[..n]).and_then(|()| tls.flush()).is_err() {
                    return;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => return,
        }
    }
}

#[test]
fn custom_ca_bundle_is_trusted_by_every_aws_client() {
    let env = Env::start();
    let (port, ca_pem) = tls_front(env.proxy_port());
    let endpoint = format!("https://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("ca.pem");
    std::fs::write(&bundle, &ca_pem).unwrap();

    // without the bundle the certificate is not trusted: the TLS cause is named
    let mut work = Workdir::new(&provider(&endpoint, ""));
    configure_env(&mut work);
    let run = work.apply().failed();
    assert!(
        run.text().contains("TLS handshake with the AWS endpoint"),
        "{}",
        run.output()
    );

    // with it (here through AWS_CA_BUNDLE's attribute), the queue and an assumed role work
    work.set_config(&provider(
        &endpoint,
        &format!(
            "    custom_ca_bundle = \"{}\"\n    assume_role {{\n      role_arn = \"arn:aws:iam::555555555555:role/tls\"\n    }}",
            bundle.display()
        ),
    ));
    work.apply().ok();
    assert_eq!(queue_arn(&work), "arn:aws:sqs:us-east-1:555555555555:creds");
    work.destroy().ok();

    // the environment variable works the same
    work.set_config(&provider(&endpoint, ""));
    work.env("AWS_CA_BUNDLE", &bundle.to_string_lossy());
    work.apply().ok();
    work.destroy().ok();

    // a file that holds no certificate is refused on the attribute
    std::fs::write(&bundle, "not a certificate\n").unwrap();
    let run = work.plan().failed();
    let text = run.text();
    assert!(text.contains("Invalid CA bundle"), "{}", run.output());
    assert!(text.contains("holds no PEM certificate"), "{}", run.output());
}

impl Env {
    fn proxy_port(&self) -> u16 {
        self.proxy
            .endpoint()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_default()
    }
}
