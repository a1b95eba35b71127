//! The provider block, one file per job: its schema (`schema.rs`: `cluster_name`, `kubernetes {}`
//! and `aws {}`, their environment-variable fallbacks and validators), its parsing into
//! `ProviderSettings` with those fallbacks (`parse.rs`), and the checks across attributes and
//! of what it names outside the configuration (`validate.rs`). This file only wires them and
//! re-exports what the provider uses.
//!
//! A new attribute is one entry in `schema.rs` and its read in `parse.rs`.

mod parse;
mod schema;
#[cfg(test)]
mod tests;
mod validate;

pub use parse::{Env, ProcessEnv, parse};
pub use schema::SCHEMA;
pub use validate::{check_aws, validate_aws, validate_cluster_name};
