//! Kubernetes object names (DNS subdomains) and qualified names (requirement and taint keys).

use regex::Regex;

use super::values::Pattern;
use crate::terraform::framework::validate::{self as v, Validator};

/// Qualified name, optionally with a DNS prefix (`example.com/name`), as the CRDs write it.
pub const QUALIFIED_NAME: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";

/// DNS subdomain (RFC 1123), the rule for Kubernetes object names.
pub const DNS_SUBDOMAIN: &str = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

pub(super) static QUALIFIED_NAME_RE: Pattern = Pattern::new(|| Regex::new(QUALIFIED_NAME).ok());

static DNS_SUBDOMAIN_RE: Pattern = Pattern::new(|| Regex::new(DNS_SUBDOMAIN).ok());

/// A Kubernetes object name: a DNS subdomain of at most 253 characters.
pub fn object_name() -> impl Validator {
    v::check(
        "Must be a Kubernetes object name: at most 253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit.",
        |value| {
            let s = value.as_str()?;
            (!is_dns_subdomain(s)).then(|| {
                format!(
                    "{s:?} is not a valid Kubernetes object name: use at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (e.g. \"default\")."
                )
            })
        },
    )
}

pub(super) fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && DNS_SUBDOMAIN_RE.is_match(s)
}

/// A qualified name (the CRD pattern for requirement and taint keys).
pub fn qualified_name(what: &'static str) -> impl Validator {
    v::check(
        format!(
            "Must be {what}: an optional DNS prefix and `/`, then letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit."
        ),
        move |value| {
            let s = value.as_str()?;
            (!QUALIFIED_NAME_RE.is_match(s)).then(|| {
                format!(
                    "{s:?} is not {what}: use an optional DNS prefix and '/', then letters, digits, '-', '_' or '.', starting and ending with a letter or digit (e.g. \"example.com/gpu\")."
                )
            })
        },
    )
}
