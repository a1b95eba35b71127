//! A role as a resource wants it ([`Desired`], with the managed policies it owns) and as IAM
//! holds it ([`Actual`]), and what a read covers besides the role ([`ReadScope`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use crate::aws::iam::{ProfileInfo, RoleInfo};

/// A customer managed policy the resource owns (controller role, managed attachment).
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedPolicy {
    pub arn: String,
    pub name: String,
    pub document: String,
}

/// Everything the role should be.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    /// The Terraform resource type, written as the ownership tag on every part created.
    pub resource_type: &'static str,
    pub name: String,
    pub path: String,
    pub description: Option<String>,
    pub trust: Json,
    pub permissions_boundary: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// Policies attached but not owned (AWS managed ones, `additional_policy_arns`).
    pub attached: BTreeSet<String>,
    /// Name and document of each inline policy the resource writes (the controller's own, and
    /// the ones of `additional_inline_policies`).
    pub inline: Vec<(String, String)>,
    /// Owned managed policies: created, kept up to date, attached.
    pub owned: Vec<OwnedPolicy>,
    /// Owned managed policies that may exist from an earlier configuration and must go.
    pub stale_owned: Vec<String>,
    /// Inline policy names the resource owns but no longer wants.
    pub stale_inline: Vec<String>,
    /// An instance profile of this name, holding the role.
    pub instance_profile: Option<String>,
    /// A profile the resource created earlier that is no longer wanted.
    pub stale_profile: Option<String>,
}

/// What exists.
#[derive(Debug, Clone, PartialEq)]
pub struct Actual {
    pub role: RoleInfo,
    /// The user's tags (the ownership tag left out).
    pub tags: BTreeMap<String, String>,
    /// The ownership tag's value, when the role has it.
    pub owner: Option<String>,
    pub attached: BTreeSet<String>,
    pub inline_names: Vec<String>,
    /// Documents of the inline policies asked for, by name.
    pub inline: BTreeMap<String, Json>,
    /// Documents of the owned managed policies asked for, by ARN (absent: does not exist).
    pub owned: BTreeMap<String, Json>,
    /// Tags of those policies (the ownership tag included), by ARN.
    pub owned_tags: BTreeMap<String, BTreeMap<String, String>>,
    /// The instance profile asked for, when it exists.
    pub profile: Option<ProfileInfo>,
}

/// What to read besides the role itself.
#[derive(Debug, Clone, Default)]
pub struct ReadScope<'a> {
    pub inline: &'a [String],
    /// Read the document of every inline policy the role has, not only those of `inline`.
    pub every_inline: bool,
    pub owned_arns: &'a [String],
    pub profile: Option<&'a str>,
}
