//! The moto fork server: one python process per test process (`fork_server.py`) that builds
//! moto's server application once, warms it up (imports, the AWS managed policies IAM loads),
//! and then forks a moto server per test. A server costs a fork instead of the ~2 CPU-seconds
//! of a cold start, and each is still a process of its own with its own moto state.
//!
//! [`ask`] sends one command line and returns the one-line answer. The server reads its
//! commands from a pipe this process holds: when this process ends, however it ends, the pipe
//! closes and the fork server kills every moto it started.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The fork server's python (arguments: the region, then python to run first).
pub(super) const SCRIPT: &str = include_str!("fork_server.py");

struct ForkServer {
    /// Kept so the process handle lives as long as this process (never waited for).
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

static SERVER: OnceLock<Result<Mutex<ForkServer>, String>> = OnceLock::new();

/// Sends `command` and returns its answer; the first call starts the fork server with `launch`
/// (the command line running [`SCRIPT`]; its standard streams are set here).
pub(super) fn ask(launch: impl FnOnce() -> Command, command: &str) -> Result<String, String> {
    let server = SERVER.get_or_init(|| start(launch()).map(Mutex::new)).as_ref()?;
    let mut server = server
        .lock()
        .map_err(|_| "the moto fork server's lock is poisoned (a test panicked while asking)".to_string())?;
    writeln!(server.stdin, "{command}")
        .and_then(|()| server.stdin.flush())
        .map_err(|e| format!("moto fork server: send {command:?}: {e}"))?;
    let mut answer = String::new();
    match server.stdout.read_line(&mut answer) {
        Ok(0) => Err(format!(
            "the moto fork server exited (its error, if any, is above in the test's output) before answering {command:?}"
        )),
        Ok(_) => Ok(answer.trim_end().to_string()),
        Err(e) => Err(format!("moto fork server: read the answer to {command:?}: {e}")),
    }
}

fn start(mut launch: Command) -> Result<ForkServer, String> {
    let mut child = launch
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("start the moto fork server: {e}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        return Err("the moto fork server was started without its pipes".into());
    };
    Ok(ForkServer {
        _child: child,
        stdin,
        stdout: BufReader::new(stdout),
    })
}
