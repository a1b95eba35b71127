//! `kube-testserver`: a small in-memory stand-in for kube-apiserver, made for testing the
//! provider's Kubernetes side end to end (real `kube` client, real `kubectl`, real `terraform`)
//! on machines without a cluster. It serves HTTPS on 127.0.0.1 with a throw-away CA, bearer
//! token or client-certificate auth, discovery, CustomResourceDefinitions (Established after a
//! configurable delay) and custom objects with real metadata, structural validation and
//! defaulting, server-side apply and watch, plus a simulated Karpenter controller, fault
//! injection and a request log. See `README.md` for where it deliberately differs from the
//! real server.
//!
//! # Library use
//!
//! ```no_run
//! # async fn demo() -> Result<(), kube_testserver::Error> {
//! use kube_testserver::{Config, ControllerConfig, FaultKind, FaultSpec, TestServer};
//! use std::time::Duration;
//! let server = TestServer::start(Config {
//!     crd_dirs: vec![TestServer::shared_crds_dir("v1")],
//!     establish_delay: Duration::from_secs(2),
//!     controller: ControllerConfig::karpenter(),
//!     ..Config::default()
//! })
//! .await?;
//! let client: kube::Client = server.client().await?;           // token auth, CA trusted
//! let _path = server.kubeconfig_path();                           // for terraform/kubectl
//! server.inject_fault(FaultSpec::new(FaultKind::TooManyRequests, 2).method("PATCH"));
//! server.set_latency(Duration::from_millis(50));
//! let log = server.request_log();                                 // Vec<LoggedRequest>
//! server.clear_request_log();
//! let _np = server.object("karpenter.sh", "v1", "nodepools", "default");
//! # let _ = (client, log); Ok(()) }
//! ```
//!
//! Handle API ([`TestServer`]): `start(Config)` (on the caller's runtime; use a multi-thread
//! runtime or `tokio::process` if the test blocks), `start_background(Config)` (own runtime
//! thread; safe for blocking callers), `kubeconfig_path()`, `base_url()`,
//! `admin_url()`, `token()`, `ca_pem()`, `client_cert_pem()`, `client_key_pem()`, `client()`,
//! `client_for_context(ctx)`, `client_config(ctx)`,
//! `install_crds_from_dir(dir)`, `install_crd(yaml)`, `set_establish_delay(d)`,
//! `inject_fault(spec)`, `clear_faults()`, `queued_faults()`, `answers_held_back()`, `set_latency(d)`, `outage(d)`, `is_down()`,
//! `set_garbage_collector(running)`, `create_object(..)`, `request_log()`,
//! `clear_request_log()`, `established_at_unix_us(crd)`, `set_controller(cfg)`, `object(..)`, `object_in(..)`,
//! `patch_object(..)`, `delete_object(..)`, `work_dir()`, `addr()`, `stop()`. Dropping the
//! handle stops the server and removes its work directory (unless `Config::work_dir` was given).
//!
//! kube 5's client retries 429, 503 and 504 by itself (honouring `Retry-After`); to observe
//! injected faults directly, build a client from `client_config(ctx)` with `default_retry = false`.
//! The request log holds every API request answered on the TLS port (401s included, admin
//! requests excluded), with the fault that answered it, if any.
//!
//! # Admin endpoint
//!
//! Plain HTTP on `admin_url()` (no auth), and under `/__admin/` on the TLS port (same auth
//! as the API): `GET|DELETE /__admin/requests`, `GET|POST|DELETE /__admin/faults` (body: a
//! [`FaultSpec`] or a list of them), `PUT /__admin/latency {"millis":N}`,
//! `PUT /__admin/establish-delay {"millis":N}`, `GET|PUT /__admin/controller` (a
//! [`ControllerConfig`]), `POST /__admin/controller/stop` (`{"release": true}` to give up
//! the leader-election Lease first), `POST /__admin/crds` (YAML, one or more documents),
//! `GET|PATCH|DELETE /__admin/objects/<group>/<version>/<plural>/<name>[?namespace=ns]`
//! (PATCH takes a JSON merge patch; DELETE removes at once, ignoring finalizers).

pub mod admin;
pub mod cel;
pub mod controller;
pub mod controller_config;
pub mod controller_write;
pub mod direct;
pub mod eks;
pub mod faults;
pub mod field_error;
pub mod millis;
pub mod nodes;
pub mod rbac;
pub mod schema;
pub mod server;
pub mod shared;
pub mod ssa;
pub mod store;
pub mod table;
pub mod tls;
pub mod upstream;
pub mod util;
pub mod webhooks;

