//! Credentials from STS role assumption, for `aws { assume_role {} }` and
//! `aws { assume_role_with_web_identity {} }`: a [`ProvideCredentials`] that calls STS
//! `AssumeRole` (with the base credentials) or `AssumeRoleWithWebIdentity` (unsigned, with a
//! token given inline or read from its file on every renewal) through aws-sdk-sts.
//!
//! The SDK's identity cache in front of the provider keeps the credentials until shortly
//! before they expire, then calls it again. aws-config's own providers lack session tag
//! transitivity (`AssumeRole`), an inline token and a session length (`AssumeRoleWithWebIdentity`),
//! which hashicorp/aws offers; nothing here signs or speaks STS itself.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::{self, ProvideCredentials, error::CredentialsError, future};

use crate::settings::{AssumeRoleSettings, Redacted, WebIdentitySettings};

/// The session name used when none is configured.
pub const DEFAULT_SESSION_NAME: &str = "terraform-provider-karpenter";

/// Where a web identity token comes from.
#[derive(Clone)]
enum Token {
    Inline(Redacted),
    File(std::path::PathBuf),
}

/// One role assumption and the STS client that makes it.
#[derive(Clone)]
enum Request {
    Role(AssumeRoleSettings),
    WebIdentity {
        settings: WebIdentitySettings,
        role_arn: String,
        token: Token,
    },
}

/// Credentials of an assumed role, fetched from STS when the SDK's cache needs them.
#[derive(Clone)]
pub struct RoleCredentials {
    sts: aws_sdk_sts::Client,
    request: Request,
}

impl std::fmt::Debug for RoleCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let role = match &self.request {
            Request::Role(s) => &s.role_arn,
            Request::WebIdentity { role_arn, .. } => role_arn,
        };
        f.debug_struct("RoleCredentials").field("role_arn", role).finish()
    }
}

impl RoleCredentials {
    /// `AssumeRole` of `settings.role_arn`; `sts` carries the base credentials.
    pub fn assume_role(sts: aws_sdk_sts::Client, settings: &AssumeRoleSettings) -> Self {
        Self {
            sts,
            request: Request::Role(settings.clone()),
        }
    }

    /// `AssumeRoleWithWebIdentity`; `None` when the role or the token is missing (the
    /// configure-time check reports that with the attribute path).
    pub fn web_identity(sts: aws_sdk_sts::Client, settings: &WebIdentitySettings) -> Option<Self> {
        let token = match (&settings.web_identity_token, &settings.web_identity_token_file) {
            (Some(t), _) => Token::Inline(t.clone()),
            (None, Some(f)) => Token::File(crate::settings::expand_home(f)),
            (None, None) => return None,
        };
        Some(Self {
            sts,
            request: Request::WebIdentity {
                settings: settings.clone(),
                role_arn: settings.role_arn.clone()?,
                token,
            },
        })
    }

