//! Roles: create, read, list, delete; trust policy, permissions boundary and tags; attached
//! managed policies and inline policies.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::{
    CONSISTENCY_BUDGET, FIRST_DELAY, Iam, IamError, ListedRole, NewRole, RoleInfo, RolePage, decode_document,
    found, gone_is_ok, retry_consistency, retry_while, tag_map, tags,
};

impl Iam {
    pub async fn create_role(&self, role: &NewRole<'_>) -> Result<RoleInfo, IamError> {
        const OP: &str = "CreateRole";
        let document = role.trust_policy.to_string();
        let out = retry_consistency(CONSISTENCY_BUDGET, FIRST_DELAY, || async {
            self.client
                .create_role()
                .role_name(role.name)
                .path(role.path)
                .assume_role_policy_document(&document)
                .set_permissions_boundary(role.permissions_boundary.map(str::to_string))
                .set_description(role.description.map(str::to_string))
                .set_tags(tags(OP, role.tags)?)
                .send()
                .await
                .map_err(|e| IamError::from_sdk(OP, e))
        })
        .await?;
        let created = out
            .role()
            .ok_or_else(|| IamError::new(OP, None, "the response has no role"))?;
        Ok(RoleInfo {
            name: created.role_name().to_string(),
            arn: created.arn().to_string(),
            path: created.path().to_string(),
            trust_policy: role.trust_policy.clone(),
            permissions_boundary: role.permissions_boundary.map(str::to_string),
        })
    }

    /// The role, or None when it does not exist.
    pub async fn get_role(&self, name: &str) -> Result<Option<RoleInfo>, IamError> {
        const OP: &str = "GetRole";
        let out = found(
            self.client
                .get_role()
                .role_name(name)
                .send()
                .await
                .map_err(|e| IamError::from_sdk(OP, e)),
        )?;
        let Some(out) = out else { return Ok(None) };
        let role = out
            .role()
            .ok_or_else(|| IamError::new(OP, None, "the response has no role"))?;
        let trust_policy = match role.assume_role_policy_document() {
            Some(doc) => decode_document(OP, doc)?,
            None => Json::Null,
        };
        Ok(Some(RoleInfo {
            name: role.role_name().to_string(),
            arn: role.arn().to_string(),
            path: role.path().to_string(),
            trust_policy,
            permissions_boundary: role
                .permissions_boundary()
                .and_then(|b| b.permissions_boundary_arn())
                .map(str::to_string),
        }))
    }

    /// One page of every role in the account (ListRoles), starting at `marker` (None: the
    /// first page). A listing stops paging as soon as it has what it needs.
    pub async fn list_roles_page(&self, marker: Option<String>) -> Result<RolePage, IamError> {
        const OP: &str = "ListRoles";
        let page = self
            .client
            .list_roles()
            .set_marker(marker)
            .send()
            .await
            .map_err(|e| IamError::from_sdk(OP, e))?;
        let roles = page
            .roles()
            .iter()
            .map(|r| ListedRole {
                name: r.role_name().to_string(),
                arn: r.arn().to_string(),
                path: r.path().to_string(),
                trust_policy: r.assume_role_policy_document().and_then(|doc| {
                    decode_document(OP, doc)
                        .map_err(
                            |e| tracing::debug!(role = r.role_name(), error = %e, "unreadable trust policy"),
                        )
                        .ok()
                }),
            })
            .collect();
        let next = match page.marker() {
            Some(m) if page.is_truncated() => Some(m.to_string()),
            _ => None,
        };
        Ok(RolePage { roles, next })
    }

