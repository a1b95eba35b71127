//! Which node class a pool's kubelet note is about — the same answer whatever order Terraform
//! plans in. A pool names its class (`template.spec.node_class_ref.name`); Terraform plans the
//! class before the pool only when the pool refers to it (`karpenter_ec2_node_class.x.name`),
//! not when the name is a string (as a module writes it when the class comes from a variable
//! or another module). So, for the class `name`:
//!
//! 1. No pool of the configuration writes `name` as a string the provider can read: the pools
//!    that name it refer to it, and Terraform planned it first — the class as this plan planned
//!    it, if it did.
//! 2. Some pool writes it as a string: the class as the configuration files write it (read once
//!    per plan, [`Written`]), so the answer does not depend on which Terraform planned first;
//!    when the files do not say its kubelet in values the provider can read (a variable given
//!    with `-var`, another resource's attribute), nothing can be known in time, and the note
//!    says so and how to fix it.
//! 3. A class in neither this plan nor this configuration: as the cluster has it (read once per
//!    plan), else a sentence saying it was not found or could not be read.

use std::collections::BTreeSet;

use tokio::time::Instant;

use crate::context::KarpenterContext;
use crate::context::plan_memory::PlannedClass;
use crate::k8s::apply;
use crate::k8s::kinds::EC2_NODE_CLASS as EC2_NODE_CLASS_KIND;
use crate::k8s::plan_reads::PLAN_READ_TIMEOUT;
use crate::resources::kube::v1::ec2_node_class::EC2_NODE_CLASS;
use crate::resources::kube::v1::ec2_node_class::kubelet::plan::key_of;
use crate::terraform::framework::config_scan::{BlockKind, Written, WrittenBlock};
use crate::terraform::framework::convert::from_wire;
use crate::terraform::tfvalue::{AttributePath, Value};

const POOL_TYPE: &str = "karpenter_node_pool";
const CLASS_TYPE: &str = "karpenter_ec2_node_class";

/// Where the class a note is about was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    ThisPlan,
    Configuration,
    Cluster,
}

/// The class a pool's note is about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClassOfPool {
    /// Its value (the resource's attributes), where it was found, and whether this plan changes
    /// what its kubelet expressions are.
    Known {
        class: Value,
        source: Source,
        changed: bool,
    },
    /// It cannot be known: why, and what to do (one sentence).
    Unknowable(String),
}

/// The class names the configuration's pools write as strings the provider can read.
fn named_by_string(written: &Written) -> BTreeSet<String> {
    written
        .blocks(BlockKind::Resource, POOL_TYPE)
        .iter()
        .flat_map(|b| &b.instances)
        .filter_map(|pool| {
            let reference = pool.get("template")?.get("spec")?.get("node_class_ref")?;
            reference.get("name")?.as_str().map(str::to_string)
        })
        .collect()
}

/// The configuration's class blocks that write `name`, and whether some class block's name
/// cannot be read (it might be `name`).
fn written_classes<'w>(written: &'w Written, name: &str) -> (Vec<(&'w WrittenBlock, &'w Value)>, bool) {
    let mut found = Vec::new();
    let mut unreadable = false;
    for block in written.blocks(BlockKind::Resource, CLASS_TYPE) {
        for class in &block.instances {
            match class.get("name") {
                Some(Value::String(n)) if n == name => found.push((block, class)),
                Some(Value::String(_)) => {}
                _ => unreadable = true,
            }
        }
    }
    (found, unreadable)
}

/// Whether the configuration says all that a class's expressions are compiled from: its
/// kubelet and what its AMI family comes from.
fn readable(class: &Value) -> bool {
    ["kubelet", "ami_family", "ami_selector_terms"]
        .iter()
        .all(|a| class.get(a).is_none_or(Value::is_wholly_known))
}

/// How to name the class so that Terraform plans it first.
fn by_reference(name: &str) -> String {
    format!(
        "refer to the class instead of writing its name (node_class_ref = {{ name = karpenter_ec2_node_class.<its \
         name>.name }}), so Terraform plans it first, and this pool's plan says what {name:?}'s kubelet expressions \
         come to"
    )
}

/// The class `name` (see the module docs).
pub(crate) async fn resolve(ctx: &KarpenterContext, name: &str) -> ClassOfPool {
    let written = ctx.plan.written();
    if !named_by_string(written).contains(name)
        && let Some(PlannedClass {
            planned,
            kubelet_changed,
        }) = ctx.plan.planned_class(name)
    {
        return ClassOfPool::Known {
            class: planned,
            source: Source::ThisPlan,
            changed: kubelet_changed,
        };
    }
    let (classes, unreadable) = written_classes(written, name);
    match classes.as_slice() {
        [(_, class)] if readable(class) => {
            let changed = match cluster_class(ctx, name).await {
                Ok(Some(in_cluster)) => key_of(&in_cluster) != key_of(class),
                Ok(None) | Err(_) => true,
            };
            ClassOfPool::Known {
                class: (*class).clone(),
                source: Source::Configuration,
                changed,
            }
        }
        [(block, _)] => ClassOfPool::Unknowable(format!(
            "The EC2NodeClass {name:?} ({}) sets its kubelet from values the provider reads only when Terraform plans \
             it, and this pool names it by a string, so Terraform may plan the pool first: {}.",
            block.address,
            by_reference(name)
        )),
        [_, _, ..] => ClassOfPool::Unknowable(format!(
            "Several node classes of this configuration are named {name:?} ({}): the provider cannot tell which one \
             this pool uses.",
            classes
                .iter()
                .map(|(b, _)| b.address.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        [] if unreadable => ClassOfPool::Unknowable(format!(
            "A node class of this configuration has a name the provider cannot read before Terraform plans it, and \
             this pool names its class {name:?} by a string: {}.",
            by_reference(name)
        )),
        [] => match cluster_class(ctx, name).await {
            Ok(Some(class)) => ClassOfPool::Known {
                class,
                source: Source::Cluster,
                changed: false,
            },
            Ok(None) => ClassOfPool::Unknowable(format!(
                "The EC2NodeClass {name:?} is neither in this configuration nor in the cluster: Karpenter launches no \
                 node for this pool until it exists. Check the name, or create the class."
            )),
            Err(why) => ClassOfPool::Unknowable(format!(
                "The EC2NodeClass {name:?} is not in this configuration, and the cluster could not be read for it \
                 ({why}): the plan cannot say what its kubelet expressions come to for this pool."
            )),
        },
    }
}

/// The class `name` as the cluster has it (read once per plan): `Ok(None)` when absent.
async fn cluster_class(ctx: &KarpenterContext, name: &str) -> Result<Option<Value>, String> {
    ctx.plan
        .cluster_class(name, || async {
            let client = ctx.kube().await.map_err(|e| e.to_string())?;
            let found = apply::get(
                client,
                &EC2_NODE_CLASS_KIND,
                None,
                name,
                Instant::now() + PLAN_READ_TIMEOUT,
            )
            .await
            .map_err(|e| e.to_string())?;
            let Some(object) = found else {
                return Ok(None);
            };
            let spec = object
                .data
                .get("spec")
                .and_then(serde_json::Value::as_object)
                .cloned()
                .unwrap_or_default();
            from_wire(
                &EC2_NODE_CLASS.attributes,
                &spec,
                &Value::Null,
                &AttributePath::root(),
            )
            .map(Some)
            .map_err(|e| format!("{}: {}", e.path, e.message))
        })
        .await
}