pub use controller_config::{ControllerConfig, LeaseConfig};
pub use faults::{FaultKind, FaultSpec, LoggedRequest};
pub use rbac::{Grant, PolicyRule};
pub use util::ApiError;

use base64::Engine;
use shared::{Shared, lock};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, watch};

/// Errors from starting or driving the server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("binding {what}: {source}")]
    Bind {
        what: &'static str,
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("loading CRDs from {path}: {source}")]
    Crd { path: PathBuf, source: Box<ApiError> },
    #[error(transparent)]
    Api(Box<ApiError>),
    #[error("reading the kubeconfig: {0}")]
    Kubeconfig(#[from] kube::config::KubeconfigError),
    #[error("building the kube client: {0}")]
    Kube(#[from] kube::Error),
}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::Api(Box::new(e))
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// How to start a server.
#[derive(Clone, Debug)]
pub struct Config {
    /// Directories whose `*.yaml`/`*.yml`/`*.json` CRDs are loaded at start (Established at once).
    pub crd_dirs: Vec<PathBuf>,
    /// Delay before CRDs created later (API, `install_crd*`, admin) become Established.
    pub establish_delay: Duration,
    /// Bearer token; a random one when `None`.
    pub token: Option<String>,
    /// Also accept EKS tokens (`k8s-aws-v1.…`, as `aws eks get-token` prints them) whose shape
    /// checks out (see [`eks::check_token`]); the signature itself cannot be verified here.
    pub eks_tokens: bool,
    /// The simulated controller (disabled by default).
    pub controller: ControllerConfig,
    /// TLS port on 127.0.0.1 (0 = any free port).
    pub port: u16,
    /// Plain-HTTP admin port on 127.0.0.1 (`Some(0)` = any free port, `None` = no admin port).
    pub admin_port: Option<u16>,
    /// Where to write `kubeconfig`, `ca.crt` and the client certificate; a fresh temporary
    /// directory (removed on drop) when `None`.
    pub work_dir: Option<PathBuf>,
    /// How long the garbage collector takes to notice a kind after its CRD is established
    /// (kube-controller-manager rediscovers resources every ~30 s): until then, it finishes no
    /// foreground deletion of that kind's objects. Zero (the default): at once.
    pub gc_discovery_delay: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            crd_dirs: Vec::new(),
            establish_delay: Duration::ZERO,
            token: None,
            eks_tokens: false,
            controller: ControllerConfig::default(),
            port: 0,
            admin_port: Some(0),
            work_dir: None,
            gc_discovery_delay: Duration::ZERO,
        }
    }
}

/// A running server. Dropping it stops the server.
pub struct TestServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    admin_addr: Option<SocketAddr>,
    dir: PathBuf,
    own_dir: bool,
    certs: tls::CertBundle,
    shutdown: watch::Sender<bool>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// For [`TestServer::start_background`]: stops the server's own runtime thread.
    background: Option<tokio::sync::oneshot::Sender<()>>,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

fn read_crd_files(dir: &Path) -> Result<Vec<(PathBuf, String)>, Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).map_err(io_err(&p))?;
            Ok((p, t))
        })
        .collect()
}

impl TestServer {
    /// The upstream CRDs of `crds/<which>` (`v1`, `v1alpha5`, `versions/v1.14.1`, …), through
    /// [`upstream::path`].
    pub fn shared_crds_dir(which: &str) -> PathBuf {
        upstream::path(&format!("crds/{which}"))
    }

