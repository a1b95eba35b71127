//! Thin wrappers over aws-sdk-iam for the Karpenter role resources: roles, trust policies,
//! managed and inline policies, instance profiles and tags.
//!
//! Policy documents come back from IAM percent-encoded; every getter here decodes them and
//! returns parsed JSON, so callers compare documents as data, never as text. Deletes treat
//! "already gone" as success. [`retry_consistency`] is the one place that waits out IAM's
//! eventual consistency (a role or profile created a moment ago that other calls do not see yet).

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use aws_sdk_iam::Client;
use aws_sdk_iam::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_iam::types::Tag;
use serde_json::Value as Json;
use thiserror::Error;

use super::error::{AwsErrorKind, CREDENTIAL_SOURCES};

mod policies;
mod profiles;
mod roles;

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

/// A tagged IAM entity: what [`Iam::sync_tags`] changes the tags of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tagged<'a> {
    /// A role, by name.
    Role(&'a str),
    /// A customer managed policy, by ARN.
    ManagedPolicy(&'a str),
    /// An instance profile, by name.
    InstanceProfile(&'a str),
}

impl Iam {
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Makes the entity's tags exactly `wanted`, given what it has now: the keys it should no
    /// longer have are removed first, then the changed and new ones are set.
    pub async fn sync_tags(
        &self,
        entity: Tagged<'_>,
        current: &BTreeMap<String, String>,
        wanted: &BTreeMap<String, String>,
    ) -> Result<(), IamError> {
        let changes = super::tags::diff(current, wanted);
        if !changes.remove.is_empty() {
            self.untag(entity, changes.remove).await?;
        }
        if !changes.set.is_empty() {
            self.tag(entity, &changes.set).await?;
        }
        Ok(())
    }

    async fn untag(&self, entity: Tagged<'_>, keys: Vec<String>) -> Result<(), IamError> {
        let keys = Some(keys);
        match entity {
            Tagged::Role(name) => self
                .client
                .untag_role()
                .role_name(name)
                .set_tag_keys(keys)
                .send()
                .await
                .map(drop)
                .map_err(|e| IamError::from_sdk("UntagRole", e)),
            Tagged::ManagedPolicy(arn) => self
                .client
                .untag_policy()
                .policy_arn(arn)
                .set_tag_keys(keys)
                .send()
                .await
                .map(drop)
                .map_err(|e| IamError::from_sdk("UntagPolicy", e)),
            Tagged::InstanceProfile(name) => self
                .client
                .untag_instance_profile()
                .instance_profile_name(name)
                .set_tag_keys(keys)
                .send()
                .await
                .map(drop)
                .map_err(|e| IamError::from_sdk("UntagInstanceProfile", e)),
        }
    }

    async fn tag(&self, entity: Tagged<'_>, set: &BTreeMap<String, String>) -> Result<(), IamError> {
        match entity {
            Tagged::Role(name) => self
                .client
                .tag_role()
                .role_name(name)
                .set_tags(tags("TagRole", set)?)
                .send()
                .await
                .map(drop)
                .map_err(|e| IamError::from_sdk("TagRole", e)),
            Tagged::ManagedPolicy(arn) => self
                .client
                .tag_policy()
                .policy_arn(arn)
                .set_tags(tags("TagPolicy", set)?)
                .send()
                .await
                .map(drop)
                .map_err(|e| IamError::from_sdk("TagPolicy", e)),
            Tagged::InstanceProfile(name) => self
                .client
                .tag_instance_profile()
                .instance_profile_name(name)
                .set_tags(tags("TagInstanceProfile", set)?)
                .send()
                .await
                .map(drop)
                .map_err(|e| IamError::from_sdk("TagInstanceProfile", e)),
        }
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
