//! What every resource and data source call receives: the resolved provider settings, the
//! Kubernetes and AWS clients built from them lazily, on first use, and what the command's plan
//! learns as it goes ([`plan_memory`]). It lives below `resources/` (which use it) and above
//! `aws/` and `k8s/` (which build its clients); the provider module only creates it in
//! `configure`.

pub mod memo;
pub mod plan_memory;

use crate::aws::AwsClients;
use crate::k8s::{self, KubeError, gate::CrdGate};
use crate::settings::ProviderSettings;
use crate::terraform::framework::{Diagnostics, Schema};
use crate::terraform::tfvalue::PathStep;
use plan_memory::PlanMemory;

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
    /// Node classes (`<kind>/<name>`) this process has seen exist, so the pools that name the
    /// same class look it up once.
    pub classes_seen: std::sync::Mutex<std::collections::HashSet<String>>,
    /// What this command's plan learns (from the cluster, the configuration and its own
    /// planning), for the rest of it.
    pub plan: PlanMemory,
}

impl KarpenterContext {
    pub fn new(settings: ProviderSettings) -> Self {
        Self {
            settings,
            kube: tokio::sync::OnceCell::new(),
            aws: tokio::sync::OnceCell::new(),
            account: tokio::sync::OnceCell::new(),
            crd_gate: CrdGate::new(),
            classes_seen: Default::default(),
            plan: PlanMemory::default(),
        }
    }

    /// The context of a plan that may read `paths` of the blocks of these types (type name,
    /// schema) in the configuration files: see [`PlanMemory::written`].
    pub fn reading_configuration(
        mut self,
        types: Vec<(&'static str, &'static Schema)>,
        paths: &'static [&'static str],
    ) -> Self {
        self.plan = PlanMemory::reading(types, paths);
        self
    }

    /// The provider's AWS region (`aws { region }`, else `AWS_REGION`/`AWS_DEFAULT_REGION`),
    /// the default of the resources' own `region`.
    pub fn default_region(&self) -> ProviderDefault {
        let path = crate::terraform::tfvalue::AttributePath::root()
            .attr("aws")
            .attr("region");
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
        let block = crate::terraform::tfvalue::AttributePath::root()
            .attr("aws")
            .attr("default_tags");
        let unknown = self
            .settings
            .unknown
            .iter()
            .any(|p| *p == block || p.steps.starts_with(&block.steps));
        (!unknown).then_some(&self.settings.aws.default_tags)
    }

    /// Whether part of the provider's `aws {}` block was unknown when the provider was
    /// configured (it depends on something not created yet): no AWS call can be made, and a
    /// refresh keeps the prior state instead of failing the whole plan.
    pub fn aws_unknown(&self) -> bool {
        !self.unknown_in("aws").is_empty()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::tfvalue::AttributePath;

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
        assert!(ctx.aws_unknown());
        let err = ctx.aws().await.err().map(|d| d.to_string()).unwrap_or_default();
        assert!(err.contains("aws.region"), "{err}");
        assert!(!err.contains("kubernetes.host"), "{err}");
    }

    #[test]
    fn the_aws_block_is_unknown_only_for_its_own_attributes() {
        let with = |unknown: Vec<AttributePath>| {
            KarpenterContext::new(ProviderSettings {
                unknown,
                ..Default::default()
            })
            .aws_unknown()
        };
        assert!(!with(vec![]));
        assert!(!with(vec![AttributePath::root().attr("kubernetes").attr("host")]));
        assert!(with(vec![AttributePath::root().attr("aws").attr("default_tags")]));
        assert!(with(vec![
            AttributePath::root()
                .attr("aws")
                .attr("assume_role")
                .attr("role_arn")
        ]));
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
