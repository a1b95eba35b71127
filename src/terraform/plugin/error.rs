//! Errors of the plugin layer: everything that can stop the process before or while serving.

use std::io;

/// Why the plugin could not start or keep serving.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// `TF_PLUGIN_MAGIC_COOKIE` is missing or wrong: we were not started by Terraform.
    #[error(
        "this binary is a Terraform plugin: it is meant to be started by Terraform, not run \
         directly. To debug it by hand, run it with --debug and follow the printed instructions."
    )]
    NotLaunchedByTerraform,

    /// `PLUGIN_CLIENT_CERT` is set but holds no usable PEM certificate.
    #[error("PLUGIN_CLIENT_CERT does not hold a PEM certificate: {0}")]
    ClientCert(String),

    /// The server certificate could not be generated.
    #[error("could not generate the plugin's TLS certificate: {0}")]
    CertGen(#[from] rcgen::Error),

    /// rustls refused the TLS configuration.
    #[error("TLS configuration: {0}")]
    Tls(#[from] rustls::Error),

    /// Creating, binding or announcing the listener failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },

    /// The gRPC server stopped with an error.
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
}

impl PluginError {
    /// Wraps an I/O error with a short description of what was being done.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> Self {
        let context = context.into();
        move |source| Self::Io { context, source }
    }
}
