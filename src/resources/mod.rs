//! One module per Terraform type the provider offers.

pub mod controller_policy;
pub mod interruption_queue;
