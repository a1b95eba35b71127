//! The provider's resolved settings: what the `kubernetes {}` and `aws {}` blocks say once the
//! environment fallbacks are applied. The provider's configuration parser produces them; the
//! Kubernetes and AWS client layers consume them. Plain data, below both.

use std::collections::BTreeMap;

use crate::terraform::tfvalue::AttributePath;

/// The kubernetes block, resolved with environment fallbacks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KubernetesSettings {
    pub host: Option<String>,
    pub cluster_ca_certificate: Option<String>,
    pub token: Option<String>,
    pub client_certificate: Option<String>,
    pub client_key: Option<String>,
    pub insecure: bool,
    pub config_path: Option<String>,
    /// `config_paths`, or `KUBE_CONFIG_PATHS` split at the platform's path separator.
    pub config_paths: Vec<String>,
    pub config_context: Option<String>,
    pub config_context_auth_info: Option<String>,
    pub config_context_cluster: Option<String>,
    pub tls_server_name: Option<String>,
    pub proxy_url: Option<String>,
    pub exec: Option<ExecSettings>,
    pub eks: Option<EksSettings>,
}

/// `kubernetes { eks {} }`: native EKS authentication.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EksSettings {
    pub cluster_name: String,
    pub region: Option<String>,
    pub role_arn: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecSettings {
    pub api_version: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

/// The aws block, resolved with environment fallbacks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AwsSettings {
    pub region: Option<String>,
    pub profile: Option<String>,
    pub assume_role: Option<AssumeRoleSettings>,
    pub endpoints: BTreeMap<String, String>,
    /// Static keys from the configuration (not from the environment: the chain reads those).
    pub access_key: Option<Redacted>,
    pub secret_key: Option<Redacted>,
    pub token: Option<Redacted>,
    /// As configured (`~` not yet expanded); empty: the SDK's defaults and environment.
    pub shared_config_files: Vec<String>,
    pub shared_credentials_files: Vec<String>,
    /// The SDK's maximum attempts; `None` (or `max_retries = 0`): the SDK's own resolution.
    pub max_retries: Option<u32>,
    /// The PEM bundle's path (`custom_ca_bundle` or `AWS_CA_BUNDLE`).
    pub custom_ca_bundle: Option<String>,
    pub assume_role_with_web_identity: Option<WebIdentitySettings>,
    /// `default_tags { tags }` over the `TF_AWS_DEFAULT_TAGS_<key>` environment variables.
    pub default_tags: BTreeMap<String, String>,
    /// The accounts the provider may change things in (empty: any).
    pub allowed_account_ids: Vec<String>,
    /// The accounts the provider must not change things in.
    pub forbidden_account_ids: Vec<String>,
}

/// A secret setting: compared and cloned like a string, but never shown by `{:?}`.
#[derive(Clone, Default, PartialEq)]
pub struct Redacted(pub String);

impl Redacted {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(sensitive)")
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssumeRoleSettings {
    pub role_arn: String,
    pub session_name: Option<String>,
    pub external_id: Option<String>,
    pub duration: Option<std::time::Duration>,
    pub policy: Option<String>,
    pub policy_arns: Vec<String>,
    pub tags: BTreeMap<String, String>,
    pub transitive_tag_keys: Vec<String>,
}

/// `aws { assume_role_with_web_identity {} }`, with its environment fallbacks applied.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebIdentitySettings {
    pub role_arn: Option<String>,
    pub session_name: Option<String>,
    pub web_identity_token: Option<Redacted>,
    pub web_identity_token_file: Option<String>,
    pub duration: Option<std::time::Duration>,
    pub policy: Option<String>,
    pub policy_arns: Vec<String>,
}

/// The whole provider configuration. `unknown` lists what was not yet known when configured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderSettings {
    /// The top-level `cluster_name`, else `kubernetes { eks { cluster_name } }`.
    pub cluster_name: Option<String>,
    pub kubernetes: KubernetesSettings,
    pub aws: AwsSettings,
    /// `plan_health = false`: a plan does not read or say the health of what it manages.
    pub no_plan_health: bool,
    pub unknown: Vec<AttributePath>,
}

/// `path` with a leading `~` (alone or before a separator) replaced by the home directory, as
/// hashicorp/aws does for its file settings.
pub fn expand_home(path: &str) -> std::path::PathBuf {
    let home = || std::env::var_os("HOME").filter(|h| !h.is_empty());
    match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => match home() {
            Some(h) => {
                let mut p = std::path::PathBuf::from(h);
                p.push(rest.trim_start_matches('/'));
                p
            }
            None => std::path::PathBuf::from(path),
        },
        _ => std::path::PathBuf::from(path),
    }
}
