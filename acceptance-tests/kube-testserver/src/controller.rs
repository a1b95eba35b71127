//! A simulated Karpenter controller, switchable at run time. It watches the store's events and:
//! adds a finalizer (per kind) to new objects and removes it a while after deletion starts;
//! fills `EC2NodeClass` (and EKS Auto Mode `NodeClass`) status (subnets, security groups, AMIs, instance profile, `Ready=True`)
//! after a delay; marks `NodePool`s Ready; and creates `NodeClaim`s owned by each new `NodePool`
//! so that foreground deletion has dependents to wait for. Optionally it marks `NodeOverlay`s
//! Ready, reports `CapacityBuffer`s (namespaced) as provisioned, and "launches" NodeClaims
//! (instance labels, node name, provider ID, conditions), so the read-only data sources have a
//! status to read, and registers their Nodes ([`crate::nodes`]).
//!
//! While enabled it also holds Karpenter's leader-election Lease (`coordination.k8s.io/v1`,
//! `karpenter-leader-election`), renewing it as controller-runtime does; switching it off
//! ([`stop`]) stops the renewals, so the Lease goes stale as when the controller's pods are gone,
//! and optionally releases it first, as a graceful shutdown does.

use crate::controller_config::LeaseConfig;
use crate::controller_write::mutate;
use crate::shared::{Shared, lock};
use crate::store::{Event, Sub, WriteCtx};
use crate::util::{finalizers, meta_str, now_rfc3339, set_finalizers};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// Run until the event channel closes.
pub async fn run(shared: Arc<Shared>, mut rx: broadcast::Receiver<Arc<Event>>) {
    let mut shutdown = shared.shutdown.clone();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let mut last_renewal: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let cfg = lock(&shared.controller).clone();
                if let (true, Some(lease)) = (cfg.enabled, cfg.leader_lease.as_ref())
                    && last_renewal.is_none_or(|t| t.elapsed() >= lease.renew_every)
                {
                    write_lease(&shared, lease, true);
                    last_renewal = Some(tokio::time::Instant::now());
                }
            },
            ev = rx.recv() => match ev {
                Ok(ev) => {
                    let delay = lock(&shared.controller).reaction_delay;
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    react(&shared, &ev);
                    shared.controller_progress.send_replace(ev.rv);
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // The skipped events are lost to the controller, as to a real one whose
                    // watch fell behind; waiting for them would only stall readers.
                    let newest = lock(&shared.state).last_event;
                    shared.controller_progress.send_replace(newest);
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = shutdown.changed() => return,
        }
    }
}

/// How long a read waits at most for the simulated controller to catch up (only a starved
/// test machine comes near it; the read is then answered as it stands).
const CATCH_UP: Duration = Duration::from_secs(10);

/// Waits until the simulated controller has handled every event sent so far, so that a read
/// sees its reactions to every earlier write, as a client of a real cluster sees those of a
/// Karpenter that reacts at once. The controller runs on its own task; on a loaded machine
/// a client's next request could otherwise overtake it, and what a test observes would
/// depend on scheduling. Reactions that the controller delays on purpose (the configured
/// delays) are not waited for; with the controller switched off, nothing is.
pub async fn caught_up(shared: &Arc<Shared>) {
    if !lock(&shared.controller).enabled {
        return;
    }
    let target = lock(&shared.state).last_event;
    let mut progress = shared.controller_progress.subscribe();
    let reached = tokio::time::timeout(CATCH_UP, progress.wait_for(|handled| *handled >= target)).await;
    if reached.is_err() {
        tracing::warn!(
            waited_for_rv = target,
            "the simulated controller is behind; answering the read anyway"
        );
    }
}

/// Stops the simulated controller mid-life: nothing is reconciled any more (finalizers stay,
/// the Lease is no longer renewed). With `release`, the Lease is first given up
/// (`holderIdentity` cleared), as Karpenter does on a graceful shutdown.
pub fn stop(shared: &Arc<Shared>, release: bool) {
    let lease = {
        let mut cfg = lock(&shared.controller);
        cfg.enabled = false;
        cfg.leader_lease.clone()
    };
    if let (true, Some(lease)) = (release, lease) {
        write_lease(shared, &lease, false);
    }
}

