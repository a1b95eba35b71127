//! Data sources that read one Karpenter object by name: `karpenter_ec2_node_class`,
//! `karpenter_eks_node_class` (EKS Auto Mode) and `karpenter_node_pool`. `name` is the only argument; every `spec` field of the resource of the
//! same kind is there (computed), with `metadata` (all of the object's labels and annotations)
//! and `status` (what Karpenter resolved: AMIs, subnets, security groups, instance profile,
//! resources, node count, conditions).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use async_trait::async_trait;
use kube::api::DynamicObject;
use serde_json::Value as Json;
use tokio::time::Instant;

use super::{READ_TIMEOUT, client, computed_copy, outcome_of, read_result};
use crate::context::KarpenterContext;
use crate::k8s::{self, Kind, kinds};
use crate::resources::kube::v1;
use crate::terraform::framework::convert::from_wire;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{Attribute, DataReadOutcome, DataSource, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

/// One object of `kind`, read by name.
pub struct ObjectDataSource {
    pub type_name: &'static str,
    pub kind: Kind,
    pub schema: &'static LazyLock<Schema>,
}

/// The data source schema for a resource schema: `name` (required), `metadata` and `status`,
/// and every spec attribute of the resource, all computed.
fn data_schema(resource: &Schema, kind: &str, description: &str) -> Schema {
    let mut attributes = vec![
        Attribute::string("name")
            .required()
            .not_on_wire()
            .describe(format!("Name of the {kind} to read."))
            .validate(crate::resources::kube::kind::rules::names::object_name()),
        Attribute::object(
            "metadata",
            vec![
                Attribute::map_of("labels", Type::String)
                    .computed()
                    .describe(format!("All labels of the {kind} object.")),
                Attribute::map_of("annotations", Type::String)
                    .computed()
                    .describe(format!("All annotations of the {kind} object.")),
            ],
        )
        .computed()
        .not_on_wire()
        .describe(format!(
            "Labels and annotations of the {kind} object, including those others wrote."
        )),
    ];
    let spec_and_status: Vec<Attribute> = resource
        .attributes
        .iter()
        .filter(|a| a.wire_field().is_some() || a.name == "status")
        .cloned()
        .collect();
    attributes.extend(computed_copy(&spec_and_status));
    Schema::new(description, attributes)
}

/// The schema of data source `karpenter_ec2_node_class`.
pub static EC2_NODE_CLASS: LazyLock<Schema> = LazyLock::new(|| {
    data_schema(
        &v1::EC2_NODE_CLASS,
        "EC2NodeClass",
        "Reads an EC2NodeClass (`karpenter.k8s.aws/v1`) by name: its settings, and what Karpenter resolved for \
         it under `status`: the AMIs, subnets and security groups its selector terms matched, the instance \
         profile its nodes use, capacity reservations, and its conditions. Use it to wire those IDs into the \
         rest of a configuration. Read at plan time; needs the cluster to be reachable then.",
    )
});

/// The schema of data source `karpenter_node_pool`.
pub static NODE_POOL: LazyLock<Schema> = LazyLock::new(|| {
    data_schema(
        &v1::NODE_POOL,
        "NodePool",
        "Reads a NodePool (`karpenter.sh/v1`) by name: its settings, and what Karpenter reports under `status`: \
         the resources its nodes hold together, how many nodes it has, and its conditions. Read at plan time; \
         needs the cluster to be reachable then.",
    )
});

/// The schema of data source `karpenter_eks_node_class`.
pub static EKS_NODE_CLASS: LazyLock<Schema> = LazyLock::new(|| {
    data_schema(
        &crate::resources::kube::eks::EKS_NODE_CLASS,
        "NodeClass",
        "Reads an EKS Auto Mode NodeClass (`eks.amazonaws.com/v1`) by name — a custom one, or the built-in \
         `default` that EKS manages — with its settings and what Auto Mode resolved for it under `status`: the \
         subnets and security groups its selector terms matched, the instance profile its nodes use, and its \
         conditions. Read at plan time; needs the cluster to be reachable then.",
    )
});

pub fn eks_node_class() -> ObjectDataSource {
    ObjectDataSource {
        type_name: "karpenter_eks_node_class",
        kind: kinds::EKS_NODE_CLASS,
        schema: &EKS_NODE_CLASS,
    }
}

pub fn ec2_node_class() -> ObjectDataSource {
    ObjectDataSource {
        type_name: "karpenter_ec2_node_class",
        kind: kinds::EC2_NODE_CLASS,
        schema: &EC2_NODE_CLASS,
    }
}

pub fn node_pool() -> ObjectDataSource {
    ObjectDataSource {
        type_name: "karpenter_node_pool",
        kind: kinds::NODE_POOL,
        schema: &NODE_POOL,
    }
}

/// A string map of an object's labels or annotations (empty when it has none).
pub fn string_map(m: &Option<BTreeMap<String, String>>) -> Value {
    Value::Map(
        m.iter()
            .flatten()
            .map(|(k, v)| (k.clone(), Value::string(v.clone())))
            .collect(),
    )
}

impl ObjectDataSource {
    /// The data source state of a stored object.
    pub fn state_of(&self, obj: &DynamicObject) -> Result<Value, Diagnostics> {
        let section = |name: &str| {
            obj.data
                .get(name)
                .and_then(Json::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let unexpected = |e: crate::terraform::framework::convert::ConvertError| {
            Diagnostics::from_error(
                format!("Unexpected {} from the API server", self.kind.kind),
                e.to_string(),
            )
        };
        let mut state = from_wire(
            &self.schema.attributes,
            &section("spec"),
            &Value::Null,
            &AttributePath::root(),
        )
        .map_err(unexpected)?;
        let status = match self.schema.attribute("status").and_then(Attribute::nested) {
            Some((_, attrs)) => from_wire(
                attrs,
                &section("status"),
                &Value::Null,
                &AttributePath::root().attr("status"),
            )
            .map_err(unexpected)?,
            None => Value::Null,
        };
        if let Value::Object(fields) = &mut state {
            fields.insert(
                "name".into(),
                Value::string(obj.metadata.name.clone().unwrap_or_default()),
            );
            fields.insert(
                "metadata".into(),
                Value::Object(
                    [
                        ("labels".to_string(), string_map(&obj.metadata.labels)),
                        ("annotations".to_string(), string_map(&obj.metadata.annotations)),
                    ]
                    .into_iter()
                    .collect(),
                ),
            );
            fields.insert("status".into(), status);
        }
        Ok(state)
    }
}

#[async_trait]
impl DataSource<KarpenterContext> for ObjectDataSource {
    fn type_name(&self) -> &'static str {
        self.type_name
    }

    fn schema(&self) -> &Schema {
        self.schema
    }

    async fn read(&self, ctx: &KarpenterContext, config: &Value) -> Result<Value, Diagnostics> {
        read_result(self.read_or_defer(ctx, config).await)
    }

    async fn read_or_defer(
        &self,
        ctx: &KarpenterContext,
        config: &Value,
    ) -> Result<DataReadOutcome, Diagnostics> {
        let name = get_str(config, "name").unwrap_or_default().to_string();
        let what = format!("{} {name:?}", self.kind.kind);
        let client = match client(ctx, self.type_name, &what).await? {
            Ok(c) => c,
            Err(not_yet) => return Ok(not_yet),
        };
        match k8s::apply::get(client, &self.kind, None, &name, Instant::now() + READ_TIMEOUT).await {
            Ok(Some(obj)) => self.state_of(&obj).map(DataReadOutcome::Read),
            Ok(None) => Err(Diagnostics::from_error(
                format!("No {} named {name:?}", self.kind.kind),
                format!(
                    "The cluster has no {} named {name:?}. Check the name (kubectl get {}), or create it first and make this data source depend on it.",
                    self.kind.kind, self.kind.plural
                ),
            )),
            Err(e) => outcome_of(self.type_name, &what, &e),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn state_of_an_ec2_node_class_carries_spec_and_resolved_status() {
        let ds = ec2_node_class();
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
            "metadata": {"name": "default", "labels": {"team": "a"}, "annotations": {"karpenter.k8s.aws/ec2nodeclass-hash": "1"}},
            "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                     "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
                     "securityGroupSelectorTerms": [{"id": "sg-1"}]},
            "status": {"instanceProfile": "demo_123", "amis": [{"id": "ami-1", "name": "al2023"}],
                       "subnets": [{"id": "subnet-1", "zone": "us-east-1a", "zoneID": "use1-az1"}],
                       "securityGroups": [{"id": "sg-1", "name": "nodes"}],
                       "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }))
        .expect("object");
        let state = ds.state_of(&obj).expect("state");
        assert!(
            state.conforms_to(&EC2_NODE_CLASS.value_type()).is_ok(),
            "{:?}",
            state.conforms_to(&EC2_NODE_CLASS.value_type())
        );
        assert_eq!(get_str(&state, "role"), Some("KarpenterNodeRole"));
        let status = state.get("status").expect("status");
        assert_eq!(get_str(status, "instance_profile"), Some("demo_123"));
        let subnet = status
            .get("subnets")
            .and_then(|s| s.as_elements())
            .and_then(|s| s.first())
            .cloned();
        assert_eq!(
            subnet.as_ref().and_then(|s| get_str(s, "zone_id")),
            Some("use1-az1")
        );
        let annotations = state
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_entries);
        assert!(annotations.is_some_and(|a| a.contains_key("karpenter.k8s.aws/ec2nodeclass-hash")));
    }
}
