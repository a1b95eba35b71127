//! How the provider recognises the AWS parts it created itself.
//!
//! Create never adopts: a name that already exists in the account and is not in the resource's
//! state is refused, with the way to take it over on purpose (`terraform import`). One case needs
//! more than "it exists": a crash (SIGKILL, lost connection) after AWS created a part and before
//! Terraform recorded it. The next apply finds the part and must converge onto it instead of
//! failing or duplicating it. For that, every part is created **with the ownership tag in the
//! same call** (CreateRole, CreateInstanceProfile, CreatePolicy, CreateQueue, PutRule all take
//! tags), so no part of ours exists without it; a part that has the tag with this resource type's
//! value is ours, anything else is foreign.
//!
//! The tag is the provider's bookkeeping, not the user's: it is never shown in `tags`, never
//! counted as drift, never removed by tag reconciliation, and a user tag with the same key is
//! refused at validation.

use std::collections::BTreeMap;

/// The ownership tag's key; its value is the Terraform resource type that created the part.
pub const OWNER_TAG_KEY: &str = "terraform-provider-karpenter/resource-type";

/// The ownership tag of a part created by `resource_type` (e.g. `karpenter_node_role`).
pub fn owner_tag(resource_type: &str) -> (String, String) {
    (OWNER_TAG_KEY.to_string(), resource_type.to_string())
}

/// Whether a part with these tags was created by a resource of `resource_type`.
pub fn is_owned_by(tags: &BTreeMap<String, String>, resource_type: &str) -> bool {
    tags.get(OWNER_TAG_KEY).map(String::as_str) == Some(resource_type)
}

/// The tags to send when creating a part: the user's plus the ownership tag.
pub fn with_owner_tag(user_tags: &BTreeMap<String, String>, resource_type: &str) -> BTreeMap<String, String> {
    let mut tags = user_tags.clone();
    let (key, value) = owner_tag(resource_type);
    tags.insert(key, value);
    tags
}

/// The tags a user sees and manages: everything but the ownership tag.
pub fn user_tags(tags: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    tags.iter()
        .filter(|(k, _)| k.as_str() != OWNER_TAG_KEY)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Whether a user-supplied tag key is reserved for the provider's bookkeeping.
pub fn is_reserved_key(key: &str) -> bool {
    key == OWNER_TAG_KEY
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_part_is_ours_only_with_our_type_in_the_tag() {
        let ours = with_owner_tag(&map(&[("team", "a")]), "karpenter_node_role");
        assert!(is_owned_by(&ours, "karpenter_node_role"));
        assert!(!is_owned_by(&ours, "karpenter_controller_role"));
        assert!(!is_owned_by(&map(&[("team", "a")]), "karpenter_node_role"));
    }

    #[test]
    fn the_user_never_sees_the_ownership_tag() {
        let ours = with_owner_tag(&map(&[("team", "a")]), "karpenter_interruption_queue");
        assert_eq!(user_tags(&ours), map(&[("team", "a")]));
        assert!(is_reserved_key(OWNER_TAG_KEY));
        assert!(!is_reserved_key("team"));
    }
}
