//! Builds the AWS SDK configuration from [`AwsSettings`]: region, shared-config profile and
//! files, static keys, role assumption, the SDK's standard retry mode (with `max_retries`),
//! an extra CA bundle, and per-service endpoint overrides
//! (`endpoints { iam = …, sqs = …, events = …, sts = …, eks = …, ec2 = … }`).
//!
//! Credentials, as hashicorp/aws resolves them: the configured static keys, else the standard
//! chain (environment, profile, SSO, web identity, container and instance metadata). With
//! `assume_role_with_web_identity`, its role's credentials replace them; with `assume_role`,
//! whatever came before assumes that role.

use aws_config::retry::RetryConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_credential_types::Credentials;
use aws_runtime::env_config::file::{EnvConfigFileKind as ProfileFileKind, EnvConfigFiles as ProfileFiles};
use aws_sdk_sts::config::SharedCredentialsProvider;

use crate::aws::assume::RoleCredentials;
use crate::settings::{AwsSettings, expand_home};

/// The application name every AWS request carries in its User-Agent (`app/…`), so CloudTrail
/// attributes the calls to this provider and its version. `#` joins name and version as the
/// SDK's own User-Agent metadata does (`/` is not allowed in an app name).
pub const APP_NAME: &str = concat!("terraform-provider-karpenter#", env!("CARGO_PKG_VERSION"));

pub use crate::aws::assume::DEFAULT_SESSION_NAME;

/// Why the SDK configuration could not be built (the configure-time check reports the same
/// problems with their attribute path first; these are for what changed in between).
#[derive(Debug, thiserror::Error)]
pub enum AwsConfigError {
    #[error("the CA bundle {path} cannot be read: {source}")]
    CaBundleUnreadable { path: String, source: std::io::Error },
    #[error("the CA bundle {path} {problem}")]
    CaBundleInvalid { path: String, problem: String },
    #[error("the HTTPS client for the CA bundle could not be built: {0}")]
    HttpClient(String),
}

/// The shared SDK configuration plus the endpoint overrides; builds service clients.
///
/// Clients are cheap to build from a shared `SdkConfig` (they share its HTTP client and
/// credentials cache), so each accessor builds a fresh one.
#[derive(Debug, Clone)]
pub struct AwsClients {
    config: SdkConfig,
    settings: AwsSettings,
}

impl AwsClients {
    /// Loads the SDK configuration for `settings`. Resolves the region and the credentials
    /// provider chain; does not call AWS (credentials are fetched on the first request).
    pub async fn load(settings: &AwsSettings) -> Result<Self, AwsConfigError> {
        let config = load_sdk_config(settings).await?;
        Ok(Self {
            config,
            settings: settings.clone(),
        })
    }

    /// The shared SDK configuration.
    pub fn sdk_config(&self) -> &SdkConfig {
        &self.config
    }

    /// The region requests go to, if one was resolved.
    pub fn region(&self) -> Option<&str> {
        self.config.region().map(Region::as_ref)
    }

    /// The endpoint override for `service` ("iam", "sqs", "events", "sts"), if any.
    pub fn endpoint(&self, service: &str) -> Option<&str> {
        self.settings.endpoints.get(service).map(String::as_str)
    }

    /// The endpoint `service` ("sqs", "events", ...) is called at: the override, or AWS's
    /// regional default for the resolved region.
    pub fn endpoint_for(&self, service: &str) -> String {
        match (self.endpoint(service), self.region()) {
            (Some(url), _) => url.to_string(),
            (None, Some(region)) => format!("https://{service}.{region}.amazonaws.com"),
            (None, None) => format!("the default {service} endpoint (no region set)"),
        }
    }

    pub fn iam(&self) -> aws_sdk_iam::Client {
        let mut b = aws_sdk_iam::config::Builder::from(&self.config);
        if let Some(url) = self.endpoint("iam") {
            b = b.endpoint_url(url);
        }
        aws_sdk_iam::Client::from_conf(b.build())
    }

    pub fn sqs(&self) -> aws_sdk_sqs::Client {
        let mut b = aws_sdk_sqs::config::Builder::from(&self.config);
        if let Some(url) = self.endpoint("sqs") {
            b = b.endpoint_url(url);
        }
        aws_sdk_sqs::Client::from_conf(b.build())
    }

    pub fn events(&self) -> aws_sdk_eventbridge::Client {
        let mut b = aws_sdk_eventbridge::config::Builder::from(&self.config);
        if let Some(url) = self.endpoint("events") {
            b = b.endpoint_url(url);
        }
        aws_sdk_eventbridge::Client::from_conf(b.build())
    }

