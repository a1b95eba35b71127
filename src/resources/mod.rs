//! One module per Terraform type the provider offers.

pub mod controller_policy;
pub mod controller_role;
pub mod iam_role;
pub mod interruption_queue;
pub mod node_role;
