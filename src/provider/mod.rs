//! The Karpenter provider: its configuration, and the registry of resource and data source
//! types, one line each.

pub mod config;
pub mod docs;

use async_trait::async_trait;

use crate::context::KarpenterContext;
use crate::resources;
use crate::terraform::framework::{DataSource, Diagnostics, Provider, Resource, Schema};
use crate::terraform::tfvalue::Value;

/// The provider's source address: the key in `TF_REATTACH_PROVIDERS` and in `dev_overrides`,
/// and whose last segment prefixes every type name.
pub const PROVIDER_ADDRESS: &str = "registry.terraform.io/karpenter/karpenter";

/// The provider, with its registry.
pub struct KarpenterProvider {
    resources: Vec<Box<dyn Resource<KarpenterContext>>>,
    data_sources: Vec<Box<dyn DataSource<KarpenterContext>>>,
}

impl KarpenterProvider {
    pub fn new() -> Self {
        let mut resources: Vec<Box<dyn Resource<KarpenterContext>>> = Vec::new();
        for kind in resources::kube::all() {
            resources.push(Box::new(kind));
        }
        resources.push(Box::new(resources::aws::interruption_queue::InterruptionQueue));
        resources.push(Box::new(resources::aws::node_role::NodeRole));
        resources.push(Box::new(resources::aws::controller_role::ControllerRole));
        Self {
            resources,
            data_sources: vec![
                Box::new(resources::aws::controller_policy::ControllerPolicy),
                Box::new(resources::kube::data_sources::object::ec2_node_class()),
                Box::new(resources::kube::data_sources::object::eks_node_class()),
                Box::new(resources::kube::data_sources::object::node_pool()),
                Box::new(resources::kube::data_sources::node_claims::NodeClaims),
                Box::new(resources::kube::data_sources::instance_types::InstanceTypes),
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

    /// `TF_KARPENTER_KEY_CHECK=off` turns off the check for misspelled keys (#37), should it
    /// ever stand in the way (see the troubleshooting guide).
    fn config_scan_switch(&self) -> Option<&'static str> {
        Some("TF_KARPENTER_KEY_CHECK")
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
                &crate::terraform::tfvalue::AttributePath::root()
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
                    &crate::terraform::tfvalue::AttributePath::root()
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
        let region_path = crate::terraform::tfvalue::AttributePath::root()
            .attr("aws")
            .attr("region");
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
        // What a plan may read of the configuration files: the Kubernetes kinds' blocks.
        let written = resources::kube::all()
            .iter()
            .map(|k| (k.type_name, &**k.schema))
            .collect();
        Ok(KarpenterContext::new(settings).reading_configuration(written, resources::kube::WRITTEN_PATHS))
    }
}

#[cfg(test)]
mod schema_walk;
#[cfg(test)]
mod sensitive_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::values::object;

    /// #40: a resource at schema version `n` ships the `n` steps that bring older state to it
    /// (`Schema::with_upgrade_steps`), so state of every earlier version reads back.
    #[test]
    fn every_resource_has_a_state_upgrade_step_per_version() {
        for resource in KarpenterProvider::new().resources() {
            let schema = resource.schema();
            assert_eq!(
                i64::try_from(schema.upgrade_steps.len()).ok(),
                Some(schema.version),
                "{}",
                resource.type_name()
            );
        }
    }

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
}
