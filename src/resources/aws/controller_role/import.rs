//! Import of `karpenter_controller_role` by role name: `irsa` and `pod_identity` read from the
//! trust policy, the policy inputs and `karpenter_version` from the permissions (the inline
//! policy, the owned managed policies, or Karpenter's statements in someone else's policies),
//! and [`NotImportable`] when the role cannot be represented.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::calls::{iam, read_role};
use super::model::{all_group_arns, policy_in_force, state, version_of};
use super::schema::{
    ADDITIONAL_INLINE, INLINE_POLICY, POD_IDENTITY_PRINCIPAL, SCHEMA, TYPE_NAME, parse_oidc_provider,
};
use crate::context::KarpenterContext;
use crate::policy::arn::Arn;
use crate::policy::equivalence::{statements, values_of};
use crate::policy::releases;
use crate::resources::aws::iam_role::{self, Actual};
use crate::resources::aws::tags_all;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::object;
use crate::terraform::tfvalue::Value;

/// Import by role name: IRSA/Pod Identity settings come from the trust policy, the policy
/// inputs from the permissions (inline policy, or the owned managed policies).
pub(super) async fn import(ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
    let iam = iam(ctx).await?;
    let actual = read_role(&iam, id).await?.ok_or_else(|| {
        Diagnostics::from_error(
            "Cannot import karpenter_controller_role",
            format!("There is no IAM role named {id:?}. Import takes the role name."),
        )
    })?;
    // The documents of the customer managed policies attached that are not the resource's
    // own (the policy terraform-aws-eks's Karpenter module made), to read the policy inputs.
    let owned = all_group_arns(&actual.role.arn, &actual.role.path, &actual.role.name);
    let mut foreign = Vec::new();
    for arn in actual.attached.iter().filter(|a| !owned.contains(a)) {
        if Arn::parse(arn).is_ok_and(|a| a.account != "aws")
            && let Some(doc) = iam
                .managed_policy_document(arn)
                .await
                .map_err(|e| iam_role::diagnostics("read a policy attached to the role", &e))?
        {
            foreign.push(doc);
        }
    }
    let base = infer(&actual, &foreign)
        .map_err(|why| Diagnostics::from_error("Cannot import karpenter_controller_role", why.detail(id)))?;
    Ok(state(&base, &actual, &tags_all::defaults(ctx)))
}

/// What stops an import: why the role cannot be represented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NotImportable {
    /// Nothing says it is a controller role.
    NotAController(String),
    /// Its trust policy admits more, or otherwise, than `irsa` and `pod_identity` can say.
    Trust(String),
}

impl NotImportable {
    pub(super) fn detail(&self, role: &str) -> String {
        match self {
            NotImportable::NotAController(why) => {
                format!("Role {role:?} does not look like a Karpenter controller role: {why}")
            }
            NotImportable::Trust(why) => format!(
                "The trust policy of role {role:?} {why}. karpenter_controller_role's trust admits one service \
                 account through IRSA (irsa = {{ oidc_provider_arn, namespace, service_account }}) and EKS Pod \
                 Identity (pod_identity): an import would plan to remove the rest, and whoever assumes the role \
                 through it would lose access. Narrow the trust policy to the controller's service account \
                 first, or keep managing this role where it is."
            ),
        }
    }
}

/// `irsa` and `pod_identity` from a trust policy.
fn infer_trust(trust: &Json) -> Result<(Value, bool), NotImportable> {
    let mut pod_identity = false;
    let mut irsa = Value::Null;
    let trust_err = |s: String| NotImportable::Trust(s);
    for st in statements(trust).unwrap_or_default() {
        if st.get("Effect").and_then(Json::as_str) != Some("Allow") {
            continue;
        }
        if values_of(st.pointer("/Principal/Service"))
            .iter()
            .any(|s| s == POD_IDENTITY_PRINCIPAL)
        {
            pod_identity = true;
        }
        for provider in values_of(st.pointer("/Principal/Federated")) {
            let (_, issuer) = parse_oidc_provider(&provider).map_err(trust_err)?;
            let key = format!("{issuer}:sub");
            let condition = |test: &str| {
                st.get("Condition")
                    .and_then(|c| c.get(test))
                    .and_then(|c| c.get(&key))
            };
            if let Some(like) = condition("StringLike") {
                return Err(trust_err(format!(
                    "matches the IRSA subject with StringLike ({})",
                    values_of(Some(like)).join(", ")
                )));
            }
            let subjects = values_of(condition("StringEquals"));
            let subject = match subjects.as_slice() {
                [one] => one,
                [] => {
                    return Err(NotImportable::NotAController(
                        "the IRSA statement has no sub condition".to_string(),
                    ));
                }
                many => {
                    return Err(trust_err(format!(
                        "admits {} service accounts through IRSA ({})",
                        many.len(),
                        many.join(", ")
                    )));
                }
            };
            let Some((ns, sa)) = subject
                .strip_prefix("system:serviceaccount:")
                .and_then(|s| s.split_once(':'))
            else {
                return Err(NotImportable::NotAController(format!(
                    "the IRSA sub condition {subject:?} names no service account"
                )));
            };
            if !irsa.is_null() {
                return Err(trust_err("has more than one IRSA statement".to_string()));
            }
            irsa = object([
                ("oidc_provider_arn", Value::string(provider.clone())),
                ("namespace", Value::string(ns)),
                ("service_account", Value::string(sa)),
            ]);
        }
    }
    Ok((irsa, pod_identity))
}

