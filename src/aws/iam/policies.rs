//! Customer managed policies: create, read (document and tags), update (a new default version,
//! the oldest non-default one deleted first when IAM's five are used) and delete.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::{Iam, IamError, decode_document, found, gone_is_ok, tag_map, tags};

impl Iam {
    /// Creates a customer managed policy and returns its ARN.
    pub async fn create_policy(
        &self,
        name: &str,
        path: &str,
        document: &str,
        tag_set: &BTreeMap<String, String>,
    ) -> Result<String, IamError> {
        const OP: &str = "CreatePolicy";
        let out = self
            .client
            .create_policy()
            .policy_name(name)
            .path(path)
            .policy_document(document)
            .set_tags(tags(OP, tag_set)?)
            .send()
            .await
            .map_err(|e| IamError::from_sdk(OP, e))?;
        out.policy()
            .and_then(|p| p.arn())
            .map(str::to_string)
            .ok_or_else(|| IamError::new(OP, None, "the response has no policy ARN"))
    }

    /// A managed policy's tags, or None when the policy does not exist (GetPolicy, so no
    /// permission beyond the ones the role resources already need).
    pub async fn policy_tags(&self, arn: &str) -> Result<Option<BTreeMap<String, String>>, IamError> {
        let out = self.get_policy(arn).await?;
        Ok(out.map(|o| o.policy().map(|p| tag_map(p.tags())).unwrap_or_default()))
    }

    /// GetPolicy, or None when the policy does not exist.
    async fn get_policy(
        &self,
        arn: &str,
    ) -> Result<Option<aws_sdk_iam::operation::get_policy::GetPolicyOutput>, IamError> {
        found(
            self.client
                .get_policy()
                .policy_arn(arn)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("GetPolicy", e)),
        )
    }

    /// The default version's document of a managed policy, or None when it does not exist.
    pub async fn managed_policy_document(&self, arn: &str) -> Result<Option<Json>, IamError> {
        Ok(self.managed_policy(arn).await?.map(|(doc, _)| doc))
    }

    /// The default version's document of a managed policy and the policy's tags, or None when
    /// it does not exist.
    pub async fn managed_policy(
        &self,
        arn: &str,
    ) -> Result<Option<(Json, BTreeMap<String, String>)>, IamError> {
        let policy = self.get_policy(arn).await?;
        let Some(version) = policy
            .as_ref()
            .and_then(|p| p.policy())
            .and_then(|p| p.default_version_id())
        else {
            return Ok(None);
        };
        let tags = policy
            .as_ref()
            .and_then(|p| p.policy())
            .map(|p| tag_map(p.tags()))
            .unwrap_or_default();
        const OP: &str = "GetPolicyVersion";
        let out = found(
            self.client
                .get_policy_version()
                .policy_arn(arn)
                .version_id(version)
                .send()
                .await
                .map_err(|e| IamError::from_sdk(OP, e)),
        )?;
        match out
            .as_ref()
            .and_then(|o| o.policy_version())
            .and_then(|v| v.document())
        {
            Some(doc) => decode_document(OP, doc).map(|d| Some((d, tags))),
            None => Ok(None),
        }
    }

    /// Non-default versions, oldest first.
    async fn old_versions(&self, arn: &str) -> Result<Vec<String>, IamError> {
        let out = self
            .client
            .list_policy_versions()
            .policy_arn(arn)
            .send()
            .await
            .map_err(|e| IamError::from_sdk("ListPolicyVersions", e))?;
        let mut versions: Vec<_> = out
            .versions()
            .iter()
            .filter(|v| !v.is_default_version())
            .filter_map(|v| Some((v.create_date().copied(), v.version_id()?.to_string())))
            .collect();
        versions.sort_by(|a, b| {
            a.0.map(|d| d.as_nanos())
                .cmp(&b.0.map(|d| d.as_nanos()))
                .then_with(|| a.1.cmp(&b.1))
        });
        Ok(versions.into_iter().map(|(_, id)| id).collect())
    }

    /// Makes `document` the default version, deleting the oldest version when all five slots
    /// are taken.
    pub async fn update_managed_policy(&self, arn: &str, document: &str) -> Result<(), IamError> {
        let old = self.old_versions(arn).await?;
        if old.len() >= 4
            && let Some(oldest) = old.first()
        {
            self.client
                .delete_policy_version()
                .policy_arn(arn)
                .version_id(oldest)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("DeletePolicyVersion", e))?;
        }
        self.client
            .create_policy_version()
            .policy_arn(arn)
            .policy_document(document)
            .set_as_default(true)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| IamError::from_sdk("CreatePolicyVersion", e))
    }

    /// Deletes a customer managed policy with all its versions; gone is success.
    pub async fn delete_managed_policy(&self, arn: &str) -> Result<(), IamError> {
        let old = match found(self.old_versions(arn).await)? {
            Some(old) => old,
            None => return Ok(()),
        };
        for version in old {
            gone_is_ok(
                self.client
                    .delete_policy_version()
                    .policy_arn(arn)
                    .version_id(version)
                    .send()
                    .await
                    .map_err(|e| IamError::from_sdk("DeletePolicyVersion", e)),
            )?;
        }
        gone_is_ok(
            self.client
                .delete_policy()
                .policy_arn(arn)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("DeletePolicy", e)),
        )
    }
}
