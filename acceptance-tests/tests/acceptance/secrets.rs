//! Secrets never reach logs or state: terraform runs with `TF_LOG=trace` and
//! `TF_LOG_PROVIDER=trace` (and once in Terraform's JSON log format, to a `TF_LOG_PATH` file)
//! through configurations carrying every credential the provider handles — a Kubernetes bearer
//! token, a client key, exec-plugin credentials (token, and certificate + key), the AWS keys
//! behind a generated EKS token, static AWS keys for SQS/EventBridge/IAM (from the environment
//! and from the provider block), a web identity token, and the credentials STS hands out for
//! `assume_role` and `assume_role_with_web_identity` — and every byte terraform printed or logged, plus the state
//! file, is searched for each secret in every form it could take (raw, JSON-escaped,
//! URL-encoded, base64 at any alignment, hex and byte-list dumps, each line of a PEM body).
//! Zero hits is the pass mark.
//!
//! Each scenario also checks that the search is not vacuous: the log must hold the provider's
//! own debug lines and Terraform's gRPC trace lines; the matcher itself is checked by
//! `the_search_finds_what_it_looks_for`.

use std::path::Path;

use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::moto::{Moto, configure_env};
use acceptance_tests::{Run, Workdir, repo_file};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE};

/// A value that appears nowhere else: a fixed label and the process id and clock.
fn unique(label: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{label}{:x}{nanos:x}", std::process::id())
}

/// One secret and the forms it may take once logged.
struct Secret {
    name: String,
    forms: Vec<String>,
}

impl Secret {
    fn new(name: &str, value: &str) -> Secret {
        let mut forms = vec![value.to_owned()];
        // JSON-escaped (PEM newlines become \n) and percent-encoded (in presigned URLs).
        let json = serde_json::to_string(value).unwrap_or_default();
        forms.push(json.trim_matches('"').to_owned());
        forms.push(
            percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string(),
        );
        // base64 inside a larger base64 blob: the secret starts at one of three alignments.
        // Characters that also encode neighbouring bytes are cut off both ends.
        for pad in 0..3usize {
            let mut bytes = vec![b'\0'; pad];
            bytes.extend_from_slice(value.as_bytes());
            for engine in [&STANDARD, &URL_SAFE] {
                let enc = engine.encode(&bytes);
                let start = if pad == 0 { 0 } else { (pad * 8).div_ceil(6) };
                let end = enc.trim_end_matches('=').len().saturating_sub(2);
                if end > start + 12 {
                    forms.push(enc[start..end].to_owned());
                }
            }
        }
        // Byte dumps: hex, and Rust's `Debug` of a byte slice (`[107, 117, ...]`), as a
        // logged DynamicValue (msgpack) or request body would show it.
        forms.push(value.bytes().map(|b| format!("{b:02x}")).collect());
        forms.push(
            value
                .bytes()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        );
        // A PEM's body lines (base64 of the key material), each on its own.
        if value.starts_with("-----BEGIN") {
            forms.extend(
                value
                    .lines()
                    .filter(|l| !l.starts_with("-----") && l.trim().len() >= 16)
                    .map(|l| l.trim().to_owned()),
            );
        }
        forms.retain(|f| f.len() >= 12);
        forms.sort();
        forms.dedup();
        Secret {
            name: name.to_owned(),
            forms,
        }
    }

    /// The forms of this secret found in `haystack`.
    fn hits(&self, haystack: &str) -> Vec<String> {
        self.forms
            .iter()
            .filter(|f| haystack.contains(f.as_str()))
            .cloned()
            .collect()
    }
}

/// Markers of credentials the test cannot know in advance (they are minted during the run).
const MINTED_MARKERS: &[(&str, &str)] = &[
    ("an EKS bearer token", "k8s-aws-v1."),
    ("a presigned URL signature", "X-Amz-Signature"),
    ("a presigned URL session token", "X-Amz-Security-Token"),
    ("an STS session token minted by moto", "FQoGZXIvYXdzEBYaD"),
    ("a SigV4 Authorization header", "AWS4-HMAC-SHA256 Credential"),
    ("a bearer Authorization header", "Bearer "),
];