/// The policy inputs Karpenter's statements name (`AllowPassingInstanceRole`: the node role,
/// `AllowAPIServerEndpointDiscovery`: the cluster, `AllowInterruptionQueueActions`: the queue),
/// found in any of `docs` — the resource's own permissions, or the policy terraform-aws-eks's
/// Karpenter module made, whose statements carry the same IDs. None without the first two.
fn inputs_from(docs: &[&Json]) -> Result<Option<BTreeMap<String, Value>>, String> {
    let by_sid = |sid: &str| {
        docs.iter()
            .flat_map(|d| statements(d).unwrap_or_default())
            .find(|st| st.get("Sid").and_then(Json::as_str) == Some(sid))
            .and_then(|st| values_of(st.get("Resource")).into_iter().next())
    };
    let (Some(node_role), Some(cluster)) = (
        by_sid("AllowPassingInstanceRole"),
        by_sid("AllowAPIServerEndpointDiscovery"),
    ) else {
        return Ok(None);
    };
    let cluster = Arn::parse(&cluster).map_err(|e| e.to_string())?;
    let cluster_name = cluster
        .resource
        .strip_prefix("cluster/")
        .ok_or("the EKS statement names no cluster")?;
    let queue = by_sid("AllowInterruptionQueueActions");
    Ok(Some(BTreeMap::from([
        ("node_role_arn".to_string(), Value::string(node_role)),
        ("cluster_name".to_string(), Value::string(cluster_name)),
        ("region".to_string(), Value::string(cluster.region.clone())),
        ("account_id".to_string(), Value::string(cluster.account.clone())),
        (
            "interruption_queue_arn".to_string(),
            crate::terraform::framework::values::opt_string(queue),
        ),
    ])))
}

/// The configuration a role was made from, inferred from its trust policy and permissions;
/// `foreign` are the documents of the customer managed policies attached that are not the
/// resource's own.
pub(super) fn infer(actual: &Actual, foreign: &[Json]) -> Result<Value, NotImportable> {
    let mut fields: BTreeMap<String, Value> = SCHEMA
        .attributes
        .iter()
        .map(|a| (a.name.to_string(), Value::Null))
        .collect();
    let (irsa, pod_identity) = infer_trust(&actual.role.trust_policy)?;
    // Replaced below by the release whose policy the role has, when it has one.
    fields.insert(
        "karpenter_version".into(),
        Value::string(releases::newest().version),
    );
    fields.insert("irsa".into(), irsa);
    fields.insert("pod_identity".into(), Value::Bool(pod_identity));
    let all = all_group_arns(&actual.role.arn, &actual.role.path, &actual.role.name);
    let managed =
        !actual.inline.contains_key(INLINE_POLICY) && all.iter().any(|a| actual.owned.contains_key(a));
    fields.insert(
        "policy_attachment".into(),
        Value::string(if managed { "managed" } else { "inline" }),
    );
    // Every other inline policy is kept, as it is (the one terraform-aws-eks's Karpenter module
    // writes with enable_inline_policy = true, for instance).
    let others: BTreeMap<String, String> = actual
        .inline
        .iter()
        .filter(|(name, _)| name.as_str() != INLINE_POLICY)
        .map(|(name, doc)| (name.clone(), iam_role::canonical(doc)))
        .collect();
    if !others.is_empty() {
        fields.insert(
            ADDITIONAL_INLINE.into(),
            crate::terraform::framework::values::string_map(others.iter()),
        );
    }
    let probe = Value::Object(fields.clone());
    let not_a_controller = |why: &str| NotImportable::NotAController(why.to_string());
    let Some(doc) = policy_in_force(&probe, actual, &all).and_then(|t| serde_json::from_str::<Json>(&t).ok())
    else {
        if actual.owner.as_deref() == Some(TYPE_NAME) {
            // Made by this resource type, and a create stopped before the permissions were
            // written (the refusal of the next create names this import): the policy inputs
            // stay unset, and the apply after the import writes the permissions.
            return Ok(Value::Object(fields));
        }
        if actual.attached.is_empty() && others.is_empty() {
            return Err(not_a_controller(
                "it has neither the KarpenterControllerPolicy inline policy, nor its managed policies, nor any \
                 other policy",
            ));
        }
        // Its permissions are policies someone else manages (terraform-aws-eks's Karpenter
        // module attaches one of its own, or writes it inline): kept as they are, in
        // `additional_policy_arns` and `additional_inline_policies`; the policy inputs are read
        // from them when they carry Karpenter's statements.
        fields.insert("policy_attachment".into(), Value::string("none"));
        let inline_docs: Vec<&Json> = actual
            .inline
            .iter()
            .filter(|(name, _)| name.as_str() != INLINE_POLICY)
            .map(|(_, doc)| doc)
            .collect();
        let docs: Vec<&Json> = foreign.iter().chain(inline_docs).collect();
        if let Ok(Some(inputs)) = inputs_from(&docs) {
            fields.extend(inputs);
        }
        return Ok(Value::Object(fields));
    };
    let inputs = inputs_from(&[&doc])
        .map_err(|e| not_a_controller(&e))?
        .ok_or_else(|| {
            not_a_controller("no AllowPassingInstanceRole or AllowAPIServerEndpointDiscovery statement")
        })?;
    fields.extend(inputs);
    let version = version_of(&Value::Object(fields.clone()), &doc);
    fields.insert("karpenter_version".into(), Value::string(version));
    Ok(Value::Object(fields))
}
