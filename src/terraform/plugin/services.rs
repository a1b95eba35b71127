//! go-plugin's side services, served next to the provider: `GRPCController` (Shutdown),
//! `GRPCStdio` (an idle stream that stays open), `GRPCBroker` (accepted and held open; Terraform
//! never brokers) and the gRPC health service reporting `plugin` as SERVING.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use super::proto::go_plugin::grpc_broker_server::GrpcBroker;
use super::proto::go_plugin::grpc_controller_server::GrpcController;
use super::proto::go_plugin::grpc_stdio_server::GrpcStdio;
use super::proto::go_plugin::{ConnInfo, Empty, StdioData};
use super::shutdown::ShutdownSignal;

/// The service name go-plugin's health check asks about.
pub const HEALTH_SERVICE_NAME: &str = "plugin";

/// A response stream that yields nothing and ends when the plugin shuts down.
pub struct UntilShutdown<T> {
    done: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    _item: PhantomData<fn() -> T>,
}

impl<T> UntilShutdown<T> {
    fn new(shutdown: &ShutdownSignal) -> Self {
        Self {
            done: Some(Box::pin(shutdown.wait())),
            _item: PhantomData,
        }
    }
}

impl<T> Stream for UntilShutdown<T> {
    type Item = Result<T, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.done.as_mut() {
            None => Poll::Ready(None),
            Some(fut) => match fut.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    self.done = None;
                    Poll::Ready(None)
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// `plugin.GRPCController`: Shutdown replies, then stops the server (the process exits 0).
#[derive(Debug, Clone)]
pub struct Controller {
    shutdown: ShutdownSignal,
}

impl Controller {
    /// A controller that fires `shutdown` when asked.
    pub fn new(shutdown: ShutdownSignal) -> Self {
        Self { shutdown }
    }
}

#[tonic::async_trait]
impl GrpcController for Controller {
    async fn shutdown(&self, _request: Request<Empty>) -> Result<Response<Empty>, Status> {
        tracing::debug!("shutdown requested by the plugin client");
        // The graceful stop lets this in-flight reply go out before connections close.
        self.shutdown.trigger();
        Ok(Response::new(Empty {}))
    }
}

/// `plugin.GRPCStdio`: we never write to stdout/stderr outside logging, so nothing to forward.
#[derive(Debug, Clone)]
pub struct Stdio {
    shutdown: ShutdownSignal,
}

impl Stdio {
    /// A stdio service whose stream ends at `shutdown`.
    pub fn new(shutdown: ShutdownSignal) -> Self {
        Self { shutdown }
    }
}

#[tonic::async_trait]
impl GrpcStdio for Stdio {
    type StreamStdioStream = UntilShutdown<StdioData>;

    async fn stream_stdio(&self, _request: Request<()>) -> Result<Response<Self::StreamStdioStream>, Status> {
        Ok(Response::new(UntilShutdown::new(&self.shutdown)))
    }
}

/// `plugin.GRPCBroker`: accepts the stream, reads (and ignores) what the client sends.
#[derive(Debug, Clone)]
pub struct Broker {
    shutdown: ShutdownSignal,
}

impl Broker {
    /// A broker whose stream ends at `shutdown`.
    pub fn new(shutdown: ShutdownSignal) -> Self {
        Self { shutdown }
    }
}

#[tonic::async_trait]
impl GrpcBroker for Broker {
    type StartStreamStream = UntilShutdown<ConnInfo>;

    async fn start_stream(
        &self,
        request: Request<Streaming<ConnInfo>>,
    ) -> Result<Response<Self::StartStreamStream>, Status> {
        let mut inbound = request.into_inner();
        let stop = self.shutdown.wait();
        tokio::spawn(async move {
            tokio::pin!(stop);
            loop {
                tokio::select! {
                    () = &mut stop => break,
                    msg = inbound.message() => match msg {
                        Ok(Some(info)) => tracing::debug!(
                            service_id = info.service_id,
                            "ignoring a broker connection offer; this plugin brokers nothing"
                        ),
                        Ok(None) | Err(_) => break,
                    },
                }
            }
        });
        Ok(Response::new(UntilShutdown::new(&self.shutdown)))
    }
}