/// Everything a scenario printed or logged, and how many terraform runs it took.
struct Transcript {
    text: String,
    runs: usize,
}

impl Transcript {
    fn new() -> Self {
        Transcript {
            text: String::new(),
            runs: 0,
        }
    }

    /// Runs terraform at trace level; `log_file` sends the log to a file (TF_LOG_PATH) in
    /// Terraform's JSON format instead of to stderr as text.
    fn run(&mut self, work: &mut Workdir, args: &[&str], log_file: Option<&str>) -> Run {
        match log_file {
            Some(name) => {
                let path = work.path().join(name);
                work.env("TF_LOG", "JSON")
                    .env("TF_LOG_PROVIDER", "JSON")
                    .env("TF_LOG_PATH", &path.to_string_lossy());
            }
            None => {
                work.env("TF_LOG", "trace")
                    .env("TF_LOG_PROVIDER", "trace")
                    .env("TF_LOG_PATH", "");
            }
        }
        let run = work.terraform(args);
        self.text.push_str(&run.stdout);
        self.text.push_str(&run.stderr);
        if let Some(name) = log_file {
            self.text
                .push_str(&std::fs::read_to_string(work.path().join(name)).unwrap_or_default());
        }
        self.runs += 1;
        run
    }
}

/// Applies, refreshes (plan) and destroys `work` with trace logs (the apply's log goes to a
/// TF_LOG_PATH file in JSON), then checks the transcript and the state file for `secrets`.
fn assert_no_leak(scenario: &str, work: &mut Workdir, secrets: &[Secret]) -> usize {
    let mut t = Transcript::new();
    let applied = t.run(
        work,
        &["apply", "-no-color", "-input=false", "-auto-approve"],
        Some("apply.log"),
    );
    assert!(applied.success, "{scenario}: apply failed:\n{}", applied.output());
    let state = std::fs::read_to_string(work.path().join("terraform.tfstate")).unwrap_or_default();
    assert!(state.contains("\"resources\""), "{scenario}: no state file");
    let planned = t.run(work, &["plan", "-no-color", "-input=false"], None);
    assert!(planned.success, "{scenario}: plan failed:\n{}", planned.output());
    let destroyed = t.run(
        work,
        &["destroy", "-no-color", "-input=false", "-auto-approve"],
        None,
    );
    assert!(
        destroyed.success,
        "{scenario}: destroy failed:\n{}",
        destroyed.output()
    );

    // The search must be able to find things: the provider's own debug line and terraform's
    // gRPC trace lines are in the log, and the configuration holds the secrets it passes on.
    assert!(
        t.text.contains("provider configured"),
        "{scenario}: the provider's debug log is missing from the transcript"
    );
    assert!(
        t.text.contains("GRPCProvider.v6"),
        "{scenario}: terraform's trace log is missing from the transcript"
    );
    check(scenario, &t.text, &state, secrets);
    let forms: usize = secrets.iter().map(|s| s.forms.len()).sum();
    eprintln!(
        "secrets [{scenario}]: {} terraform runs (apply: JSON log file; plan, destroy: trace on stderr), \
         {} bytes of output and logs + {} bytes of state searched for {} secret values in {forms} forms \
         and {} minted-credential markers: no hit",
        t.runs,
        t.text.len(),
        state.len(),
        secrets.len(),
        MINTED_MARKERS.len()
    );
    t.runs
}

/// Fails with every leak found in the transcript or the state.
fn check(scenario: &str, transcript: &str, state: &str, secrets: &[Secret]) {
    let mut leaks = Vec::new();
    for s in secrets {
        for f in s.hits(transcript) {
            leaks.push(format!("{} in the logs/output as {f:?}", s.name));
        }
        for f in s.hits(state) {
            leaks.push(format!("{} in the state as {f:?}", s.name));
        }
    }
    for (what, marker) in MINTED_MARKERS {
        for (place, text) in [("logs/output", transcript), ("state", state)] {
            if let Some(at) = text.find(marker) {
                let end = (at + 80).min(text.len());
                let around = text.get(at..end).unwrap_or(marker);
                leaks.push(format!("{what} in the {place}: {around:?}"));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "{scenario}: secrets leaked:\n{}",
        leaks.join("\n")
    );
}

fn v1_cluster(token: &str, eks_tokens: bool) -> Cluster {
    Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller: ControllerConfig::karpenter(),
        token: Some(token.to_owned()),
        eks_tokens,
        ..Config::default()
    })
}

