//! The Karpenter provider: its configuration, and the registry of resource and data source
//! types, one line each.

pub mod config;
pub mod docs;

use async_trait::async_trait;

use crate::aws::AwsClients;
use crate::framework::{DataSource, Diagnostics, Provider, Resource, Schema};
use crate::k8s::{self, KubeError, gate::CrdGate};
use crate::resources;
use crate::tfvalue::{PathStep, Value};
pub use config::ProviderSettings;

/// A default a resource takes from the provider configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderDefault {
    Known(String),
    /// Set in the provider block, but to a value not known until apply.
    Unknown,
    /// Not configured anywhere.
    Unset,
}

/// What every resource call receives: the resolved configuration, and the clients built from
/// it lazily, on first use, so planning never connects anywhere.
pub struct KarpenterContext {
    pub settings: ProviderSettings,
    kube: tokio::sync::OnceCell<kube::Client>,
    aws: tokio::sync::OnceCell<AwsClients>,
    /// The account the AWS credentials belong to, once checked against the account guards.
    account: tokio::sync::OnceCell<String>,
    /// The CRD readiness gate, shared by every Kubernetes resource of this provider process.
    pub crd_gate: CrdGate,
}

impl KarpenterContext {
    pub fn new(settings: ProviderSettings) -> Self {
        Self {
            settings,
            kube: tokio::sync::OnceCell::new(),
            aws: tokio::sync::OnceCell::new(),
            account: tokio::sync::OnceCell::new(),
            crd_gate: CrdGate::new(),
        }
    }

    /// The provider's AWS region (`aws { region }`, else `AWS_REGION`/`AWS_DEFAULT_REGION`),
    /// the default of the resources' own `region`.
    pub fn default_region(&self) -> ProviderDefault {
        let path = crate::tfvalue::AttributePath::root().attr("aws").attr("region");
        if self.settings.unknown.contains(&path) {
            return ProviderDefault::Unknown;
        }
        match &self.settings.aws.region {
            Some(r) => ProviderDefault::Known(r.clone()),
            None => ProviderDefault::Unset,
        }
    }

    /// At plan, for a resource that has no `region` of its own but calls AWS: an error when the
    /// provider has no region at all (the SDK would fail every call at apply, unsigned). Said on
    /// the resource, since the fix is in the provider block.
    pub fn require_region(&self, what: &str, diags: &mut Diagnostics) {
        if self.default_region() == ProviderDefault::Unset {
            diags.error(
                "No AWS region",
                format!(
                    "{what} is made through AWS, but the provider has no region: set region = \"...\" in the provider's \
                     aws {{}} block (or AWS_REGION in its environment, or region in the shared-config profile it uses)."
                ),
            );
        }
    }

    /// The provider's default tags (`aws { default_tags { tags } }` over the
    /// `TF_AWS_DEFAULT_TAGS_<key>` environment variables); `None` while they are unknown (they
    /// depend on something not created yet).
    pub fn default_tags(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        let block = crate::tfvalue::AttributePath::root()
            .attr("aws")
            .attr("default_tags");
        let unknown = self
            .settings
            .unknown
            .iter()
            .any(|p| *p == block || p.steps.starts_with(&block.steps));
        (!unknown).then_some(&self.settings.aws.default_tags)
    }

    /// The settings of one provider block (`kubernetes`, `aws`) that were unknown when the
    /// provider was configured.
    fn unknown_in(&self, block: &str) -> Vec<String> {
        self.settings
            .unknown
            .iter()
            .filter(|p| matches!(p.steps.first(), Some(PathStep::Attribute(a)) if a == block))
            .map(ToString::to_string)
            .collect()
    }

    /// The Kubernetes client, built on first use. Fails when the `kubernetes {}` settings are
    /// still unknown (they depend on something not created yet) or incomplete.
    pub async fn kube(&self) -> Result<&kube::Client, KubeError> {
        let unknown = self.unknown_in("kubernetes");
        if !unknown.is_empty() {
            return Err(KubeError::ConfigUnknown(unknown.join(", ")));
        }
        let settings = &self.settings.kubernetes;
        match &settings.eks {
            None => self.kube.get_or_try_init(|| k8s::client::client(settings)).await,
            Some(eks) => {
                // EKS tokens are signed with the aws {} block's credentials
                let aws = self
                    .aws()
                    .await
                    .map_err(|d| KubeError::ConfigUnknown(d.to_string()))?;
                self.kube
                    .get_or_try_init(|| k8s::eks::client(settings, eks, aws))
                    .await
            }
        }
    }

