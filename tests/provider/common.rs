//! Shared helpers for the integration tests: start the built plugin binary exactly as
//! Terraform's go-plugin client does, read its handshake line, and connect to it over mTLS
//! (or plaintext in debug mode) with a tonic client.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint, Uri};

pub use terraform_provider_karpenter::terraform::plugin::proto::go_plugin;
pub use terraform_provider_karpenter::terraform::plugin::proto::tfplugin6;

/// The binary under test set by a test crate that is not the provider's own (the
/// acceptance tests, which build it with [`use_binary`]'s caller's harness).
static BIN_OVERRIDE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Uses `path` as the plugin binary (for test crates where Cargo does not build it).
pub fn use_binary(path: PathBuf) {
    let _ = BIN_OVERRIDE.set(path);
}

/// The binary under test: Cargo's build of it for the provider's own tests.
pub fn bin() -> PathBuf {
    BIN_OVERRIDE
        .get()
        .cloned()
        .or_else(|| option_env!("CARGO_BIN_EXE_terraform-provider-karpenter").map(PathBuf::from))
        .expect("no plugin binary: call common::use_binary first")
}
/// Terraform's magic cookie value.
pub const COOKIE: &str = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/// Guard against hangs (never a speed assertion).
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// A client certificate and key, shaped like the one Terraform's go-plugin client makes.
pub struct ClientIdentity {
    pub cert_pem: String,
    pub cert_der: CertificateDer<'static>,
    pub key_der: Vec<u8>,
}

impl ClientIdentity {
    /// Self-signed, CA=true, ECDSA P-521/SHA-512, CN=localhost, O=HashiCorp, SAN localhost,
    /// EKU clientAuth+serverAuth: what go-plugin's `generateCert` produces.
    pub fn terraform_like() -> Self {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
            KeyUsagePurpose,
        };
        let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P521_SHA512).unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, "localhost");
        params
            .distinguished_name
            .push(DnType::OrganizationName, "HashiCorp");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ClientAuth,
            ExtendedKeyUsagePurpose::ServerAuth,
        ];
        let cert = params.self_signed(&key).unwrap();
        Self {
            cert_pem: cert.pem(),
            cert_der: cert.der().clone(),
            key_der: key.serialize_der(),
        }
    }
}

/// The parsed handshake line.
#[derive(Debug, Clone)]
pub struct Handshake {
    pub raw: String,
    pub core: String,
    pub app: String,
    pub network: String,
    pub address: String,
    pub protocol: String,
    pub server_cert_der: Option<Vec<u8>>,
}

impl Handshake {
    /// Splits on `|` like go-plugin's client (at least 4 fields; cert parsed if > 50 chars).
    pub fn parse(line: &str) -> Self {
        let line = line.trim_end_matches(['\n', '\r']);
        let parts: Vec<&str> = line.split('|').collect();
        assert!(parts.len() >= 6, "short handshake line: {line:?}");
        let cert = parts[5];
        let server_cert_der =
            (cert.len() > 50).then(|| STANDARD_NO_PAD.decode(cert).expect("cert is base64 std no-pad"));
        Self {
            raw: line.to_owned(),
            core: parts[0].to_owned(),
            app: parts[1].to_owned(),
            network: parts[2].to_owned(),
            address: parts[3].to_owned(),
            protocol: parts[4].to_owned(),
            server_cert_der,
        }
    }
}

/// How to start the plugin.
pub struct Launch {
    pub cookie: Option<String>,
    pub client_cert_pem: Option<String>,
    pub args: Vec<String>,
    pub extra_env: Vec<(String, String)>,
}

impl Launch {
    /// Exactly what Terraform sets, with a given client certificate.
    pub fn terraform(identity: &ClientIdentity) -> Self {
        Self {
            cookie: Some(COOKIE.to_owned()),
            client_cert_pem: Some(identity.cert_pem.clone()),
            args: vec![],
            extra_env: vec![],
        }
    }

