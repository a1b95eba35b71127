//! Policy documents as both roles keep them: one canonical text (keys sorted, compact), so a
//! formatting difference never shows as drift; whether a wanted document is the one IAM holds;
//! the trust policy to plan.

use serde_json::Value as Json;

use crate::policy::equivalence;

/// The canonical text of a document: sorted keys, no whitespace.
pub fn canonical(doc: &Json) -> String {
    // serde_json's map is ordered by key (no `preserve_order`), so this is canonical.
    doc.to_string()
}

/// Parses a document and returns its canonical text (None when it is not JSON).
pub fn canonical_text(text: &str) -> Option<String> {
    serde_json::from_str::<Json>(text).ok().map(|d| canonical(&d))
}

pub(super) fn same_doc(text: &str, actual: Option<&Json>) -> bool {
    match (serde_json::from_str::<Json>(text), actual) {
        (Ok(want), Some(have)) => want == *have,
        _ => false,
    }
}

/// The trust policy text to plan: `prior`'s (what exists, as read) when it admits exactly what
/// `wanted` admits, so a trust policy written with other statement IDs or in another order (a
/// module's, an import's) is kept as it is rather than rewritten; else `wanted`'s.
pub fn planned_trust(prior: Option<&str>, wanted: &Json) -> String {
    match prior.and_then(|p| serde_json::from_str::<Json>(p).ok()) {
        Some(have) if equivalence::equivalent(&have, wanted) => canonical(&have),
        _ => canonical(wanted),
    }
}
