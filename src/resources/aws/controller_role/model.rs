//! What the controller role should be and what it is: the policy inputs and trust policy a value
//! asks for, the documents they give (in canonical form, with their size limits), and the state of
//! what exists.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use super::schema::POD_IDENTITY_PRINCIPAL;
use super::schema::{ADDITIONAL_INLINE, INLINE_POLICY, TYPE_NAME, parse_oidc_provider};
use crate::policy::PolicyDocument;
use crate::policy::arn::Arn;
use crate::policy::controller::{ControllerPolicyInputs, policy_document, policy_groups};
use crate::policy::releases::{self, Release};
use crate::resources::aws::iam_role;
use crate::resources::aws::iam_role::{Actual, Desired, OwnedPolicy};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

/// The upstream groups of every Karpenter release the provider knows, one managed policy each
/// (`<role name>-<group>`): `NodeLifecycle`, `IAMIntegration`, …, and `Controller` (the one
/// policy of v1.0–v1.8). All of them are the resource's own whatever `karpenter_version` says,
/// so a change of version removes the groups the new one does not have.
pub fn groups() -> Vec<&'static str> {
    releases::all_group_names()
}
/// IAM's limit on one managed policy document.
pub const MANAGED_POLICY_LIMIT: usize = 6144;
/// IAM's limit on all inline policies of a role together.
pub const INLINE_POLICY_LIMIT: usize = 10240;

/// The release `karpenter_version` names (the newest when unset); None while it is unknown or
/// names no release the provider knows (validation says so).
pub(super) fn release_of(value: &Value) -> Option<&'static Release> {
    match value.get("karpenter_version") {
        Some(v) if v.is_unknown() => None,
        Some(v) => match v.as_str() {
            Some(version) => releases::release(version).ok(),
            None => Some(releases::newest()),
        },
        None => Some(releases::newest()),
    }
}

/// The policy inputs of a (planned, prior or imported) value, when all are known.
pub(super) fn inputs(value: &Value) -> Option<ControllerPolicyInputs> {
    let node_role_arn = get_str(value, "node_role_arn")?;
    let role = Arn::parse_role(node_role_arn).ok()?;
    let queue = value.get("interruption_queue_arn")?;
    if queue.is_unknown() {
        return None;
    }
    let account = match value.get("account_id") {
        Some(a) if a.is_unknown() => return None,
        Some(a) => a.as_str().map(str::to_string).unwrap_or(role.account.clone()),
        None => role.account.clone(),
    };
    Some(ControllerPolicyInputs {
        cluster_name: get_str(value, "cluster_name")?.to_string(),
        partition: role.partition,
        region: get_str(value, "region")?.to_string(),
        account_id: account,
        node_role_arn: node_role_arn.to_string(),
        interruption_queue_arn: queue.as_str().map(str::to_string),
        release: release_of(value)?,
    })
}

/// The trust policy for the configured IRSA and Pod Identity settings (None while unknown).
pub(super) fn trust_policy(value: &Value) -> Option<Json> {
    let mut statements = Vec::new();
    let irsa = value.get("irsa")?;
    if irsa.is_unknown() {
        return None;
    }
    if !irsa.is_null() {
        let provider = get_str(irsa, "oidc_provider_arn")?;
        let (_, issuer) = parse_oidc_provider(provider).ok()?;
        let subject = format!(
            "system:serviceaccount:{}:{}",
            get_str(irsa, "namespace")?,
            get_str(irsa, "service_account")?
        );
        statements.push(json!({
            "Effect": "Allow",
            "Principal": {"Federated": provider},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {
                format!("{issuer}:aud"): "sts.amazonaws.com",
                format!("{issuer}:sub"): subject,
            }},
        }));
    }
    if value.get("pod_identity")?.as_bool()? {
        statements.push(json!({
            "Effect": "Allow",
            "Principal": {"Service": POD_IDENTITY_PRINCIPAL},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }));
    }
    Some(json!({"Version": "2012-10-17", "Statement": statements}))
}

pub(super) fn managed(value: &Value) -> bool {
    get_str(value, "policy_attachment") == Some("managed")
}

/// `policy_attachment = "none"`: the provider writes no permissions; the role has what
/// `additional_policy_arns` attaches (a role whose policies someone else manages, such as
/// terraform-aws-eks's Karpenter module's).
pub(super) fn unmanaged(value: &Value) -> bool {
    get_str(value, "policy_attachment") == Some("none")
}

