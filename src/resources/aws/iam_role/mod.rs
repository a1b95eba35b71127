//! What `karpenter_node_role` and `karpenter_controller_role` share, one file per job: the
//! desired shape of a role and its parts and what exists ([`model`]), reading what exists
//! ([`read`]), converging one onto the other step by step so a failure midway leaves a state
//! that records what exists ([`converge`]), what a create or update refuses first
//! ([`refusals`]), the delete order ([`delete`]), role names ([`names`]), policy documents
//! ([`documents`]), attribute values ([`values`]), errors as diagnostics ([`diagnostics`]),
//! the schema pieces and validators both use ([`schema`]), the attributes both write back to
//! state from what exists ([`state`]), the identity both types have
//! ([`identity`]), and their listing: the ListRoles walk ([`list`]) and what a role's trust
//! policy, name and tags say ([`trust`]). This file is the door: it re-exports what the two
//! roles use.
//!
//! Documents are compared as parsed JSON and written to state in one canonical form (keys
//! sorted, compact), so formatting differences never show as drift.

mod converge;
mod delete;
mod diagnostics;
mod documents;
mod identity;
mod list;
mod model;
mod names;
mod read;
mod refusals;
mod schema;
mod state;
#[cfg(test)]
mod tests;
mod trust;
mod values;

pub use converge::converge;
pub use delete::delete;
pub use diagnostics::diagnostics;
pub use documents::{canonical, canonical_text, planned_trust};
pub use identity::{ROLE_IDENTITY, import_role_by_identity, role_identity};
pub use list::{RoleListing, Verdict, cannot_import, list_roles, unreadable};
pub use model::{Actual, Desired, OwnedPolicy, ReadScope};
pub use names::{resolve_name, validate_names};
pub use read::read;
pub use refusals::{
    check_additional_policies, explain_partial_create, refuse_existing_policies, refuse_existing_profile,
    refuse_existing_role,
};
pub use schema::{
    UNMANAGED_INLINE, common_attributes, name_prefix_validator, path_validator, reserved_tag_key_validator,
    role_name_validator,
};
pub use state::common_state;
pub use trust::{Trust, cluster_from_name, cluster_from_tags};
pub use values::{
    map_value, partition_and_account, plan_unmanaged_inline, set_value, string_map_of, string_set_of,
    unmanaged_inline,
};
