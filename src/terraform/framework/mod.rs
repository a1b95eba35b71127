//! The Terraform-generic provider framework: what a provider, a resource and a data source
//! declare and implement. The gRPC adapter in `plugin::server` drives these traits; nothing
//! here knows Karpenter, Kubernetes or AWS.
//!
//! A resource declares its [`Schema`] once; validation ([`validate`]), planning ([`plan`]),
//! the protocol schema and the docs are all derived from it. The resource itself implements
//! only what is specific to it: cross-attribute checks and the create/read/update/delete calls.
//! Stored state is brought to the current schema by [`upgrade`] (version steps, default fill).

pub mod address;
pub mod config_scan;
pub mod convert;
pub mod diagnostics;
pub mod generate;
pub mod identity;
pub mod list;
pub mod markdown;
pub mod plan;
pub mod private;
pub mod schema;
pub mod timeouts;
pub mod upgrade;
pub mod upgrade_step;
pub mod validate;
pub mod values;

use async_trait::async_trait;

pub use diagnostics::{Diagnostic, Diagnostics, Severity};
pub use identity::{IdentityAttribute, IdentitySchema};
pub use list::{ListEvent, ListRequest, ListSink};
pub use schema::{Attribute, Block, Mode, Nesting, Schema};

use crate::terraform::tfvalue::Value;

/// The outcome of create or update: the state to record (even on failure, whatever exists),
/// plus diagnostics. `state: None` on a failed create means nothing was created; on a failed
/// update, that the prior state stands (the plugin server records it again).
#[derive(Debug, Default)]
pub struct ApplyOutcome {
    pub state: Option<Value>,
    pub diagnostics: Diagnostics,
}

impl ApplyOutcome {
    pub fn ok(state: Value) -> Self {
        Self {
            state: Some(state),
            diagnostics: Diagnostics::new(),
        }
    }
    pub fn failed(state: Option<Value>, diagnostics: Diagnostics) -> Self {
        Self { state, diagnostics }
    }
}

/// A settled plan of one resource instance, as [`Resource::check_plan_remotely`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct PlanToCheck<'a> {
    /// The state the plan was adjusted from: null for a create, or for the recreation of an
    /// object found being deleted.
    pub prior: &'a Value,
    /// The planned state: null for a destroy.
    pub planned: &'a Value,
    /// Whether the plan replaces the object (an attribute that cannot change in place changed).
    pub replaces: bool,
}

impl PlanToCheck<'_> {
    /// Whether the plan destroys the object without replacing it.
    pub fn is_destroy(&self) -> bool {
        self.planned.is_null() && !self.prior.is_null()
    }
}

/// The resource a `moved {}` block moves from.
#[derive(Debug, Clone, Copy)]
pub struct MoveSource<'a> {
    /// e.g. `registry.terraform.io/gavinbunney/kubectl`
    pub provider_address: &'a str,
    /// e.g. `kubectl_manifest`
    pub type_name: &'a str,
    pub schema_version: i64,
    /// The source state as stored (JSON, in the source provider's schema).
    pub state_json: &'a [u8],
}

/// The outcome of a refresh.
#[derive(Debug)]
pub enum ReadOutcome {
    /// The object exists; this is its current state.
    Found(Value),
    /// The object is gone: Terraform removes it from state and plans to create it.
    Gone,
    /// The object still exists, but its deletion has begun and not finished (in Kubernetes: a
    /// `deletionTimestamp`, held by finalizers). It stays in state, so a destroy still waits for
    /// it; the diagnostics (warnings) say what holds it; and the next plan recreates it: the
    /// planner plans the resource as on create (computed attributes unknown), so the plan is
    /// never "No changes" while the object is going away. See [`private`].
    BeingDeleted(Value, Diagnostics),
    /// The object could not be read (e.g. the cluster is not reachable yet, or the provider
    /// configuration is still unknown): keep the prior state and tell the user why.
    KeptPrior(Diagnostics),
}

/// A managed resource type.
#[async_trait]
pub trait Resource<C: Send + Sync>: Send + Sync {
    /// The Terraform type name, e.g. `karpenter_node_pool`.
    fn type_name(&self) -> &'static str;
    fn schema(&self) -> &Schema;

