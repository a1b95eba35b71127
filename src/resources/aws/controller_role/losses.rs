//! The safety net of `karpenter_controller_role`'s plan: a warning, on the attribute that
//! causes it, for every way into the role and every permission of the role that the apply would
//! take away — a service account's IRSA subject, EKS Pod Identity, an attached policy, a
//! statement of the permissions this resource writes, an inline policy — naming what goes and
//! who loses access. Whatever configuration leads there (a forgotten `irsa.namespace` after an
//! import, a policy left out of `additional_policy_arns`), the plan says so before the apply
//! locks the controller out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::model::trust_policy;
use super::schema::{ADDITIONAL_INLINE, POD_IDENTITY_PRINCIPAL, parse_oidc_provider};
use crate::policy::equivalence::{normal_statement, statements, values_of};
use crate::resources::aws::iam_role::{self, UNMANAGED_INLINE};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

/// One way into the role that a trust policy gives.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Principal {
    /// An AWS service principal, such as `pods.eks.amazonaws.com`.
    Service(String),
    /// A Kubernetes service account through an OIDC provider (IRSA): the `sub` condition's value.
    ServiceAccount { provider: String, subject: String },
    /// Anything else an Allow statement admits (an AWS principal, a provider without a `sub`).
    Other(String),
}

/// The principals the Allow statements of `trust` admit.
pub(super) fn principals(trust: &Json) -> BTreeSet<Principal> {
    let mut out = BTreeSet::new();
    for st in statements(trust).unwrap_or_default() {
        if st.get("Effect").and_then(Json::as_str) != Some("Allow") {
            continue;
        }
        let principal = st.get("Principal");
        if principal.and_then(Json::as_str) == Some("*") {
            out.insert(Principal::Other("everyone (\"*\")".to_string()));
            continue;
        }
        for service in values_of(principal.and_then(|p| p.get("Service"))) {
            out.insert(Principal::Service(service));
        }
        for aws in values_of(principal.and_then(|p| p.get("AWS"))) {
            out.insert(Principal::Other(aws));
        }
        for provider in values_of(principal.and_then(|p| p.get("Federated"))) {
            let subjects =
                parse_oidc_provider(&provider)
                    .ok()
                    .map(|(_, issuer)| {
                        ["StringEquals", "StringLike"]
                            .iter()
                            .flat_map(|test| {
                                values_of(st.pointer(&format!(
                                    "/Condition/{test}/{}",
                                    escape(&format!("{issuer}:sub"))
                                )))
                            })
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default();
            if subjects.is_empty() {
                out.insert(Principal::Other(format!("every identity of {provider}")));
            }
            for subject in subjects {
                out.insert(Principal::ServiceAccount {
                    provider: provider.clone(),
                    subject,
                });
            }
        }
    }
    out
}

/// `s` as one JSON pointer token.
fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The warnings for `planned` against `prior` (none on create, destroy, or while what they
/// compare is unknown).
pub(super) fn warn(prior: &Value, planned: &Value, diags: &mut Diagnostics) {
    if prior.is_null() || planned.is_null() {
        return;
    }
    trust_losses(prior, planned, diags);
    attached_losses(prior, planned, diags);
    statement_losses(prior, planned, diags);
    inline_losses(prior, planned, diags);
}

fn trust_losses(prior: &Value, planned: &Value, diags: &mut Diagnostics) {
    let Some(before) =
        get_str(prior, "assume_role_policy").and_then(|t| serde_json::from_str::<Json>(t).ok())
    else {
        return;
    };
    let Some(after) = trust_policy(planned) else {
        return;
    };
    let kept = principals(&after);
    let root = AttributePath::root();
    for lost in principals(&before).difference(&kept) {
        let (path, detail) = match lost {
            Principal::Service(s) if s == POD_IDENTITY_PRINCIPAL => (
                root.attr("pod_identity"),
                format!(
                    "The role's trust policy would no longer admit EKS Pod Identity ({s}). Pods that get this role \
                     through a Pod Identity association — the Karpenter controller, if that is how it gets its \
                     credentials — could no longer assume it after this apply. Set pod_identity = true to keep it."
                ),
            ),
            Principal::ServiceAccount { provider, subject } => {
                let (ns, sa) = subject
                    .strip_prefix("system:serviceaccount:")
                    .and_then(|s| s.split_once(':'))
                    .unwrap_or(("?", subject.as_str()));
                (
                    irsa_cause(planned, provider, ns),
                    format!(
                        "The role's trust policy would no longer admit the service account {ns}/{sa} (IRSA subject \
                         {subject:?}) through the OIDC provider {provider}. Pods running as that service account — \
                         the Karpenter controller, if it runs as {ns}/{sa} — could no longer assume the role after \
                         this apply. To keep it, set irsa = {{ oidc_provider_arn = {provider:?}, namespace = {ns:?}, \
                         service_account = {sa:?} }}."
                    ),
                )
            }
            Principal::Service(s) | Principal::Other(s) => (
                root.attr("assume_role_policy"),
                format!(
                    "The role's trust policy would no longer admit {s}: whatever assumes the role as it could no \
                     longer do so after this apply. karpenter_controller_role writes a trust policy for `irsa` and \
                     `pod_identity` only."
                ),
            ),
        };
        diags.warning_at(
            &path,
            "The controller role would lose a trusted principal",
            detail,
        );
    }
}

/// The attribute whose value drops the IRSA subject of `ns` through `provider`.
fn irsa_cause(planned: &Value, provider: &str, ns: &str) -> AttributePath {
    let irsa = AttributePath::root().attr("irsa");
    let Some(now) = planned.get("irsa").filter(|i| !i.is_null()) else {
        return irsa;
    };
    if get_str(now, "oidc_provider_arn") != Some(provider) {
        irsa.attr("oidc_provider_arn")
    } else if get_str(now, "namespace") != Some(ns) {
        irsa.attr("namespace")
    } else {
        irsa.attr("service_account")
    }
}

fn attached_losses(prior: &Value, planned: &Value, diags: &mut Diagnostics) {
    let path = AttributePath::root().attr("additional_policy_arns");
    if !planned
        .get("additional_policy_arns")
        .is_none_or(Value::is_wholly_known)
    {
        return;
    }
    let now = iam_role::string_set_of(planned, "additional_policy_arns");
    for arn in iam_role::string_set_of(prior, "additional_policy_arns").difference(&now) {
        diags.warning_at(
            &path,
            "The controller role would lose a policy",
            format!(
                "This apply detaches {arn} from the role: whatever runs as the role (the Karpenter controller) loses \
                 every permission that policy grants and no other policy of the role does. Keep it in \
                 additional_policy_arns if it is still needed (the migration guide lists what the provider's own \
                 permissions leave out of terraform-aws-eks's controller policy)."
            ),
        );
    }
}

/// The statements of the permissions this resource writes (`policy`).
fn policy_statements(value: &Value) -> Option<Vec<Json>> {
    let doc: Json = serde_json::from_str(get_str(value, "policy")?).ok()?;
    Some(statements(&doc).unwrap_or_default())
}

/// Whether `after` grants all `before` does: the same statement, or the same but for more
/// actions (a newer release's statement that adds one, e.g. v1.15's `ec2:RebootInstances`).
fn covers(after: &Json, before: &Json) -> bool {
    if normal_statement(after) == normal_statement(before) {
        return true;
    }
    let without_actions = |st: &Json| {
        let mut st = st.clone();
        if let Some(fields) = st.as_object_mut() {
            fields.remove("Action");
        }
        normal_statement(&st)
    };
    let actions = |st: &Json| {
        values_of(st.get("Action"))
            .into_iter()
            .collect::<BTreeSet<String>>()
    };
    without_actions(after) == without_actions(before) && actions(after).is_superset(&actions(before))
}

/// Each statement of `doc` by its normal form, with a description for messages.
fn described(doc: &Json) -> BTreeMap<String, String> {
    statements(doc)
        .unwrap_or_default()
        .iter()
        .map(|st| (normal_statement(st), describe(st)))
        .collect()
}

fn describe(st: &Json) -> String {
    let sid = st.get("Sid").and_then(Json::as_str).filter(|s| !s.is_empty());
    let actions = values_of(st.get("Action")).join(", ");
    let resources = values_of(st.get("Resource")).join(", ");
    match sid {
        Some(sid) => format!("{sid} ({actions} on {resources})"),
        None => format!("{actions} on {resources}"),
    }
}

/// The inputs of the permissions, in the order a message names the one that changed.
const POLICY_INPUTS: &[&str] = &[
    "policy_attachment",
    "karpenter_version",
    "cluster_name",
    "node_role_arn",
    "interruption_queue_arn",
    "region",
    "account_id",
];

fn statement_losses(prior: &Value, planned: &Value, diags: &mut Diagnostics) {
    let Some(before) = policy_statements(prior) else {
        return;
    };
    let after = match planned.get("policy") {
        Some(Value::Null) | None => Vec::new(),
        Some(v) if v.is_unknown() => return,
        Some(_) => match policy_statements(planned) {
            Some(a) => a,
            None => return,
        },
    };
    let lost: Vec<String> = before
        .iter()
        .filter(|b| !after.iter().any(|a| covers(a, b)))
        .map(describe)
        .collect();
    if lost.is_empty() {
        return;
    }
    let cause = POLICY_INPUTS
        .iter()
        .find(|a| prior.get(a) != planned.get(a))
        .copied()
        .unwrap_or("policy");
    diags.warning_at(
        &AttributePath::root().attr(cause),
        "The controller role would lose permissions",
        format!(
            "After this apply the permissions this resource writes no longer hold these statements as they are \
             today: {}. Whatever runs as the role (the Karpenter controller) loses what they grant, unless another \
             policy of the role grants it.",
            lost.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")
        ),
    );
}

fn inline_losses(prior: &Value, planned: &Value, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    let Some(now) = planned.get(ADDITIONAL_INLINE) else {
        return;
    };
    if !now.is_wholly_known() {
        return;
    }
    let now = iam_role::string_map_of(planned, ADDITIONAL_INLINE);
    for (name, text) in iam_role::string_map_of(prior, ADDITIONAL_INLINE) {
        let before = serde_json::from_str::<Json>(&text)
            .map(|d| described(&d))
            .unwrap_or_default();
        let (path, lost): (AttributePath, Vec<String>) = match now.get(&name) {
            None => (root.attr(ADDITIONAL_INLINE), before.into_values().collect()),
            Some(after) => {
                let after = serde_json::from_str::<Json>(after)
                    .map(|d| described(&d))
                    .unwrap_or_default();
                (
                    root.attr(ADDITIONAL_INLINE).key(name.clone()),
                    before
                        .into_iter()
                        .filter(|(k, _)| !after.contains_key(k))
                        .map(|(_, d)| d)
                        .collect(),
                )
            }
        };
        if lost.is_empty() {
            continue;
        }
        diags.warning_at(
            &path,
            "The controller role would lose permissions",
            format!(
                "After this apply the role's inline policy {name:?} no longer holds: {}. Whatever runs as the role \
                 (the Karpenter controller) loses what they grant, unless another policy of the role grants it.",
                lost.join("; ")
            ),
        );
    }
    for name in iam_role::string_set_of(prior, UNMANAGED_INLINE) {
        diags.warning_at(
            &root.attr(UNMANAGED_INLINE),
            "The controller role would lose an inline policy",
            format!(
                "This apply deletes the inline policy {name:?}, which was added to the role outside Terraform: \
                 whatever runs as the role (the Karpenter controller) loses what it grants. To keep it, add it to \
                 {}.",
                ADDITIONAL_INLINE
            ),
        );
    }
}
