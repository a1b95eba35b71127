//! Putting it together: one tonic server on the unix socket carrying the tfplugin6 provider,
//! go-plugin's controller/stdio/broker services and the health service, in managed mode
//! (launched by Terraform: handshake line, AutoMTLS) or debug mode (reattach, plaintext).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use tokio::signal::unix::{SignalKind, signal};
use tonic::transport::Server;
use tonic_health::ServingStatus;

use super::conn;
use super::debug;
use super::error::PluginError;
use super::handshake::{self, Negotiated};
use super::listener::SocketListener;
use super::proto::go_plugin::grpc_broker_server::GrpcBrokerServer;
use super::proto::go_plugin::grpc_controller_server::GrpcControllerServer;
use super::proto::go_plugin::grpc_stdio_server::GrpcStdioServer;
use super::proto::tfplugin6::provider_server::{Provider, ProviderServer};
use super::services::{Broker, Controller, HEALTH_SERVICE_NAME, Stdio};
use super::shutdown::ShutdownSignal;
use super::tls;

/// Largest gRPC message we accept or send (Terraform itself allows up to 2 GiB; tonic's
/// default of 4 MiB is far too small for big states and schemas).
pub const MAX_MESSAGE_SIZE: usize = 256 * 1024 * 1024;

/// After a shutdown request, how long in-flight calls get before we stop anyway. Terraform
/// kills the process 2 s after a successful Shutdown reply.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// Environment variable with the protocol versions the client supports.
pub const PROTOCOL_VERSIONS_ENV: &str = "PLUGIN_PROTOCOL_VERSIONS";

/// How the process was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Launched by Terraform: the cookie was checked by the caller; announce on stdout, mTLS.
    Managed,
    /// Started by hand with `--debug`: print `TF_REATTACH_PROVIDERS`, plaintext, stop on Ctrl-C.
    Debug,
}

/// Serves `provider` until Terraform (or Ctrl-C in debug mode) stops it.
///
/// `provider_address` (e.g. `registry.terraform.io/ns/name`) is only used by debug mode.
/// Must run inside a multi-threaded tokio runtime.
pub async fn serve<P: Provider>(provider: P, mode: Mode, provider_address: &str) -> Result<(), PluginError> {
    match mode {
        Mode::Managed => serve_managed(provider).await,
        Mode::Debug => serve_debug(provider, provider_address).await,
    }
}

async fn serve_managed<P: Provider>(provider: P) -> Result<(), PluginError> {
    let offered = std::env::var(PROTOCOL_VERSIONS_ENV).ok();
    if handshake::negotiate(offered.as_deref()) == Negotiated::Mismatch {
        tracing::warn!(
            offered = offered.as_deref().unwrap_or(""),
            "Terraform did not offer plugin protocol 6; announcing 6 anyway so it can report \
             the mismatch"
        );
    }
    ignore_sigint()?;
    let socket = SocketListener::bind_from_env()?;
    let tls = match std::env::var(tls::CLIENT_CERT_ENV) {
        Ok(pem) if !pem.trim().is_empty() => Some(tls::server_tls(&pem)?),
        _ => {
            tracing::warn!("PLUGIN_CLIENT_CERT is not set: serving without TLS");
            None
        }
    };
    let endpoint = socket.endpoint();
    let multiplex_asked = std::env::var_os(handshake::MULTIPLEX_ENV).is_some_and(|v| !v.is_empty());
    let line = handshake::handshake_line(
        &endpoint,
        tls.as_ref().map(|t| t.cert_der.as_ref()),
        multiplex_asked,
    );
    // SIGTERM must stop gracefully from the moment Terraform can see us.
    let shutdown = ShutdownSignal::new();
    stop_on_sigterm(&shutdown)?;
    stop_when_orphaned(&shutdown);
    handshake::announce(&line)?;
    tracing::info!(
        network = endpoint.network,
        address = %endpoint.address,
        mtls = tls.is_some(),
        version = env!("CARGO_PKG_VERSION"),
        "provider plugin serving"
    );
    serve_on(provider, socket, tls.map(|t| t.config), shutdown).await
}