    /// Start a server on the current tokio runtime; ready to serve when this returns.
    pub async fn start(config: Config) -> Result<TestServer, Error> {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let certs = tls::generate()?;
        let acceptor = tokio_rustls::TlsAcceptor::from(tls::server_config(&certs)?);
        let token = config
            .token
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
        let (tx, _) = broadcast::channel(4096);
        let (shutdown, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            state: Mutex::new(store::State::new(tx)),
            establish_delay: Mutex::new(config.establish_delay),
            faults: Mutex::new(Vec::new()),
            latency: Mutex::new(Duration::ZERO),
            log: Mutex::new(Vec::new()),
            controller: Mutex::new(config.controller.clone()),
            controller_progress: watch::channel(0).0,
            scheduled: Mutex::new(Default::default()),
            token,
            eks_tokens: config.eks_tokens,
            grants: Mutex::new(Vec::new()),
            addr: Mutex::new(None),
            outage: watch::channel(None).0,
            held_answers: AtomicU32::new(0),
            shutdown: shutdown_rx,
            rt: tokio::runtime::Handle::current(),
        });
        for dir in &config.crd_dirs {
            for (path, text) in read_crd_files(dir)? {
                direct::install_crd_docs(&shared, &text, Some(Duration::ZERO)).map_err(|source| {
                    Error::Crd {
                        path,
                        source: Box::new(source),
                    }
                })?;
            }
        }
        let listener = TcpListener::bind(("127.0.0.1", config.port))
            .await
            .map_err(|source| Error::Bind {
                what: "API port",
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| Error::Bind {
            what: "API port",
            source,
        })?;
        *lock(&shared.addr) = Some(addr);
        let mut tasks = vec![tokio::spawn(server::serve_tls(
            listener,
            acceptor,
            shared.clone(),
        ))];
        if !config.gc_discovery_delay.is_zero() {
            lock(&shared.state).gc_discovery_delay = config.gc_discovery_delay;
            // The collector runs after each write; once a kind is discovered it must also run
            // when nothing is written.
            let collector = shared.clone();
            tasks.push(tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    collector.with_state(|s| s.gc());
                }
            }));
        }
        let admin_addr = match config.admin_port {
            Some(p) => {
                let l = TcpListener::bind(("127.0.0.1", p))
                    .await
                    .map_err(|source| Error::Bind {
                        what: "admin port",
                        source,
                    })?;
                let a = l.local_addr().map_err(|source| Error::Bind {
                    what: "admin port",
                    source,
                })?;
                tasks.push(tokio::spawn(server::serve_admin(l, shared.clone())));
                Some(a)
            }
            None => None,
        };
        let rx = {
            // Events sent before the controller subscribed are not its to handle.
            let st = lock(&shared.state);
            shared.controller_progress.send_replace(st.last_event);
            st.subscribe()
        };
        tasks.push(tokio::spawn(controller::run(shared.clone(), rx)));
        let (dir, own_dir) = match &config.work_dir {
            Some(d) => (d.clone(), false),
            None => {
                let n = COUNTER.fetch_add(1, Ordering::Relaxed);
                (
                    std::env::temp_dir().join(format!("kube-testserver-{}-{n}", std::process::id())),
                    true,
                )
            }
        };
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let me = TestServer {
            shared,
            addr,
            admin_addr,
            dir,
            own_dir,
            certs,
            shutdown,
            tasks: Mutex::new(tasks),
            background: None,
        };
        me.write_files()?;
        Ok(me)
    }

    /// Start a server on its own runtime thread, so the caller may block (for example on
    /// `std::process::Command` running terraform) without starving it. Works with or without
    /// a surrounding runtime. Dropping the handle stops the server and its thread.
    pub fn start_background(config: Config) -> Result<TestServer, Error> {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("kube-testserver".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = tx.send(Err(Error::Io {
                            path: PathBuf::from("<runtime>"),
                            source: e,
                        }));
                        return;
                    }
                };
                rt.block_on(async move {
                    let _ = tx.send(TestServer::start(config).await);
                    let _ = stop_rx.await;
                });
            })
            .map_err(|source| Error::Io {
                path: PathBuf::from("<thread>"),
                source,
            })?;
        let mut server = rx.recv().map_err(|_| Error::Io {
            path: PathBuf::from("<thread>"),
            source: std::io::Error::other("server thread ended"),
        })??;
        server.background = Some(stop_tx);
        Ok(server)
    }

    fn write_files(&self) -> Result<(), Error> {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
        let write = |name: &str, content: &str| -> Result<(), Error> {
            let p = self.dir.join(name);
            std::fs::write(&p, content).map_err(io_err(&p))
        };
        write("ca.crt", &self.certs.ca_pem)?;
        write("client.crt", &self.certs.client_cert_pem)?;
        write("client.key", &self.certs.client_key_pem)?;
        let kc = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-testserver\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n\
contexts:\n- name: kube-testserver\n  context:\n    cluster: kube-testserver\n    user: kube-testserver\n\
- name: kube-testserver-cert\n  context:\n    cluster: kube-testserver\n    user: kube-testserver-cert\n\
current-context: kube-testserver\nusers:\n- name: kube-testserver\n  user:\n    token: {token}\n\
- name: kube-testserver-cert\n  user:\n    client-certificate-data: {cc}\n    client-key-data: {ck}\n",
            server = self.base_url(),
            ca = b64(&self.certs.ca_pem),
            token = self.shared.token,
            cc = b64(&self.certs.client_cert_pem),
            ck = b64(&self.certs.client_key_pem),
        );
        write("kubeconfig", &kc)
    }

    /// Path of the kubeconfig (context `kube-testserver` uses the token,
    /// `kube-testserver-cert` the client certificate).
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }
    /// The work directory holding `kubeconfig`, `ca.crt`, `client.crt`, `client.key`.
    pub fn work_dir(&self) -> &Path {
        &self.dir
    }
    /// `https://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("https://{}", self.addr)
    }
    /// The TLS socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// `http://127.0.0.1:<admin port>`, if an admin port was requested.
    pub fn admin_url(&self) -> Option<String> {
        self.admin_addr.map(|a| format!("http://{a}"))
    }
    /// The accepted bearer token.
    pub fn token(&self) -> &str {
        &self.shared.token
    }
    /// The CA certificate (PEM) that signed the server and client certificates.
    pub fn ca_pem(&self) -> &str {
        &self.certs.ca_pem
    }
    /// A client certificate (PEM) the server accepts instead of the token.
    pub fn client_cert_pem(&self) -> &str {
        &self.certs.client_cert_pem
    }
    /// The key (PEM) of [`client_cert_pem`](Self::client_cert_pem).
    pub fn client_key_pem(&self) -> &str {
        &self.certs.client_key_pem
    }

    /// A `kube::Client` for the kubeconfig's token context.
    pub async fn client(&self) -> Result<kube::Client, Error> {
        self.client_for_context("kube-testserver").await
    }

    /// A `kube::Client` for a named kubeconfig context (`kube-testserver-cert` for the certificate).
    pub async fn client_for_context(&self, context: &str) -> Result<kube::Client, Error> {
        Ok(kube::Client::try_from(self.client_config(context).await?)?)
    }

    /// The `kube::Config` for a kubeconfig context, to adjust before building a client (for
    /// example `default_retry = false`: kube 5 retries 429/503/504 by itself).
    pub async fn client_config(&self, context: &str) -> Result<kube::Config, Error> {
        let kc = kube::config::Kubeconfig::read_from(self.kubeconfig_path())?;
        let opts = kube::config::KubeConfigOptions {
            context: Some(context.to_string()),
            ..Default::default()
        };
        Ok(kube::Config::from_custom_kubeconfig(kc, &opts).await?)
    }

    /// Install all CRD files of a directory now (Established after the establish delay).
    pub fn install_crds_from_dir(&self, dir: impl AsRef<Path>) -> Result<Vec<String>, Error> {
        let mut names = Vec::new();
        for (path, text) in read_crd_files(dir.as_ref())? {
            names.extend(
                direct::install_crd_docs(&self.shared, &text, None).map_err(|source| Error::Crd {
                    path,
                    source: Box::new(source),
                })?,
            );
        }
        Ok(names)
    }

    /// Install CRDs from YAML text (one or more documents); Established after the establish delay.
    pub fn install_crd(&self, yaml: &str) -> Result<Vec<String>, Error> {
        Ok(direct::install_crd_docs(&self.shared, yaml, None)?)
    }

    /// Change the establish delay for CRDs created from now on.
    pub fn set_establish_delay(&self, d: Duration) {
        *lock(&self.shared.establish_delay) = d;
    }
    /// Queue a fault.
    pub fn inject_fault(&self, f: FaultSpec) {
        lock(&self.shared.faults).push(f);
    }
    /// Drop all queued faults.
    /// Accepts `grant.token` from now on, limited to its rules (replaces a grant with the same
    /// token). See [`rbac`].
    pub fn grant(&self, grant: Grant) {
        let mut grants = lock(&self.shared.grants);
        grants.retain(|g| g.token != grant.token);
        grants.push(grant);
    }

    /// Removes every grant (their tokens are refused again).
    pub fn clear_grants(&self) {
        lock(&self.shared.grants).clear();
    }

    pub fn clear_faults(&self) {
        lock(&self.shared.faults).clear();
    }
    /// How many uses the queued faults have left: 0 once every fault has been taken by a
    /// request (which may not be served yet: to act while an answer is held back, wait on
    /// [`answers_held_back`](Self::answers_held_back)).
    pub fn queued_faults(&self) -> u32 {
        lock(&self.shared.faults).iter().map(|f| f.count).sum()
    }
    /// How many requests a `slow` fault has served (their reads answered from the store, their
    /// writes committed) and holds the answers of right now: a test waits for it to act between
    /// the server's answer and the client's receiving it.
    pub fn answers_held_back(&self) -> u32 {
        self.shared.held_answers.load(Ordering::SeqCst)
    }
    /// Takes the API port down for `d`, as if kube-apiserver were killed: open API connections
    /// are closed (answers not yet sent are lost) and new ones refused until it listens again
    /// on the same port. The admin port and this handle keep working.
    pub fn outage(&self, d: Duration) {
        self.shared.begin_outage(d);
    }
    /// Whether the API port is down (an [`outage`](Self::outage) is under way).
    pub fn is_down(&self) -> bool {
        self.shared.is_down()
    }
    /// Stops or restarts the garbage collector (kube-controller-manager down or up): while it
    /// is stopped, objects being deleted in the foreground keep their `foregroundDeletion`
    /// finalizer. Restarting runs it at once.
    pub fn set_garbage_collector(&self, running: bool) {
        self.shared.with_state(|s| {
            s.gc_stopped = !running;
            if running {
                s.gc();
            }
        });
    }
    /// Out-of-band create of a cluster-scoped (`namespace` "") or namespaced object as field
    /// manager `manager`, validated and defaulted as the API does; works while the API port is
    /// down. Returns the stored object.
    pub fn create_object(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        namespace: &str,
        object: serde_json::Value,
        manager: &str,
    ) -> Result<serde_json::Value, ApiError> {
        direct::create_object(&self.shared, group, version, plural, namespace, object, manager)
    }
    /// Delay every API request by `d` (zero to turn off).
    pub fn set_latency(&self, d: Duration) {
        *lock(&self.shared.latency) = d;
    }
    /// The requests answered so far (admin requests excluded).
    pub fn request_log(&self) -> Vec<LoggedRequest> {
        lock(&self.shared.log).clone()
    }
    /// When the CRD `name` (`<plural>.<group>`) last became Established, in microseconds since
    /// the Unix epoch (compare with [`LoggedRequest::at_unix_us`]).
    pub fn established_at_unix_us(&self, name: &str) -> Option<u64> {
        lock(&self.shared.state).established_at.get(name).copied()
    }
    /// Forget the logged requests.
    pub fn clear_request_log(&self) {
        lock(&self.shared.log).clear();
    }
    /// Admit Provisioners as Karpenter v0.32's mutating webhook did (default requirements
    /// appended on create and update), or stop doing so.
    pub fn set_legacy_webhook_defaults(&self, on: bool) {
        self.shared.with_state(|s| s.legacy_webhook_defaults = on);
    }
    /// Only these namespaces exist from now on (`None`: every namespace exists, the default):
    /// writes into another namespace get the 404 `namespaces "x" not found` that
    /// kube-apiserver's NamespaceLifecycle admission gives, and `/api/v1/namespaces` lists them.
    pub fn set_namespaces(&self, namespaces: Option<&[&str]>) {
        let known = namespaces.map(|list| list.iter().map(|n| n.to_string()).collect());
        self.shared.with_state(|s| s.namespaces = known);
    }
    /// Replace the simulated controller's settings.
    pub fn set_controller(&self, c: ControllerConfig) {
        *lock(&self.shared.controller) = c;
    }
    /// Stops the simulated Karpenter mid-life: finalizers are no longer removed and its Lease is
    /// no longer renewed; with `release`, the Lease is given up first (a graceful shutdown).
    pub fn stop_controller(&self, release: bool) {
        controller::stop(&self.shared, release);
    }
    /// Out-of-band read of a cluster-scoped object.
    pub fn object(&self, group: &str, version: &str, plural: &str, name: &str) -> Option<serde_json::Value> {
        direct::object(&self.shared, group, version, plural, "", name)
    }
    /// Out-of-band read of a namespaced object.
    pub fn object_in(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        namespace: &str,
        name: &str,
    ) -> Option<serde_json::Value> {
        direct::object(&self.shared, group, version, plural, namespace, name)
    }
    /// Out-of-band JSON merge patch (no validation, no managedFields); `namespace` "" for
    /// cluster-scoped objects. Returns false if there is no such object.
    pub fn patch_object(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        name: &str,
        patch: &serde_json::Value,
    ) -> bool {
        direct::patch_object(&self.shared, group, plural, namespace, name, patch)
    }
    /// Out-of-band removal (ignores finalizers). Returns false if there is no such object.
    pub fn delete_object(&self, group: &str, plural: &str, namespace: &str, name: &str) -> bool {
        direct::delete_object(&self.shared, group, plural, namespace, name)
    }

    /// Stop serving (also done on drop).
    pub fn stop(&self) {
        let _ = self.shutdown.send(true);
        for t in lock(&self.tasks).drain(..) {
            t.abort();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
        if let Some(stop) = self.background.take() {
            let _ = stop.send(());
        }
        if self.own_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
