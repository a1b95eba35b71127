//! The tfplugin6 side of the configuration scan for keys the schemas do not have
//! ([`config_scan`]): every `Validate*Config` call first reports the scan's findings about
//! its block, then the schema's validators and the type's own rules.
//!
//! The scan is built once per process, on the first validation of a type whose schema holds
//! objects (only then can Terraform have dropped a key), and only while the provider is not
//! configured: that is Terraform's validate walk (`terraform validate`, and the validation
//! `plan` and `apply` run first), which calls `Validate*Config` once per block. The plan and
//! apply walks configure the provider first and validate again per instance; by then the
//! validate walk has reported everything (an error stops the run before planning), so they
//! neither scan nor report twice. [`Provider::config_scan_switch`] names the environment
//! variable that turns the scan off.

use super::codec::decode_config;
use super::state::ProviderServer;
use crate::terraform::framework::config_scan::{self, BlockKind, ConfigScan, Targets};
use crate::terraform::framework::schema::validate_attributes;
use crate::terraform::framework::{Diagnostics, Provider, Schema};
use crate::terraform::plugin::proto::tfplugin6 as pb;
use crate::terraform::plugin::schema_proto::{diagnostics_in as pb_diags_in, finding as pb_finding};
use crate::terraform::tfvalue::{AttributePath, Value};

impl<P: Provider> ProviderServer<P> {
    /// Validates a block's configuration of `schema`: the scan's findings about the block,
    /// then the schema's validators and the type's own `rules`.
    pub(super) fn validate_block(
        &self,
        (kind, type_name): (BlockKind, &str),
        schema: &Schema,
        raw: Option<&pb::DynamicValue>,
        what: &str,
        rules: impl FnOnce(&Value, &mut Diagnostics),
    ) -> Vec<pb::Diagnostic> {
        let config = decode_config(raw, &schema.value_type(), what);
        let mut out = match &config {
            Ok(config) => self.scan_findings(kind, type_name, schema, config),
            Err(_) => Vec::new(),
        };
        out.extend(pb_diags_in(&validate_decoded(schema, config, rules), schema));
        out
    }

    /// The scan's findings about the block a validation of `config` is about.
    pub(super) fn scan_findings(
        &self,
        kind: BlockKind,
        type_name: &str,
        schema: &Schema,
        config: &Value,
    ) -> Vec<pb::Diagnostic> {
        if !config_scan::may_drop_keys(schema) || self.is_configured() || self.scan_switched_off() {
            return Vec::new();
        }
        let scan = self.scan.get_or_init(|| self.load_scan());
        scan.take(kind, type_name, config)
            .iter()
            .map(pb_finding)
            .collect()
    }

    /// The provider's local name in configurations: its types' common prefix
    /// (`karpenter_node_pool` → `karpenter`), as Terraform infers it.
    pub(super) fn provider_name(&self) -> String {
        self.provider
            .resources()
            .first()
            .map(|r| r.type_name())
            .or_else(|| self.provider.data_sources().first().map(|d| d.type_name()))
            .and_then(|t| t.split('_').next())
            .unwrap_or_default()
            .to_string()
    }

    fn is_configured(&self) -> bool {
        self.context.read().map(|c| c.is_some()).unwrap_or(false)
    }

    fn scan_switched_off(&self) -> bool {
        self.provider
            .config_scan_switch()
            .and_then(std::env::var_os)
            .is_some_and(|v| v.eq_ignore_ascii_case("off"))
    }

    fn load_scan(&self) -> ConfigScan {
        let Some((root, data_dir)) = config_scan::terraform_dirs() else {
            return ConfigScan::default();
        };
        let mut targets = Targets::new(self.provider_name()).with(
            BlockKind::Provider,
            self.provider_name(),
            self.provider.schema(),
        );
        for r in self.provider.resources() {
            targets = targets.with(BlockKind::Resource, r.type_name(), r.schema());
            if let Some(list) = r.list_schema() {
                targets = targets.with(BlockKind::List, r.type_name(), list);
            }
        }
        for d in self.provider.data_sources() {
            targets = targets.with(BlockKind::Data, d.type_name(), d.schema());
        }
        ConfigScan::load(&root, &data_dir, &targets)
    }
}

/// The schema's validators, then the type's own rules, on a decoded configuration.
pub(super) fn validate_decoded(
    schema: &Schema,
    config: Result<Value, Diagnostics>,
    rules: impl FnOnce(&Value, &mut Diagnostics),
) -> Diagnostics {
    match config {
        Ok(config) => {
            let mut d = Diagnostics::new();
            validate_attributes(
                &schema.attributes,
                &schema.blocks,
                &config,
                &AttributePath::root(),
                &mut d,
            );
            rules(&config, &mut d);
            d
        }
        Err(d) => d,
    }
}
