//! The resource instance's private state: bytes Terraform stores beside the state, passes
//! from a refresh to the next plan and from the plan to the apply, and never shows to users.
//! The framework keeps one thing there: that the last refresh found the object being deleted
//! ([`super::ReadOutcome::BeingDeleted`]), so that the plan that follows recreates it. Nothing
//! else is stored, so clearing the mark leaves the private state empty.

use serde_json::{Value as Json, json};

const BEING_DELETED: &str = "being_deleted";

/// The private state that marks the object as being deleted.
pub fn being_deleted() -> Vec<u8> {
    json!({ BEING_DELETED: true }).to_string().into_bytes()
}

/// Whether `private` carries the mark of [`being_deleted`]. Anything else (empty, or bytes
/// another version wrote) does not.
pub fn is_being_deleted(private: &[u8]) -> bool {
    serde_json::from_slice::<Json>(private)
        .ok()
        .and_then(|v| v.get(BEING_DELETED).and_then(Json::as_bool))
        == Some(true)
}

/// The private state without the mark.
pub fn cleared() -> Vec<u8> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_round_trips_and_nothing_else_is_a_mark() {
        assert!(is_being_deleted(&being_deleted()));
        assert!(!is_being_deleted(&cleared()));
        assert!(!is_being_deleted(b"not json"));
        assert!(!is_being_deleted(br#"{"being_deleted": false}"#));
    }
}
