//! A stand-in for the providers people used before typed Karpenter resources
//! (gavinbunney/kubectl, alekc/kubectl, hashicorp/kubernetes), for `moved {}` tests only.
//!
//! Terraform needs every provider named in the state to be available, even for a resource that
//! a `moved` block hands to another provider. This binary declares `kubectl_manifest` and
//! `kubernetes_manifest` with the attribute shapes those providers store in state, so a test
//! can write such a state by hand and move it; it manages nothing (any create, update or
//! delete is refused with an error).

use std::process::ExitCode;
use std::sync::LazyLock;

use acceptance_tests::standin_provider::Unconfigured;
use async_trait::async_trait;
use terraform_provider_karpenter::terraform::framework::schema::{AttrType, Attribute, Block, Schema};
use terraform_provider_karpenter::terraform::framework::{ApplyOutcome, Diagnostics, ReadOutcome, Resource};
use terraform_provider_karpenter::terraform::plugin::server::ProviderServer;
use terraform_provider_karpenter::terraform::plugin::{PluginInfo, run_with};
use terraform_provider_karpenter::terraform::tfvalue::{Type, Value};

static EMPTY: LazyLock<Schema> =
    LazyLock::new(|| Schema::new("Stand-in provider for moved {} tests.", vec![]));

/// kubectl_manifest as gavinbunney/kubectl (schema version 1) stores it; alekc/kubectl's is a
/// superset of the same core.
static KUBECTL_MANIFEST: LazyLock<Schema> = LazyLock::new(|| {
    let s = |n| Attribute::string(n).optional_computed();
    let b = |n| Attribute::bool(n).optional_computed();
    Schema::new(
        "kubectl_manifest stand-in",
        vec![
            s("id"),
            s("uid"),
            s("live_uid"),
            s("yaml_incluster").sensitive(),
            s("live_manifest_incluster").sensitive(),
            s("api_version"),
            s("kind"),
            s("name"),
            s("namespace"),
            Attribute::string("override_namespace").optional(),
            Attribute::string("yaml_body").required().sensitive(),
            s("yaml_body_parsed"),
            Attribute::list_of("sensitive_fields", Type::String).optional(),
            b("force_new"),
            b("server_side_apply"),
            b("force_conflicts"),
            b("apply_only"),
            Attribute::list_of("ignore_fields", Type::String).optional(),
            b("wait"),
            b("wait_for_rollout"),
            b("validate_schema"),
        ],
    )
    .with_version(1)
});

/// kubernetes_manifest as hashicorp/kubernetes stores it: `manifest` and `object` are
/// dynamically typed.
static KUBERNETES_MANIFEST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "kubernetes_manifest stand-in",
        vec![
            Attribute::new("manifest", AttrType::Plain(Type::Dynamic)).required(),
            Attribute::new("object", AttrType::Plain(Type::Dynamic)).optional_computed(),
            Attribute::list_of("computed_fields", Type::String).optional(),
        ],
    )
    .with_blocks(vec![Block::single(
        "timeouts",
        vec![
            Attribute::string("create"),
            Attribute::string("update"),
            Attribute::string("delete"),
        ],
    )])
    .with_version(1)
});

struct StandInResource {
    name: &'static str,
    schema: &'static LazyLock<Schema>,
}

fn refused() -> Diagnostics {
    Diagnostics::from_error(
        "Stand-in provider",
        "This test stand-in only holds state for moved {} tests.",
    )
}

#[async_trait]
impl Resource<()> for StandInResource {
    fn type_name(&self) -> &'static str {
        self.name
    }
    fn schema(&self) -> &Schema {
        self.schema
    }
    async fn create(&self, _: &(), _: &Value) -> ApplyOutcome {
        ApplyOutcome::failed(None, refused())
    }
    async fn read(&self, _: &(), current: &Value) -> Result<ReadOutcome, Diagnostics> {
        Ok(ReadOutcome::Found(current.clone()))
    }
    async fn update(&self, _: &(), _: &Value, _: &Value) -> ApplyOutcome {
        ApplyOutcome::failed(None, refused())
    }
    async fn delete(&self, _: &(), _: &Value) -> Diagnostics {
        refused()
    }
}

fn main() -> ExitCode {
    run_with(
        PluginInfo {
            address: "registry.terraform.io/gavinbunney/kubectl",
            log_module: "standin",
            program: "legacy-provider-standin",
        },
        || {
            ProviderServer::new(Unconfigured::new(
                &EMPTY,
                vec![
                    Box::new(StandInResource {
                        name: "kubectl_manifest",
                        schema: &KUBECTL_MANIFEST,
                    }),
                    Box::new(StandInResource {
                        name: "kubernetes_manifest",
                        schema: &KUBERNETES_MANIFEST,
                    }),
                ],
            ))
        },
    )
}