    pub async fn delete_role(&self, name: &str) -> Result<(), IamError> {
        gone_is_ok(
            self.client
                .delete_role()
                .role_name(name)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("DeleteRole", e)),
        )
    }

    pub async fn update_trust_policy(&self, name: &str, document: &Json) -> Result<(), IamError> {
        let document = document.to_string();
        retry_consistency(CONSISTENCY_BUDGET, FIRST_DELAY, || async {
            self.client
                .update_assume_role_policy()
                .role_name(name)
                .policy_document(&document)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("UpdateAssumeRolePolicy", e))
        })
        .await
        .map(|_| ())
    }

    /// Sets (Some) or removes (None) the role's permissions boundary.
    pub async fn set_permissions_boundary(&self, name: &str, boundary: Option<&str>) -> Result<(), IamError> {
        match boundary {
            Some(arn) => self
                .client
                .put_role_permissions_boundary()
                .role_name(name)
                .permissions_boundary(arn)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| IamError::from_sdk("PutRolePermissionsBoundary", e)),
            None => gone_is_ok(
                self.client
                    .delete_role_permissions_boundary()
                    .role_name(name)
                    .send()
                    .await
                    .map_err(|e| IamError::from_sdk("DeleteRolePermissionsBoundary", e)),
            ),
        }
    }

    pub async fn role_tags(&self, name: &str) -> Result<BTreeMap<String, String>, IamError> {
        let mut out = BTreeMap::new();
        let mut marker = None;
        loop {
            let page = self
                .client
                .list_role_tags()
                .role_name(name)
                .set_marker(marker)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("ListRoleTags", e))?;
            out.extend(tag_map(page.tags()));
            match page.marker() {
                Some(m) if page.is_truncated() => marker = Some(m.to_string()),
                _ => return Ok(out),
            }
        }
    }

    pub async fn attached_policies(&self, role: &str) -> Result<BTreeSet<String>, IamError> {
        let mut out = BTreeSet::new();
        let mut marker = None;
        loop {
            let page = self
                .client
                .list_attached_role_policies()
                .role_name(role)
                .set_marker(marker)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("ListAttachedRolePolicies", e))?;
            out.extend(
                page.attached_policies()
                    .iter()
                    .filter_map(|p| p.policy_arn().map(str::to_string)),
            );
            match page.marker() {
                Some(m) if page.is_truncated() => marker = Some(m.to_string()),
                _ => return Ok(out),
            }
        }
    }

    /// Attaches a managed policy, waiting out a just-created role (or policy) not yet visible.
    /// An AWS managed policy that does not exist is never "just created": that fails at once.
    pub async fn attach_policy(&self, role: &str, policy_arn: &str) -> Result<(), IamError> {
        let aws_managed = policy_arn.split(':').nth(4) == Some("aws");
        let retryable = |e: &IamError| {
            e.is_eventual_consistency() && !(aws_managed && e.message.contains("not attachable"))
        };
        retry_while(CONSISTENCY_BUDGET, FIRST_DELAY, retryable, || async {
            self.client
                .attach_role_policy()
                .role_name(role)
                .policy_arn(policy_arn)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("AttachRolePolicy", e))
        })
        .await
        .map(|_| ())
    }

    pub async fn detach_policy(&self, role: &str, policy_arn: &str) -> Result<(), IamError> {
        gone_is_ok(
            self.client
                .detach_role_policy()
                .role_name(role)
                .policy_arn(policy_arn)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("DetachRolePolicy", e)),
        )
    }

    pub async fn inline_policy_names(&self, role: &str) -> Result<Vec<String>, IamError> {
        let mut out = Vec::new();
        let mut marker = None;
        loop {
            let page = self
                .client
                .list_role_policies()
                .role_name(role)
                .set_marker(marker)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("ListRolePolicies", e))?;
            out.extend(page.policy_names().iter().cloned());
            match page.marker() {
                Some(m) if page.is_truncated() => marker = Some(m.to_string()),
                _ => return Ok(out),
            }
        }
    }

    /// The inline policy's document, or None when the role has no policy of that name.
    pub async fn get_inline_policy(&self, role: &str, policy: &str) -> Result<Option<Json>, IamError> {
        const OP: &str = "GetRolePolicy";
        let out = found(
            self.client
                .get_role_policy()
                .role_name(role)
                .policy_name(policy)
                .send()
                .await
                .map_err(|e| IamError::from_sdk(OP, e)),
        )?;
        out.map(|o| decode_document(OP, o.policy_document())).transpose()
    }

    pub async fn put_inline_policy(&self, role: &str, policy: &str, document: &str) -> Result<(), IamError> {
        retry_consistency(CONSISTENCY_BUDGET, FIRST_DELAY, || async {
            self.client
                .put_role_policy()
                .role_name(role)
                .policy_name(policy)
                .policy_document(document)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("PutRolePolicy", e))
        })
        .await
        .map(|_| ())
    }

    pub async fn delete_inline_policy(&self, role: &str, policy: &str) -> Result<(), IamError> {
        gone_is_ok(
            self.client
                .delete_role_policy()
                .role_name(role)
                .policy_name(policy)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("DeleteRolePolicy", e)),
        )
    }
}
