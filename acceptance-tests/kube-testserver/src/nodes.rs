//! The Nodes of launched NodeClaims (`ControllerConfig::node_registration`), as a cluster has
//! them: the kubelet of the launched instance registers its Node (independently of Karpenter),
//! then Karpenter, if it is running, registers it as its own (Karpenter's `syncNode`): its
//! `karpenter.sh/termination` finalizer, an owner reference to the NodeClaim, the NodeClaim's
//! labels and `karpenter.sh/registered`. Karpenter finds a NodeClaim's Node by `providerID`.
//! While running, it deletes the Node of a NodeClaim being deleted and removes its finalizer
//! from a Node being deleted (after draining and terminating: `finalizer_removal_delay`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::controller_config::ControllerConfig;
use crate::controller_write::mutate;
use crate::shared::{Shared, lock};
use crate::store::{ResourceType, Sub, WriteCtx};
use crate::util::{finalizers, meta_str, set_finalizers};

/// Karpenter's finalizer on the Nodes it registered.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";
/// The label Karpenter puts on a Node it registered.
pub const REGISTERED_LABEL: &str = "karpenter.sh/registered";
/// The taint the kubelet registers Karpenter's nodes with, removed at registration.
const UNREGISTERED_TAINT: &str = "karpenter.sh/unregistered";

/// After a NodeClaim `name` (of `uid`) was launched: its kubelet registers the Node `delay`
/// later, unless the NodeClaim is gone or being deleted by then (its instance terminated).
pub fn schedule_kubelet(shared: &Arc<Shared>, name: &str, uid: &str, delay: Duration) {
    let (me, name, uid) = (shared.clone(), name.to_string(), uid.to_string());
    shared.rt.spawn(async move {
        tokio::time::sleep(delay).await;
        register_by_kubelet(&me, &name, &uid);
    });
}

fn register_by_kubelet(shared: &Arc<Shared>, claim_name: &str, claim_uid: &str) {
    let ctx = WriteCtx {
        manager: "kubelet".into(),
        ..WriteCtx::default()
    };
    shared.with_state(|st| {
        let Some(claim) = st.get_raw("karpenter.sh", "nodeclaims", "", claim_name).cloned() else {
            return;
        };
        if meta_str(&claim, "uid") != Some(claim_uid) || claim.pointer("/metadata/deletionTimestamp").is_some() {
            return;
        }
        let (Some(node_name), Some(provider_id)) = (
            claim.pointer("/status/nodeName").and_then(Value::as_str),
            claim.pointer("/status/providerID").and_then(Value::as_str),
        ) else {
            return;
        };
        let mut labels = claim
            .pointer("/metadata/labels")
            .cloned()
            .unwrap_or_else(|| json!({}));
        labels["kubernetes.io/hostname"] = json!(node_name);
        let node = json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node_name, "labels": labels},
            "spec": {"providerID": provider_id, "taints": [{"key": UNREGISTERED_TAINT, "effect": "NoExecute"}]},
            "status": {"capacity": claim.pointer("/status/capacity").cloned().unwrap_or_else(|| json!({}))}
        });
        if let Err(e) = st.create(&ResourceType::node(), "", node, &ctx, false) {
            tracing::warn!("simulated kubelet could not register Node {node_name}: {e}");
        }
    });
}

/// The NodeClaim whose `status.providerID` is `provider_id`: (name, uid, labels).
fn claim_of(shared: &Arc<Shared>, provider_id: &str) -> Option<(String, String, Value)> {
    lock(&shared.state)
        .objects_of("karpenter.sh", "nodeclaims")
        .into_iter()
        .find(|c| c.pointer("/status/providerID").and_then(Value::as_str) == Some(provider_id))
        .map(|c| {
            (
                meta_str(&c, "name").unwrap_or("").to_string(),
                meta_str(&c, "uid").unwrap_or("").to_string(),
                c.pointer("/metadata/labels")
                    .cloned()
                    .unwrap_or_else(|| json!({})),
            )
        })
}

/// The running controller's reaction to a Node event: registration of a Node of one of its
/// NodeClaims, or the removal of its finalizer from a Node being deleted.
pub fn react(shared: &Arc<Shared>, cfg: &ControllerConfig, node: &Value) {
    let name = meta_str(node, "name").unwrap_or("").to_string();
    let uid = meta_str(node, "uid").unwrap_or("").to_string();
    let has = finalizers(node).iter().any(|f| f == TERMINATION_FINALIZER);
    if node.pointer("/metadata/deletionTimestamp").is_some() {
        if has && lock(&shared.scheduled).insert(("finalize".to_string(), uid.clone())) {
            let (me, delay) = (shared.clone(), cfg.finalizer_removal_delay);
            shared.rt.spawn(async move {
                tokio::time::sleep(delay).await;
                mutate(&me, "", "nodes", "", &name, &uid, Sub::Main, |obj| {
                    let f: Vec<String> = finalizers(obj)
                        .into_iter()
                        .filter(|x| x != TERMINATION_FINALIZER)
                        .collect();
                    set_finalizers(obj, &f);
                });
            });
        }
        return;
    }
    let registered = node
        .pointer("/metadata/labels")
        .and_then(|l| l.get(REGISTERED_LABEL))
        .is_some();
    if registered {
        return;
    }
    let Some(provider_id) = node.pointer("/spec/providerID").and_then(Value::as_str) else {
        return;
    };
    let Some((claim, claim_uid, claim_labels)) = claim_of(shared, provider_id) else {
        return;
    };
    mutate(shared, "", "nodes", "", &name, &uid, Sub::Main, move |obj| {
        let mut f = finalizers(obj);
        if !f.iter().any(|x| x == TERMINATION_FINALIZER) {
            f.push(TERMINATION_FINALIZER.to_string());
        }
        set_finalizers(obj, &f);
        let meta = &mut obj["metadata"];
        meta["ownerReferences"] = json!([{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": claim,
            "uid": claim_uid, "blockOwnerDeletion": true}]);
        if let (Some(labels), Some(from)) = (
            meta.get_mut("labels").and_then(Value::as_object_mut),
            claim_labels.as_object(),
        ) {
            labels.extend(from.iter().map(|(k, v)| (k.clone(), v.clone())));
            labels.insert(REGISTERED_LABEL.into(), json!("true"));
        }
        if let Some(taints) = obj.pointer_mut("/spec/taints").and_then(Value::as_array_mut) {
            taints.retain(|t| t.get("key").and_then(Value::as_str) != Some(UNREGISTERED_TAINT));
        }
    });
}

/// The running controller's first step for a NodeClaim being deleted: it deletes the claim's
/// Node (found by `providerID`), whose finalizer it then handles in [`react`].
pub fn delete_node_of(shared: &Arc<Shared>, claim: &Value) {
    let Some(provider_id) = claim.pointer("/status/providerID").and_then(Value::as_str) else {
        return;
    };
    shared.with_state(|st| {
        let rt = ResourceType::node();
        let nodes: Vec<String> = st
            .objects_of("", "nodes")
            .into_iter()
            .filter(|n| n.pointer("/spec/providerID").and_then(Value::as_str) == Some(provider_id))
            .filter(|n| n.pointer("/metadata/deletionTimestamp").is_none())
            .filter_map(|n| meta_str(&n, "name").map(String::from))
            .collect();
        for name in nodes {
            if let Err(e) = st.delete(&rt, "", &name, Some("Background"), None, None, false) {
                tracing::warn!("simulated controller could not delete Node {name}: {e}");
            }
        }
    });
}
