//! Karpenter's part of deleting a NodePool, EC2NodeClass, Provisioner or AWSNodeTemplate, done
//! by the provider when Karpenter is gone and the resource has `force_destroy = true`
//! (issue #17). Every AWS resource touched carries the tags Karpenter puts on what it creates,
//! for this object's name and this cluster's name; nothing else is touched:
//!
//! | what | found by (all must match) |
//! | --- | --- |
//! | instances of a NodePool (every v1 minor) | `karpenter.sh/nodepool` = pool, `kubernetes.io/cluster/<cluster>` = `owned` |
//! | instances of an EC2NodeClass | `karpenter.k8s.aws/ec2nodeclass` = class, `kubernetes.io/cluster/<cluster>` = `owned` |
//! | instances of a Provisioner (v1alpha5) | `karpenter.sh/provisioner-name` = provisioner, `kubernetes.io/cluster/<cluster>` = `owned` |
//! | launch templates of an EC2NodeClass | `karpenter.k8s.aws/ec2nodeclass` = class, and `eks:eks-cluster-name` = cluster (newer v1 minors) or `karpenter.k8s.aws/cluster` = cluster (older ones) |
//! | the instance profile of an EC2NodeClass | named in the class's `status.instanceProfile` while `spec.role` is set (Karpenter made it), tagged `karpenter.k8s.aws/ec2nodeclass` = class and `kubernetes.io/cluster/<cluster>` = `owned` |
//!
//! Then the Kubernetes side ([`release_nodes_and_claims`]): the NodeClaims of the pool (by
//! Karpenter's label) or of the class (by `spec.nodeClassRef.name`), and their Nodes (by the
//! owner's label where Karpenter puts one, and by the NodeClaims' `status.providerID`, which is
//! how Karpenter itself finds a NodeClaim's Node), lose the finalizers only Karpenter would
//! remove and are deleted, Nodes first; then they are looked at again until a look finds
//! nothing left to release, so that a Node that gets Karpenter's finalizer while the teardown
//! runs (a registration that was in flight) is not left behind: nothing else would notice it,
//! since a pool's delete waits for its NodeClaims but not for their Nodes. Last, the object
//! itself loses Karpenter's finalizers. Every step is idempotent, so a teardown killed half-way
//! converges when the destroy runs again.

#![cfg_attr(not(feature = "ec2"), allow(dead_code))]

use std::collections::BTreeSet;
use std::time::Duration;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::json;
use thiserror::Error;
use tokio::time::Instant;

use crate::aws::AwsError;
#[cfg(feature = "ec2")]
use crate::aws::ec2::{Ec2, tag_filter};
use crate::aws::iam::{Iam, IamError};
use crate::context::KarpenterContext;
use crate::k8s::wait::waits_on_karpenter;
use crate::k8s::{self, Kind, KubeError, kinds};

/// Tag keys Karpenter writes (facts from Karpenter's source, v1 minors and v1alpha5).
pub const NODEPOOL_TAG: &str = "karpenter.sh/nodepool";
pub const NODECLASS_TAG: &str = "karpenter.k8s.aws/ec2nodeclass";
pub const PROVISIONER_TAG: &str = "karpenter.sh/provisioner-name";
pub const EKS_CLUSTER_NAME_TAG: &str = "eks:eks-cluster-name";
pub const LEGACY_CLUSTER_TAG: &str = "karpenter.k8s.aws/cluster";

/// `kubernetes.io/cluster/<cluster>`, valued `owned` on what Karpenter launches.
pub fn cluster_tag(cluster: &str) -> String {
    format!("kubernetes.io/cluster/{cluster}")
}

/// How often the wait for terminating instances looks again.
const POLL: Duration = Duration::from_secs(2);
/// The pause between two looks at the Nodes and NodeClaims (the garbage collector's turn).
const SETTLE: Duration = Duration::from_millis(200);

