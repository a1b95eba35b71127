//! Thin wrappers over aws-sdk-iam for the Karpenter role resources: roles, trust policies,
//! managed and inline policies, instance profiles and tags.
//!
//! Policy documents come back from IAM percent-encoded; every getter here decodes them and
//! returns parsed JSON, so callers compare documents as data, never as text. Deletes treat
//! "already gone" as success. [`retry_consistency`] is the one place that waits out IAM's
//! eventual consistency (a role or profile created a moment ago that other calls do not see yet).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::Duration;

use aws_sdk_iam::Client;
use aws_sdk_iam::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_iam::types::Tag;
use serde_json::Value as Json;
use thiserror::Error;

use super::error::{AwsErrorKind, CREDENTIAL_SOURCES};

/// An IAM call that failed: the operation, AWS's error code (when the service sent one) and
/// its message.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("IAM {operation} failed: {}{message}", code.as_deref().map(|c| format!("{c}: ")).unwrap_or_default())]
pub struct IamError {
    pub operation: &'static str,
    pub code: Option<String>,
    pub message: String,
}

impl IamError {
    pub fn new(operation: &'static str, code: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            operation,
            code: code.map(str::to_string),
            message: message.into(),
        }
    }

    fn from_sdk<E>(operation: &'static str, err: SdkError<E, aws_sdk_iam::config::http::HttpResponse>) -> Self
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        if err.as_service_error().is_none() {
            // Transport failures: say what is wrong with the provider's AWS setup.
            let chain = super::error::error_chain(&err);
            let message = match super::error::transport_kind(&err) {
                AwsErrorKind::Credentials => {
                    format!("no AWS credentials found (sources tried: {CREDENTIAL_SOURCES}): {chain}")
                }
                AwsErrorKind::Connection => format!("could not connect to the IAM endpoint: {chain}"),
                AwsErrorKind::Tls => format!("TLS handshake with the IAM endpoint failed: {chain}"),
                _ => chain,
            };
            return Self {
                operation,
                code: None,
                message,
            };
        }
        let code = err.as_service_error().and_then(|e| e.code()).map(str::to_string);
        // A 403 whose body the SDK cannot read (a proxy's page, a stand-in's odd XML) would
        // otherwise surface as a dump of the raw response.
        if code.is_none()
            && err.as_service_error().is_some()
            && err.raw_response().is_some_and(|r| r.status().as_u16() == 403)
        {
            return Self {
                operation,
                code: Some("AccessDenied".into()),
                message: format!(
                    "HTTP 403 Forbidden (the response body could not be read). Allow iam:{operation} for the provider's AWS credentials"
                ),
            };
        }
        let message = err
            .as_service_error()
            .and_then(|e| e.message())
            .map(str::to_string)
            .unwrap_or_else(|| super::error::error_chain(&err));
        Self {
            operation,
            code,
            message,
        }
    }

    fn code_is(&self, code: &str) -> bool {
        self.code.as_deref() == Some(code)
    }

    /// The entity does not exist (`NoSuchEntity`).
    pub fn is_not_found(&self) -> bool {
        self.code_is("NoSuchEntity")
    }

    /// The entity exists already (`EntityAlreadyExists`).
    pub fn is_already_exists(&self) -> bool {
        self.code_is("EntityAlreadyExists")
    }

    /// What IAM answers while a just-created role or profile has not reached every endpoint:
    /// the entity is "not found", or a trust policy naming it has an "invalid principal".
    pub fn is_eventual_consistency(&self) -> bool {
        self.is_not_found()
            || (self.code_is("MalformedPolicyDocument") && self.message.contains("Invalid principal"))
    }
}

/// Percent-decodes a policy document as IAM returns it and parses it as JSON.
pub fn decode_document(operation: &'static str, raw: &str) -> Result<Json, IamError> {
    let decoded = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map_err(|e| IamError::new(operation, None, format!("policy document is not UTF-8: {e}")))?;
    serde_json::from_str(&decoded)
        .map_err(|e| IamError::new(operation, None, format!("policy document is not JSON: {e}")))
}

/// Retries `call` while it fails with [`IamError::is_eventual_consistency`], with capped
/// exponential backoff starting at `first_delay`, until `budget` is spent; then returns the
/// last error.
pub async fn retry_consistency<T, F, Fut>(
    budget: Duration,
    first_delay: Duration,
    call: F,
) -> Result<T, IamError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, IamError>>,
{
    retry_while(budget, first_delay, IamError::is_eventual_consistency, call).await
}