fn kube_resources() -> String {
    format!(
        "{}\n{}",
        repo_file("examples/resources/karpenter_ec2_node_class/resource.tf"),
        repo_file("examples/resources/karpenter_node_pool/resource.tf")
    )
}

fn provider(cluster: &Cluster, auth: &str) -> String {
    format!(
        "provider \"karpenter\" {{\n  kubernetes {{\n    host                   = \"{}\"\n    cluster_ca_certificate = <<-EOT\n{}\n    EOT\n{auth}\n  }}\n}}\n{}",
        cluster.server.base_url(),
        cluster.server.ca_pem().trim_end(),
        kube_resources()
    )
}

/// A heredoc attribute for a PEM value.
fn heredoc(name: &str, pem: &str) -> String {
    format!("    {name} = <<-EOT\n{}\n    EOT\n", pem.trim_end())
}

/// Writes an exec credential plugin printing `status` (a JSON object) and returns the
/// `exec {}` block running it, with `env` passed to it.
fn exec_plugin(dir: &Path, status: &serde_json::Value, env_secret: &str) -> String {
    let credential = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": status,
    });
    let script = dir.join("credential-plugin.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$PLUGIN_SECRET\" = '{env_secret}' ] || {{ echo 'PLUGIN_SECRET not passed' >&2; exit 3; }}\ncat <<'JSON'\n{credential}\nJSON\n"
        ),
    )
    .unwrap_or_else(|e| panic!("write plugin: {e}"));
    format!(
        "    exec {{\n      api_version = \"client.authentication.k8s.io/v1beta1\"\n      command     = \"/bin/sh\"\n      args        = [\"{}\"]\n      env         = {{ PLUGIN_SECRET = \"{env_secret}\" }}\n    }}\n",
        script.display()
    )
}

/// AWS credentials with values of our own, so they can be searched for.
struct AwsKeys {
    access_key_id: String,
    secret_access_key: String,
    session_token: String,
}

impl AwsKeys {
    fn new() -> Self {
        AwsKeys {
            access_key_id: unique("AKIASECTEST").to_uppercase(),
            secret_access_key: unique("secret-access-key/"),
            session_token: unique("session-token+"),
        }
    }

    fn set(&self, work: &mut Workdir) {
        configure_env(work);
        work.env("AWS_ACCESS_KEY_ID", &self.access_key_id)
            .env("AWS_SECRET_ACCESS_KEY", &self.secret_access_key)
            .env("AWS_SESSION_TOKEN", &self.session_token);
    }

    fn secrets(&self) -> Vec<Secret> {
        vec![
            Secret::new("AWS_ACCESS_KEY_ID", &self.access_key_id),
            Secret::new("AWS_SECRET_ACCESS_KEY", &self.secret_access_key),
            Secret::new("AWS_SESSION_TOKEN", &self.session_token),
        ]
    }
}