    /// Cross-attribute rules beyond the per-attribute validators (which run automatically).
    fn validate(&self, _config: &Value, _diags: &mut Diagnostics) {}

    /// [`Resource::validate`] with the configured provider's context, `None` in Terraform's
    /// validate walk (which runs before the provider is configured); the plan and apply walks
    /// validate each instance again with it, so rules that compute something a plan uses again
    /// can keep it there. The default ignores the context.
    fn validate_in(&self, _ctx: Option<&C>, config: &Value, diags: &mut Diagnostics) {
        self.validate(config, diags);
    }

    /// Adjusts the generic plan (e.g. derived values). Called with the planned value.
    fn modify_plan(&self, _config: &Value, _prior: &Value, _planned: &mut Value, _diags: &mut Diagnostics) {}

    /// [`Resource::modify_plan`] for types whose plan also depends on the provider's
    /// configuration (e.g. a region that defaults to the provider's). `ctx` is the configured
    /// provider's context, `None` if Terraform plans before configuring it. The default ignores
    /// the context.
    fn modify_plan_in(
        &self,
        _ctx: Option<&C>,
        config: &Value,
        prior: &Value,
        planned: &mut Value,
        diags: &mut Diagnostics,
    ) {
        self.modify_plan(config, prior, planned, diags);
    }

    /// Checks of a settled plan that need the remote side (an AWS lookup, say), for a mistake
    /// that would otherwise surface only at apply, or for what the change will do there. Best
    /// effort: when the remote side cannot tell (not reachable, not created yet, no permission)
    /// it returns nothing, or a warning, so plan never depends on it. Runs for creates, updates,
    /// replacements and destroys (a `terraform destroy`, or a resource removed from the
    /// configuration: `planned` null), only when the plan so far has no errors and the
    /// provider is configured. The default checks nothing.
    async fn check_plan_remotely(&self, _ctx: &C, _change: &PlanToCheck<'_>) -> Diagnostics {
        Diagnostics::new()
    }

    /// Replacement paths beyond attributes marked `replace_on_change`: for rules such as
    /// "adding or removing this field replaces the object" that depend on prior and plan.
    fn extra_replacements(
        &self,
        _prior: &Value,
        _planned: &Value,
    ) -> Vec<crate::terraform::tfvalue::AttributePath> {
        Vec::new()
    }

    async fn create(&self, ctx: &C, planned: &Value) -> ApplyOutcome;
    async fn read(&self, ctx: &C, current: &Value) -> Result<ReadOutcome, Diagnostics>;
    async fn update(&self, ctx: &C, prior: &Value, planned: &Value) -> ApplyOutcome;
    async fn delete(&self, ctx: &C, prior: &Value) -> Diagnostics;

    /// Adopts the state of another provider's resource (a `moved {}` block across resource
    /// types), e.g. a `kubectl_manifest` holding this kind. Terraform reads it right after.
    fn move_state(&self, source: &MoveSource<'_>) -> Result<Value, Diagnostics> {
        Err(Diagnostics::from_error(
            "Move not supported",
            format!(
                "{} cannot take over a {} from {}.",
                self.type_name(),
                source.type_name,
                source.provider_address
            ),
        ))
    }

    /// Builds the state for `terraform import <addr> <id>`; Terraform reads it right after.
    async fn import(&self, _ctx: &C, id: &str) -> Result<Value, Diagnostics> {
        Err(Diagnostics::from_error(
            "Import is not supported",
            format!("{} cannot be imported (id {id:?}).", self.type_name()),
        ))
    }

    /// The identity schema (Terraform 1.12+), `None` for a type without identity.
    fn identity_schema(&self) -> Option<&IdentitySchema> {
        None
    }

    /// The identity of the object `state` describes, in [`Resource::identity_schema`]'s type:
    /// `Value::Null` when the type has none or the state does not name its object yet (a
    /// create whose name is still unknown). Derived only from attributes that replace the
    /// object when they change, so an update never changes it ([`identity`]).
    fn identity(&self, _state: &Value) -> Value {
        Value::Null
    }

