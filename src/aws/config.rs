//! Builds the AWS SDK configuration from [`AwsSettings`]: region, shared-config profile,
//! optional role assumption, the SDK's standard retry mode, and per-service endpoint
//! overrides (`endpoints { iam = …, sqs = …, events = …, sts = …, eks = …, ec2 = … }`).
//!
//! Credentials come from the standard chain (environment, profile, SSO, web identity,
//! container and instance metadata); with `assume_role`, those credentials assume the role.

use aws_config::retry::RetryConfig;
use aws_config::sts::AssumeRoleProvider;
use aws_config::{BehaviorVersion, Region, SdkConfig};

use crate::provider::config::AwsSettings;

/// The session name used for `assume_role` when none is configured.
pub const DEFAULT_SESSION_NAME: &str = "terraform-provider-karpenter";

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
    pub async fn load(settings: &AwsSettings) -> Self {
        let config = load_sdk_config(settings).await;
        Self {
            config,
            settings: settings.clone(),
        }
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

    /// The EKS client for `region` (the cluster's, which may differ from the block's).
    pub fn eks_in(&self, region: &str) -> aws_sdk_eks::Client {
        let mut b = aws_sdk_eks::config::Builder::from(&self.config).region(Region::new(region.to_string()));
        if let Some(url) = self.endpoint("eks") {
            b = b.endpoint_url(url);
        }
        aws_sdk_eks::Client::from_conf(b.build())
    }

    /// The EC2 client of the teardown (`force_destroy`), with its endpoint for diagnostics.
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

    pub fn sts(&self) -> aws_sdk_sts::Client {
        let mut b = aws_sdk_sts::config::Builder::from(&self.config);
        if let Some(url) = self.endpoint("sts") {
            b = b.endpoint_url(url);
        }
        aws_sdk_sts::Client::from_conf(b.build())
    }
}

/// Loads the [`SdkConfig`] for `settings`.
pub async fn load_sdk_config(settings: &AwsSettings) -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest()).retry_config(RetryConfig::standard());
    if let Some(region) = &settings.region {
        loader = loader.region(Region::new(region.clone()));
    }
    if let Some(profile) = &settings.profile {
        loader = loader.profile_name(profile);
    }
    let base = loader.load().await;
    let Some(assume) = &settings.assume_role else {
        return base;
    };

    // The role is assumed with the chain's credentials, through the (possibly overridden)
    // STS endpoint.
    let mut sts_base = base.to_builder();
    if let Some(url) = settings.endpoints.get("sts") {
        sts_base = sts_base.endpoint_url(url.clone());
    }
    let sts_base = sts_base.build();
    let session = assume
        .session_name
        .clone()
        .unwrap_or_else(|| DEFAULT_SESSION_NAME.to_string());
    let mut provider = AssumeRoleProvider::builder(assume.role_arn.clone())
        .session_name(session)
        .configure(&sts_base);
    if let Some(external_id) = &assume.external_id {
        provider = provider.external_id(external_id.clone());
    }
    if let Some(region) = base.region() {
        provider = provider.region(region.clone());
    }
    let provider = provider.build().await;
    base.into_builder()
        .credentials_provider(aws_sdk_sts::config::SharedCredentialsProvider::new(provider))
        .build()
}
