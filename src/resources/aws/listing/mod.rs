//! Identity and listing of the AWS resource types (`karpenter_interruption_queue`,
//! `karpenter_node_role`, `karpenter_controller_role`), as [`crate::resources::kube::object::identity`] is for the
//! Kubernetes kinds.
//!
//! - **identity**: the queue's name, or the role's name, plus where it lives (`region` and
//!   `account_id` for the queue, `account_id` for a role), derived from the ARN in state. An
//!   import by identity checks those against the provider configuration (its region, and the
//!   account its credentials are in) and refuses a mismatch with a diagnostic that names the
//!   provider configuration to use; then it is the import by name.
//! - **list** (`list "karpenter_node_role" "all" { provider = karpenter }`): finds the Karpenter
//!   parts in the account (and region) of the provider configuration, by what they are made of:
//!   - an interruption queue is an SQS queue with this provider's ownership tag, or one an
//!     EventBridge rule with one of Karpenter's interruption event patterns targets (as
//!     Karpenter's CloudFormation reference builds it);
//!   - a node role trusts EC2 and carries the ownership tag, or is named
//!     `KarpenterNodeRole-<cluster>` (upstream's name) with AmazonEKSWorkerNodePolicy attached;
//!   - a controller role trusts a service account through IRSA or EKS Pod Identity and carries
//!     the ownership tag, is named `KarpenterControllerRole-<cluster>`, or trusts a Karpenter
//!     service account (`system:serviceaccount:<ns>:karpenter`). It must also have the
//!     permissions in the shape `karpenter_controller_role` manages (what its import needs);
//!     one that does not is reported as a warning, not listed.
//!
//!   ListRoles returns trust policies but not tags, so the per-role calls are made only for
//!   roles whose trust fits, and only while the sink wants more. A part that cannot be read is
//!   a warning ([`ListSink::skip`]); only a failure of the listing itself ends it.
//!   With `include_resource = true` each result's state is the type's own import followed by
//!   its read, so it is exactly what importing the listed identity gives.
//!
//! Here: the identity and list schemas and what the listings share; in [`identity`], identities
//! and import by identity; in [`shapes`], what the parts look like; in [`roles`] and
//! [`queues`], the two listings.

use std::sync::LazyLock;

use crate::aws_names;
use crate::context::KarpenterContext;
use crate::terraform::framework::list::name_prefix_attribute;
use crate::terraform::framework::schema::{Attribute, Schema};
use crate::terraform::framework::{Diagnostics, ReadOutcome, Resource};
use crate::terraform::tfvalue::Value;

/// Upstream's node role name: `KarpenterNodeRole-<cluster>`.
pub const NODE_ROLE_NAME_PREFIX: &str = "KarpenterNodeRole-";
/// Upstream's controller role name: `KarpenterControllerRole-<cluster>`.
pub const CONTROLLER_ROLE_NAME_PREFIX: &str = "KarpenterControllerRole-";

// ---- schemas --------------------------------------------------------------------------------

fn cluster_name_filter(how: &str) -> Attribute {
    Attribute::string("cluster_name")
        .optional()
        .describe(format!("Only the parts of this EKS cluster: {how}"))
        .validate(aws_names::eks_cluster_name_validator())
}

pub static QUEUE_LIST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Finds the Karpenter interruption queues in the account and region of the provider configuration: SQS \
         queues that carry this provider's ownership tag, and queues an EventBridge rule with one of Karpenter's \
         interruption event patterns (Spot interruption, rebalance, AWS Health, instance state change, capacity \
         reservation interruption) targets, as Karpenter's CloudFormation reference builds them.",
        vec![
            name_prefix_attribute("queues"),
            cluster_name_filter(
                "the cluster an import records as `cluster_name` (the queue's cluster tag, else read from its rules' \
                 names or its own name).",
            ),
        ],
    )
});

