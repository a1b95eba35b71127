//! Data source `karpenter_node_claims`: the NodeClaims (the machines Karpenter launched) of one
//! NodePool, or of the whole cluster, with what a platform team wires elsewhere: node name,
//! instance type, capacity type, zone, provider ID, image and conditions, and whether Karpenter
//! marked it drifted (so a pipeline can gate on it). Sorted by name, so the list is stable
//! between runs.

use std::sync::LazyLock;

use async_trait::async_trait;
use kube::api::{Api, DynamicObject, ListParams};
use serde_json::{Map, Value as Json};
use tokio::time::Instant;

use super::{READ_TIMEOUT, client, computed_copy, outcome_of, read_result};
use crate::context::KarpenterContext;
use crate::k8s::plan_reads::{NODE_POOL_LABEL, drifted_reason};
use crate::k8s::retry::{Also, retry};
use crate::k8s::{KubeError, kinds};
use crate::resources::kube::kind::attributes::conditions_attribute;
use crate::resources::kube::kind::rules;
use crate::terraform::framework::convert::from_wire;
use crate::terraform::framework::values::{get_str, object, opt_string};
use crate::terraform::framework::{Attribute, DataReadOutcome, DataSource, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Value};

const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
const CAPACITY_TYPE_LABEL: &str = "karpenter.sh/capacity-type";
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

pub struct NodeClaims;

/// The schema of data source `karpenter_node_claims`.
pub static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Lists the NodeClaims (`karpenter.sh/v1`) Karpenter launched, for one NodePool (`node_pool`) or for the \
         whole cluster: node name, instance type, capacity type, zone, provider ID, conditions of each, and \
         whether Karpenter marked it drifted (to be replaced). A NodeClaim that is still launching has no node name, instance type or zone yet (null). Read at plan \
         time; needs the cluster to be reachable then.",
        vec![
            Attribute::string("node_pool")
                .optional()
                .describe(
                    "Name of the NodePool whose NodeClaims to list. Unset: every NodeClaim of the cluster.",
                )
                .validate(rules::names::object_name()),
            Attribute::list_of_objects(
                "node_claims",
                vec![
                    Attribute::string("name")
                        .computed()
                        .describe("Name of the NodeClaim."),
                    Attribute::string("node_pool")
                        .computed()
                        .describe("NodePool the NodeClaim belongs to (its `karpenter.sh/nodepool` label)."),
                    Attribute::string("node_name")
                        .computed()
                        .describe("Name of the Kubernetes node, once it registered."),
                    Attribute::string("instance_type").computed().describe(
                        "EC2 instance type, e.g. `m5.large` (its `node.kubernetes.io/instance-type` label).",
                    ),
                    Attribute::string("capacity_type").computed().describe(
                        "`spot`, `on-demand` or `reserved` (its `karpenter.sh/capacity-type` label).",
                    ),
                    Attribute::string("zone")
                        .computed()
                        .describe("Availability zone (its `topology.kubernetes.io/zone` label)."),
                    Attribute::string("provider_id").computed().describe(
                        "Cloud provider ID of the instance, e.g. `aws:///us-east-1a/i-0123456789abcdef0`.",
                    ),
                    Attribute::string("image_id")
                        .computed()
                        .describe("AMI the instance was launched from."),
                    Attribute::bool("drifted").computed().describe(
                        "Whether Karpenter marked the NodeClaim drifted (its `Drifted` condition is `True`): it no \
                         longer matches its NodePool or node class, and Karpenter replaces its node within the pool's \
                         disruption budgets.",
                    ),
                    Attribute::string("drift_reason").computed().describe(
                        "Why Karpenter marked it drifted, the `Drifted` condition's reason: `NodePoolDrifted` (the \
                         pool's template changed), `RequirementsDrifted` (its labels no longer meet the pool's \
                         requirements), `NodeClassDrift` (the node class changed), `AMIDrift`, `SubnetDrift`, \
                         `SecurityGroupDrift`, `CapacityReservationDrift`, `PlacementGroupDrift` (what the node class \
                         resolves to changed) or `InstanceTypeNotFound`. Null when it is not drifted.",
                    ),
                    conditions_attribute(),
                ],
            )
            .computed()
            .describe("The NodeClaims, sorted by name."),
        ],
    )
});

/// One listed NodeClaim.
pub fn claim_state(obj: &DynamicObject) -> Result<Value, Diagnostics> {
    let status: Map<String, Json> = obj
        .data
        .get("status")
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    let label = |key: &str| opt_string(obj.metadata.labels.as_ref().and_then(|l| l.get(key)).cloned());
    let text = |key: &str| opt_string(status.get(key).and_then(Json::as_str).map(str::to_string));
    let conditions = computed_copy(&[conditions_attribute()]);
    let conditions = from_wire(&conditions, &status, &Value::Null, &AttributePath::root())
        .map_err(|e| Diagnostics::from_error("Unexpected NodeClaim from the API server", e.to_string()))?;
    let drift = drifted_reason(obj.data.get("status"));
    let state = object([
        (
            "name",
            Value::string(obj.metadata.name.clone().unwrap_or_default()),
        ),
        ("node_pool", label(NODE_POOL_LABEL)),
        ("node_name", text("nodeName")),
        ("instance_type", label(INSTANCE_TYPE_LABEL)),
        ("capacity_type", label(CAPACITY_TYPE_LABEL)),
        ("zone", label(ZONE_LABEL)),
        ("provider_id", text("providerID")),
        ("image_id", text("imageID")),
        ("drifted", Value::Bool(drift.is_some())),
        ("drift_reason", opt_string(drift)),
        (
            "conditions",
            conditions.get("conditions").cloned().unwrap_or(Value::Null),
        ),
    ]);
    Ok(state)
}