    /// Starts the process with piped stdio. Terraform-related variables from the test's own
    /// environment are removed first so only what we set here is seen.
    pub fn spawn(&self) -> Plugin {
        let mut cmd = Command::new(bin());
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for var in [
            "TF_PLUGIN_MAGIC_COOKIE",
            "PLUGIN_CLIENT_CERT",
            "PLUGIN_PROTOCOL_VERSIONS",
            "PLUGIN_MIN_PORT",
            "PLUGIN_MAX_PORT",
            "PLUGIN_UNIX_SOCKET_DIR",
            "PLUGIN_UNIX_SOCKET_GROUP",
            "PLUGIN_MULTIPLEX_GRPC",
            "TF_LOG",
            "TF_LOG_PROVIDER",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("PLUGIN_PROTOCOL_VERSIONS", "5,6")
            .env("PLUGIN_MIN_PORT", "10000")
            .env("PLUGIN_MAX_PORT", "25000");
        if let Some(c) = &self.cookie {
            cmd.env("TF_PLUGIN_MAGIC_COOKIE", c);
        }
        if let Some(pem) = &self.client_cert_pem {
            cmd.env("PLUGIN_CLIENT_CERT", pem);
        }
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
        // A per-test socket parent, removed with the Plugin even if the process is killed.
        let socket_parent = tempfile::tempdir().expect("temp dir");
        if !self.extra_env.iter().any(|(k, _)| k == "PLUGIN_UNIX_SOCKET_DIR") {
            cmd.env("PLUGIN_UNIX_SOCKET_DIR", socket_parent.path());
        }
        let mut child = cmd.spawn().expect("start the plugin binary");
        let stderr = child.stderr.take().expect("stderr piped");
        let stderr_buf = Arc::new(Mutex::new(String::new()));
        let sink = stderr_buf.clone();
        // Dropped by the reader thread when it returns: the pipe has reached EOF.
        let (stderr_open, stderr_closed) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            let _open = stderr_open;
            let mut reader = BufReader::new(stderr);
            let mut line = String::new();
            while reader.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let stdout = child.stdout.take().expect("stdout piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || read_lines(stdout, tx));
        Plugin {
            child,
            stdout_lines: rx,
            stderr: stderr_buf,
            stderr_closed,
            _socket_parent: socket_parent,
        }
    }
}

fn read_lines(stdout: ChildStdout, tx: mpsc::Sender<String>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if tx.send(line).is_err() {
                    break;
                }
            }
        }
    }
}

/// A running plugin process; killed on drop if still alive.
pub struct Plugin {
    pub child: Child,
    stdout_lines: mpsc::Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Disconnected once the stderr reader has read the pipe to its end.
    stderr_closed: mpsc::Receiver<()>,
    _socket_parent: tempfile::TempDir,
}

impl Plugin {
    /// The next stdout line, or `None` at EOF / after the hang guard.
    pub fn next_stdout_line(&self) -> Option<String> {
        self.stdout_lines.recv_timeout(HANG_GUARD).ok()
    }

    /// Reads and parses the handshake line (the first stdout line).
    pub fn handshake(&self) -> Handshake {
        let line = self
            .next_stdout_line()
            .unwrap_or_else(|| panic!("no handshake line; stderr: {}", self.stderr()));
        Handshake::parse(&line)
    }

    /// Everything written to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// All of stderr, once the reader has reached the end of the pipe (the process has exited
    /// and closed it); panics, saying so, when that takes longer than `limit`.
    pub fn stderr_to_end(&self, limit: Duration) -> String {
        if let Err(mpsc::RecvTimeoutError::Timeout) = self.stderr_closed.recv_timeout(limit) {
            panic!(
                "the plugin's stderr did not reach its end within {limit:?}; read so far: {}",
                self.stderr()
            );
        }
        self.stderr()
    }

    /// Every remaining stdout line until EOF (only meaningful once the process has exited).
    pub fn rest_of_stdout(&self) -> Vec<String> {
        let mut out = vec![];
        while let Ok(l) = self.stdout_lines.recv_timeout(Duration::from_secs(5)) {
            out.push(l);
        }
        out
    }