/// The Lease kind as a CustomResourceDefinition: the test server serves only CRDs, and a
/// Lease needs nothing more than its group, version, scope and names.
const LEASE_CRD: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "leases.coordination.k8s.io"},
 "spec": {"group": "coordination.k8s.io", "scope": "Namespaced",
  "names": {"plural": "leases", "singular": "lease", "kind": "Lease", "listKind": "LeaseList"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}"#;

/// Renews (`held`) or releases the Lease, creating the kind and the object when missing.
fn write_lease(shared: &Arc<Shared>, lease: &LeaseConfig, held: bool) {
    let exists = lock(&shared.state)
        .resolve("coordination.k8s.io", "v1", "leases")
        .is_some();
    if !exists && let Err(e) = crate::direct::install_crd_docs(shared, LEASE_CRD, Some(Duration::ZERO)) {
        tracing::warn!("simulated controller could not install the Lease kind: {e}");
        return;
    }
    let now = now_micro();
    let ctx = WriteCtx::controller();
    shared.with_state(|st| {
        let Some(rt) = st.resolve("coordination.k8s.io", "v1", "leases") else {
            return;
        };
        let current = st.get_raw("coordination.k8s.io", "leases", &lease.namespace, &lease.name).cloned();
        let result = match current {
            Some(mut o) => {
                let spec = if held {
                    json!({"holderIdentity": lease.holder, "leaseDurationSeconds": lease.duration_seconds,
                        "acquireTime": o.pointer("/spec/acquireTime").cloned().unwrap_or(json!(now)),
                        "renewTime": now, "leaseTransitions": o.pointer("/spec/leaseTransitions").cloned().unwrap_or(json!(0))})
                } else {
                    // controller-runtime's release: no holder, a one-second lease, renewed now.
                    json!({"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": now, "renewTime": now,
                        "leaseTransitions": o.pointer("/spec/leaseTransitions").cloned().unwrap_or(json!(0))})
                };
                if let Some(m) = o.as_object_mut() {
                    m.insert("spec".into(), spec);
                }
                st.update(&rt, &lease.namespace, &lease.name, o, Sub::Main, &ctx, true).map(|_| ())
            }
            None if held => {
                let o = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": lease.name, "namespace": lease.namespace},
                    "spec": {"holderIdentity": lease.holder, "leaseDurationSeconds": lease.duration_seconds,
                        "acquireTime": now, "renewTime": now, "leaseTransitions": 0}});
                st.create(&rt, &lease.namespace, o, &ctx, false).map(|_| ())
            }
            None => Ok(()),
        };
        if let Err(e) = result {
            tracing::warn!("simulated controller could not write its Lease: {e}");
        }
    });
}

/// Now as a Kubernetes MicroTime (`2026-01-02T03:04:05.123456Z`), as Lease times are written.
fn now_micro() -> String {
    let now = std::time::SystemTime::now();
    let micros = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_micros())
        .unwrap_or(0);
    let secs = crate::util::rfc3339(now);
    format!("{}.{micros:06}Z", secs.trim_end_matches('Z'))
}

fn schedule_once(shared: &Shared, what: &str, uid: &str) -> bool {
    lock(&shared.scheduled).insert((what.to_string(), uid.to_string()))
}

