//! What a role lets do and who may assume it, read from AWS, to check that a migration step
//! keeps both at least what they were.
//!
//! - Trust: the principals the Allow statements admit (a service; a service account through an
//!   OIDC provider, by its `sub`; anything else by name).
//! - Permissions: every (action, resource) an Allow statement of the role's policies grants
//!   (attached customer managed policies, inline policies). A resource without a wildcard is kept
//!   as it is (the node role for `iam:PassRole`, the queue, the cluster): it must still be
//!   granted on that resource. A resource with a wildcard counts as "some resource": the action
//!   must still be granted somewhere. Conditions are not compared: the provider's statements
//!   carry Karpenter v1.14's conditions, which may name other tags than an older policy's.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::Aws;
use crate::iam_common::{decode, glob};

/// One permission: an action, on one resource (None: on some resource).
pub type Grant = (String, Option<String>);

fn values(v: Option<&Json>) -> Vec<String> {
    match v {
        Some(Json::Array(a)) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        Some(Json::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

fn allow_statements(doc: &Json) -> Vec<Json> {
    let all = match doc.get("Statement") {
        Some(Json::Array(a)) => a.clone(),
        Some(o @ Json::Object(_)) => vec![o.clone()],
        _ => Vec::new(),
    };
    all.into_iter().filter(|s| s["Effect"] == "Allow").collect()
}

/// The grants of the documents `docs`.
pub fn grants(docs: &[Json]) -> BTreeSet<Grant> {
    let mut out = BTreeSet::new();
    for doc in docs {
        for st in allow_statements(doc) {
            for action in values(st.get("Action")) {
                for resource in values(st.get("Resource")) {
                    let concrete = (!resource.contains('*')).then_some(resource);
                    out.insert((action.clone(), concrete));
                }
            }
        }
    }
    out
}

/// The grants of `before` that `after` (documents) no longer gives.
pub fn lost(before: &BTreeSet<Grant>, after: &[Json]) -> BTreeSet<Grant> {
    let statements: Vec<Json> = after.iter().flat_map(allow_statements).collect();
    before
        .iter()
        .filter(|(action, resource)| {
            !statements.iter().any(|st| {
                values(st.get("Action"))
                    .iter()
                    .any(|a| glob(&a.to_lowercase(), &action.to_lowercase()))
                    && match resource {
                        Some(r) => values(st.get("Resource")).iter().any(|p| glob(p, r)),
                        None => true,
                    }
            })
        })
        .cloned()
        .collect()
}

/// The principals the trust policy `doc` admits, as readable strings.
pub fn principals(doc: &Json) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for st in allow_statements(doc) {
        for service in values(st.pointer("/Principal/Service")) {
            out.insert(format!("service {service}"));
        }
        for aws in values(st.pointer("/Principal/AWS")) {
            out.insert(format!("aws {aws}"));
        }
        for provider in values(st.pointer("/Principal/Federated")) {
            let issuer = provider
                .split_once("oidc-provider/")
                .map(|(_, i)| i.to_string())
                .unwrap_or_default();
            let conditions = st
                .get("Condition")
                .and_then(Json::as_object)
                .cloned()
                .unwrap_or_default();
            let subs: Vec<String> = conditions
                .values()
                .flat_map(|c| values(c.get(format!("{issuer}:sub").as_str())))
                .collect();
            for sub in subs {
                out.insert(format!("{provider} {sub}"));
            }
        }
    }
    out
}

impl Aws {
    /// Every policy document of `role`: its attached customer managed policies and its inline
    /// policies (AWS managed policies are left out: they are the same for everyone).
    pub async fn role_documents(&self, role: &str) -> Vec<Json> {
        let mut docs = Vec::new();
        let attached = self
            .iam
            .list_attached_role_policies()
            .role_name(role)
            .send()
            .await
            .expect("ListAttachedRolePolicies");
        for p in attached.attached_policies() {
            let arn = p.policy_arn().unwrap_or_default();
            if arn.starts_with("arn:aws:iam::aws:") {
                continue;
            }
            let policy = self
                .iam
                .get_policy()
                .policy_arn(arn)
                .send()
                .await
                .expect("GetPolicy");
            let version = policy
                .policy()
                .and_then(|p| p.default_version_id())
                .unwrap_or("v1");
            let v = self
                .iam
                .get_policy_version()
                .policy_arn(arn)
                .version_id(version)
                .send()
                .await
                .expect("GetPolicyVersion");
            let text = v.policy_version().and_then(|v| v.document()).unwrap_or_default();
            docs.push(decode(text));
        }
        let names = self
            .iam
            .list_role_policies()
            .role_name(role)
            .send()
            .await
            .expect("ListRolePolicies");
        for name in names.policy_names() {
            let p = self
                .iam
                .get_role_policy()
                .role_name(role)
                .policy_name(name)
                .send()
                .await
                .expect("GetRolePolicy");
            docs.push(decode(p.policy_document()));
        }
        docs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_iam_wildcards() {
        assert!(glob(
            "arn:aws:ec2:*:*:subnet/*",
            "arn:aws:ec2:us-east-1:1:subnet/x"
        ));
        assert!(glob("*", "anything"));
        assert!(!glob(
            "arn:aws:ec2:us-east-1:*:subnet/*",
            "arn:aws:ec2:*:*:subnet/*x"
        ));
        assert!(glob("iam:PassRole", "iam:PassRole"));
    }
}
