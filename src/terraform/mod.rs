//! A generic Terraform provider framework, with nothing of Karpenter in it: [`plugin`] (the
//! go-plugin process model and the tfplugin6 gRPC server), [`framework`] (the provider,
//! resource and data source traits, schemas that drive validation, conversion and docs, and the
//! planning rules), and [`tfvalue`] (Terraform's values and their msgpack and JSON forms).
//! Nothing here imports from outside `terraform/`.

pub mod framework;
pub mod plugin;
pub mod tfvalue;
