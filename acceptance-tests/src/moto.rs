//! moto (a local AWS stand-in) for the acceptance tests of the AWS resources.
//!
//! - [`Moto::start`] installs moto into a venv under the workspace's `target/` directory the
//!   first time (`python3 -m venv` + pinned `pip install`), then starts one `moto_server` on
//!   an ephemeral port of 127.0.0.1 for the calling test, and stops it when dropped. One
//!   server per test: tests run in parallel and never reset each other's state.
//! - [`Moto::configure`] points a [`Workdir`] at it: dummy credentials, no shared config
//!   files, no instance metadata; [`Moto::provider_block`] is the provider block HCL.
//! - [`FaultProxy`] is a reverse proxy in front of moto (which has no fault injection) that a
//!   test arms to fail matching calls, e.g. the next `PutTargets` with a 400
//!   `ThrottlingException`, answering in the protocol shape of the service; or to drop the
//!   connection without an answer, or to let the call through and answer it late.
//!
//! If `python3` is missing, tests fail with one line saying so.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::{Workdir, workspace_root};

/// What is installed into the venv (a pip requirements file, shared with
/// `scripts/quickstart.sh`); the venv keeps a copy, and a venv whose copy differs is rebuilt.
const REQUIREMENTS: &str = include_str!("../moto-requirements.txt");
/// The copy of [`REQUIREMENTS`] inside a finished venv.
const REQUIREMENTS_STAMP: &str = "requirements.txt";
/// The account moto reports.
pub const ACCOUNT_ID: &str = "123456789012";
/// The region the tests use.
pub const REGION: &str = "us-east-1";