async fn serve_debug<P: Provider>(provider: P, provider_address: &str) -> Result<(), PluginError> {
    let socket = SocketListener::bind_from_env()?;
    let endpoint = socket.endpoint();
    let shutdown = ShutdownSignal::new();
    stop_on_sigterm(&shutdown)?;
    let text = debug::instructions(provider_address, &endpoint, std::process::id());
    {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(PluginError::io("writing the reattach instructions to stdout"))?;
    }
    let on_ctrl_c = shutdown.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            tracing::info!("Ctrl-C: stopping the debug provider");
        }
        on_ctrl_c.trigger();
    });
    serve_on(provider, socket, None, shutdown).await
}

/// Serves every service on `socket` (mTLS when `tls` is given) until `shutdown` fires. Callers
/// that announce the socket install the SIGTERM handler before they do (see `serve`).
pub async fn serve_on<P: Provider>(
    provider: P,
    socket: SocketListener,
    tls: Option<Arc<ServerConfig>>,
    shutdown: ShutdownSignal,
) -> Result<(), PluginError> {
    let (listener, socket_dir) = socket.split();
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_service_status(HEALTH_SERVICE_NAME, ServingStatus::Serving)
        .await;
    let incoming = conn::incoming(listener, tls, shutdown.clone());
    let server = Server::builder()
        .add_service(
            ProviderServer::new(provider)
                .max_decoding_message_size(MAX_MESSAGE_SIZE)
                .max_encoding_message_size(MAX_MESSAGE_SIZE),
        )
        .add_service(GrpcControllerServer::new(Controller::new(shutdown.clone())))
        .add_service(GrpcStdioServer::new(Stdio::new(shutdown.clone())))
        .add_service(GrpcBrokerServer::new(Broker::new(shutdown.clone())))
        .add_service(health_service)
        .serve_with_incoming_shutdown(incoming, shutdown.wait());
    let grace_over = {
        let stop = shutdown.wait();
        async move {
            stop.await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        }
    };
    let result = tokio::select! {
        r = server => r.map_err(PluginError::from),
        () = grace_over => {
            tracing::warn!("calls still running after the shutdown grace period; stopping anyway");
            Ok(())
        }
    };
    drop(socket_dir);
    tracing::debug!("provider plugin stopped");
    result
}

/// SIGTERM (e.g. `kill` on a debug-mode provider) stops gracefully, so the socket directory is
/// removed. Terraform itself never sends it: it uses Shutdown, then SIGKILL.
fn stop_on_sigterm(shutdown: &ShutdownSignal) -> Result<(), PluginError> {
    let mut sigterm =
        signal(SignalKind::terminate()).map_err(PluginError::io("installing the SIGTERM handler"))?;
    let shutdown = shutdown.clone();
    tokio::spawn(async move {
        if sigterm.recv().await.is_some() {
            tracing::debug!("SIGTERM: stopping");
            shutdown.trigger();
        }
    });
    Ok(())
}

/// How often a managed plugin checks that Terraform, its parent, is still there.
const PARENT_CHECK_EVERY: Duration = Duration::from_secs(1);

/// A managed plugin whose Terraform died (SIGKILL, OOM) is re-parented and would serve an
/// unreachable socket forever: stop when the parent process changes.
fn stop_when_orphaned(shutdown: &ShutdownSignal) {
    let parent = std::os::unix::process::parent_id();
    let shutdown = shutdown.clone();
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(PARENT_CHECK_EVERY);
        loop {
            ticker.tick().await;
            if std::os::unix::process::parent_id() != parent {
                tracing::warn!(parent, "Terraform (the parent process) is gone; stopping");
                shutdown.trigger();
                return;
            }
        }
    });
}

/// Terraform sends Ctrl-C to the whole process group but wants to drive the shutdown itself
/// (StopProvider, then Shutdown), so SIGINT must not kill us.
fn ignore_sigint() -> Result<(), PluginError> {
    let mut sigint =
        signal(SignalKind::interrupt()).map_err(PluginError::io("installing the SIGINT handler"))?;
    tokio::spawn(async move {
        while sigint.recv().await.is_some() {
            tracing::debug!("ignoring SIGINT; Terraform drives the shutdown");
        }
    });
    Ok(())
}
