//! Thin wrappers over the EKS access-entry calls `karpenter_node_role` makes for its
//! `eks_access_entry`: one entry (by cluster and principal) and its associated access policies,
//! and the node role of the cluster's Auto Mode compute configuration (whose entry EKS makes and
//! manages itself).
//! Each returns plain data or an [`AwsError`] naming the IAM action; "does not exist" and
//! "already exists" are classified with the SDK's typed checks, and deletes treat "does not
//! exist" as success.

use aws_sdk_eks::Client;
use aws_sdk_eks::types::{AccessScope, AccessScopeType};

use super::error::{AwsError, AwsErrorKind};

/// One access entry as EKS reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessEntry {
    pub arn: String,
    /// `EC2`, `EC2_LINUX`, `STANDARD`, …
    pub kind: String,
    /// The ARNs of the access policies associated with the entry.
    pub policies: Vec<String>,
    /// The entry's tags (the ownership tag tells entries this provider made).
    pub tags: std::collections::BTreeMap<String, String>,
}

/// EKS access-entry calls for one client.
#[derive(Debug, Clone)]
pub struct EksAccess {
    client: Client,
    /// Where the calls go, for connection and TLS diagnostics.
    endpoint: String,
}

impl EksAccess {
    pub fn new(client: Client, endpoint: String) -> Self {
        Self { client, endpoint }
    }

    /// The entry of `principal` in `cluster` with its policies; `None` when there is none (or the
    /// cluster is gone, which takes its entries with it).
    pub async fn get(&self, cluster: &str, principal: &str) -> Result<Option<AccessEntry>, AwsError> {
        let out = match self
            .client
            .describe_access_entry()
            .cluster_name(cluster)
            .principal_arn(principal)
            .send()
            .await
        {
            Ok(out) => out,
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(AwsError::from_sdk("eks:DescribeAccessEntry", &e).via(&self.endpoint)),
        };
        let Some(entry) = out.access_entry else {
            return Ok(None);
        };
        let mut policies = Vec::new();
        let mut token = None;
        loop {
            let page = self
                .client
                .list_associated_access_policies()
                .cluster_name(cluster)
                .principal_arn(principal)
                .set_next_token(token)
                .send()
                .await
                .map_err(|e| {
                    AwsError::from_sdk("eks:ListAssociatedAccessPolicies", &e).via(&self.endpoint)
                })?;
            policies.extend(
                page.associated_access_policies()
                    .iter()
                    .filter_map(|p| p.policy_arn().map(str::to_string)),
            );
            token = page.next_token;
            if token.is_none() {
                break;
            }
        }
        policies.sort();
        Ok(Some(AccessEntry {
            arn: entry.access_entry_arn.unwrap_or_default(),
            kind: entry.r#type.unwrap_or_default(),
            policies,
            tags: entry.tags.unwrap_or_default().into_iter().collect(),
        }))
    }

    /// The node role of `cluster`'s EKS Auto Mode compute configuration
    /// (`computeConfig.nodeRoleArn`): EKS makes that role's access entry itself, and it cannot be
    /// modified. `None` when the cluster has none (Auto Mode off, or created without a node role).
    pub async fn compute_node_role(&self, cluster: &str) -> Result<Option<String>, AwsError> {
        let out = self
            .client
            .describe_cluster()
            .name(cluster)
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("eks:DescribeCluster", &e).via(&self.endpoint))?;
        Ok(out
            .cluster
            .and_then(|c| c.compute_config)
            .and_then(|c| c.node_role_arn)
            .filter(|arn| !arn.is_empty()))
    }

    /// Creates the entry of `principal` of type `kind`; [`AwsErrorKind::AlreadyExists`] when the
    /// principal has one (whoever made it).
    pub async fn create(
        &self,
        cluster: &str,
        principal: &str,
        kind: &str,
        tags: &std::collections::BTreeMap<String, String>,
    ) -> Result<String, AwsError> {
        let out = self
            .client
            .create_access_entry()
            .cluster_name(cluster)
            .principal_arn(principal)
            .r#type(kind)
            .set_tags((!tags.is_empty()).then(|| tags.clone().into_iter().collect()))
            .send()
            .await
            .map_err(|e| {
                let taken = e
                    .as_service_error()
                    .is_some_and(|s| s.is_resource_in_use_exception());
                let err = AwsError::from_sdk("eks:CreateAccessEntry", &e).via(&self.endpoint);
                if taken {
                    err.with_kind(AwsErrorKind::AlreadyExists)
                } else {
                    err
                }
            })?;
        Ok(out
            .access_entry
            .and_then(|e| e.access_entry_arn)
            .unwrap_or_default())
    }

    /// Associates the access policy `policy` with the entry, for the whole cluster.
    pub async fn associate(&self, cluster: &str, principal: &str, policy: &str) -> Result<(), AwsError> {
        self.client
            .associate_access_policy()
            .cluster_name(cluster)
            .principal_arn(principal)
            .policy_arn(policy)
            .access_scope(AccessScope::builder().r#type(AccessScopeType::Cluster).build())
            .send()
            .await
            .map_err(|e| AwsError::from_sdk("eks:AssociateAccessPolicy", &e).via(&self.endpoint))?;
        Ok(())
    }

    /// Removes the access policy `policy` from the entry (gone already: done).
    pub async fn disassociate(&self, cluster: &str, principal: &str, policy: &str) -> Result<(), AwsError> {
        match self
            .client
            .disassociate_access_policy()
            .cluster_name(cluster)
            .principal_arn(principal)
            .policy_arn(policy)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(AwsError::from_sdk("eks:DisassociateAccessPolicy", &e).via(&self.endpoint)),
        }
    }

    /// Deletes the entry of `principal` (gone already, or its cluster gone: done).
    pub async fn delete(&self, cluster: &str, principal: &str) -> Result<(), AwsError> {
        match self
            .client
            .delete_access_entry()
            .cluster_name(cluster)
            .principal_arn(principal)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(AwsError::from_sdk("eks:DeleteAccessEntry", &e).via(&self.endpoint)),
        }
    }
}
