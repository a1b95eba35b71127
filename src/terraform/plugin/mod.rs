//! The plugin layer: everything Terraform's go-plugin client expects from a provider process.
//! The handshake and cookie ([`handshake`]), the unix socket ([`listener`]), AutoMTLS
//! ([`tls`]), go-plugin's side services ([`services`]), debug/reattach mode ([`debug`]),
//! hclog logging ([`logging`]) and the server itself ([`serve`]). It knows Terraform, not
//! Karpenter: the provider to serve and its address come from the caller.

mod conn;
pub mod debug;
pub mod error;
pub mod handshake;
pub mod listener;
pub mod logging;
pub mod proto;
pub mod schema_proto;
pub mod serve;
pub mod server;
pub mod services;
pub mod shutdown;
pub mod tls;

use std::process::ExitCode;

pub use error::PluginError;
pub use serve::{MAX_MESSAGE_SIZE, Mode, serve};

use proto::tfplugin6::provider_server::Provider;

/// What the command line asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// No arguments: Terraform launched us.
    Serve,
    /// `--debug` / `-debug`: serve for `TF_REATTACH_PROVIDERS`.
    Debug,
    /// `--version`.
    Version,
    /// `--help` / `-h`.
    Help,
}

/// Parses the arguments (without the program name).
pub fn parse_args<I, S>(args: I) -> Result<Command, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut command = Command::Serve;
    for arg in args {
        let arg = arg.as_ref();
        command = match arg.to_str() {
            Some("--debug" | "-debug") => Command::Debug,
            Some("--version" | "-version" | "-v") => return Ok(Command::Version),
            Some("--help" | "-help" | "-h") => return Ok(Command::Help),
            _ => return Err(format!("unknown argument {}", arg.to_string_lossy())),
        };
    }
    Ok(command)
}

fn usage(program: &str, address: &str) -> String {
    format!(
        "{program} {version}: the Terraform provider {address}.\n\n\
         Terraform starts this binary itself; there is normally no reason to run it by hand.\n\n\
         Options:\n  \
         --debug    serve in the foreground and print TF_REATTACH_PROVIDERS for Terraform\n  \
         --version  print the version\n  \
         --help     print this text\n",
        version = env!("CARGO_PKG_VERSION"),
    )
}

/// Who we are, as far as the plugin layer needs to know.
#[derive(Debug, Clone, Copy)]
pub struct PluginInfo {
    /// Provider source address, e.g. `registry.terraform.io/karpenter/karpenter`.
    pub address: &'static str,
    /// `@module` of every log line.
    pub log_module: &'static str,
    /// Name used in `--help`/`--version`.
    pub program: &'static str,
}

/// The whole process: parse arguments, check the cookie, set up logging, serve the provider
/// built by `make_provider` (called once, inside the tokio runtime), return the exit status.
pub fn run_with<P, F>(info: PluginInfo, make_provider: F) -> ExitCode
where
    P: Provider,
    F: FnOnce() -> P,
{
    let command = match parse_args(std::env::args_os().skip(1)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{}: {e}\n\n{}", info.program, usage(info.program, info.address));
            return ExitCode::from(2);
        }
    };
    let mode = match command {
        Command::Help => {
            print!("{}", usage(info.program, info.address));
            return ExitCode::SUCCESS;
        }
        Command::Version => {
            println!("{} {}", info.program, env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Command::Debug => Mode::Debug,
        Command::Serve => {
            let cookie = std::env::var(handshake::MAGIC_COOKIE_KEY).ok();
            if let Err(e) = handshake::check_magic_cookie(cookie.as_deref()) {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
            Mode::Managed
        }
    };
    logging::init_from_env(info.log_module);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{}: cannot start the async runtime: {e}", info.program);
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async { serve(make_provider(), mode, info.address).await });
    // Do not wait for stray tasks (e.g. a stuck API call) once the server has stopped.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "provider plugin failed");
            eprintln!("{}: {e}", info.program);
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        let none: [&str; 0] = [];
        assert_eq!(parse_args(none), Ok(Command::Serve));
        assert_eq!(parse_args(["--debug"]), Ok(Command::Debug));
        assert_eq!(parse_args(["-debug"]), Ok(Command::Debug));
        assert_eq!(parse_args(["--version"]), Ok(Command::Version));
        assert_eq!(parse_args(["--debug", "--help"]), Ok(Command::Help));
        assert!(parse_args(["--bogus"]).is_err());
    }
}