fn react(shared: &Arc<Shared>, ev: &Event) {
    let cfg = lock(&shared.controller).clone();
    if !cfg.enabled || ev.etype == "DELETED" {
        return;
    }
    let o = &ev.object;
    let kind = o.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
    let uid = meta_str(o, "uid").unwrap_or("").to_string();
    let ns = meta_str(o, "namespace").unwrap_or("").to_string();
    let name = meta_str(o, "name").unwrap_or("").to_string();
    let deleting = o.pointer("/metadata/deletionTimestamp").is_some();
    let (group, plural) = (ev.group.clone(), ev.plural.clone());

    if kind == "Node" && group.is_empty() {
        crate::nodes::react(shared, &cfg, o);
        return;
    }
    if kind == "NodeClaim" && deleting && cfg.node_registration.is_some() {
        crate::nodes::delete_node_of(shared, o);
    }
    if let Some(fin) = cfg.finalizers.get(&kind) {
        let has = finalizers(o).iter().any(|f| f == fin);
        if !deleting && !has {
            let fin = fin.clone();
            mutate(shared, &group, &plural, &ns, &name, &uid, Sub::Main, move |obj| {
                let mut f = finalizers(obj);
                if !f.contains(&fin) {
                    f.push(fin.clone());
                }
                set_finalizers(obj, &f);
            });
        } else if deleting && has && schedule_once(shared, "finalize", &uid) {
            let (me, fin, delay) = (shared.clone(), fin.clone(), cfg.finalizer_removal_delay);
            shared.rt.spawn(async move {
                tokio::time::sleep(delay).await;
                mutate(&me, &group, &plural, &ns, &name, &uid, Sub::Main, move |obj| {
                    let f: Vec<String> = finalizers(obj).into_iter().filter(|x| *x != fin).collect();
                    set_finalizers(obj, &f);
                });
            });
            return;
        }
    }
    if deleting {
        return;
    }
    let hash_key = match kind.as_str() {
        "NodePool" => Some((
            "karpenter.sh/nodepool-hash",
            "karpenter.sh/nodepool-hash-version",
            "v3",
        )),
        "EC2NodeClass" => Some((
            "karpenter.k8s.aws/ec2nodeclass-hash",
            "karpenter.k8s.aws/ec2nodeclass-hash-version",
            "v4",
        )),
        _ => None,
    };
    if let Some((key, version_key, version)) = hash_key.filter(|_| cfg.hash_annotations) {
        let hash = spec_hash(o);
        let current = o
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str);
        if current != Some(hash.as_str()) {
            mutate(shared, &group, &plural, &ns, &name, &uid, Sub::Main, move |obj| {
                if let Some(m) = crate::util::meta_mut(obj) {
                    let a = m.entry("annotations").or_insert_with(|| json!({}));
                    if let Some(a) = a.as_object_mut() {
                        a.insert(key.into(), json!(hash));
                        a.insert(version_key.into(), json!(version));
                    }
                }
            });
        }
    }
    // Statuses follow the spec: (re)written whenever observedGeneration lags metadata.generation.
    let generation = o
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let observed = o
        .pointer("/status/conditions/0/observedGeneration")
        .and_then(Value::as_i64);
    if matches!(kind.as_str(), "EC2NodeClass" | "NodeClass")
        && cfg.node_class_status
        && observed != Some(generation)
        && schedule_once(shared, &format!("nodeclass-{generation}"), &uid)
    {
        let me = shared.clone();
        let delay = cfg.node_class_status_delay;
        let cel = cfg.node_class_cel;
        let (group, plural, ns, name, uid) = (
            group.clone(),
            plural.clone(),
            ns.clone(),
            name.clone(),
            uid.clone(),
        );
        shared.rt.spawn(async move {
            tokio::time::sleep(delay).await;
            mutate(&me, &group, &plural, &ns, &name, &uid, Sub::Status, |obj| {
                let status = node_class_status(obj, cel);
                if let Some(m) = obj.as_object_mut() {
                    m.insert("status".into(), status);
                }
            });
        });
    }
    if kind == "NodePool"
        && cfg.node_pool_status
        && observed != Some(generation)
        && schedule_once(shared, &format!("nodepool-{generation}"), &uid)
    {
        let n = cfg.node_claims_per_node_pool;
        mutate(
            shared,
            &group,
            &plural,
            &ns,
            &name,
            &uid,
            Sub::Status,
            move |obj| {
                let generation = obj.pointer("/metadata/generation").cloned().unwrap_or(json!(1));
                let now = now_rfc3339();
                let conds: Vec<Value> = ["ValidationSucceeded", "NodeClassReady", "Ready"]
                .iter()
                .map(|t| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": t, "message": "", "observedGeneration": generation}))
                .collect();
                if let Some(m) = obj.as_object_mut() {
                    m.insert(
                        "status".into(),
                        json!({"conditions": conds, "nodes": n,
                    "resources": {"cpu": "0", "memory": "0", "nodes": n.to_string(), "pods": "0"}}),
                    );
                }
            },
        );
    }
    if kind == "NodeOverlay"
        && cfg.node_overlay_status
        && observed != Some(generation)
        && schedule_once(shared, &format!("nodeoverlay-{generation}"), &uid)
    {
        mutate(shared, &group, &plural, &ns, &name, &uid, Sub::Status, |obj| {
            let generation = obj.pointer("/metadata/generation").cloned().unwrap_or(json!(1));
            let now = now_rfc3339();
            let conds: Vec<Value> = ["ValidationSucceeded", "Ready"]
                .iter()
                .map(|t| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": t, "message": "", "observedGeneration": generation}))
                .collect();
            if let Some(m) = obj.as_object_mut() {
                m.insert("status".into(), json!({"conditions": conds}));
            }
        });
    }
    if kind == "CapacityBuffer"
        && cfg.capacity_buffer_status
        && observed != Some(generation)
        && schedule_once(shared, &format!("capacitybuffer-{generation}"), &uid)
    {
        mutate(shared, &group, &plural, &ns, &name, &uid, Sub::Status, |obj| {
            let status = capacity_buffer_status(obj);
            if let Some(m) = obj.as_object_mut() {
                m.insert("status".into(), status);
            }
        });
    }
    if kind == "NodeClaim"
        && cfg.node_claim_status
        && o.pointer("/status/providerID").is_none()
        && schedule_once(shared, "nodeclaim-launch", &uid)
    {
        launch_node_claim(shared, &group, &plural, &name, &uid);
        if let Some(delay) = cfg.node_registration {
            crate::nodes::schedule_kubelet(shared, &name, &uid, delay);
        }
    }
    if kind == "NodePool" && ev.etype == "ADDED" {
        for _ in 0..cfg.node_claims_per_node_pool {
            create_node_claim(shared, o);
        }
    }
}

/// The status Karpenter's buffer controller writes for a translated CapacityBuffer: its chunk
/// count (`replicas`, else one), the strategy in effect, the PodTemplate it provisions from
/// (the referenced one; for a `scalableRef`, none is reported) and two True conditions.
fn capacity_buffer_status(obj: &Value) -> Value {
    let generation = obj.pointer("/metadata/generation").cloned().unwrap_or(json!(1));
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    let now = now_rfc3339();
    let conds: Vec<Value> = ["ReadyForProvisioning", "Provisioning"]
        .iter()
        .map(|t| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": t, "message": "", "observedGeneration": generation}))
        .collect();
    let mut status = json!({
        "conditions": conds,
        "replicas": spec.get("replicas").cloned().unwrap_or(json!(1)),
        "provisioningStrategy": spec.get("provisioningStrategy").cloned().unwrap_or(json!("buffer.x-k8s.io/active-capacity")),
    });
    if let Some(template) = spec.get("podTemplateRef") {
        status["podTemplateRef"] = template.clone();
        status["podTemplateGeneration"] = json!(1);
    }
    status
}

/// A stable hash of an object's spec, written as Karpenter writes its drift-hash annotations.
fn spec_hash(o: &Value) -> String {
    let text = o.get("spec").map(Value::to_string).unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.to_string()
}

/// Whether an EC2NodeClass's kubelet holds a CEL expression, as Karpenter v1.15 tells: a
/// string `maxPods`, or a `kubeReserved` / `systemReserved` value that is no quantity.
fn has_kubelet_expression(o: &Value) -> bool {
    let kubelet = o.pointer("/spec/kubelet");
    let max_pods = kubelet
        .and_then(|k| k.get("maxPods"))
        .is_some_and(Value::is_string);
    let reserved = ["kubeReserved", "systemReserved"].iter().any(|map| {
        kubelet
            .and_then(|k| k.get(*map))
            .and_then(Value::as_object)
            .is_some_and(|m| {
                m.values()
                    .any(|v| v.as_str().is_some_and(|s| !crate::util::is_quantity(s)))
            })
    });
    max_pods || reserved
}

fn node_class_status(o: &Value, cel: bool) -> Value {
    let name = meta_str(o, "name").unwrap_or("default");
    let generation = o.pointer("/metadata/generation").cloned().unwrap_or(json!(1));
    let profile = o
        .pointer("/spec/instanceProfile")
        .and_then(Value::as_str)
        .map(String::from)
        .unwrap_or_else(|| {
            format!(
                "testcluster_{:x}",
                name.bytes()
                    .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
            )
        });
    let now = now_rfc3339();
    // EKS Auto Mode's NodeClass picks its AMIs itself: no AMI status or condition.
    let auto_mode = o.get("kind").and_then(Value::as_str) == Some("NodeClass");
    // Karpenter v1.15 refuses a kubelet expression while its NodeClassCEL gate is off.
    let refused = !auto_mode && !cel && has_kubelet_expression(o);
    let conds: Vec<Value> = ["AMIsReady", "SubnetsReady", "SecurityGroupsReady", "InstanceProfileReady", "ValidationSucceeded", "Ready"]
        .iter()
        .filter(|t| !(auto_mode && **t == "AMIsReady"))
        .map(|t| match *t {
            "ValidationSucceeded" if refused => json!({"type": t, "status": "False", "lastTransitionTime": now,
                "reason": "KubeletExpressionsDisabled",
                "message": "spec.kubelet contains a CEL expression, but the NodeClassCEL feature gate is disabled",
                "observedGeneration": generation}),
            "Ready" if refused => json!({"type": t, "status": "False", "lastTransitionTime": now,
                "reason": "UnhealthyDependents", "message": "ValidationSucceeded=False", "observedGeneration": generation}),
            _ => json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": t, "message": "", "observedGeneration": generation}),
        })
        .collect();
    let mut status = json!({
        "subnets": [
            {"id": "subnet-0a1b2c3d4e5f60001", "zone": "us-east-1a", "zoneID": "use1-az1"},
            {"id": "subnet-0a1b2c3d4e5f60002", "zone": "us-east-1b", "zoneID": "use1-az2"}
        ],
        "securityGroups": [{"id": "sg-0a1b2c3d4e5f60001", "name": "eks-cluster-sg-testcluster"}],
        "amis": [{"id": "ami-0a1b2c3d4e5f60001", "name": "amazon-eks-node-al2023-x86_64-standard-1.32-v20260101",
            "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}],
        "instanceProfile": profile,
        "conditions": conds
    });
    if auto_mode && let Some(m) = status.as_object_mut() {
        m.remove("amis");
    }
    status
}

/// What a launch gives a NodeClaim: the instance's labels, then its status.
fn launch_node_claim(shared: &Arc<Shared>, group: &str, plural: &str, name: &str, uid: &str) {
    let id = name
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    mutate(shared, group, plural, "", name, uid, Sub::Main, |obj| {
        if let Some(m) = crate::util::meta_mut(obj) {
            let labels = m.entry("labels").or_insert_with(|| json!({}));
            if let Some(l) = labels.as_object_mut() {
                l.insert("node.kubernetes.io/instance-type".into(), json!("m5.large"));
                l.insert("karpenter.sh/capacity-type".into(), json!("on-demand"));
                l.insert("topology.kubernetes.io/zone".into(), json!("us-east-1a"));
            }
        }
    });
    mutate(shared, group, plural, "", name, uid, Sub::Status, move |obj| {
        let generation = obj.pointer("/metadata/generation").cloned().unwrap_or(json!(1));
        let now = now_rfc3339();
        let conds: Vec<Value> = ["Launched", "Registered", "Initialized", "Ready"]
            .iter()
            .map(|t| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": t, "message": "", "observedGeneration": generation}))
            .collect();
        if let Some(m) = obj.as_object_mut() {
            m.insert(
                "status".into(),
                json!({
                    "nodeName": format!("ip-10-0-{}-{}.ec2.internal", id % 250, (id / 250) % 250),
                    "providerID": format!("aws:///us-east-1a/i-{:017x}", id & 0xfff_ffff_ffff_ffff),
                    "imageID": "ami-0a1b2c3d4e5f60001",
                    "capacity": {"cpu": "2", "memory": "7910Mi", "pods": "29"},
                    "conditions": conds
                }),
            );
        }
    });
}

fn create_node_claim(shared: &Arc<Shared>, pool: &Value) {
    let pool_name = meta_str(pool, "name").unwrap_or("").to_string();
    let uid = meta_str(pool, "uid").unwrap_or("").to_string();
    let spec = pool.pointer("/spec/template/spec").cloned().unwrap_or(json!({}));
    let mut claim_spec = json!({
        "nodeClassRef": spec.get("nodeClassRef").cloned().unwrap_or(json!({"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"})),
        "requirements": spec.get("requirements").cloned().unwrap_or(json!([{"key": "kubernetes.io/arch", "operator": "Exists"}])),
    });
    for k in ["taints", "startupTaints", "expireAfter", "terminationGracePeriod"] {
        if let (Some(v), Some(m)) = (spec.get(k), claim_spec.as_object_mut()) {
            m.insert(k.into(), v.clone());
        }
    }
    let claim = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {
            "generateName": format!("{pool_name}-"),
            "labels": {"karpenter.sh/nodepool": pool_name},
            "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": pool_name, "uid": uid,
                "blockOwnerDeletion": true, "controller": true}]
        },
        "spec": claim_spec
    });
    let ctx = WriteCtx::controller();
    shared.with_state(|st| {
        let Some(rt) = st.resolve("karpenter.sh", "v1", "nodeclaims") else {
            return;
        };
        if let Err(e) = st.create(&rt, "", claim, &ctx, false) {
            tracing::warn!("simulated controller could not create a NodeClaim: {e}");
        }
    });
}
