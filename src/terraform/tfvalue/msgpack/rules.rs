//! What reading and writing share, after go-cty's msgpack rules: the extension code of a
//! refined unknown, the keys and size limits of its refinements, and the message of an object
//! that lacks attributes (also the JSON codec's).

use std::collections::BTreeMap;

/// Extension code of an unknown value that carries refinements.
pub(super) const REFINED_UNKNOWN_EXT: i8 = 12;
/// cty refuses refinement payloads above this size.
pub(super) const MAX_REFINEMENT_PAYLOAD: usize = 1024;
/// Longest string prefix written into a refinement (cty keeps prefixes short as well).
pub(super) const MAX_PREFIX_BYTES: usize = 256;
/// Longest encoded number bound written into a refinement; longer bounds are left out.
pub(super) const MAX_BOUND_BYTES: usize = 400;

pub(super) const REFINE_NULLNESS: i64 = 1;
pub(super) const REFINE_STRING_PREFIX: i64 = 2;
pub(super) const REFINE_NUMBER_LOWER: i64 = 3;
pub(super) const REFINE_NUMBER_UPPER: i64 = 4;
pub(super) const REFINE_LENGTH_LOWER: i64 = 5;
pub(super) const REFINE_LENGTH_UPPER: i64 = 6;

/// "object is missing attribute "a"" / "… attributes "a", "b"".
pub(crate) fn missing_message<T, U>(attrs: &BTreeMap<String, T>, have: &BTreeMap<String, U>) -> String {
    let missing: Vec<String> = attrs
        .keys()
        .filter(|k| !have.contains_key(*k))
        .map(|k| format!("{k:?}"))
        .collect();
    format!(
        "object is missing attribute{} {} (every attribute of the type must be present, null if unset)",
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", ")
    )
}
