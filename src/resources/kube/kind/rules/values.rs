//! Reading known values in the rules (an attribute set, a whole number, a list's elements), the
//! one diagnostic every rule reports, the compiled patterns, and the rules of whole lists and maps
//! (no duplicates, AWS tag selectors).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{AttributePath, Value};

/// One of this module's constant patterns, compiled once. They are constants, so a failure is a
/// provider bug: the pattern then matches nothing (every value is rejected, visibly) and the
/// `patterns_compile` test catches it.
pub(super) struct Pattern(pub(super) LazyLock<Option<Regex>>);

impl Pattern {
    pub(super) const fn new(f: fn() -> Option<Regex>) -> Self {
        Self(LazyLock::new(f))
    }
    pub(super) fn is_match(&self, s: &str) -> bool {
        self.0.as_ref().is_some_and(|r| r.is_match(s))
    }
}

/// Whether an attribute of an object is set: `Some(true)` when known and not null,
/// `Some(false)` when null or absent, `None` when it (or the object) is not known yet.
pub fn has(object: &Value, name: &str) -> Option<bool> {
    if object.is_unknown() {
        return None;
    }
    match object.get(name) {
        None => Some(false),
        Some(v) if v.is_unknown() => None,
        Some(v) => Some(!v.is_null()),
    }
}

/// A known whole number attribute.
pub fn int_of(object: &Value, name: &str) -> Option<i64> {
    object
        .get(name)
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
}

/// The known elements of a list (empty when the list is null or unknown).
pub fn elements(value: &Value) -> &[Value] {
    value.as_elements().unwrap_or_default()
}

/// An error on the attribute at `path`: the diagnostic of every rule here.
pub fn invalid(diags: &mut Diagnostics, path: &AttributePath, detail: impl Into<String>) {
    diags.error_at(path, "Invalid attribute value", detail);
}

/// No element appears twice (the CRD's list-type `set`).
pub fn unique() -> impl Validator {
    v::rule("Elements must be unique.", |value, path, diags| {
        let mut seen = BTreeSet::new();
        for (i, e) in elements(value).iter().enumerate() {
            if let Some(s) = e.as_str()
                && !seen.insert(s)
            {
                invalid(
                    diags,
                    &path.index(i),
                    format!("{s:?} is listed twice; list each value once."),
                );
            }
        }
    })
}

/// Map keys and values must not be empty; at most 20 entries (AWS tag selectors).
pub fn selector_tags() -> impl Validator {
    v::rule(
        "At most 20 tags; keys and values must not be empty.",
        |value, path, diags| {
            let Some(entries) = value.as_entries() else { return };
            if entries.len() > 20 {
                invalid(
                    diags,
                    path,
                    format!(
                        "{} tags given: a selector term may match on at most 20 tags.",
                        entries.len()
                    ),
                );
            }
            for (k, val) in entries {
                if k.is_empty() {
                    invalid(diags, &path.key(k.clone()), "Tag keys must not be empty.");
                } else if val.as_str() == Some("") {
                    invalid(
                        diags,
                        &path.key(k.clone()),
                        format!(
                            "The tag {k:?} has an empty value; empty tag values are not supported (use \"*\" to match any value)."
                        ),
                    );
                }
            }
        },
    )
}