/// [`retry_consistency`] with the caller's own test of which errors are worth waiting out.
pub async fn retry_while<T, F, Fut>(
    budget: Duration,
    first_delay: Duration,
    retryable: impl Fn(&IamError) -> bool,
    mut call: F,
) -> Result<T, IamError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, IamError>>,
{
    let start = tokio::time::Instant::now();
    let mut delay = first_delay;
    loop {
        match call().await {
            Err(e) if retryable(&e) && start.elapsed() + delay <= budget => {
                tracing::debug!(operation = e.operation, error = %e, ?delay, "IAM not consistent yet; retrying");
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
            }
            other => return other,
        }
    }
}

/// How long writes that follow a create wait for IAM to become consistent.
pub const CONSISTENCY_BUDGET: Duration = Duration::from_secs(60);
const FIRST_DELAY: Duration = Duration::from_millis(250);

/// What a role looks like, as far as the Karpenter resources care.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleInfo {
    pub name: String,
    pub arn: String,
    pub path: String,
    pub trust_policy: Json,
    pub permissions_boundary: Option<String>,
}

/// What an instance profile looks like.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileInfo {
    pub name: String,
    pub arn: String,
    pub roles: Vec<String>,
    pub tags: BTreeMap<String, String>,
}

/// One role as ListRoles returns it: no tags and no permissions boundary (IAM leaves them
/// out of the listing), but the trust policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedRole {
    pub name: String,
    pub arn: String,
    pub path: String,
    /// The trust policy; None when the role has none or it is not readable as JSON.
    pub trust_policy: Option<Json>,
}

/// One page of ListRoles, and the marker of the next (None on the last page).
#[derive(Debug, Clone, PartialEq)]
pub struct RolePage {
    pub roles: Vec<ListedRole>,
    pub next: Option<String>,
}

/// The parameters of a new role.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRole<'a> {
    pub name: &'a str,
    pub path: &'a str,
    pub trust_policy: &'a Json,
    pub permissions_boundary: Option<&'a str>,
    pub description: Option<&'a str>,
    pub tags: &'a BTreeMap<String, String>,
}