    /// The AWS clients, built on first use from the `aws {}` block. Fails with a diagnostic
    /// naming the attribute when part of the `aws {}` block was still unknown at configure time.
    pub async fn aws(&self) -> Result<&AwsClients, Diagnostics> {
        let unknown = self.unknown_in("aws");
        if !unknown.is_empty() {
            return Err(Diagnostics::from_error(
                "AWS provider configuration is not known yet",
                format!(
                    "{} {} unknown when the provider was configured, so no AWS call can be made. \
                     Set {} from values known before this apply (or apply the resources they \
                     depend on first, e.g. with -target).",
                    unknown.join(", "),
                    if unknown.len() == 1 { "was" } else { "were" },
                    if unknown.len() == 1 { "it" } else { "them" },
                ),
            ));
        }
        self.aws
            .get_or_try_init(|| AwsClients::load(&self.settings.aws))
            .await
            .map_err(|e| {
                Diagnostics::from_error(
                    "AWS provider configuration is not usable",
                    format!("{e}. Fix the aws {{}} block of the provider configuration."),
                )
            })
    }
}

impl KarpenterContext {
    /// [`KarpenterContext::aws`] for a call that creates, changes or deletes something: with
    /// `allowed_account_ids` or `forbidden_account_ids` set, first checks the credentials'
    /// account (STS GetCallerIdentity, once per provider process) and fails, with nothing
    /// touched, when the guards refuse it.
    pub async fn aws_to_change(&self) -> Result<&AwsClients, Diagnostics> {
        let aws = self.aws().await?;
        let settings = &self.settings.aws;
        if settings.allowed_account_ids.is_empty() && settings.forbidden_account_ids.is_empty() {
            return Ok(aws);
        }
        let account = self
            .account
            .get_or_try_init(|| crate::aws::account::caller_account(aws))
            .await
            .map_err(|e| {
                Diagnostics::from_error(
                    "Could not check the AWS account",
                    format!(
                        "aws.allowed_account_ids or aws.forbidden_account_ids is set, so the provider asks STS which \
                         account its credentials belong to before changing anything, and that failed: {e}. Nothing \
                         was changed. Allow sts:GetCallerIdentity, or fix the aws {{}} block."
                    ),
                )
            })?;
        crate::aws::account::check(
            account,
            &settings.allowed_account_ids,
            &settings.forbidden_account_ids,
        )
        .map_err(|e| {
            let summary = match e {
                crate::aws::account::AccountError::NotAllowed { .. } => "AWS account not allowed",
                crate::aws::account::AccountError::Forbidden { .. } => "AWS account forbidden",
            };
            Diagnostics::from_error(summary, format!("{e}."))
        })?;
        Ok(aws)
    }
}

/// The provider, with its registry.
pub struct KarpenterProvider {
    resources: Vec<Box<dyn Resource<KarpenterContext>>>,
    data_sources: Vec<Box<dyn DataSource<KarpenterContext>>>,
}

impl KarpenterProvider {
    pub fn new() -> Self {
        Self {
            resources: vec![
                Box::new(resources::node_pool()),
                Box::new(resources::ec2_node_class()),
                Box::new(resources::provisioner()),
                Box::new(resources::node_template()),
                Box::new(resources::node_overlay()),
                Box::new(resources::capacity_buffer()),
                Box::new(resources::interruption_queue::InterruptionQueue),
                Box::new(resources::node_role::NodeRole),
                Box::new(resources::controller_role::ControllerRole),
            ],
            data_sources: vec![
                Box::new(resources::controller_policy::ControllerPolicy),
                Box::new(resources::data_sources::object::ec2_node_class()),
                Box::new(resources::data_sources::object::node_pool()),
                Box::new(resources::data_sources::node_claims::NodeClaims),
            ],
        }
    }
}

impl Default for KarpenterProvider {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Provider for KarpenterProvider {
    type Context = KarpenterContext;

    fn schema(&self) -> &Schema {
        &config::SCHEMA
    }

    fn resources(&self) -> &[Box<dyn Resource<KarpenterContext>>] {
        &self.resources
    }

    fn data_sources(&self) -> &[Box<dyn DataSource<KarpenterContext>>] {
        &self.data_sources
    }