    /// The EKS access-entry calls in the block's region, with their endpoint for diagnostics.
    pub fn eks_access(&self) -> super::eks_access::EksAccess {
        let mut b = aws_sdk_eks::config::Builder::from(&self.config);
        if let Some(url) = self.endpoint("eks") {
            b = b.endpoint_url(url);
        }
        super::eks_access::EksAccess::new(
            aws_sdk_eks::Client::from_conf(b.build()),
            self.endpoint_for("eks"),
        )
    }

    /// The EKS client for `region` (the cluster's, which may differ from the block's).
    pub fn eks_in(&self, region: &str) -> aws_sdk_eks::Client {
        let mut b = aws_sdk_eks::config::Builder::from(&self.config).region(Region::new(region.to_string()));
        if let Some(url) = self.endpoint("eks") {
            b = b.endpoint_url(url);
        }
        aws_sdk_eks::Client::from_conf(b.build())
    }

    /// The EC2 client of the teardown (`force_destroy`), with its endpoint for diagnostics.
    #[cfg(feature = "ec2")]
    pub fn ec2(&self) -> super::ec2::Ec2 {
        let mut b = aws_sdk_ec2::config::Builder::from(&self.config);
        if let Some(url) = self.endpoint("ec2") {
            b = b.endpoint_url(url);
        }
        super::ec2::Ec2::new(
            aws_sdk_ec2::Client::from_conf(b.build()),
            self.endpoint_for("ec2"),
        )
    }

    /// The EC2 instance-type calls in `region` (or the block's), with their endpoint for
    /// diagnostics.
    #[cfg(feature = "ec2")]
    pub fn ec2_instance_types(&self, region: Option<&str>) -> super::ec2_instance_types::Ec2InstanceTypes {
        let mut b = aws_sdk_ec2::config::Builder::from(&self.config);
        if let Some(region) = region {
            b = b.region(Region::new(region.to_string()));
        }
        if let Some(url) = self.endpoint("ec2") {
            b = b.endpoint_url(url);
        }
        let endpoint = match (self.endpoint("ec2"), region) {
            (Some(url), _) => url.to_string(),
            (None, Some(region)) => format!("https://ec2.{region}.amazonaws.com"),
            (None, None) => self.endpoint_for("ec2"),
        };
        super::ec2_instance_types::Ec2InstanceTypes::new(aws_sdk_ec2::Client::from_conf(b.build()), endpoint)
    }

    pub fn sts(&self) -> aws_sdk_sts::Client {
        let mut b = aws_sdk_sts::config::Builder::from(&self.config);
        if let Some(url) = self.endpoint("sts") {
            b = b.endpoint_url(url);
        }
        aws_sdk_sts::Client::from_conf(b.build())
    }
}

/// The certificates of a PEM bundle, or what is wrong with it.
pub fn pem_certificates(pem: &[u8]) -> Result<usize, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut n = 0;
    for cert in CertificateDer::pem_slice_iter(pem) {
        cert.map_err(|e| format!("is not a valid PEM bundle ({e})"))?;
        n += 1;
    }
    if n == 0 {
        return Err("holds no PEM certificate".into());
    }
    Ok(n)
}

/// The SDK's HTTPS client (hyper + rustls on aws-lc) trusting the system roots and `pem`.
fn https_client_trusting(
    pem: Vec<u8>,
) -> Result<aws_smithy_runtime_api::client::http::SharedHttpClient, AwsConfigError> {
    use aws_smithy_http_client::tls::{self, TlsContext, TrustStore};
    let context = TlsContext::builder()
        .with_trust_store(TrustStore::default().with_pem_certificate(pem))
        .build()
        .map_err(|e| AwsConfigError::HttpClient(e.to_string()))?;
    Ok(aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(tls::rustls_provider::CryptoMode::AwsLc))
        .tls_context(context)
        .build_https())
}

/// The shared files to read profiles from, when the configuration names any: the named ones
/// replace the default of their kind, the other kind keeps its default (and environment).
fn profile_files(settings: &AwsSettings) -> Option<ProfileFiles> {
    if settings.shared_config_files.is_empty() && settings.shared_credentials_files.is_empty() {
        return None;
    }
    let mut files = ProfileFiles::builder()
        .include_default_config_file(settings.shared_config_files.is_empty())
        .include_default_credentials_file(settings.shared_credentials_files.is_empty());
    for f in &settings.shared_config_files {
        files = files.with_file(ProfileFileKind::Config, expand_home(f));
    }
    for f in &settings.shared_credentials_files {
        files = files.with_file(ProfileFileKind::Credentials, expand_home(f));
    }
    Some(files.build())
}

