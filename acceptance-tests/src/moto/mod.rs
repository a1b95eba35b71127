//! moto (a local AWS stand-in) for the acceptance tests of the AWS resources.
//!
//! - [`Moto::start`] installs moto into a venv under the workspace's `target/` directory the
//!   first time (`python3 -m venv` + pinned `pip install`), then starts one moto server on
//!   an ephemeral port of 127.0.0.1 for the calling test, and stops it when dropped. One
//!   server per test: tests run in parallel and never reset each other's state. Servers are
//!   forked from a warmed-up moto ([`fork_server`]), so a start costs a fork, not a python
//!   start-up and IAM's managed policies.
//! - [`Moto::configure`] points a [`Workdir`] at it: dummy credentials, no shared config
//!   files, no instance metadata; [`Moto::provider_block`] is the provider block HCL.
//! - [`FaultProxy`] is a reverse proxy in front of moto (which has no fault injection) that a
//!   test arms to fail matching calls, e.g. the next `PutTargets` with a 400
//!   `ThrottlingException`, answering in the protocol shape of the service; or to drop the
//!   connection without an answer, or to let the call through and answer it late.
//!
//! If `python3` is missing, tests fail with one line saying so.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::{Workdir, workspace_root};

mod client;
mod fault;
mod fork_server;
mod proxy;
pub use client::{REGION, configure_env, provider_block, sdk_config, workdir};
pub use fault::{Fault, FaultMode};
pub use proxy::{FaultProxy, ProxyCall};

/// What is installed into the venv (a pip requirements file, shared with
/// `scripts/quickstart.sh`); the venv keeps a copy, and a venv whose copy differs is rebuilt.
const REQUIREMENTS: &str = include_str!("../../moto-requirements.txt");
/// The copy of [`REQUIREMENTS`] inside a finished venv.
const REQUIREMENTS_STAMP: &str = "requirements.txt";
/// The account moto reports.
pub const ACCOUNT_ID: &str = "123456789012";

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
    /// The server's process (a child of the fork server, not of this process).
    pid: u32,
    endpoint: String,
    port: u16,
    _log_dir: tempfile::TempDir,
}

impl Moto {
    /// Starts a fresh moto server (AWS managed policies loaded, as real IAM has them).
    pub fn start() -> Moto {
        Self::start_running("plain")
    }

    /// Python the fork server runs before it builds moto's application (so every server has
    /// it), to make moto behave as AWS where a test depends on it: moto 5.2.1's
    /// SetQueueAttributes drops the queue's `Policy` when the call does not name it (AWS changes
    /// only the attributes named), which made an apply that changes the retention and leaves
    /// the policy alone look like it deleted the policy.
    const AWS_LIKE: &str = "import moto.sqs.models as _sqs\n\
        _set = _sqs.Queue._set_attributes\n\
        def _keep_policy(self, attributes, now=None):\n\
        \x20   policy = getattr(self, 'policy', None)\n\
        \x20   _set(self, attributes, now)\n\
        \x20   if 'Policy' not in attributes: self.policy = policy\n\
        _sqs.Queue._set_attributes = _keep_policy\n";

    /// Like [`Moto::start`], for IAM enforcement tests (switched on later with
    /// `POST /moto-api/reset-auth`): moto then identifies the caller by the access key in the
    /// `Authorization` header and evaluates that user's policies, but its own SigV4
    /// re-computation is skipped, because it disagrees with aws-sdk-rust whenever a form body
    /// holds a space (`%20`), and such requests would be refused as `SignatureDoesNotMatch`
    /// whatever the policy says.
    pub fn start_for_iam_enforcement() -> Moto {
        Self::start_running("iam-enforcement")
    }

    fn start_running(kind: &str) -> Moto {
        let log_dir = tempfile::Builder::new()
            .prefix("moto-")
            .tempdir()
            .unwrap_or_else(|e| panic!("tempdir: {e}"));
        let log_path = log_dir.path().join("moto.log");
        std::fs::File::create(&log_path).unwrap_or_else(|e| panic!("moto log: {e}"));
        let pid = ask_fork_server(&format!("start {kind} {}", log_path.display()))
            .unwrap_or_else(|e| panic!("start moto: {e}"));
        let pid: u32 = pid
            .parse()
            .unwrap_or_else(|_| panic!("the moto fork server answered {pid:?} instead of a pid"));
        let deadline = Instant::now() + START_TIMEOUT;
        let port = loop {
            if !is_running(pid) {
                panic!(
                    "moto exited before it was ready:\n{}",
                    std::fs::read_to_string(&log_path).unwrap_or_default()
                );
            }
            if Instant::now() > deadline {
                give_up(
                    pid,
                    format!("moto did not report its port within {START_TIMEOUT:?}"),
                );
            }
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            if let Some(port) = parse_port(&text) {
                break port;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // Ready when it answers: `/moto-api/config` is cheap (`data.json` would serialize every
        // backend the fork server loaded, IAM's managed policies included).
        loop {
            if matches!(http_get(port, "/moto-api/config"), Some(200..=299)) {
                break;
            }
            if Instant::now() > deadline {
                give_up(
                    pid,
                    format!("moto on port {port} did not answer /moto-api/config"),
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Moto {
            pid,
            endpoint: format!("http://127.0.0.1:{port}"),
            port,
            _log_dir: log_dir,
        }
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
        // SIGKILL: moto keeps nothing on disk, so there is nothing to shut down cleanly. A
        // fork server that cannot be asked any more has already killed its servers.
        let _ = ask_fork_server(&format!("stop {}", self.pid));
    }
}

/// One command to the fork server, started on first use.
fn ask_fork_server(command: &str) -> Result<String, String> {
    fork_server::ask(
        || {
            let mut launch = Command::new(moto_venv().join("bin/python"));
            launch
                .arg("-c")
                .arg(fork_server::SCRIPT)
                .args([REGION, Moto::AWS_LIKE])
                .env("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")
                .env_remove("MOTO_PORT");
            launch
        },
        command,
    )
}

fn is_running(pid: u32) -> bool {
    ask_fork_server(&format!("alive {pid}")).is_ok_and(|answer| answer == "yes")
}

/// Stops a server that never became ready, then fails the test with `why`.
fn give_up(pid: u32, why: String) -> ! {
    let _ = ask_fork_server(&format!("stop {pid}"));
    panic!("{why}");
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