    /// `import { identity = { … } }`: the state for the object an identity names (the
    /// identity's required attributes are checked before this is called).
    async fn import_by_identity(&self, _ctx: &C, _identity: &Value) -> Result<Value, Diagnostics> {
        Err(Diagnostics::from_error(
            "Import by identity is not supported",
            format!("{} has no resource identity; import it by ID.", self.type_name()),
        ))
    }

    /// The schema of the list block's `config { … }` (Terraform 1.14+ `terraform query`),
    /// `None` for a type that cannot list. A type that lists also has an identity schema.
    fn list_schema(&self) -> Option<&Schema> {
        None
    }

    /// Cross-attribute rules of a list configuration.
    fn validate_list(&self, _config: &Value, _diags: &mut Diagnostics) {}

    /// Finds the remote objects of this type ([`list`]), writing each into `sink` until it
    /// says to stop.
    async fn list(&self, _ctx: &C, _request: &ListRequest, sink: &ListSink) {
        sink.fail(Diagnostics::from_error(
            "Listing is not supported",
            format!("{} cannot be listed.", self.type_name()),
        ))
        .await;
    }

    /// The configuration that reproduces `state` (`GenerateResourceConfig`); the default is
    /// derived from the schema ([`generate`]).
    fn generate_config(&self, state: &Value) -> Value {
        generate::config_from_state(self.schema(), state)
    }
}

/// A data source type.
#[async_trait]
pub trait DataSource<C: Send + Sync>: Send + Sync {
    fn type_name(&self) -> &'static str;
    fn schema(&self) -> &Schema;
    fn validate(&self, _config: &Value, _diags: &mut Diagnostics) {}
    /// Returns the full state: configured attributes as given, computed ones filled in.
    async fn read(&self, ctx: &C, config: &Value) -> Result<Value, Diagnostics>;

    /// Like [`DataSource::read`], but may answer that the read cannot happen yet (the provider
    /// configuration is unknown, or the backend is not reachable), so Terraform can defer it
    /// where it allows deferral. Data sources that can tell those cases apart override this;
    /// the default is a plain read.
    async fn read_or_defer(&self, ctx: &C, config: &Value) -> Result<DataReadOutcome, Diagnostics> {
        self.read(ctx, config).await.map(DataReadOutcome::Read)
    }
}

/// The outcome of [`DataSource::read_or_defer`].
#[derive(Debug)]
pub enum DataReadOutcome {
    /// The full state.
    Read(Value),
    /// The full state, already msgpack-encoded as the schema's type (for answers too large to
    /// build as a [`Value`] first; see [`crate::terraform::tfvalue::msgpack::Stream`]).
    Encoded(Vec<u8>),
    /// Not readable yet. Where Terraform allows deferral the read is deferred; otherwise these
    /// diagnostics (errors saying why and what to do) are returned, as a data source has no
    /// prior state to keep.
    NotYet(Diagnostics),
}

/// A provider: its configuration block, and the resource and data source types it offers.
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// What `configure` builds and every resource call receives.
    type Context: Send + Sync + 'static;

    fn schema(&self) -> &Schema;
    fn resources(&self) -> &[Box<dyn Resource<Self::Context>>];
    fn data_sources(&self) -> &[Box<dyn DataSource<Self::Context>>];

    fn validate(&self, _config: &Value, _diags: &mut Diagnostics) {}

    /// The environment variable that turns the configuration scan for keys the schemas do
    /// not have ([`config_scan`]) off when set to `off`; `None` when it cannot be turned off.
    fn config_scan_switch(&self) -> Option<&'static str> {
        None
    }

    /// Configures the provider. The configuration may contain unknown values during plan;
    /// a provider must accept that and connect lazily, at first use.
    async fn configure(&self, config: &Value) -> Result<Self::Context, Diagnostics>;

    fn resource(&self, type_name: &str) -> Option<&dyn Resource<Self::Context>> {
        self.resources()
            .iter()
            .find(|r| r.type_name() == type_name)
            .map(|r| r.as_ref())
    }

    fn data_source(&self, type_name: &str) -> Option<&dyn DataSource<Self::Context>> {
        self.data_sources()
            .iter()
            .find(|d| d.type_name() == type_name)
            .map(|d| d.as_ref())
    }
}