/// An STS client on `base` (its credentials, HTTP client and region) at the STS endpoint
/// override, if any.
fn sts_client(base: &SdkConfig, settings: &AwsSettings) -> aws_sdk_sts::Client {
    let mut b = aws_sdk_sts::config::Builder::from(base);
    if let Some(url) = settings.endpoints.get("sts") {
        b = b.endpoint_url(url);
    }
    aws_sdk_sts::Client::from_conf(b.build())
}

/// The region of the selected shared-config profile (following `source_profile`), when
/// `settings` name none themselves: what the SDK would use before asking instance metadata.
/// Reads only local files, so the provider can resolve it at configuration time and plans can
/// rely on it.
pub async fn profile_region(settings: &AwsSettings) -> Option<String> {
    use aws_config::meta::region::ProvideRegion;
    let mut builder = aws_config::profile::ProfileFileRegionProvider::builder();
    if let Some(files) = profile_files(settings) {
        builder = builder.profile_files(files);
    }
    if let Some(profile) = &settings.profile {
        builder = builder.profile_name(profile);
    }
    builder.build().region().await.map(|r| r.as_ref().to_string())
}

/// Loads the [`SdkConfig`] for `settings`.
pub async fn load_sdk_config(settings: &AwsSettings) -> Result<SdkConfig, AwsConfigError> {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    match aws_config::AppName::new(APP_NAME) {
        Ok(name) => loader = loader.app_name(name),
        Err(e) => {
            tracing::warn!(error = %e, "the provider's AWS app name is not valid; requests go without it")
        }
    }
    // max_retries wins; else the SDK resolves AWS_MAX_ATTEMPTS / the profile's max_attempts,
    // and its default is the standard mode's 3 attempts
    if let Some(attempts) = settings.max_retries {
        loader = loader.retry_config(RetryConfig::standard().with_max_attempts(attempts));
    }
    if let Some(region) = &settings.region {
        loader = loader.region(Region::new(region.clone()));
    }
    if let Some(files) = profile_files(settings) {
        loader = loader.profile_files(files);
    }
    if let Some(profile) = &settings.profile {
        loader = loader.profile_name(profile);
    }
    if let Some(bundle) = &settings.custom_ca_bundle {
        let pem =
            std::fs::read(expand_home(bundle)).map_err(|source| AwsConfigError::CaBundleUnreadable {
                path: bundle.clone(),
                source,
            })?;
        let certs = pem_certificates(&pem).map_err(|problem| AwsConfigError::CaBundleInvalid {
            path: bundle.clone(),
            problem,
        })?;
        tracing::debug!(certificates = certs, "AWS clients trust the custom CA bundle");
        loader = loader.http_client(https_client_trusting(pem)?);
    }
    if let (Some(access), Some(secret)) = (&settings.access_key, &settings.secret_key) {
        // static keys in the configuration come before the whole chain, as in hashicorp/aws
        loader = loader.credentials_provider(Credentials::new(
            access.expose(),
            secret.expose(),
            settings.token.as_ref().map(|t| t.expose().to_string()),
            None,
            "provider configuration",
        ));
    }
    let mut config = loader.load().await;

    if let Some(web) = &settings.assume_role_with_web_identity {
        // AssumeRoleWithWebIdentity is unsigned: its STS client carries no credentials
        let mut unsigned = config.to_builder();
        unsigned.set_credentials_provider(None);
        let sts = sts_client(&unsigned.build(), settings);
        if let Some(provider) = RoleCredentials::web_identity(sts, web) {
            config = config
                .into_builder()
                .credentials_provider(SharedCredentialsProvider::new(provider))
                .build();
        }
    }
    if let Some(assume) = &settings.assume_role {
        let provider = RoleCredentials::assume_role(sts_client(&config, settings), assume);
        config = config
            .into_builder()
            .credentials_provider(SharedCredentialsProvider::new(provider))
            .build();
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::APP_NAME;

    #[test]
    fn the_app_name_is_one_the_sdk_accepts_and_names_the_version() {
        assert!(aws_config::AppName::new(APP_NAME).is_ok(), "{APP_NAME}");
        assert!(APP_NAME.ends_with(&format!("#{}", env!("CARGO_PKG_VERSION"))));
    }
}