#[test]
fn kubernetes_credentials_never_reach_logs_or_state() {
    let token = unique("kube-bearer-token-");
    let plugin_env = unique("exec-env-secret-");
    let mut runs = 0;
    let mut checked = Vec::new();

    // 1. token (and 2. client certificate + key) in the provider block.
    let cluster = v1_cluster(&token, false);
    let key = cluster.server.client_key_pem().to_owned();
    let base = vec![
        Secret::new("kubernetes.token", &token),
        Secret::new("kubernetes.client_key", &key),
        Secret::new("exec env value", &plugin_env),
    ];
    let mut work = Workdir::new(&provider(&cluster, &format!("    token = \"{token}\"")));
    runs += assert_no_leak("token", &mut work, &base);
    checked.push("token");

    let cert_auth = format!(
        "{}{}",
        heredoc("client_certificate", cluster.server.client_cert_pem()),
        heredoc("client_key", &key)
    );
    let mut work = Workdir::new(&provider(&cluster, &cert_auth));
    runs += assert_no_leak("client certificate", &mut work, &base);
    checked.push("client certificate");

    // 3. An exec plugin handing out the token, 4. one handing out a certificate and key.
    let mut work = Workdir::new("");
    let exec = exec_plugin(work.path(), &serde_json::json!({"token": token}), &plugin_env);
    work.set_config(&provider(&cluster, &exec));
    runs += assert_no_leak("exec token", &mut work, &base);
    checked.push("exec token");

    let mut work = Workdir::new("");
    let exec = exec_plugin(
        work.path(),
        &serde_json::json!({
            "clientCertificateData": cluster.server.client_cert_pem(),
            "clientKeyData": key,
        }),
        &plugin_env,
    );
    work.set_config(&provider(&cluster, &exec));
    runs += assert_no_leak("exec certificate", &mut work, &base);
    checked.push("exec certificate");

    // 5. Native EKS: the token is a presigned STS URL made from the AWS keys.
    let eks = v1_cluster(&unique("unused-"), true);
    let keys = AwsKeys::new();
    let mut work = Workdir::new(&provider(&eks, "    eks {\n      cluster_name = \"demo\"\n    }"));
    keys.set(&mut work);
    let mut secrets = keys.secrets();
    secrets.extend(base);
    runs += assert_no_leak("eks", &mut work, &secrets);
    checked.push("eks");
    eprintln!(
        "secrets: {} scenarios ({}) x {runs} terraform runs, {} secret values, no leak",
        checked.len(),
        checked.join(", "),
        secrets.len()
    );
}

#[test]
fn aws_credentials_never_reach_logs_or_state() {
    let moto = Moto::start();
    let resources = format!(
        "{}\n{}",
        repo_file("examples/resources/karpenter_interruption_queue/resource.tf"),
        repo_file("examples/resources/karpenter_node_role/resource.tf")
    );
    // Static keys from the environment.
    let keys = AwsKeys::new();
    let mut work = Workdir::new(&format!("{}\n{resources}", moto.provider_block()));
    keys.set(&mut work);
    assert_no_leak("aws static keys", &mut work, &keys.secrets());

    // assume_role: the keys STS returns are minted by moto (caught by MINTED_MARKERS and the
    // access-key shape check below); the external ID is passed along too.
    let external_id = unique("external-id-");
    let assume = moto.provider_block().replace(
        "  aws {\n",
        &format!(
            "  aws {{\n    assume_role {{\n      role_arn    = \"arn:aws:iam::123456789012:role/deployer\"\n      external_id = \"{external_id}\"\n    }}\n"
        ),
    );
    let keys = AwsKeys::new();
    let mut work = Workdir::new(&format!("{assume}\n{resources}"));
    keys.set(&mut work);
    let mut secrets = keys.secrets();
    secrets.push(Secret::new("assume_role.external_id", &external_id));
    assert_no_leak("aws assume_role", &mut work, &secrets);

    // Static keys in the provider block (they sign AssumeRole; the environment's are unused).
    let configured = AwsKeys::new();
    let block = moto.provider_block().replace(
        "  aws {\n",
        &format!(
            "  aws {{\n    access_key = \"{}\"\n    secret_key = \"{}\"\n    token      = \"{}\"\n    assume_role {{\n      role_arn = \"arn:aws:iam::123456789012:role/deployer\"\n    }}\n",
            configured.access_key_id, configured.secret_access_key, configured.session_token
        ),
    );
    let keys = AwsKeys::new();
    let mut work = Workdir::new(&format!("{block}\n{resources}"));
    keys.set(&mut work);
    let mut secrets = keys.secrets();
    secrets.extend(configured.secrets());
    assert_no_leak("aws keys in the provider block", &mut work, &secrets);

    // A web identity token given inline.
    let web_token = unique("eyJweb-identity-token.");
    let block = moto.provider_block().replace(
        "  aws {\n",
        &format!(
            "  aws {{\n    assume_role_with_web_identity {{\n      role_arn           = \"arn:aws:iam::123456789012:role/web\"\n      web_identity_token = \"{web_token}\"\n    }}\n"
        ),
    );
    let keys = AwsKeys::new();
    let mut work = Workdir::new(&format!("{block}\n{resources}"));
    keys.set(&mut work);
    let mut secrets = keys.secrets();
    secrets.push(Secret::new(
        "assume_role_with_web_identity.web_identity_token",
        &web_token,
    ));
    assert_no_leak("aws web identity token", &mut work, &secrets);
}