pub static NODE_ROLE_LIST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Finds the Karpenter node roles in the account of the provider configuration: IAM roles EC2 may assume \
         that carry this provider's ownership tag, or that are named `KarpenterNodeRole-<cluster>` (Karpenter's \
         CloudFormation reference) and have AmazonEKSWorkerNodePolicy attached.",
        vec![
            name_prefix_attribute("roles"),
            cluster_name_filter(
                "the cluster in the role's name (`KarpenterNodeRole-<cluster>`), else in its `karpenter.sh/discovery`, \
                 `eks:eks-cluster-name`, `eks:cluster-name` or `alpha.eksctl.io/cluster-name` tag, else its \
                 `kubernetes.io/cluster/<cluster>` tag. A role that names no cluster is left out.",
            ),
        ],
    )
});

pub static CONTROLLER_ROLE_LIST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Finds the Karpenter controller roles in the account of the provider configuration: IAM roles trusted \
         through IRSA or EKS Pod Identity that carry this provider's ownership tag, are named \
         `KarpenterControllerRole-<cluster>`, or trust a Karpenter service account \
         (`system:serviceaccount:<namespace>:karpenter`), and whose permissions are in the shape \
         `karpenter_controller_role` manages (one that is not is reported as a warning).",
        vec![
            name_prefix_attribute("roles"),
            cluster_name_filter("the cluster the role's permissions are scoped to (its `cluster_name`)."),
        ],
    )
});

mod identity;
mod roles;
mod shapes;

pub use identity::{
    QUEUE_IDENTITY, ROLE_IDENTITY, account_mismatch, arn_region_account, explain_failed_import,
    import_role_by_identity, queue_identity, region_alias, region_mismatch, role_identity,
};
pub use roles::{RoleListing, Verdict, cannot_import, list_roles, unreadable};
pub use shapes::{Trust, classify_trust, cluster_from_name, cluster_from_tags, strings};

/// The state an import of `id` followed by a refresh gives (what Terraform stores for an
/// imported object), or why there is none.
pub async fn imported_and_read<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    id: &str,
) -> Result<Value, String> {
    let imported = resource.import(ctx, id).await.map_err(|d| text(&d))?;
    read_back(resource, ctx, imported).await
}

/// The refresh Terraform makes right after an import.
pub async fn read_back<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    imported: Value,
) -> Result<Value, String> {
    match resource.read(ctx, &imported).await {
        Ok(ReadOutcome::Found(state)) | Ok(ReadOutcome::BeingDeleted(state, _)) => Ok(state),
        Ok(ReadOutcome::Gone) => Err("it was deleted while it was being listed".into()),
        Ok(ReadOutcome::KeptPrior(d)) | Err(d) => Err(text(&d)),
    }
}