    async fn fetch(&self) -> provider::Result {
        let (creds, source) = match &self.request {
            Request::Role(s) => {
                tracing::debug!(role_arn = %s.role_arn, "assuming role");
                let out = self
                    .sts
                    .assume_role()
                    .role_arn(&s.role_arn)
                    .role_session_name(s.session_name.as_deref().unwrap_or(DEFAULT_SESSION_NAME))
                    .set_external_id(s.external_id.clone())
                    .set_duration_seconds(seconds(s.duration))
                    .set_policy(s.policy.clone())
                    .set_policy_arns(policy_arns(&s.policy_arns))
                    .set_tags(tags(s)?)
                    .set_transitive_tag_keys(non_empty(&s.transitive_tag_keys))
                    .send()
                    .await
                    .map_err(|e| {
                        CredentialsError::provider_error(sts_failure("AssumeRole", &s.role_arn, e))
                    })?;
                (out.credentials, "AssumeRole")
            }
            Request::WebIdentity {
                settings,
                role_arn,
                token,
            } => {
                let token = match token {
                    Token::Inline(t) => t.expose().to_string(),
                    Token::File(path) => std::fs::read_to_string(path)
                        .map_err(|e| {
                            CredentialsError::invalid_configuration(format!(
                                "the web identity token file {} cannot be read: {e}",
                                path.display()
                            ))
                        })?
                        .trim()
                        .to_string(),
                };
                tracing::debug!(role_arn = %role_arn, "assuming role with web identity");
                let out = self
                    .sts
                    .assume_role_with_web_identity()
                    .role_arn(role_arn)
                    .role_session_name(settings.session_name.as_deref().unwrap_or(DEFAULT_SESSION_NAME))
                    .web_identity_token(token)
                    .set_duration_seconds(seconds(settings.duration))
                    .set_policy(settings.policy.clone())
                    .set_policy_arns(policy_arns(&settings.policy_arns))
                    .send()
                    .await
                    .map_err(|e| {
                        CredentialsError::provider_error(sts_failure(
                            "AssumeRoleWithWebIdentity",
                            role_arn,
                            e,
                        ))
                    })?;
                (out.credentials, "AssumeRoleWithWebIdentity")
            }
        };
        let creds = creds
            .ok_or_else(|| CredentialsError::unhandled(format!("STS {source} returned no credentials")))?;
        let expiry = SystemTime::try_from(creds.expiration).ok();
        Ok(Credentials::new(
            creds.access_key_id,
            creds.secret_access_key,
            Some(creds.session_token),
            expiry,
            source,
        ))
    }
}

impl ProvideCredentials for RoleCredentials {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        future::ProvideCredentials::new(self.fetch())
    }
}

/// The STS failure, with the action and role named (the SDK error's own text is generic).
fn sts_failure<E, R>(action: &str, role_arn: &str, e: aws_sdk_sts::error::SdkError<E, R>) -> String
where
    E: aws_sdk_sts::error::ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug + 'static,
{
    let detail = match e.as_service_error() {
        Some(service) => format!(
            "{}: {}",
            service.code().unwrap_or("error"),
            service.message().unwrap_or_default()
        ),
        None => super::error::error_chain(&e),
    };
    format!("STS {action} of {role_arn} failed: {detail}")
}

fn seconds(d: Option<Duration>) -> Option<i32> {
    d.map(|d| i32::try_from(d.as_secs()).unwrap_or(i32::MAX))
}

fn non_empty(v: &[String]) -> Option<Vec<String>> {
    (!v.is_empty()).then(|| v.to_vec())
}

fn policy_arns(arns: &[String]) -> Option<Vec<aws_sdk_sts::types::PolicyDescriptorType>> {
    (!arns.is_empty()).then(|| {
        arns.iter()
            .map(|a| aws_sdk_sts::types::PolicyDescriptorType::builder().arn(a).build())
            .collect()
    })
}

fn tags(s: &AssumeRoleSettings) -> Result<Option<Vec<aws_sdk_sts::types::Tag>>, CredentialsError> {
    if s.tags.is_empty() {
        return Ok(None);
    }
    s.tags
        .iter()
        .map(|(k, v)| {
            aws_sdk_sts::types::Tag::builder()
                .key(k)
                .value(v)
                .build()
                .map_err(|e| CredentialsError::invalid_configuration(format!("assume_role.tags: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_role_never_the_token() {
        let sts = aws_sdk_sts::Client::from_conf(
            aws_sdk_sts::Config::builder()
                .behavior_version(aws_sdk_sts::config::BehaviorVersion::latest())
                .build(),
        );
        let web = WebIdentitySettings {
            role_arn: Some("arn:aws:iam::123456789012:role/r".into()),
            web_identity_token: Some(Redacted("eyJsecret-token".into())),
            ..Default::default()
        };
        let Some(p) = RoleCredentials::web_identity(sts, &web) else {
            panic!("role and token are set")
        };
        let shown = format!("{p:?} {web:?}");
        assert!(shown.contains("role/r"), "{shown}");
        assert!(!shown.contains("eyJsecret"), "{shown}");
    }

    #[test]
    fn durations_become_sts_seconds() {
        assert_eq!(seconds(Some(Duration::from_secs(3600))), Some(3600));
        assert_eq!(seconds(None), None);
    }
}
