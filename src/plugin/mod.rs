//! The plugin layer: everything Terraform's go-plugin client expects from a provider process.

pub mod proto;
pub mod schema_proto;
pub mod server;
