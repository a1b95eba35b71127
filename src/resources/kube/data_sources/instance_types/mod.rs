//! Data source `karpenter_instance_types`: which instance types a set of NodePool
//! requirements lets Karpenter launch ([`crate::instance_types`]), offline from the table
//! compiled into the provider, or from EC2 for the region (and zones) the user names.
//! The schema is in [`schema`], the answer's shape in [`state`].

pub mod schema;
pub mod state;

use async_trait::async_trait;

use crate::context::KarpenterContext;
use crate::instance_types::requirements::Requirement;
use crate::instance_types::{Flavor, catalog, selection};
use crate::resources::kube::kind::rules::launchable::written_requirements;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{DataReadOutcome, DataSource, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Value};
use schema::{EC2, SCHEMA};

/// The data source.
pub struct InstanceTypes;

fn is_ec2(config: &Value) -> bool {
    get_str(config, "source") == Some(EC2)
}

/// The zones asked for (empty when unset).
#[cfg(feature = "ec2")]
fn zones(config: &Value) -> Vec<String> {
    config
        .get("zones")
        .and_then(Value::as_elements)
        .map(|z| z.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// `config` with the computed attributes filled in.
fn with(config: &Value, computed: std::collections::BTreeMap<String, Value>) -> Value {
    let mut state = config.clone();
    if let Value::Object(fields) = &mut state {
        fields.extend(computed);
    }
    state
}

fn unreadable_requirements() -> Diagnostics {
    Diagnostics::from_error(
        "Requirements not known",
        "The requirements must be known to select instance types; Terraform reads this data source once they are.",
    )
}

impl InstanceTypes {
    /// The requirements and the types they select in the offline table.
    fn offline_selection(
        config: &Value,
    ) -> Result<(Vec<Requirement>, Vec<&'static catalog::Row>), Diagnostics> {
        let requirements = written_requirements(config.get("requirements").unwrap_or(&Value::Null))
            .ok_or_else(unreadable_requirements)?;
        let selected =
            selection::select(catalog::all(), &requirements, Flavor::Either).ok_or_else(malformed)?;
        Ok((requirements, selected))
    }

    /// The answer from the offline table, as a value.
    fn offline(config: &Value) -> Result<Value, Diagnostics> {
        let (requirements, selected) = Self::offline_selection(config)?;
        let computed =
            state::computed(selected, &requirements, Flavor::Either).map_err(|e| unanswerable(&e))?;
        Ok(with(config, computed))
    }

    /// The answer from the offline table, encoded as the read's answer without building its
    /// values first (the same bytes as [`Self::offline`]'s value encodes to).
    fn offline_encoded(config: &Value) -> Result<Vec<u8>, Diagnostics> {
        let (requirements, selected) = Self::offline_selection(config)?;
        state::encoded(
            config,
            selected,
            &requirements,
            Flavor::Either,
            &SCHEMA.value_type(),
        )
        .map_err(|e| unanswerable(&e))
    }

    /// The answer from EC2: the types the region (or the zones) offers, described as Karpenter
    /// describes them.
    #[cfg(feature = "ec2")]
    async fn from_ec2(ctx: &KarpenterContext, config: &Value) -> Result<DataReadOutcome, Diagnostics> {
        use crate::context::ProviderDefault;
        use crate::instance_types::ec2::Ec2Type;
        let requirements = written_requirements(config.get("requirements").unwrap_or(&Value::Null))
            .ok_or_else(unreadable_requirements)?;
        let region = match get_str(config, "region") {
            Some(r) => Some(r.to_string()),
            None => match ctx.default_region() {
                ProviderDefault::Known(r) => Some(r),
                ProviderDefault::Unknown => {
                    return Ok(DataReadOutcome::NotYet(Diagnostics::from_error(
                        "Region not known yet",
                        "source = \"ec2\" asks EC2 in the provider's aws { region }, which is not known until apply. \
                         Set region here from a value known at plan time, or plan with -allow-deferral.",
                    )));
                }
                ProviderDefault::Unset => None,
            },
        };
        let aws = match ctx.aws().await {
            Ok(aws) => aws,
            Err(d) => return Ok(DataReadOutcome::NotYet(d)),
        };
        let ec2 = aws.ec2_instance_types(region.as_deref());
        let zones = zones(config);
        let failed = |e: crate::aws::AwsError| {
            Diagnostics::from_error("Cannot list the region's instance types", format!("{e}."))
        };
        let offered = ec2.offerings(&zones).await.map_err(failed)?;
        let described = ec2.describe_all().await.map_err(failed)?;
        tracing::debug!(
            offered = offered.len(),
            described = described.len(),
            "EC2 instance types"
        );
        let types: Vec<Ec2Type> = described
            .into_iter()
            .filter_map(|mut facts| {
                let in_zones = offered.get(&facts.name)?;
                facts.zones = in_zones.iter().cloned().collect();
                Some(Ec2Type::from_facts(&facts))
            })
            .collect();
        let selected = selection::select(&types, &requirements, Flavor::Either).ok_or_else(malformed)?;
        let computed =
            state::computed(selected, &requirements, Flavor::Either).map_err(|e| unanswerable(&e))?;
        Ok(DataReadOutcome::Read(with(config, computed)))
    }

    #[cfg(not(feature = "ec2"))]
    async fn from_ec2(_ctx: &KarpenterContext, _config: &Value) -> Result<DataReadOutcome, Diagnostics> {
        Err(Diagnostics::from_error(
            "EC2 not built in",
            "This build of the provider has no EC2 client (built without the `ec2` feature); use source = \"offline\".",
        ))
    }
}

/// A fault of the provider itself (its schema and its answer disagree), not of the input.
fn unanswerable(why: &str) -> Diagnostics {
    Diagnostics::from_error(
        "Instance types not answered",
        format!(
            "The provider could not write its answer ({why}). This is a bug of the provider; please report it."
        ),
    )
}

fn malformed() -> Diagnostics {
    Diagnostics::from_error(
        "Malformed requirement",
        "A requirement with Gt, Lt, Gte or Lte needs one whole number as its value.",
    )
}

#[async_trait]
impl DataSource<KarpenterContext> for InstanceTypes {
    fn type_name(&self) -> &'static str {
        "karpenter_instance_types"
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    /// `region` and `zones` belong to `source = "ec2"`. Offline, an unmeetable `min_values` is
    /// known at plan and said as a warning (the answer itself still lists what matches).
    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        let root = AttributePath::root();
        let source_known = config.get("source").is_none_or(|s| !s.is_unknown());
        if source_known && !is_ec2(config) {
            for name in ["region", "zones"] {
                if config.get(name).is_some_and(|v| !v.is_null()) {
                    diags.error_at(
                        &root.attr(name),
                        "Only with source = \"ec2\"",
                        format!(
                            "{name} says which part of AWS to ask, so it only applies with source = \"ec2\"; the \
                             offline data is Karpenter {}'s whole reference. Set source = \"ec2\" or remove {name}.",
                            catalog::KARPENTER_VERSION
                        ),
                    );
                }
            }
            let Some(requirements) = written_requirements(config.get("requirements").unwrap_or(&Value::Null))
            else {
                return;
            };
            let Some(selected) = selection::select(catalog::all(), &requirements, Flavor::Either) else {
                return;
            };
            for short in selection::min_values_short(&selected, &requirements, Flavor::Either) {
                diags.warning_at(
                    &root.attr("requirements").index(short.index).attr("min_values"),
                    "min_values cannot be met",
                    format!(
                        "min_values = {} asks for {} different values of {}, but the {} matching instance types have \
                         {} ({}). A NodePool with these requirements would launch no node.",
                        short.wanted,
                        short.wanted,
                        short.key,
                        selected.len(),
                        short.found.len(),
                        short.found.iter().cloned().collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
    }

    async fn read(&self, ctx: &KarpenterContext, config: &Value) -> Result<Value, Diagnostics> {
        if !is_ec2(config) {
            return Self::offline(config);
        }
        match Self::from_ec2(ctx, config).await? {
            DataReadOutcome::Read(v) => Ok(v),
            DataReadOutcome::Encoded(_) => Err(unanswerable("an encoded answer where a value was asked for")),
            DataReadOutcome::NotYet(d) => Err(d),
        }
    }

    async fn read_or_defer(
        &self,
        ctx: &KarpenterContext,
        config: &Value,
    ) -> Result<DataReadOutcome, Diagnostics> {
        if is_ec2(config) {
            return Self::from_ec2(ctx, config).await;
        }
        Self::offline_encoded(config).map(DataReadOutcome::Encoded)
    }
}
