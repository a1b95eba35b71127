//! Generated gRPC code for the protocols the plugin serves: `tfplugin6` (Terraform's provider
//! protocol) and go-plugin's `plugin` package (controller, stdio, broker). Server and client
//! stubs are both generated; the clients are used by the integration tests.

/// Terraform plugin protocol 6 (`package tfplugin6`).
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod tfplugin6 {
    tonic::include_proto!("tfplugin6");
}

/// go-plugin's own services (`package plugin`).
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod go_plugin {
    tonic::include_proto!("plugin");
}
