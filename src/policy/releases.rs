//! The Karpenter releases the provider knows the controller policy of: each release's
//! reference statements (its getting-started CloudFormation template's managed policies,
//! placeholders in), committed as `data/karpenter/controller-policy/<minor>.tsv` and compiled
//! in by `build/controller_policy.rs`; and `karpenter_version`, which names one of them.

use thiserror::Error;

/// One release's controller policy, as its template writes it.
#[derive(Debug, PartialEq, Eq)]
pub struct Release {
    /// `v1.14`.
    pub version: &'static str,
    pub major: u32,
    pub minor: u32,
    /// Set when the release's template was not at hand and its data is an earlier release's
    /// with the change its documentation describes (the data file's header says which).
    pub derived_from: Option<&'static str>,
    /// The managed policies, in the template's order.
    pub groups: &'static [GroupTemplate],
}

/// One managed policy of the template.
#[derive(Debug, PartialEq, Eq)]
pub struct GroupTemplate {
    /// Our name for it, the suffix of the provider's managed policy (`NodeLifecycle`;
    /// `Controller` for the single policy of v1.0–v1.8).
    pub name: &'static str,
    /// The template's logical ID (`NodeLifecyclePolicy`).
    pub logical_id: &'static str,
    /// The template's `ManagedPolicyName`.
    pub policy_name: &'static str,
    pub statements: &'static [StatementTemplate],
}

/// One statement, placeholders in.
#[derive(Debug, PartialEq, Eq)]
pub struct StatementTemplate {
    pub sid: &'static str,
    pub effect: &'static str,
    pub actions: &'static [&'static str],
    pub resources: &'static [&'static str],
    pub conditions: &'static [ConditionTemplate],
}

/// One condition key of a statement and the values it matches.
#[derive(Debug, PartialEq, Eq)]
pub struct ConditionTemplate {
    pub test: &'static str,
    pub key: &'static str,
    pub values: &'static [&'static str],
}

include!(concat!(env!("OUT_DIR"), "/controller_policies.rs"));

/// The newest release the provider knows (the default of `karpenter_version` for new objects).
pub fn newest() -> &'static Release {
    // The build refuses an empty data directory, so there is always one.
    &RELEASES[RELEASES.len() - 1]
}

/// The versions the provider knows, `v1.0, v1.1, …`, for messages.
pub fn known_versions() -> String {
    RELEASES.iter().map(|r| r.version).collect::<Vec<_>>().join(", ")
}

/// Every managed policy name any release uses, in first-seen order (the provider's policies of
/// a role under any version, so none is left behind when the version changes).
pub fn all_group_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for g in RELEASES.iter().rev().flat_map(|r| r.groups) {
        if !names.contains(&g.name) {
            names.push(g.name);
        }
    }
    names
}

/// Why a `karpenter_version` names no release.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VersionError {
    #[error(
        "{0:?} is not a Karpenter version: write the release as v<major>.<minor>, e.g. \"{newest}\" (\"{bare}\" and \"{newest}.0\" say the same).",
        newest = newest().version,
        bare = newest().version.trim_start_matches('v')
    )]
    Malformed(String),
    #[error(
        "This provider does not know the controller policy of Karpenter {0}. It knows {known}: use one of \
         them, or a newer provider that knows {0}; for a release it does not know, set policy_attachment = \
         \"none\" and attach that release's policy yourself.",
        known = known_versions()
    )]
    Unknown(String),
}

/// The release `version` names: `v1.15`, `1.15` and `v1.15.1` all name v1.15 (a patch release
/// has its minor's policy).
pub fn release(version: &str) -> Result<&'static Release, VersionError> {
    let malformed = || VersionError::Malformed(version.to_string());
    let digits = version.strip_prefix('v').unwrap_or(version);
    let parts: Vec<&str> = digits.split('.').collect();
    let numbers: Vec<u32> = parts
        .iter()
        .map(|p| {
            (!p.is_empty() && p.len() <= 6 && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(malformed)?;
    let [major, minor, ..] = numbers[..] else {
        return Err(malformed());
    };
    if numbers.len() > 3 {
        return Err(malformed());
    }
    RELEASES
        .iter()
        .find(|r| r.major == major && r.minor == minor)
        .ok_or_else(|| VersionError::Unknown(format!("v{major}.{minor}")))
}