pub(super) fn group_arn(partition: &str, account: &str, path: &str, role: &str, group: &str) -> String {
    format!("arn:{partition}:iam::{account}:policy{path}{role}-{group}")
}

/// Every owned policy ARN this role could have (all groups).
pub(super) fn all_group_arns(role_arn: &str, path: &str, role: &str) -> Vec<String> {
    let (p, a) = iam_role::partition_and_account(role_arn).unwrap_or_default();
    groups()
        .iter()
        .map(|g| group_arn(&p, &a, path, role, g))
        .collect()
}

/// The release whose policy `doc` is, for an import: the newest whose statements for the
/// inputs of `value` are equivalent to `doc`'s; the newest release when none is (the plan after
/// the import then shows what differs).
pub(super) fn version_of(value: &Value, doc: &Json) -> &'static str {
    let Some(i) = inputs(value) else {
        return releases::newest().version;
    };
    releases::RELEASES
        .iter()
        .rev()
        .find(|r| {
            let ours = ControllerPolicyInputs {
                release: r,
                ..i.clone()
            };
            serde_json::from_str::<Json>(&policy_document(&ours).to_json())
                .is_ok_and(|d| crate::policy::equivalence::equivalent(&d, doc))
        })
        .unwrap_or(releases::newest())
        .version
}

/// The full document in canonical form.
pub(super) fn expected_policy(i: &ControllerPolicyInputs) -> String {
    canonical_of(&policy_document(i))
}

pub(super) fn canonical_of(doc: &PolicyDocument) -> String {
    iam_role::canonical_text(&doc.to_json()).unwrap_or_default()
}

/// The plan-time checks on document sizes; an error names `policy_attachment`.
pub(super) fn check_sizes(i: &ControllerPolicyInputs, managed: bool, diags: &mut Diagnostics) {
    let path = AttributePath::root().attr("policy_attachment");
    if managed {
        for g in policy_groups(i) {
            let len = PolicyDocument {
                statements: g.statements,
            }
            .to_json()
            .len();
            if len > MANAGED_POLICY_LIMIT {
                diags.error_at(&path, "Managed policy too large", format!("The {} statements take {len} characters, more than IAM's {MANAGED_POLICY_LIMIT} for one managed policy (a very long cluster name or ARN makes them grow). Use policy_attachment = \"inline\".", g.name));
            }
        }
    } else {
        let len = policy_document(i).to_json().len();
        if len > INLINE_POLICY_LIMIT {
            diags.error_at(&path, "Inline policy too large", format!("The controller policy takes {len} characters, more than IAM's {INLINE_POLICY_LIMIT} for a role's inline policies. Use policy_attachment = \"managed\", which splits it into one policy per group."));
        }
    }
}

/// What the role should be, given what exists (`have`) and the role's ARN (known once created);
/// `tags` is what every part carries (`tags_all`).
pub(super) fn desired(
    planned: &Value,
    name: &str,
    role_arn: &str,
    have: Option<&Actual>,
    tags: BTreeMap<String, String>,
) -> Result<Desired, Diagnostics> {
    let missing = || {
        Diagnostics::from_error(
            "Controller role inputs are not known",
            "cluster_name, region, node_role_arn, interruption_queue_arn and irsa must be known to apply the role.",
        )
    };
    let i = inputs(planned).ok_or_else(missing)?;
    let trust = trust_policy(planned).ok_or_else(missing)?;
    let path = get_str(planned, "path").unwrap_or("/").to_string();
    let (p, a) = iam_role::partition_and_account(role_arn).unwrap_or_default();
    let all = all_group_arns(role_arn, &path, name);
    let (mut inline, owned, stale_inline) = if unmanaged(planned) {
        (Vec::new(), Vec::new(), vec![INLINE_POLICY.to_string()])
    } else if managed(planned) {
        let owned = policy_groups(&i)
            .into_iter()
            .map(|g| OwnedPolicy {
                arn: group_arn(&p, &a, &path, name, g.name),
                name: format!("{name}-{}", g.name),
                document: PolicyDocument {
                    statements: g.statements,
                }
                .to_json(),
            })
            .collect::<Vec<_>>();
        (Vec::new(), owned, vec![INLINE_POLICY.to_string()])
    } else {
        (
            vec![(INLINE_POLICY.to_string(), policy_document(&i).to_json())],
            Vec::new(),
            Vec::new(),
        )
    };
    inline.extend(iam_role::string_map_of(planned, ADDITIONAL_INLINE));
    let stale_owned = all
        .into_iter()
        .filter(|arn| !owned.iter().any(|o| o.arn == *arn))
        .filter(|arn| have.is_some_and(|h| h.owned.contains_key(arn)))
        .collect();
    Ok(Desired {
        resource_type: TYPE_NAME,
        name: name.to_string(),
        path,
        description: Some("Karpenter controller role (managed by Terraform)".to_string()),
        trust,
        permissions_boundary: get_str(planned, "permissions_boundary").map(str::to_string),
        tags,
        attached: iam_role::string_set_of(planned, "additional_policy_arns"),
        inline,
        owned,
        stale_owned,
        stale_inline,
        instance_profile: None,
        stale_profile: None,
    })
}