/// The state for a list of NodeClaims (sorted by name).
pub fn state(config: &Value, mut claims: Vec<DynamicObject>) -> Result<Value, Diagnostics> {
    claims.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let items = claims.iter().map(claim_state).collect::<Result<Vec<_>, _>>()?;
    Ok(object([
        (
            "node_pool",
            config.get("node_pool").cloned().unwrap_or(Value::Null),
        ),
        ("node_claims", Value::List(items)),
    ]))
}

#[async_trait]
impl DataSource<KarpenterContext> for NodeClaims {
    fn type_name(&self) -> &'static str {
        "karpenter_node_claims"
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    async fn read(&self, ctx: &KarpenterContext, config: &Value) -> Result<Value, Diagnostics> {
        read_result(self.read_or_defer(ctx, config).await)
    }

    async fn read_or_defer(
        &self,
        ctx: &KarpenterContext,
        config: &Value,
    ) -> Result<DataReadOutcome, Diagnostics> {
        let pool = get_str(config, "node_pool").map(str::to_string);
        let what = match &pool {
            Some(p) => format!("the NodeClaims of NodePool {p:?}"),
            None => "the NodeClaims".to_string(),
        };
        let client = match client(ctx, self.type_name(), &what).await? {
            Ok(c) => c,
            Err(not_yet) => return Ok(not_yet),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &kinds::NODE_CLAIM.api_resource());
        let mut params = ListParams::default();
        if let Some(p) = &pool {
            params = params.labels(&format!("{NODE_POOL_LABEL}={p}"));
        }
        let listed = retry(
            &format!("listing {what}"),
            Instant::now() + READ_TIMEOUT,
            Also::Nothing,
            || async { api.list(&params).await.map_err(KubeError::from) },
        )
        .await;
        match listed {
            Ok(list) => state(config, list.items).map(DataReadOutcome::Read),
            // No NodeClaim kind at all: Karpenter v1 is not installed, so there are none.
            Err(e) if e.is_not_found() => state(config, Vec::new()).map(DataReadOutcome::Read),
            Err(e) => outcome_of(self.type_name(), &what, &e),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claims_are_sorted_and_read_from_labels_and_status() {
        let claim = |name: &str, launched: bool| -> DynamicObject {
            let mut j = json!({
                "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "general"}},
                "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}, "requirements": []}
            });
            if launched {
                j["metadata"]["labels"]["node.kubernetes.io/instance-type"] = json!("m5.large");
                j["metadata"]["labels"]["karpenter.sh/capacity-type"] = json!("spot");
                j["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("us-east-1a");
                j["status"] = json!({"nodeName": "ip-10-0-0-1.ec2.internal", "providerID": "aws:///us-east-1a/i-1",
                    "imageID": "ami-1", "conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                    "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}, {"type": "Drifted", "status": "True",
                    "reason": "NodePoolDrifted", "message": "NodePoolDrifted", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
            }
            serde_json::from_value(j).expect("claim")
        };
        let config = object([
            ("node_pool", Value::string("general")),
            ("node_claims", Value::Null),
        ]);
        let s = state(&config, vec![claim("general-b", false), claim("general-a", true)]).expect("state");
        assert!(
            s.conforms_to(&SCHEMA.value_type()).is_ok(),
            "{:?}",
            s.conforms_to(&SCHEMA.value_type())
        );
        let items = s.get("node_claims").and_then(Value::as_elements).expect("list");
        assert_eq!(get_str(&items[0], "name"), Some("general-a"));
        assert_eq!(get_str(&items[0], "instance_type"), Some("m5.large"));
        assert_eq!(get_str(&items[0], "provider_id"), Some("aws:///us-east-1a/i-1"));
        assert_eq!(get_str(&items[0], "node_pool"), Some("general"));
        assert!(items[1].get("node_name").is_some_and(Value::is_null));
        assert_eq!(items[0].get("drifted"), Some(&Value::Bool(true)));
        assert_eq!(get_str(&items[0], "drift_reason"), Some("NodePoolDrifted"));
        assert_eq!(items[1].get("drifted"), Some(&Value::Bool(false)));
        assert!(items[1].get("drift_reason").is_some_and(Value::is_null));
        let ready = items[0]
            .get("conditions")
            .and_then(Value::as_elements)
            .and_then(|c| c.first())
            .and_then(|c| get_str(c, "status"));
        assert_eq!(ready, Some("True"));
    }
}