    /// `eks {}` mints the bearer token itself, so a `token` or `exec` beside it would be
    /// silently ignored: say so at plan instead. `config_path` and `config_paths` exclude each
    /// other, as in hashicorp/kubernetes.
    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        config::validate_aws(config, diags);
        config::validate_cluster_name(config, diags);
        let Some(kubernetes) = config.get("kubernetes").filter(|k| !k.is_null()) else {
            return;
        };
        let set = |name: &str| kubernetes.get(name).is_some_and(|v| !v.is_null());
        if set("config_path") && set("config_paths") {
            diags.error_at(
                &crate::tfvalue::AttributePath::root()
                    .attr("kubernetes")
                    .attr("config_paths"),
                "Conflicting kubeconfig settings",
                "kubernetes.config_path and kubernetes.config_paths cannot both be set. Use config_paths \
                 alone (a list of one path is fine) or config_path alone.",
            );
        }
        if kubernetes.get("eks").is_none_or(Value::is_null) {
            return;
        }
        for other in [
            "token",
            "exec",
            "client_certificate",
            "config_path",
            "config_paths",
        ] {
            if kubernetes.get(other).is_some_and(|v| !v.is_null()) {
                diags.error_at(
                    &crate::tfvalue::AttributePath::root()
                        .attr("kubernetes")
                        .attr(other),
                    "Conflicting Kubernetes credentials",
                    format!(
                        "kubernetes.eks authenticates to the cluster itself, so {other} would be ignored. \
                         Remove {other}, or remove the eks block to use {other}."
                    ),
                );
            }
        }
    }

    async fn configure(&self, config: &Value) -> Result<KarpenterContext, Diagnostics> {
        let mut settings = config::parse(config, &config::ProcessEnv);
        let region_path = crate::tfvalue::AttributePath::root().attr("aws").attr("region");
        if settings.aws.region.is_none() && !settings.unknown.contains(&region_path) {
            // The shared-config profile's region, resolved once here (local files only), so
            // that plans see the region the AWS calls will use.
            settings.aws.region = crate::aws::config::profile_region(&settings.aws).await;
        }
        let problems = config::check_aws(&settings.aws);
        if problems.has_errors() {
            return Err(problems);
        }
        if !settings.unknown.is_empty() {
            let names: Vec<String> = settings.unknown.iter().map(|p| p.to_string()).collect();
            tracing::info!(unknown = %names.join(", "), "provider configuration not fully known yet; clients will be built when it is");
        }
        Ok(KarpenterContext::new(settings))
    }
}

#[cfg(test)]
mod sensitive_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::values::object;

    #[test]
    fn eks_beside_a_token_is_a_diagnostic_on_the_token() {
        let provider = KarpenterProvider::new();
        let config = object([(
            "kubernetes",
            object([
                ("token", Value::string("t")),
                ("eks", object([("cluster_name", Value::string("demo"))])),
            ]),
        )]);
        let mut diags = Diagnostics::new();
        provider.validate(&config, &mut diags);
        assert!(diags.has_errors());
        assert_eq!(
            diags
                .iter()
                .filter_map(|d| d.path.as_ref())
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["kubernetes.token"]
        );
        let alone = object([(
            "kubernetes",
            object([("eks", object([("cluster_name", Value::string("demo"))]))]),
        )]);
        let mut diags = Diagnostics::new();
        provider.validate(&alone, &mut diags);
        assert!(diags.is_empty(), "{diags}");
    }
    use crate::tfvalue::AttributePath;

    #[tokio::test]
    async fn unknown_aws_settings_name_the_attribute() {
        let settings = ProviderSettings {
            unknown: vec![
                AttributePath::root().attr("kubernetes").attr("host"),
                AttributePath::root().attr("aws").attr("region"),
            ],
            ..Default::default()
        };
        let ctx = KarpenterContext::new(settings);
        let err = ctx.aws().await.err().map(|d| d.to_string()).unwrap_or_default();
        assert!(err.contains("aws.region"), "{err}");
        assert!(!err.contains("kubernetes.host"), "{err}");
    }

    #[tokio::test]
    async fn endpoint_overrides_are_per_service() {
        let mut settings = ProviderSettings::default();
        settings.aws.region = Some("eu-west-1".into());
        settings
            .aws
            .endpoints
            .insert("sqs".into(), "http://127.0.0.1:1".into());
        let ctx = KarpenterContext::new(settings);
        let clients = ctx.aws().await.unwrap();
        assert_eq!(clients.region(), Some("eu-west-1"));
        assert_eq!(clients.endpoint("sqs"), Some("http://127.0.0.1:1"));
        assert_eq!(clients.endpoint("iam"), None);
        // same clients on the second call
        assert!(std::ptr::eq(clients, ctx.aws().await.unwrap()));
    }
}
