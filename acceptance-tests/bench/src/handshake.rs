//! Figure 6: plugin start to handshake line. The binary is started exactly as Terraform's
//! go-plugin client starts it (magic cookie, protocol 6, a client certificate for AutoMTLS, a
//! socket directory), and the time from `spawn` to the first line on its stdout is taken.
//! The baseline beside it is the process floor: spawning `true` and reaping it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::error::BenchError;
use crate::stats::Samples;

const COOKIE: &str = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";

/// Milliseconds, per start.
#[derive(Debug, Clone, Default)]
pub struct Handshake {
    pub to_line_ms: Samples,
    pub spawn_floor_ms: Samples,
}

fn client_cert() -> Result<String, BenchError> {
    let key = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
        .map_err(|e| BenchError::Measure(format!("client certificate: {e}")))?;
    Ok(key.cert.pem())
}

/// One start: milliseconds from spawn to the handshake line.
fn once(binary: &Path, cert: &str, sockets: &Path) -> Result<f64, BenchError> {
    let mut cmd = Command::new(binary);
    for var in ["TF_LOG", "TF_LOG_PROVIDER", "PLUGIN_MULTIPLEX_GRPC"] {
        cmd.env_remove(var);
    }
    cmd.env("TF_PLUGIN_MAGIC_COOKIE", COOKIE)
        .env("PLUGIN_PROTOCOL_VERSIONS", "6")
        .env("PLUGIN_MIN_PORT", "10000")
        .env("PLUGIN_MAX_PORT", "25000")
        .env("PLUGIN_CLIENT_CERT", cert)
        .env("PLUGIN_UNIX_SOCKET_DIR", sockets)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(BenchError::io("starting the provider"))?;
    let mut line = String::new();
    let read = match child.stdout.take() {
        Some(out) => BufReader::new(out).read_line(&mut line),
        None => Ok(0),
    };
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let _ = child.kill();
    let _ = child.wait();
    match read {
        Ok(n) if n > 0 && line.starts_with("1|6|") => Ok(ms),
        Ok(_) => Err(BenchError::Measure(format!(
            "no handshake line from the provider (got {line:?})"
        ))),
        Err(e) => Err(BenchError::io("reading the handshake line")(e)),
    }
}

fn spawn_floor() -> Result<f64, BenchError> {
    let start = Instant::now();
    let status = Command::new("true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(BenchError::io("spawning true"))?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    if status.success() {
        Ok(ms)
    } else {
        Err(BenchError::Measure("`true` failed".into()))
    }
}

/// `count` starts of each, interleaved.
pub fn measure(binary: &Path, count: usize) -> Result<Handshake, BenchError> {
    let cert = client_cert()?;
    let sockets = tempfile::tempdir().map_err(BenchError::io("temp dir"))?;
    // One untimed start: the first reads the binary from disk.
    once(binary, &cert, sockets.path())?;
    let mut h = Handshake::default();
    for _ in 0..count {
        h.to_line_ms.push(once(binary, &cert, sockets.path())?);
        h.spawn_floor_ms.push(spawn_floor()?);
    }
    Ok(h)
}
