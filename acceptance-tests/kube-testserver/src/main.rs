//! The `kube-testserver` binary: starts the server, prints the kubeconfig's absolute path as
//! its first line of output (and `admin http://…` as the second), and serves until interrupted.
//!
//! Options: `--crds DIR` (repeatable), `--port N` (0 = free port), `--admin-port N`,
//! `--no-admin`, `--token T`, `--eks-tokens` (also accept well-formed EKS tokens), `--dir DIR` (where to write the kubeconfig; kept on exit),
//! `--establish-delay-ms N`, `--controller` (simulated Karpenter with defaults),
//! `--finalizer-delay-ms N`, `--node-class-delay-ms N`, `--node-claims N`.

use kube_testserver::{Config, ControllerConfig, TestServer};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn usage() -> &'static str {
    "usage: kube-testserver [--crds DIR]... [--port N] [--admin-port N | --no-admin] [--token T] [--eks-tokens] [--dir DIR]\n\
     \x20                      [--establish-delay-ms N] [--controller] [--finalizer-delay-ms N]\n\
     \x20                      [--node-class-delay-ms N] [--node-claims N]"
}

fn parse(args: Vec<String>) -> Result<Config, String> {
    let mut c = Config::default();
    let mut it = args.into_iter();
    let mut controller = ControllerConfig::karpenter();
    let mut use_controller = false;
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let num = |s: String, name: &str| s.parse::<u64>().map_err(|_| format!("{name}: not a number: {s}"));
        match a.as_str() {
            "--crds" => c.crd_dirs.push(PathBuf::from(val("--crds")?)),
            "--port" => c.port = num(val("--port")?, "--port")? as u16,
            "--admin-port" => c.admin_port = Some(num(val("--admin-port")?, "--admin-port")? as u16),
            "--no-admin" => c.admin_port = None,
            "--token" => c.token = Some(val("--token")?),
            "--eks-tokens" => c.eks_tokens = true,
            "--dir" => c.work_dir = Some(PathBuf::from(val("--dir")?)),
            "--establish-delay-ms" => c.establish_delay = Duration::from_millis(num(val(&a)?, &a)?),
            "--controller" => use_controller = true,
            "--finalizer-delay-ms" => {
                controller.finalizer_removal_delay = Duration::from_millis(num(val(&a)?, &a)?)
            }
            "--node-class-delay-ms" => {
                controller.node_class_status_delay = Duration::from_millis(num(val(&a)?, &a)?)
            }
            "--node-claims" => controller.node_claims_per_node_pool = num(val(&a)?, &a)? as u32,
            "-h" | "--help" => return Err(usage().to_string()),
            other => return Err(format!("unknown argument {other}\n{}", usage())),
        }
    }
    if use_controller {
        c.controller = controller;
    }
    Ok(c)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let config = match parse(std::env::args().skip(1).collect()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let server = match TestServer::start(config).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("kube-testserver: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Install the signal handlers before announcing readiness, so an immediate SIGTERM still
    // gets a clean shutdown (which removes the temporary work directory).
    #[cfg(unix)]
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let path = std::fs::canonicalize(server.kubeconfig_path()).unwrap_or_else(|_| server.kubeconfig_path());
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", path.display());
    if let Some(a) = server.admin_url() {
        let _ = writeln!(out, "admin {a}");
    }
    let _ = out.flush();
    let term = async {
        #[cfg(unix)]
        match sigterm.as_mut() {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await;
    };
    tokio::select! {
        _ = &mut ctrl_c => {}
        _ = term => {}
    }
    server.stop();
    ExitCode::SUCCESS
}
