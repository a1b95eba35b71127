//! The provider's build steps (`build/`), included as they are: every table the generator
//! writes is checked with the reader the build will use, so it never writes one the build would
//! refuse (and then could not be built again to fix it, as it links the provider); and prices
//! are read with the build's own [`micro_dollars`].

// Only `check` and `micro_dollars` are used here; `generate` is the build's.
#[allow(dead_code)]
#[path = "../../../build/mod.rs"]
mod steps;

pub use steps::controller_policy::check as check_controller_policy;
pub use steps::instance_types::{check as check_instance_types, micro_dollars};