fn tags(operation: &'static str, map: &BTreeMap<String, String>) -> Result<Option<Vec<Tag>>, IamError> {
    if map.is_empty() {
        return Ok(None);
    }
    map.iter()
        .map(|(k, v)| {
            Tag::builder()
                .key(k)
                .value(v)
                .build()
                .map_err(|e| IamError::new(operation, None, e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn tag_map(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter()
        .map(|t| (t.key().to_string(), t.value().to_string()))
        .collect()
}

/// Ok(()) when the call succeeded or the entity was already gone.
fn gone_is_ok<T>(r: Result<T, IamError>) -> Result<(), IamError> {
    match r {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Some(value), None when not found, or the error.
fn found<T>(r: Result<T, IamError>) -> Result<Option<T>, IamError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The IAM calls the role resources make.
#[derive(Debug, Clone)]
pub struct Iam {
    client: Client,
}

impl Iam {
    pub fn new(client: Client) -> Self {
        Self { client }
    }

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

    /// Makes the role's tags exactly `wanted`, given what it has now.
    pub async fn sync_role_tags(
        &self,
        name: &str,
        current: &BTreeMap<String, String>,
        wanted: &BTreeMap<String, String>,
    ) -> Result<(), IamError> {
        let changes = super::tags::diff(current, wanted);
        if !changes.remove.is_empty() {
            self.client
                .untag_role()
                .role_name(name)
                .set_tag_keys(Some(changes.remove))
                .send()
                .await
                .map_err(|e| IamError::from_sdk("UntagRole", e))?;
        }
        if !changes.set.is_empty() {
            self.client
                .tag_role()
                .role_name(name)
                .set_tags(tags("TagRole", &changes.set)?)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("TagRole", e))?;
        }
        Ok(())
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

    /// Makes the managed policy's tags exactly `wanted`, given what it has now.
    pub async fn sync_policy_tags(
        &self,
        arn: &str,
        current: &BTreeMap<String, String>,
        wanted: &BTreeMap<String, String>,
    ) -> Result<(), IamError> {
        let changes = super::tags::diff(current, wanted);
        if !changes.remove.is_empty() {
            self.client
                .untag_policy()
                .policy_arn(arn)
                .set_tag_keys(Some(changes.remove))
                .send()
                .await
                .map_err(|e| IamError::from_sdk("UntagPolicy", e))?;
        }
        if !changes.set.is_empty() {
            self.client
                .tag_policy()
                .policy_arn(arn)
                .set_tags(tags("TagPolicy", &changes.set)?)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("TagPolicy", e))?;
        }
        Ok(())
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

    /// Makes the instance profile's tags exactly `wanted`, given what it has now.
    pub async fn sync_profile_tags(
        &self,
        name: &str,
        current: &BTreeMap<String, String>,
        wanted: &BTreeMap<String, String>,
    ) -> Result<(), IamError> {
        let changes = super::tags::diff(current, wanted);
        if !changes.remove.is_empty() {
            self.client
                .untag_instance_profile()
                .instance_profile_name(name)
                .set_tag_keys(Some(changes.remove))
                .send()
                .await
                .map_err(|e| IamError::from_sdk("UntagInstanceProfile", e))?;
        }
        if !changes.set.is_empty() {
            self.client
                .tag_instance_profile()
                .instance_profile_name(name)
                .set_tags(tags("TagInstanceProfile", &changes.set)?)
                .send()
                .await
                .map_err(|e| IamError::from_sdk("TagInstanceProfile", e))?;
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn decodes_percent_encoded_documents_as_json() {
        let raw = "%7B%22Version%22%3A%222012-10-17%22%2C%0A%20%20%22Statement%22%3A%5B%5D%7D";
        let doc = decode_document("GetRole", raw).expect("decode");
        assert_eq!(doc, serde_json::json!({"Version": "2012-10-17", "Statement": []}));
        // A document IAM returned without encoding decodes to itself.
        let plain = decode_document("GetRole", r#"{"a":"b c"}"#).expect("plain");
        assert_eq!(plain, serde_json::json!({"a": "b c"}));
        assert!(decode_document("GetRole", "%7Bnot json").is_err());
    }

    #[test]
    fn classifies_codes() {
        assert!(IamError::new("GetRole", Some("NoSuchEntity"), "Role x not found").is_not_found());
        assert!(
            IamError::new(
                "CreateRole",
                Some("MalformedPolicyDocument"),
                "Invalid principal in policy"
            )
            .is_eventual_consistency()
        );
        assert!(
            !IamError::new(
                "CreateRole",
                Some("MalformedPolicyDocument"),
                "Syntax errors in policy."
            )
            .is_eventual_consistency()
        );
        assert!(!IamError::new("DeleteRole", Some("DeleteConflict"), "x").is_eventual_consistency());
        let shown = IamError::new("GetRole", Some("NoSuchEntity"), "Role x not found").to_string();
        assert_eq!(shown, "IAM GetRole failed: NoSuchEntity: Role x not found");
    }

    #[tokio::test]
    async fn retries_eventual_consistency_then_succeeds() {
        let calls = AtomicU32::new(0);
        let r = retry_consistency(Duration::from_secs(5), Duration::from_millis(1), || async {
            if calls.fetch_add(1, Ordering::SeqCst) < 2 {
                Err(IamError::new(
                    "AttachRolePolicy",
                    Some("NoSuchEntity"),
                    "role not found",
                ))
            } else {
                Ok(7)
            }
        })
        .await;
        assert_eq!(r, Ok(7));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn does_not_retry_other_errors_and_stops_at_the_budget() {
        let calls = AtomicU32::new(0);
        let r: Result<(), _> =
            retry_consistency(Duration::from_secs(5), Duration::from_millis(1), || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(IamError::new("DeleteRole", Some("DeleteConflict"), "x"))
            })
            .await;
        assert!(r.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let calls = AtomicU32::new(0);
        let r: Result<(), _> =
            retry_consistency(Duration::from_millis(30), Duration::from_millis(10), || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(IamError::new("AttachRolePolicy", Some("NoSuchEntity"), "x"))
            })
            .await;
        assert!(r.is_err_and(|e| e.is_not_found()));
        let n = calls.load(Ordering::SeqCst);
        assert!((2..=4).contains(&n), "{n} attempts");
    }
}