    /// Waits for the process to exit (bounded by the hang guard).
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Plugin {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs the binary to completion with the given environment and returns (status, stdout, stderr).
pub fn run_to_exit(launch: &Launch) -> (ExitStatus, Vec<u8>, String) {
    let mut plugin = launch.spawn();
    let status = plugin.wait_exit(HANG_GUARD).expect("plugin did not exit");
    let mut stdout = Vec::new();
    if let Some(mut s) = plugin.child.stdout.take() {
        let _ = s.read_to_end(&mut stdout);
    }
    for l in plugin.rest_of_stdout() {
        stdout.extend_from_slice(l.as_bytes());
    }
    (status, stdout, plugin.stderr_to_end(HANG_GUARD))
}

/// Trusts exactly one server certificate (the one from the handshake line), as go-plugin's
/// client does by putting it alone in its root pool.
#[derive(Debug)]
struct PinnedServerCert {
    expected: Vec<u8>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for PinnedServerCert {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.expected.as_slice() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// Why a connection attempt failed.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Connects over mTLS (TLS 1.3 or 1.2) to the unix socket from `hs`, presenting `identity`
/// (or no certificate).
pub async fn connect_mtls(hs: &Handshake, identity: Option<&ClientIdentity>) -> Result<Channel, BoxError> {
    connect_mtls_versions(hs, identity, &[&rustls::version::TLS13, &rustls::version::TLS12]).await
}

/// Like [`connect_mtls`], limited to the given TLS versions.
pub async fn connect_mtls_versions(
    hs: &Handshake,
    identity: Option<&ClientIdentity>,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Result<Channel, BoxError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = PinnedServerCert {
        expected: hs.server_cert_der.clone().ok_or("handshake has no server cert")?,
        algorithms: provider.signature_verification_algorithms,
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone() as Arc<CryptoProvider>)
        .with_protocol_versions(versions)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier));
    let mut config = match identity {
        Some(id) => builder.with_client_auth_cert(
            vec![id.cert_der.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(id.key_der.clone())),
        )?,
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let path = PathBuf::from(&hs.address);
    let channel = Endpoint::try_from("http://localhost")?
        .connect_timeout(HANG_GUARD)
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let connector = connector.clone();
            let path = path.clone();
            async move {
                let stream = UnixStream::connect(path).await?;
                let name = ServerName::try_from("localhost")?;
                let tls = connector.connect(name, stream).await?;
                // grpc-go >= 1.67 refuses servers that do not negotiate h2 via ALPN.
                if tls.get_ref().1.alpn_protocol() != Some(b"h2".as_slice()) {
                    return Err::<TokioIo<_>, BoxError>("server did not negotiate ALPN h2".into());
                }
                Ok::<_, BoxError>(TokioIo::new(tls))
            }
        }))
        .await?;
    Ok(channel)
}

/// Presents a fixed chain and key without checking that they belong together (rustls's
/// `with_client_auth_cert` would refuse a mismatched pair before the server could).
#[derive(Debug)]
struct FixedClientCert(Arc<rustls::sign::CertifiedKey>);

impl rustls::client::ResolvesClientCert for FixedClientCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// Connects over mTLS presenting `chain` (leaf first) signed with the PKCS#8 `key`, whether or
/// not the key matches the leaf.
pub async fn connect_mtls_presenting(
    hs: &Handshake,
    chain: Vec<CertificateDer<'static>>,
    key_pkcs8: Vec<u8>,
) -> Result<Channel, BoxError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = PinnedServerCert {
        expected: hs.server_cert_der.clone().ok_or("handshake has no server cert")?,
        algorithms: provider.signature_verification_algorithms,
    };
    let signing_key = provider
        .key_provider
        .load_private_key(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_pkcs8)))?;
    let certified = rustls::sign::CertifiedKey::new(chain, signing_key);
    let mut config = rustls::ClientConfig::builder_with_provider(provider.clone() as Arc<CryptoProvider>)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_client_cert_resolver(Arc::new(FixedClientCert(Arc::new(certified))));
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let path = PathBuf::from(&hs.address);
    let channel = Endpoint::try_from("http://localhost")?
        .connect_timeout(HANG_GUARD)
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let connector = connector.clone();
            let path = path.clone();
            async move {
                let stream = UnixStream::connect(path).await?;
                let name = ServerName::try_from("localhost")?;
                let tls = connector.connect(name, stream).await?;
                Ok::<_, BoxError>(TokioIo::new(tls))
            }
        }))
        .await?;
    Ok(channel)
}

/// Connects without TLS to a unix socket (debug mode, or no client cert).
pub async fn connect_plain(socket_path: &str) -> Result<Channel, BoxError> {
    let path = PathBuf::from(socket_path);
    let channel = Endpoint::try_from("http://localhost")?
        .connect_timeout(HANG_GUARD)
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let path = path.clone();
            async move {
                let stream = UnixStream::connect(path).await?;
                Ok::<_, std::io::Error>(TokioIo::new(stream))
            }
        }))
        .await?;
    Ok(channel)
}

/// A tfplugin6 client with Terraform's message limits.
pub fn provider_client(channel: Channel) -> tfplugin6::provider_client::ProviderClient<Channel> {
    tfplugin6::provider_client::ProviderClient::new(channel)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX)
}

/// Starts the plugin as Terraform would, returning it with its handshake and a connected
/// mTLS channel.
pub async fn start_and_connect() -> (Plugin, Handshake, Channel, ClientIdentity) {
    let id = ClientIdentity::terraform_like();
    let plugin = Launch::terraform(&id).spawn();
    let hs = plugin.handshake();
    let channel = connect_mtls(&hs, Some(&id))
        .await
        .unwrap_or_else(|e| panic!("mTLS connect failed: {e}; stderr: {}", plugin.stderr()));
    (plugin, hs, channel, id)
}
