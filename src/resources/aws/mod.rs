//! The AWS composites: Terraform types made of several AWS objects, each created, read, diffed
//! and deleted as one. [`interruption_queue`] (SQS queue, its policy and the EventBridge
//! rules), [`node_role`] and [`controller_role`] (IAM roles on the shared role machinery in
//! [`iam_role`]), the [`controller_policy`] data source, what the three types' identity and
//! listing share ([`listing`]; each type's own are with the type), and the provider's default
//! tags ([`tags_all`]).

pub mod controller_policy;
pub mod controller_role;
pub mod iam_role;
pub mod interruption_queue;
pub mod listing;
pub mod node_role;
pub mod tags_all;