/// A credential plugin whose output is broken must not have that output (which may hold the
/// token) echoed in the error: neither malformed JSON, nor a bad expiry, nor a failing exit.
#[test]
fn broken_exec_plugin_output_is_not_echoed() {
    let token = unique("exec-token-in-broken-output-");
    let cluster = v1_cluster(&unique("server-"), false);
    let cases = [
        ("not JSON", format!("echo 'token: {token}'; echo '{{ oops'")),
        (
            "bad expiry",
            format!(
                "echo '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\",\"expirationTimestamp\":\"soon\"}}}}'"
            ),
        ),
        (
            "exit 1",
            format!("echo '{{\"status\":{{\"token\":\"{token}\"}}}}'; echo failing >&2; exit 1"),
        ),
    ];
    let secrets = [Secret::new("exec plugin token", &token)];
    for (what, body) in cases {
        let work = Workdir::new("");
        let script = work.path().join("plugin.sh");
        std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap_or_else(|e| panic!("{e}"));
        let exec = format!(
            "    exec {{\n      api_version = \"client.authentication.k8s.io/v1beta1\"\n      command     = \"/bin/sh\"\n      args        = [\"{}\"]\n    }}\n",
            script.display()
        );
        work.set_config(&provider(&cluster, &exec));
        let mut work = work;
        let mut t = Transcript::new();
        let run = t.run(
            &mut work,
            &["apply", "-no-color", "-input=false", "-auto-approve"],
            None,
        );
        assert!(!run.success, "{what}: apply succeeded with a broken plugin");
        assert!(
            run.text().contains("Error:"),
            "{what}: no diagnostic:\n{}",
            run.output()
        );
        let mut leaks = Vec::new();
        for s in &secrets {
            leaks.extend(s.hits(&t.text));
        }
        assert!(
            leaks.is_empty(),
            "{what}: the plugin's output leaked: {leaks:?}\n{}",
            run.output()
        );
    }

    // The same for a kubeconfig file that does not parse: its lines hold credentials.
    let work = Workdir::new("");
    let kubeconfig = work.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: {token}\n    [broken\n"
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    work.set_config(&format!(
        "provider \"karpenter\" {{\n  kubernetes {{\n    config_path = \"{}\"\n  }}\n}}\n{}",
        kubeconfig.display(),
        kube_resources()
    ));
    let mut work = work;
    let mut t = Transcript::new();
    let run = t.run(
        &mut work,
        &["apply", "-no-color", "-input=false", "-auto-approve"],
        None,
    );
    assert!(
        !run.success && run.text().contains("kubeconfig"),
        "{}",
        run.output()
    );
    let leaks: Vec<String> = secrets.iter().flat_map(|s| s.hits(&t.text)).collect();
    assert!(
        leaks.is_empty(),
        "broken kubeconfig: its content leaked: {leaks:?}\n{}",
        run.output()
    );
}

#[test]
fn the_search_finds_what_it_looks_for() {
    let s = Secret::new("t", "a-secret-value-123456");
    assert!(!s.hits("xx a-secret-value-123456 yy").is_empty());
    for engine in [&STANDARD, &URL_SAFE] {
        for prefix in ["", "k", "k8", "k8s-aws-v1"] {
            let blob = engine.encode(format!("{prefix}https://x/?t=a-secret-value-123456&z=1"));
            assert!(!s.hits(&blob).is_empty(), "{prefix:?} {blob}");
        }
    }
    assert!(!s.hits("x=a%2Dsecret%2Dvalue%2D123456").is_empty());
    let pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\nabc\n-----END PRIVATE KEY-----\n";
    let p = Secret::new("pem", pem);
    assert!(
        !p.hits("key: MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg")
            .is_empty()
    );
    assert!(!p.hits(&serde_json::to_string(pem).unwrap()).is_empty());
    assert!(
        !s.hits(&format!("{:?}", "a-secret-value-123456".as_bytes()))
            .is_empty()
    );
    assert!(s.hits("nothing here").is_empty());
}
