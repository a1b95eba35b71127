//! Instance profiles: create, read, the role they hold, delete.

use std::collections::BTreeMap;

use super::{
    CONSISTENCY_BUDGET, FIRST_DELAY, Iam, IamError, ProfileInfo, found, gone_is_ok, retry_consistency,
    tag_map, tags,
};

impl Iam {
    pub async fn create_instance_profile(
        &self,
        name: &str,
        path: &str,
        tag_set: &BTreeMap<String, String>,
    ) -> Result<ProfileInfo, IamError> {
        const OP: &str = "CreateInstanceProfile";
        let out = self
            .client
            .create_instance_profile()
            .instance_profile_name(name)
            .path(path)
            .set_tags(tags(OP, tag_set)?)
            .send()
            .await
            .map_err(|e| IamError::from_sdk(OP, e))?;
        let p = out
            .instance_profile()
            .ok_or_else(|| IamError::new(OP, None, "the response has no instance profile"))?;
        Ok(ProfileInfo {
            name: p.instance_profile_name().to_string(),
            arn: p.arn().to_string(),
            roles: Vec::new(),
            tags: tag_set.clone(),
        })
    }

    /// The instance profile (tags from GetInstanceProfile itself), or None.
    pub async fn get_instance_profile(&self, name: &str) -> Result<Option<ProfileInfo>, IamError> {
        const OP: &str = "GetInstanceProfile";
        let out = found(
            self.client
                .get_instance_profile()
                .instance_profile_name(name)
                .send()
                .await
                .map_err(|e| IamError::from_sdk(OP, e)),
        )?;
        Ok(out.and_then(|o| {
            o.instance_profile().map(|p| ProfileInfo {
                name: p.instance_profile_name().to_string(),
                arn: p.arn().to_string(),
                roles: p.roles().iter().map(|r| r.role_name().to_string()).collect(),
                tags: tag_map(p.tags()),
            })
        }))
    }

    /// Names of the instance profiles the role is in.
    pub async fn profiles_for_role(&self, role: &str) -> Result<Vec<String>, IamError> {
        let out = self
            .client
            .list_instance_profiles_for_role()
            .role_name(role)
            .send()
            .await
            .map_err(|e| IamError::from_sdk("ListInstanceProfilesForRole", e))?;
        Ok(out
            .instance_profiles()
            .iter()
            .map(|p| p.instance_profile_name().to_string())
            .collect())
    }

    pub async fn add_role_to_profile(&self, profile: &str, role: &str) -> Result<(), IamError> {
        retry_consistency(CONSISTENCY_BUDGET, FIRST_DELAY, || async {
            self.client
                .add_role_to_instance_profile()
                .instance_profile_name(profile)
                .role_name(role)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("AddRoleToInstanceProfile", e))
        })
        .await
        .map(|_| ())
    }

    pub async fn remove_role_from_profile(&self, profile: &str, role: &str) -> Result<(), IamError> {
        gone_is_ok(
            self.client
                .remove_role_from_instance_profile()
                .instance_profile_name(profile)
                .role_name(role)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("RemoveRoleFromInstanceProfile", e)),
        )
    }

    pub async fn delete_instance_profile(&self, name: &str) -> Result<(), IamError> {
        gone_is_ok(
            self.client
                .delete_instance_profile()
                .instance_profile_name(name)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("DeleteInstanceProfile", e)),
        )
    }
}