#[derive(Debug, Error)]
pub enum TeardownError {
    #[error("{0}")]
    Aws(#[from] AwsError),
    #[error("{0}")]
    Iam(#[from] IamError),
    #[error("{0}")]
    Kube(#[from] KubeError),
    #[error("{0}")]
    Timeout(String),
}

/// What the teardown did, for the log.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Done {
    pub instances: Vec<String>,
    pub launch_templates: Vec<String>,
    pub instance_profiles: Vec<String>,
    pub node_claims: Vec<String>,
    pub nodes: Vec<String>,
}

/// The instance tag that names the owner for `kind`, if instances carry one.
fn instance_owner_tag(kind: &Kind) -> Option<&'static str> {
    match kind.kind {
        "NodePool" => Some(NODEPOOL_TAG),
        "EC2NodeClass" => Some(NODECLASS_TAG),
        "Provisioner" => Some(PROVISIONER_TAG),
        _ => None,
    }
}

/// Whether a launch template's tags put it in `class` of `cluster`.
pub fn launch_template_in_scope(
    tags: &std::collections::BTreeMap<String, String>,
    class: &str,
    cluster: &str,
) -> bool {
    tags.get(NODECLASS_TAG).is_some_and(|v| v == class)
        && (tags.get(EKS_CLUSTER_NAME_TAG).is_some_and(|v| v == cluster)
            || tags.get(LEGACY_CLUSTER_TAG).is_some_and(|v| v == cluster))
}

/// Runs the teardown of `name` (of `kind`) in `cluster`, within `deadline`.
pub async fn run(
    ctx: &KarpenterContext,
    client: &kube::Client,
    kind: &Kind,
    name: &str,
    cluster: &str,
    deadline: Instant,
) -> Result<Done, TeardownError> {
    let mut done = Done::default();
    let object = k8s::apply::get(client, kind, None, name, deadline).await?;
    let needs_aws = instance_owner_tag(kind).is_some();
    if needs_aws {
        // Terminating and deleting changes things: the account guards are checked first.
        let aws = ctx.aws_to_change().await.map_err(|d| {
            TeardownError::Aws(AwsError::new(
                "configure",
                crate::aws::AwsErrorKind::Credentials,
                d.to_string(),
            ))
        })?;
        #[cfg(not(feature = "ec2"))]
        {
            let _ = (aws, &object, deadline);
            return Err(TeardownError::Aws(AwsError::new(
                "configure",
                crate::aws::AwsErrorKind::Credentials,
                "this build of the provider has no EC2 client (the `ec2` feature is off)".to_string(),
            )));
        }
        #[cfg(feature = "ec2")]
        {
            let ec2 = aws.ec2();
            if let Some(tag) = instance_owner_tag(kind) {
                done.instances = terminate_instances(&ec2, tag, name, cluster, deadline).await?;
            }
            if kind.kind == "EC2NodeClass" {
                done.launch_templates = delete_launch_templates(&ec2, name, cluster).await?;
                if let Some(obj) = &object {
                    let iam = Iam::new(aws.iam());
                    done.instance_profiles = delete_instance_profile(&iam, obj, name, cluster).await?;
                }
            }
        }
    }
    // The Kubernetes side, once nothing runs any more.
    (done.nodes, done.node_claims) = release_nodes_and_claims(client, kind, name, deadline).await?;
    if object.is_some() {
        release(client, &kind.api_resource(), name, false).await?;
    }
    tracing::info!(
        kind = kind.kind,
        name,
        cluster,
        instances = ?done.instances,
        launch_templates = ?done.launch_templates,
        instance_profiles = ?done.instance_profiles,
        node_claims = ?done.node_claims,
        nodes = ?done.nodes,
        "force_destroy: did Karpenter's cleanup of {} {name}",
        kind.kind
    );
    Ok(done)
}

#[cfg(feature = "ec2")]
async fn terminate_instances(
    ec2: &Ec2,
    owner_tag: &str,
    name: &str,
    cluster: &str,
    deadline: Instant,
) -> Result<Vec<String>, TeardownError> {
    let filters = || {
        vec![
            tag_filter(owner_tag, name),
            tag_filter(&cluster_tag(cluster), "owned"),
        ]
    };
    let found = ec2.instances(filters()).await?;
    let ids: Vec<String> = found.iter().map(|i| i.id.clone()).collect();
    let to_stop: Vec<String> = found
        .iter()
        .filter(|i| i.state != "shutting-down")
        .map(|i| i.id.clone())
        .collect();
    if !to_stop.is_empty() {
        tracing::info!(instances = ?to_stop, "force_destroy: terminating {} instance(s) tagged {owner_tag}={name}", to_stop.len());
        ec2.terminate(&to_stop).await?;
    }
    // Wait until every one is shutting down or terminated.
    loop {
        let left: Vec<String> = ec2
            .instances(filters())
            .await?
            .into_iter()
            .filter(|i| i.state != "shutting-down")
            .map(|i| i.id)
            .collect();
        if left.is_empty() {
            return Ok(ids);
        }
        if Instant::now() + POLL >= deadline {
            return Err(TeardownError::Timeout(format!(
                "instance(s) {} tagged {owner_tag}={name} are still not shutting down or terminated",
                left.join(", ")
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(feature = "ec2")]
async fn delete_launch_templates(
    ec2: &Ec2,
    class: &str,
    cluster: &str,
) -> Result<Vec<String>, TeardownError> {
    let mut deleted = Vec::new();
    for lt in ec2
        .launch_templates(vec![tag_filter(NODECLASS_TAG, class)])
        .await?
    {
        if !launch_template_in_scope(&lt.tags, class, cluster) {
            continue;
        }
        ec2.delete_launch_template(&lt.id).await?;
        deleted.push(lt.name);
    }
    Ok(deleted)
}

async fn delete_instance_profile(
    iam: &Iam,
    class: &DynamicObject,
    name: &str,
    cluster: &str,
) -> Result<Vec<String>, TeardownError> {
    // Karpenter makes (and deletes) the profile only when the class names a role; a
    // `spec.instanceProfile` is the user's.
    let has_role = class
        .data
        .pointer("/spec/role")
        .and_then(|r| r.as_str())
        .is_some_and(|r| !r.is_empty());
    let Some(profile) = class
        .data
        .pointer("/status/instanceProfile")
        .and_then(|p| p.as_str())
        .filter(|p| has_role && !p.is_empty())
    else {
        return Ok(Vec::new());
    };
    let Some(info) = iam.get_instance_profile(profile).await? else {
        return Ok(Vec::new());
    };
    let ours = info.tags.get(NODECLASS_TAG).is_some_and(|v| v == name)
        && info.tags.get(&cluster_tag(cluster)).is_some_and(|v| v == "owned");
    if !ours {
        tracing::info!(
            profile,
            "force_destroy: instance profile {profile} is not tagged as Karpenter's for this class and cluster; left alone"
        );
        return Ok(Vec::new());
    }
    for role in &info.roles {
        iam.remove_role_from_profile(profile, role).await?;
    }
    iam.delete_instance_profile(profile).await?;
    Ok(vec![profile.to_string()])
}

/// The Node label naming the owner, for kinds whose nodes carry one.
fn node_label(kind: &Kind) -> Option<&'static str> {
    match kind.kind {
        "NodePool" => Some(NODEPOOL_TAG),
        "Provisioner" => Some(PROVISIONER_TAG),
        _ => None,
    }
}

/// The core Node kind.
fn node_resource() -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "Node".into(),
        plural: "nodes".into(),
    }
}

/// Whether an object needs nothing more from the teardown: it is being deleted and carries
/// none of Karpenter's finalizers (what still holds it is another controller's business, e.g.
/// the garbage collector's `foregroundDeletion`).
fn settled(obj: &DynamicObject) -> bool {
    obj.metadata.deletion_timestamp.is_some()
        && !waits_on_karpenter(obj.metadata.finalizers.as_deref().unwrap_or_default())
}

/// The Nodes and NodeClaims of `name` (of `kind`): released (Karpenter's finalizers removed,
/// deleted), Nodes before their NodeClaims as Karpenter orders it, then looked for again until
/// one look finds everything of theirs settled or gone: a Node that got Karpenter's finalizer
/// after an earlier look (a registration in flight) is caught by the next one, and the look
/// that ends the loop comes after every NodeClaim was released, when Karpenter registers no
/// Node for them any more. A Node is the owner's when it carries the owner's label (NodePool,
/// Provisioner) or the `providerID` of one of its NodeClaims, remembered across looks so that
/// a Node is still found once its NodeClaim is gone. Returns the Nodes and the NodeClaims
/// released, by name.
async fn release_nodes_and_claims(
    client: &kube::Client,
    kind: &Kind,
    name: &str,
    deadline: Instant,
) -> Result<(Vec<String>, Vec<String>), TeardownError> {
    let mut provider_ids: BTreeSet<String> = BTreeSet::new();
    let mut nodes_released: Vec<String> = Vec::new();
    let mut claims_released: Vec<String> = Vec::new();
    loop {
        let claims = node_claims_of(client, kind, name).await?;
        provider_ids.extend(
            claims
                .iter()
                .filter_map(|c| c.data.pointer("/status/providerID").and_then(|p| p.as_str()))
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
        let nodes = nodes_of(client, node_label(kind).map(|l| (l, name)), &provider_ids).await?;
        let open_nodes: Vec<String> = nodes
            .iter()
            .filter(|n| !settled(n))
            .filter_map(|n| n.metadata.name.clone())
            .collect();
        let open_claims: Vec<String> = claims
            .iter()
            .filter(|c| !settled(c))
            .filter_map(|c| c.metadata.name.clone())
            .collect();
        if open_nodes.is_empty() && open_claims.is_empty() {
            return Ok((nodes_released, claims_released));
        }
        if Instant::now() + SETTLE >= deadline {
            return Err(TeardownError::Timeout(format!(
                "not yet released (a Karpenter finalizer left, or not deleted): {}",
                open_nodes
                    .iter()
                    .map(|n| format!("Node {n}"))
                    .chain(open_claims.iter().map(|c| format!("NodeClaim {c}")))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for node in open_nodes {
            release(client, &node_resource(), &node, true).await?;
            if !nodes_released.contains(&node) {
                nodes_released.push(node);
            }
        }
        for claim in open_claims {
            release(client, &kinds::NODE_CLAIM.api_resource(), &claim, true).await?;
            if !claims_released.contains(&claim) {
                claims_released.push(claim);
            }
        }
        tokio::time::sleep(SETTLE).await;
    }
}

/// NodeClaims of a NodePool (by label) or of an EC2NodeClass (by `spec.nodeClassRef.name`).
async fn node_claims_of(
    client: &kube::Client,
    kind: &Kind,
    name: &str,
) -> Result<Vec<DynamicObject>, TeardownError> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &kinds::NODE_CLAIM.api_resource());
    let params = match kind.kind {
        "NodePool" => ListParams::default().labels(&format!("{NODEPOOL_TAG}={name}")),
        "EC2NodeClass" => ListParams::default(),
        _ => return Ok(Vec::new()),
    };
    let list = match api.list(&params).await {
        Ok(l) => l,
        // No NodeClaim kind in this cluster: nothing to release.
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Vec::new()),
        Err(e) => return Err(KubeError::from(e).into()),
    };
    Ok(list
        .items
        .into_iter()
        .filter(|c| {
            kind.kind != "EC2NodeClass"
                || c.data.pointer("/spec/nodeClassRef/name").and_then(|n| n.as_str()) == Some(name)
        })
        .filter(|c| c.metadata.name.is_some())
        .collect())
}

/// Nodes labelled `label` (label key, value), or whose `spec.providerID` is one of
/// `provider_ids`.
async fn nodes_of(
    client: &kube::Client,
    label: Option<(&str, &str)>,
    provider_ids: &BTreeSet<String>,
) -> Result<Vec<DynamicObject>, TeardownError> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &node_resource());
    // Only the owner's Nodes are needed: by label when no providerID has to be matched.
    let params = match label {
        Some((key, value)) if provider_ids.is_empty() => {
            ListParams::default().labels(&format!("{key}={value}"))
        }
        None if provider_ids.is_empty() => return Ok(Vec::new()),
        _ => ListParams::default(),
    };
    let list = match api.list(&params).await {
        Ok(l) => l,
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Vec::new()),
        Err(e) => return Err(KubeError::from(e).into()),
    };
    Ok(list
        .items
        .into_iter()
        .filter(|n| {
            let labelled = label.is_some_and(|(key, value)| {
                n.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(key))
                    .is_some_and(|v| v == value)
            });
            let provider_id = n.data.pointer("/spec/providerID").and_then(|p| p.as_str());
            labelled || provider_id.is_some_and(|p| provider_ids.contains(p))
        })
        .filter(|n| n.metadata.name.is_some())
        .collect())
}

/// Removes Karpenter's finalizers from the object (keeping others'), and deletes it when
/// `delete` (foreground deletion of the object itself is already under way otherwise).
async fn release(
    client: &kube::Client,
    resource: &ApiResource,
    name: &str,
    delete: bool,
) -> Result<(), TeardownError> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), resource);
    let obj = match api.get_opt(name).await {
        Ok(Some(o)) => o,
        Ok(None) => return Ok(()),
        Err(e) => return Err(KubeError::from(e).into()),
    };
    let mut current = obj.clone();
    for attempt in 0..5 {
        let finalizers = current.metadata.finalizers.clone().unwrap_or_default();
        let keep: Vec<&String> = finalizers
            .iter()
            .filter(|f| !crate::k8s::karpenter_holds::is_karpenter_finalizer(f))
            .collect();
        if keep.len() == finalizers.len() {
            break;
        }
        let patch =
            json!({"metadata": {"finalizers": keep, "resourceVersion": current.metadata.resource_version}});
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                tracing::info!(kind = %resource.kind, name, "force_destroy: removed Karpenter's finalizer(s) from {} {name}", resource.kind);
                break;
            }
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            // Changed meanwhile (the garbage collector): read it again and retry.
            Err(kube::Error::Api(s)) if s.code == 409 && attempt < 4 => {
                current = match api.get_opt(name).await {
                    Ok(Some(o)) => o,
                    Ok(None) => return Ok(()),
                    Err(e) => return Err(KubeError::from(e).into()),
                };
            }
            Err(e) => return Err(KubeError::from(e).into()),
        }
    }
    if delete && obj.metadata.deletion_timestamp.is_none() {
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(KubeError::from(e).into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn launch_templates_need_the_class_and_the_cluster() {
        let ok_new = tags(&[(NODECLASS_TAG, "default"), (EKS_CLUSTER_NAME_TAG, "demo")]);
        let ok_old = tags(&[(NODECLASS_TAG, "default"), (LEGACY_CLUSTER_TAG, "demo")]);
        let other_cluster = tags(&[(NODECLASS_TAG, "default"), (EKS_CLUSTER_NAME_TAG, "prod")]);
        let other_class = tags(&[(NODECLASS_TAG, "gpu"), (EKS_CLUSTER_NAME_TAG, "demo")]);
        let no_cluster = tags(&[(NODECLASS_TAG, "default")]);
        assert!(launch_template_in_scope(&ok_new, "default", "demo"));
        assert!(launch_template_in_scope(&ok_old, "default", "demo"));
        assert!(!launch_template_in_scope(&other_cluster, "default", "demo"));
        assert!(!launch_template_in_scope(&other_class, "default", "demo"));
        assert!(!launch_template_in_scope(&no_cluster, "default", "demo"));
    }

    fn node(finalizers: &[&str], deleting: bool) -> DynamicObject {
        let mut n = DynamicObject::new("n", &node_resource());
        n.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
        if deleting {
            n.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ));
        }
        n
    }

    #[test]
    fn only_a_deleted_object_without_karpenters_finalizers_is_settled() {
        assert!(settled(&node(&[], true)));
        assert!(settled(&node(&["foregroundDeletion"], true)));
        assert!(!settled(&node(&["karpenter.sh/termination"], true)));
        assert!(!settled(&node(
            &["foregroundDeletion", "karpenter.sh/termination"],
            true
        )));
        // Not deleted yet: the teardown still has to delete it.
        assert!(!settled(&node(&[], false)));
        assert!(!settled(&node(&["karpenter.sh/termination"], false)));
    }

    #[test]
    fn owner_tags_per_kind() {
        assert_eq!(
            instance_owner_tag(&kinds::NODE_POOL),
            Some("karpenter.sh/nodepool")
        );
        assert_eq!(
            instance_owner_tag(&kinds::EC2_NODE_CLASS),
            Some("karpenter.k8s.aws/ec2nodeclass")
        );
        assert_eq!(
            instance_owner_tag(&kinds::PROVISIONER),
            Some("karpenter.sh/provisioner-name")
        );
        assert_eq!(instance_owner_tag(&kinds::AWS_NODE_TEMPLATE), None);
        assert_eq!(cluster_tag("demo"), "kubernetes.io/cluster/demo");
    }
}
