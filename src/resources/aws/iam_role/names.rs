//! Role names: the longest `name_prefix`, a unique name made from a prefix, and the choice
//! between `name` and `name_prefix`.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

/// Longest `name_prefix`: a generated suffix takes 26 of a role name's 64 characters.
pub const MAX_PREFIX: usize = 38;

/// A role name made from a prefix: the prefix and 26 digits (time and a process counter).
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed) % 100_000_000;
    format!("{prefix}{:018}{n:08}", nanos % 1_000_000_000_000_000_000)
}

/// The role name to create: `name`, or a unique name from `name_prefix` (or the default prefix).
pub fn resolve_name(planned: &Value, default_prefix: &str) -> String {
    match get_str(planned, "name") {
        Some(n) => n.to_string(),
        None => unique_name(get_str(planned, "name_prefix").unwrap_or(default_prefix)),
    }
}

/// `name` and `name_prefix` together is an error.
pub fn validate_names(config: &Value, diags: &mut Diagnostics) {
    let set = |n: &str| config.get(n).is_some_and(|v| !v.is_null());
    if set("name") && set("name_prefix") {
        diags.error_at(
            &AttributePath::root().attr("name_prefix"),
            "Conflicting attributes",
            "Set either name or name_prefix, not both.",
        );
    }
}
