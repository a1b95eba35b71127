//! What a role looks like from outside, for the role listings: what its trust policy lets
//! assume it, and the cluster its name or tags name.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::aws_names::{self, PARTITIONS};
use crate::resources::aws::listing::strings;

/// The EKS Pod Identity service principal.
const POD_IDENTITY_PRINCIPAL: &str = "pods.eks.amazonaws.com";
/// Tags other tools put on a role to name its cluster, in the order they are trusted.
const CLUSTER_TAG_KEYS: &[&str] = &[
    "karpenter.sh/discovery",
    "eks:eks-cluster-name",
    "eks:cluster-name",
    "alpha.eksctl.io/cluster-name",
];

/// What a trust policy lets assume the role, as far as the listings care.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    /// EC2 (`ec2.amazonaws.com`, `ec2.amazonaws.com.cn`, `ec2.<suffix>` in every partition) may
    /// `sts:AssumeRole`.
    pub ec2: bool,
    /// EKS Pod Identity (`pods.eks.amazonaws.com`) may assume it.
    pub pod_identity: bool,
    /// The Kubernetes service accounts IRSA statements admit, as (namespace, name); either may
    /// hold a wildcard (`StringLike`).
    pub service_accounts: Vec<(String, String)>,
}

impl Trust {
    /// Whether one of the service accounts is Karpenter's (`karpenter` in its name or namespace).
    pub fn admits_karpenter_service_account(&self) -> bool {
        self.service_accounts
            .iter()
            .any(|(ns, sa)| sa.contains("karpenter") || ns.contains("karpenter"))
    }
}

fn allows_action(statement: &Json, action: &str) -> bool {
    strings(&statement["Action"])
        .iter()
        .any(|a| *a == "*" || *a == "sts:*" || a.eq_ignore_ascii_case(action))
}

/// Reads a trust policy.
pub fn classify_trust(doc: &Json) -> Trust {
    let statements = match &doc["Statement"] {
        Json::Array(items) => items.iter().collect::<Vec<_>>(),
        single @ Json::Object(_) => vec![single],
        _ => Vec::new(),
    };
    let mut trust = Trust::default();
    for st in statements.into_iter().filter(|s| s["Effect"] == "Allow") {
        let services = strings(&st["Principal"]["Service"]);
        if allows_action(st, "sts:AssumeRole") {
            if services.iter().any(|s| {
                PARTITIONS
                    .iter()
                    .any(|p| s.strip_prefix("ec2.") == Some(aws_names::dns_suffix(p)))
            }) {
                trust.ec2 = true;
            }
            if services.contains(&POD_IDENTITY_PRINCIPAL) {
                trust.pod_identity = true;
            }
        }
        let federated = strings(&st["Principal"]["Federated"]);
        if federated.iter().any(|f| f.contains(":oidc-provider/"))
            && allows_action(st, "sts:AssumeRoleWithWebIdentity")
            && let Json::Object(operators) = &st["Condition"]
        {
            for keys in operators.values().filter_map(Json::as_object) {
                for subject in keys
                    .iter()
                    .filter(|(k, _)| k.ends_with(":sub"))
                    .flat_map(|(_, v)| strings(v))
                {
                    let mut parts = subject
                        .strip_prefix("system:serviceaccount:")
                        .unwrap_or_default()
                        .splitn(2, ':');
                    if let (Some(ns), Some(sa)) = (parts.next(), parts.next()) {
                        trust.service_accounts.push((ns.to_string(), sa.to_string()));
                    }
                }
            }
        }
    }
    trust
}

/// The cluster a role's tags name, if any (see [`CLUSTER_TAG_KEYS`], then a
/// `kubernetes.io/cluster/<cluster>` key).
pub fn cluster_from_tags(tags: &BTreeMap<String, String>) -> Option<String> {
    CLUSTER_TAG_KEYS
        .iter()
        .find_map(|k| tags.get(*k).filter(|v| !v.is_empty()).cloned())
        .or_else(|| {
            tags.keys()
                .find_map(|k| k.strip_prefix("kubernetes.io/cluster/"))
                .filter(|c| !c.is_empty())
                .map(str::to_string)
        })
}

/// The cluster in an upstream-shaped name (`<prefix><cluster>`).
pub fn cluster_from_name<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    name.strip_prefix(prefix).filter(|c| !c.is_empty())
}
