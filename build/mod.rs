//! The build steps of the committed Karpenter data, one file per table: [`instance_types`]
//! (the offline instance-type table) and [`controller_policy`] (each release's controller
//! policy), with the error both return ([`error`]). Included with `#[path]` by `build.rs`, which
//! runs their `generate`, and by the release generator
//! (`acceptance-tests/src/karpenter_release/provider_build.rs`), which checks every table it
//! writes with their `check` and reads prices with the same [`instance_types::micro_dollars`].

pub mod controller_policy;
pub mod error;
pub mod instance_types;