const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The venv holding moto, installed on first use (once per machine, shared by test processes).
pub fn moto_venv() -> PathBuf {
    static VENV: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match VENV.get_or_init(install) {
        Ok(p) => p.clone(),
        Err(e) => panic!("{e}"),
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

fn install() -> Result<PathBuf, String> {
    let venv = target_dir().join("moto-venv");
    if venv_is_current(&venv) {
        return Ok(venv);
    }
    let python = std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("python3"))
                .find(|p| p.is_file())
        })
        .ok_or("python3 is not on PATH: the AWS acceptance tests need python3 to run moto")?;
    // Build in a private directory and rename it into place, so concurrent test processes
    // never see (or use) a half-installed venv.
    let staging = target_dir().join(format!("moto-venv.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(target_dir()).map_err(|e| format!("create target dir: {e}"))?;
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    run(
        Command::new(&python).args(["-m", "venv"]).arg(&staging),
        "python3 -m venv",
    )?;
    run(
        Command::new(staging.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .arg("--requirement")
            .arg(workspace_root().join("acceptance-tests/moto-requirements.txt")),
        "pip install moto",
    )?;
    std::fs::write(staging.join(REQUIREMENTS_STAMP), REQUIREMENTS)
        .map_err(|e| format!("write the venv's requirements stamp: {e}"))?;
    if venv.exists() && !venv_is_current(&venv) {
        // Built for other requirements: replace it.
        let _ = std::fs::remove_dir_all(&venv);
    }
    match std::fs::rename(&staging, &venv) {
        Ok(()) => {}
        // Another process finished first: use theirs.
        Err(_) if venv_is_current(&venv) => {
            let _ = std::fs::remove_dir_all(&staging);
        }
        Err(e) => return Err(format!("move the moto venv into place: {e}")),
    }
    // The venv's scripts carry the staging path in their shebang; run them via its python.
    Ok(venv)
}

/// A finished venv built from the current [`REQUIREMENTS`].
fn venv_is_current(venv: &std::path::Path) -> bool {
    venv.join("bin/moto_server").is_file()
        && std::fs::read_to_string(venv.join(REQUIREMENTS_STAMP)).is_ok_and(|s| s == REQUIREMENTS)
}

/// A running moto server, stopped on drop.
pub struct Moto {
    child: Child,
    endpoint: String,
    port: u16,
    _log_dir: tempfile::TempDir,
}

impl Moto {
    /// Starts a fresh moto server (AWS managed policies loaded, as real IAM has them).
    pub fn start() -> Moto {
        Self::start_running("")
    }

    /// Like [`Moto::start`], for IAM enforcement tests (switched on later with
    /// `POST /moto-api/reset-auth`): moto then identifies the caller by the access key in the
    /// `Authorization` header and evaluates that user's policies, but its own SigV4
    /// re-computation is skipped, because it disagrees with aws-sdk-rust whenever a form body
    /// holds a space (`%20`), and such requests would be refused as `SignatureDoesNotMatch`
    /// whatever the policy says.
    pub fn start_for_iam_enforcement() -> Moto {
        Self::start_running(
            "import moto.iam.access_control as ac; ac.IAMRequestBase.check_signature = lambda self: None; ",
        )
    }

    fn start_running(prelude: &str) -> Moto {
        let venv = moto_venv();
        let log_dir = tempfile::Builder::new()
            .prefix("moto-")
            .tempdir()
            .unwrap_or_else(|e| panic!("tempdir: {e}"));
        let log_path = log_dir.path().join("moto.log");
        let log = std::fs::File::create(&log_path).unwrap_or_else(|e| panic!("moto log: {e}"));
        let log_err = log.try_clone().unwrap_or_else(|e| panic!("moto log: {e}"));
        // Run the entry point through the venv's python: the console script's shebang may
        // name the staging directory the venv was built in.
        let mut child = Command::new(venv.join("bin/python"))
            .arg("-c")
            .arg(format!(
                "{prelude}import sys; from moto.server import main; sys.exit(main())"
            ))
            .args(["-H", "127.0.0.1", "-p", "0"])
            .env("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")
            .env_remove("MOTO_PORT")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .unwrap_or_else(|e| panic!("start moto_server: {e}"));
        let deadline = Instant::now() + START_TIMEOUT;
        let port = loop {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "moto_server exited ({status}) before it was ready:\n{}",
                    std::fs::read_to_string(&log_path).unwrap_or_default()
                );
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("moto_server did not report its port within {START_TIMEOUT:?}");
            }
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            if let Some(port) = parse_port(&text) {
                break port;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            port,
            _log_dir: log_dir,
        };
        loop {
            if matches!(http_get(port, "/moto-api/data.json"), Some(200)) {
                break;
            }
            if Instant::now() > deadline {
                panic!("moto_server on port {port} did not answer /moto-api/data.json");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        moto
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Sets dummy credentials and the region on `work`, and cuts it off from the user's AWS
    /// configuration and from instance metadata.
    pub fn configure(&self, work: &mut Workdir) {
        configure_env(work);
    }

    /// A working directory with `config` after this moto's provider block, and the AWS
    /// environment of [`configure_env`].
    pub fn workdir(&self, config: &str) -> Workdir {
        workdir(&self.provider_block(), config)
    }

    /// The provider block with every AWS endpoint pointing at moto.
    pub fn provider_block(&self) -> String {
        provider_block(&self.endpoint)
    }

    /// An SDK configuration for the test's own checks against moto.
    pub fn sdk_config(&self) -> aws_config::SdkConfig {
        sdk_config(&self.endpoint)
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        // SIGKILL: moto keeps nothing on disk, so there is nothing to shut down cleanly.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_port(log: &str) -> Option<u16> {
    let marker = "Running on http://127.0.0.1:";
    let at = log.find(marker)? + marker.len();
    let digits: String = log[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Status of `GET path` on 127.0.0.1:port, if the server answered.
fn http_get(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).ok()?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Sets dummy credentials and the region on `work`, isolated from the user's AWS setup.
/// A working directory with `config` after `provider_block` (a provider block of another
/// endpoint, such as a fault proxy's), and the AWS environment of [`configure_env`].
pub fn workdir(provider_block: &str, config: &str) -> Workdir {
    let mut work = Workdir::new(&format!("{provider_block}\n{config}"));
    configure_env(&mut work);
    work
}

pub fn configure_env(work: &mut Workdir) {
    let missing = work.path().join("no-aws-config");
    let missing = missing.to_string_lossy().into_owned();
    work.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_SESSION_TOKEN", "testing")
        .env("AWS_REGION", REGION)
        .env("AWS_CONFIG_FILE", &missing)
        .env("AWS_SHARED_CREDENTIALS_FILE", &missing)
        .env("AWS_EC2_METADATA_DISABLED", "true");
}

/// The provider block with every AWS service endpoint at `endpoint`.
pub fn provider_block(endpoint: &str) -> String {
    format!(
        r#"provider "karpenter" {{
  aws {{
    region = "{REGION}"
    endpoints {{
      iam    = "{endpoint}"
      sqs    = "{endpoint}"
      events = "{endpoint}"
      sts    = "{endpoint}"
      ec2    = "{endpoint}"
    }}
  }}
}}
"#
    )
}

/// An SDK configuration (static dummy credentials, one retry attempt) for test checks.
pub fn sdk_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::SdkConfig::builder()
        .behavior_version(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new(REGION))
        .endpoint_url(endpoint)
        .credentials_provider(aws_sdk_sqs::config::SharedCredentialsProvider::new(
            aws_sdk_sqs::config::Credentials::new("testing", "testing", None, None, "moto-tests"),
        ))
        .retry_config(aws_config::retry::RetryConfig::standard().with_max_attempts(1))
        .build()
}

/// One armed failure: the next `count` requests whose `X-Amz-Target` header or form body
/// contains `matches` get this error instead of reaching moto.
#[derive(Debug, Clone)]
pub struct Fault {
    /// Substring of `X-Amz-Target` (e.g. `AWSEvents.PutTargets`) or of the body
    /// (e.g. `Action=CreateRole`).
    pub matches: String,
    pub count: usize,
    pub status: u16,
    /// The AWS error code, e.g. `ThrottlingException`.
    pub code: String,
    pub message: String,
    /// Matching requests let through before the fault starts firing.
    pub skip: usize,
    /// What the fault does instead of (or besides) the error answer.
    pub mode: FaultMode,
    /// Match the operation exactly (`Action=GetRole` then leaves `Action=GetRolePolicy` alone).
    pub exact: bool,
}

/// How an armed fault treats a matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMode {
    /// Answer with the AWS-shaped error (`status`, `code`); moto never sees the call.
    Error,
    /// Close the client connection without answering; moto never sees the call.
    Drop,
    /// Forward to moto (the call takes effect) and hold its answer back for this long.
    Slow(Duration),
}

impl Fault {
    /// `count` failures of calls matching `matches` with HTTP `status` and error `code`.
    pub fn new(matches: &str, count: usize, status: u16, code: &str) -> Fault {
        Fault {
            matches: matches.to_string(),
            count,
            status,
            code: code.to_string(),
            message: format!("injected by the acceptance tests' fault proxy ({code})"),
            skip: 0,
            mode: FaultMode::Error,
            exact: false,
        }
    }

    /// Matches only the operation named by `matches`, not others it is a prefix of.
    pub fn exact(mut self) -> Fault {
        self.exact = true;
        self
    }

    /// `count` matching calls whose connection is closed without an answer.
    pub fn drop_connection(matches: &str, count: usize) -> Fault {
        Fault {
            mode: FaultMode::Drop,
            ..Fault::new(matches, count, 0, "ConnectionDropped")
        }
    }

    /// `count` matching calls that reach moto but whose answer comes `delay` late.
    pub fn slow(matches: &str, count: usize, delay: Duration) -> Fault {
        Fault {
            mode: FaultMode::Slow(delay),
            ..Fault::new(matches, count, 200, "Slow")
        }
    }

    /// Lets the first `skip` matching requests through, then fails the next `count`.
    pub fn after(mut self, skip: usize) -> Fault {
        self.skip = skip;
        self
    }
}

/// One call that went through the proxy, with when it arrived and when its answer was sent.
#[derive(Debug, Clone)]
pub struct ProxyCall {
    /// `X-Amz-Target` (e.g. `AmazonSQS.CreateQueue`) or the form's `Action=…`.
    pub operation: String,
    /// Whether an armed fault answered it.
    pub failed: bool,
    pub started: Instant,
    pub finished: Instant,
    /// The access key ID the request was signed with (from `Authorization`), if signed.
    pub access_key_id: Option<String>,
    /// The request body as text (form-encoded for the query protocols, JSON otherwise).
    pub body: String,
}

#[derive(Default)]
struct ProxyState {
    faults: VecDeque<Fault>,
    /// Every request's operation (X-Amz-Target or Action=), in order, and whether it was failed.
    log: Vec<(String, bool)>,
    /// The same calls with their timing, for the benchmarks.
    calls: Vec<ProxyCall>,
}

/// A reverse proxy in front of moto that fails armed calls; stops on drop.
pub struct FaultProxy {
    port: u16,
    state: Arc<Mutex<ProxyState>>,
    stop: Arc<AtomicBool>,
}

impl FaultProxy {
    /// Starts the proxy on an ephemeral port of 127.0.0.1, forwarding to `upstream_port`.
    pub fn start(upstream_port: u16) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("proxy bind: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("proxy addr: {e}"))
            .port();
        let state = Arc::new(Mutex::new(ProxyState::default()));
        let stop = Arc::new(AtomicBool::new(false));
        {
            let state = state.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let state = state.clone();
                    std::thread::spawn(move || {
                        let _ = serve(conn, upstream_port, &state);
                    });
                }
            });
        }
        FaultProxy { port, state, stop }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Arms a fault (faults are consumed in the order armed).
    pub fn arm(&self, fault: Fault) {
        self.lock().faults.push_back(fault);
    }

    /// Drops all armed faults that have not fired.
    pub fn disarm(&self) {
        self.lock().faults.clear();
    }

    /// Faults armed that have not fired yet (their remaining count summed).
    pub fn pending(&self) -> usize {
        self.lock().faults.iter().map(|f| f.count).sum()
    }

    /// The operations seen so far, in order, with whether each was failed by the proxy.
    pub fn log(&self) -> Vec<(String, bool)> {
        self.lock().log.clone()
    }

    /// The calls answered so far, in the order they arrived, with their timing.
    pub fn calls(&self) -> Vec<ProxyCall> {
        self.lock().calls.clone()
    }

    /// Forgets the logged operations and calls (armed faults stay).
    pub fn clear_log(&self) {
        let mut s = self.lock();
        s.log.clear();
        s.calls.clear();
    }

    /// The provider block with every AWS endpoint pointing at this proxy.
    pub fn provider_block(&self) -> String {
        provider_block(&self.endpoint())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ProxyState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

struct Request {
    head: Vec<(String, String)>,
    request_line: String,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.head
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `AKID` of `Authorization: AWS4-HMAC-SHA256 Credential=AKID/date/region/service/...`.
    fn access_key_id(&self) -> Option<String> {
        let auth = self.header("authorization")?;
        let at = auth.find("Credential=")? + "Credential=".len();
        auth[at..].split('/').next().map(str::to_string)
    }

    fn operation(&self) -> String {
        if let Some(target) = self.header("x-amz-target") {
            return target.to_string();
        }
        let body = String::from_utf8_lossy(&self.body);
        body.split('&')
            .find(|p| p.starts_with("Action="))
            .map_or_else(|| self.request_line.clone(), str::to_string)
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(None);
    }
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            head.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut req = Request {
        head,
        request_line: request_line.trim_end().to_string(),
        body: Vec::new(),
    };
    if let Some(len) = req.header("content-length").and_then(|l| l.parse::<usize>().ok()) {
        req.body = vec![0; len];
        reader.read_exact(&mut req.body)?;
    } else if req
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            req.body.extend_from_slice(&chunk[..n]);
        }
    }
    Ok(Some(req))
}

/// Serves requests on one client connection, one upstream connection per request.
fn serve(conn: TcpStream, upstream_port: u16, state: &Mutex<ProxyState>) -> std::io::Result<()> {
    let mut writer = conn.try_clone()?;
    let mut reader = BufReader::new(conn);
    while let Some(req) = read_request(&mut reader)? {
        let started = Instant::now();
        let op = req.operation();
        let fault = {
            let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
            let hit = s.faults.iter().position(|f| {
                f.count > 0
                    && if f.exact {
                        op == f.matches
                    } else {
                        op.contains(&f.matches)
                    }
            });
            let hit = match hit {
                Some(i) if s.faults[i].skip > 0 => {
                    s.faults[i].skip -= 1;
                    None
                }
                other => other,
            };
            let fault = hit.map(|i| {
                let f = &mut s.faults[i];
                f.count -= 1;
                let out = f.clone();
                if f.count == 0 {
                    s.faults.remove(i);
                }
                out
            });
            s.log.push((op.clone(), fault.is_some()));
            fault
        };
        let failed = fault.is_some();
        let response = match fault {
            Some(f) if f.mode == FaultMode::Drop => {
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
            Some(Fault {
                mode: FaultMode::Slow(delay),
                ..
            }) => {
                let response = forward(&req, upstream_port)?;
                std::thread::sleep(delay);
                response
            }
            Some(f) => error_response(&req, &f),
            None => forward(&req, upstream_port)?,
        };
        // Recorded before the client gets the answer: a client that has its answer (and a
        // process that exited after it) finds its call in `calls()`, and a `clear_log()` made
        // after that answer cannot be overtaken by the record of the call.
        state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .calls
            .push(ProxyCall {
                operation: op,
                failed,
                started,
                finished: Instant::now(),
                access_key_id: req.access_key_id(),
                body: String::from_utf8_lossy(&req.body).into_owned(),
            });
        writer.write_all(&response)?;
        writer.flush()?;
    }
    let _ = writer.shutdown(Shutdown::Both);
    Ok(())
}

/// Sends `req` to moto on a fresh connection and returns its whole response, rewritten to
/// a Content-Length body so the client connection can stay open.
fn forward(req: &Request, upstream_port: u16) -> std::io::Result<Vec<u8>> {
    let mut up = TcpStream::connect(("127.0.0.1", upstream_port))?;
    let mut out = Vec::new();
    out.extend_from_slice(req.request_line.as_bytes());
    out.extend_from_slice(b"\r\n");
    for (k, v) in &req.head {
        if k.eq_ignore_ascii_case("connection")
            || k.eq_ignore_ascii_case("transfer-encoding")
            || k.eq_ignore_ascii_case("content-length")
        {
            continue;
        }
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(
        format!("Content-Length: {}\r\nConnection: close\r\n\r\n", req.body.len()).as_bytes(),
    );
    out.extend_from_slice(&req.body);
    up.write_all(&out)?;
    let mut reader = BufReader::new(up);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let mut headers = Vec::new();
    let mut chunked = false;
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end().to_string();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            let (k, v) = (k.trim(), v.trim());
            if k.eq_ignore_ascii_case("transfer-encoding") {
                chunked = v.eq_ignore_ascii_case("chunked");
                continue;
            }
            if k.eq_ignore_ascii_case("content-length") {
                length = v.parse::<usize>().ok();
                continue;
            }
            if k.eq_ignore_ascii_case("connection") {
                continue;
            }
            headers.push(format!("{k}: {v}"));
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = length {
        body = vec![0; n];
        reader.read_exact(&mut body)?;
    } else {
        reader.read_to_end(&mut body)?;
    }
    let mut resp = Vec::new();
    resp.extend_from_slice(status_line.trim_end().as_bytes());
    resp.extend_from_slice(b"\r\n");
    for h in headers {
        resp.extend_from_slice(h.as_bytes());
        resp.extend_from_slice(b"\r\n");
    }
    resp.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    resp.extend_from_slice(&body);
    Ok(resp)
}

/// The error in the shape the service's protocol uses: JSON `__type` (plus the query-compat
/// header for SQS) for `X-Amz-Target` services, an XML `ErrorResponse` for IAM/STS.
fn error_response(req: &Request, f: &Fault) -> Vec<u8> {
    let reason = match f.status {
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let fault_kind = if f.status >= 500 { "Receiver" } else { "Sender" };
    let (content_type, extra, body) = match req.header("x-amz-target") {
        Some(target) => {
            let mut extra = format!("X-Amzn-ErrorType: {}\r\n", f.code);
            if target.starts_with("AmazonSQS") {
                extra.push_str(&format!("x-amzn-query-error: {};{fault_kind}\r\n", f.code));
            }
            let body = serde_json::json!({ "__type": f.code, "message": f.message }).to_string();
            ("application/x-amz-json-1.1", extra, body)
        }
        None => (
            "text/xml",
            String::new(),
            format!(
                "<ErrorResponse><Error><Type>{fault_kind}</Type><Code>{}</Code><Message>{}</Message></Error><RequestId>fault-proxy</RequestId></ErrorResponse>",
                f.code, f.message
            ),
        ),
    };
    format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {content_type}\r\n{extra}x-amzn-RequestId: fault-proxy\r\nContent-Length: {}\r\n\r\n{body}",
        f.status,
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_is_read_from_werkzeug_banner() {
        let log = " * Running on http://127.0.0.1:40123\nPress CTRL+C to quit\n";
        assert_eq!(parse_port(log), Some(40123));
        assert_eq!(parse_port("starting"), None);
    }
}