/// The details of diagnostics, as one sentence for a warning.
pub fn text(d: &Diagnostics) -> String {
    d.iter()
        .map(|d| {
            if d.detail.is_empty() {
                d.summary.clone()
            } else {
                format!("{}: {}", d.summary, d.detail)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::terraform::framework::values::object;
    use serde_json::json;

    #[test]
    fn arns_give_region_and_account_in_any_partition() {
        assert_eq!(
            arn_region_account("arn:aws:sqs:us-east-1:123456789012:demo"),
            Some(("us-east-1", "123456789012"))
        );
        assert_eq!(
            arn_region_account("arn:aws-iso:iam::111122223333:role/a/b:c"),
            Some(("", "111122223333"))
        );
        assert_eq!(arn_region_account("not-an-arn"), None);
        assert_eq!(arn_region_account("arn:aws:sqs:us-east-1"), None);
    }

    #[test]
    fn a_role_identity_is_its_name_and_account() {
        let state = object([
            ("name", Value::string("KarpenterNodeRole-demo")),
            (
                "arn",
                Value::string("arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"),
            ),
        ]);
        assert_eq!(
            role_identity(&state),
            object([
                ("name", Value::string("KarpenterNodeRole-demo")),
                ("account_id", Value::string("123456789012")),
            ])
        );
        let planned = object([("name", Value::unknown()), ("arn", Value::unknown())]);
        assert_eq!(role_identity(&planned), Value::Null);
        let named = object([("name", Value::string("x")), ("arn", Value::unknown())]);
        assert_eq!(role_identity(&named), Value::Null);
    }

    #[test]
    fn trust_policies_are_classified() {
        let ec2 = json!({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
        assert_eq!(
            classify_trust(&ec2),
            Trust {
                ec2: true,
                ..Default::default()
            }
        );
        let cn = json!({"Statement": {"Effect": "Allow", "Principal": {"Service": ["ec2.amazonaws.com.cn"]},
            "Action": ["sts:AssumeRole"]}});
        assert!(classify_trust(&cn).ec2);
        let lambda = json!({"Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": "sts:AssumeRole"}]});
        assert_eq!(classify_trust(&lambda), Trust::default());
        let denied = json!({"Statement": [{"Effect": "Deny", "Principal": {"Service": "ec2.amazonaws.com"},
            "Action": "sts:AssumeRole"}]});
        assert!(!classify_trust(&denied).ec2);
        let irsa = json!({"Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/X"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {
                "oidc.eks.us-east-1.amazonaws.com/id/X:aud": "sts.amazonaws.com",
                "oidc.eks.us-east-1.amazonaws.com/id/X:sub": "system:serviceaccount:kube-system:karpenter"}}}]});
        let t = classify_trust(&irsa);
        assert_eq!(
            t.service_accounts,
            vec![("kube-system".to_string(), "karpenter".to_string())]
        );
        assert!(t.admits_karpenter_service_account());
        let other_sa = json!({"Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/oidc.example/id/X"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringLike": {"oidc.example/id/X:sub": ["system:serviceaccount:apps:*"]}}}]});
        let t = classify_trust(&other_sa);
        assert_eq!(t.service_accounts, vec![("apps".to_string(), "*".to_string())]);
        assert!(!t.admits_karpenter_service_account());
        let pod = json!({"Statement": [{"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"]}]});
        assert!(classify_trust(&pod).pod_identity);
        assert!(!classify_trust(&json!("garbage")).ec2);
    }

    #[test]
    fn clusters_come_from_names_and_tags() {
        assert_eq!(
            cluster_from_name("KarpenterNodeRole-demo", NODE_ROLE_NAME_PREFIX),
            Some("demo")
        );
        assert_eq!(
            cluster_from_name("KarpenterNodeRole-", NODE_ROLE_NAME_PREFIX),
            None
        );
        assert_eq!(cluster_from_name("eks-nodes", NODE_ROLE_NAME_PREFIX), None);
        let tags = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            cluster_from_tags(&tags(&[
                ("karpenter.sh/discovery", "prod"),
                ("eks:cluster-name", "x")
            ])),
            Some("prod".into())
        );
        assert_eq!(
            cluster_from_tags(&tags(&[("kubernetes.io/cluster/blue", "owned")])),
            Some("blue".into())
        );
        assert_eq!(cluster_from_tags(&tags(&[("team", "a")])), None);
    }

    #[test]
    fn mismatches_name_the_provider_configuration_to_use() {
        let d = region_mismatch("karpenter_interruption_queue", "us-east-1", "us-west-2");
        let detail = &d.iter().next().expect("diagnostic").detail;
        assert!(detail.contains("configured for us-west-2"), "{detail}");
        assert!(detail.contains("provider = karpenter.use1"), "{detail}");
        assert!(
            d.iter()
                .all(|d| d.path.as_ref().is_some_and(|p| p.to_string() == "region"))
        );
        let d = account_mismatch("karpenter_node_role", "210987654321", "123456789012");
        let detail = &d.iter().next().expect("diagnostic").detail;
        assert!(detail.contains("account 123456789012"), "{detail}");
        assert!(detail.contains("arn:aws:iam::210987654321:role/"), "{detail}");
        assert_eq!(region_alias("eu-central-2"), "euc2");
        assert_eq!(region_alias("us-gov-west-1"), "usgw1");
    }
}