/// The permissions in force, merged into one canonical document (None when there are none).
pub(super) fn policy_in_force(base: &Value, actual: &Actual, all: &[String]) -> Option<String> {
    if unmanaged(base) {
        None
    } else if managed(base) {
        let statements: Vec<Json> = all
            .iter()
            .filter_map(|arn| actual.owned.get(arn))
            .flat_map(|doc| doc["Statement"].as_array().cloned().unwrap_or_default())
            .collect();
        (!statements.is_empty())
            .then(|| iam_role::canonical(&json!({"Version": "2012-10-17", "Statement": statements})))
    } else {
        actual.inline.get(INLINE_POLICY).map(iam_role::canonical)
    }
}

/// The state for what exists; `defaults` are the provider's default tags (to tell `tags` from
/// `tags_all`).
pub(super) fn state(base: &Value, actual: &Actual, defaults: &BTreeMap<String, String>) -> Value {
    let all = all_group_arns(&actual.role.arn, &actual.role.path, &actual.role.name);
    let managed_arns: Vec<&String> = all
        .iter()
        .filter(|a| actual.owned.contains_key(*a) && actual.attached.contains(*a))
        .collect();
    let partition = iam_role::partition_and_account(&actual.role.arn).map(|(p, _)| p);
    let mut fields = iam_role::common_state(
        base,
        actual,
        defaults,
        partition.map(Value::string).unwrap_or(Value::Null),
        &all,
        &managed_arns,
    );
    let policy = policy_in_force(base, actual, &all);
    let mut set = |k: &str, v: Value| {
        fields.insert(k.to_string(), v);
    };
    set("policy", policy.map(Value::string).unwrap_or(Value::Null));
    let (additional_inline, others) = additional_inline(base, actual);
    set(ADDITIONAL_INLINE, additional_inline);
    set(
        iam_role::UNMANAGED_INLINE,
        Value::Set(others.into_iter().map(Value::string).collect()),
    );
    if base.get("account_id").is_none_or(Value::is_null)
        && let Some(i) = inputs(base)
    {
        set("account_id", Value::string(i.account_id));
    }
    Value::Object(fields)
}

/// `additional_inline_policies` for state, from the inline policies that exist: each one `base`
/// names, with `base`'s text while the document is the same (so the configuration's spelling,
/// e.g. `jsonencode`'s, stays); and the names of the inline policies that are neither those nor
/// this resource's own (`unmanaged_inline_policies`).
pub(super) fn additional_inline(base: &Value, actual: &Actual) -> (Value, Vec<String>) {
    let named = iam_role::string_map_of(base, ADDITIONAL_INLINE);
    let own = (!managed(base) && !unmanaged(base)).then_some(INLINE_POLICY);
    let mut kept = BTreeMap::new();
    let mut others = Vec::new();
    for name in &actual.inline_names {
        if Some(name.as_str()) == own {
            continue;
        }
        let Some(text) = named.get(name) else {
            others.push(name.clone());
            continue;
        };
        let Some(doc) = actual.inline.get(name) else {
            continue;
        };
        let same = serde_json::from_str::<Json>(text).is_ok_and(|t| t == *doc);
        kept.insert(
            name.clone(),
            if same {
                text.clone()
            } else {
                iam_role::canonical(doc)
            },
        );
    }
    (iam_role::map_value(&kept, base.get(ADDITIONAL_INLINE)), others)
}
