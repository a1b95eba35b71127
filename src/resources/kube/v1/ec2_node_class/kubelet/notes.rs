//! What a plan says about Karpenter v1.15 kubelet expressions, beyond Karpenter (which finds out
//! only after the apply), as two notes of the plan's notes stage: when a node class's
//! expressions are new or change, the range each one evaluates to over the offline
//! instance-type table ([`CLASS_RANGES`]); and when a node pool or its class changes, the range
//! over the types that pool's requirements let it launch ([`POOL_RANGES`]: "max_pods evaluates
//! to 8–250 over the 412 types this pool can launch"). Nothing is said when no expression is
//! involved. Both compute through the plan's memory ([`super::plan`]); which class a pool's
//! note is about is decided the same way whatever order Terraform plans in
//! ([`super::class_of_pool`]).

use async_trait::async_trait;

use super::class_of_pool::{ClassOfPool, Source, resolve};
use super::expressions::table_words;
use super::plan::{compiled, key_of, over_the_selection, over_the_table};
use crate::context::KarpenterContext;
use crate::context::plan_memory::PlannedClass;
use crate::instance_types::catalog;
use crate::instance_types::kubelet_cel::summary;
use crate::k8s::kinds::{self, Kind};
use crate::resources::kube::kind::rules::launchable::written_requirements;
use crate::resources::kube::note::{Note, Planned};
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

/// The ranges of a node class's expressions over the table.
pub struct ClassRanges;

/// The ranges of a pool's class's expressions over the types the pool can launch.
pub struct PoolRanges;

/// [`NOTES`](crate::resources::kube::notes::NOTES)' entries.
pub static CLASS_RANGES: ClassRanges = ClassRanges;
pub static POOL_RANGES: PoolRanges = PoolRanges;

#[async_trait]
impl Note for ClassRanges {
    fn about(&self, kind: &Kind) -> bool {
        *kind == kinds::EC2_NODE_CLASS
    }

    /// Keeps the class's plan for its pools (see [`super::class_of_pool`]), then says what its
    /// expressions come to when they are new or change.
    async fn say(&self, ctx: &KarpenterContext, planned: &Planned<'_>) -> Diagnostics {
        let mut diags = Diagnostics::new();
        let (prior, class) = (planned.change.prior, planned.change.planned);
        let Some(name) = class.get("name").and_then(Value::as_str) else {
            return diags;
        };
        let kubelet_changed = prior.is_null() || key_of(prior) != key_of(class);
        ctx.plan.plan_class(
            name,
            PlannedClass {
                planned: class.clone(),
                kubelet_changed,
            },
        );
        if !kubelet_changed {
            return diags;
        }
        let Some(compiled) = compiled(Some(&ctx.plan), class) else {
            return diags;
        };
        let evaluation = over_the_table(Some(&ctx.plan), &compiled);
        if !evaluation.succeeded() {
            return diags; // the validation's error says it
        }
        let lines: Vec<String> = evaluation
            .fields
            .iter()
            .map(|range| format!("- {}", summary(range, evaluation.types, &table_words())))
            .collect();
        diags.warning_at(
            &AttributePath::root().attr("kubelet"),
            "What the kubelet expressions come to",
            format!(
                "Karpenter evaluates these CEL expressions for each instance type it launches (they need its \
                 NodeClassCEL feature gate):\n{}\nEach node pool that uses this class says the same for the types it can \
                 launch.",
                lines.join("\n")
            ),
        );
        diags
    }
}

#[async_trait]
impl Note for PoolRanges {
    fn about(&self, kind: &Kind) -> bool {
        *kind == kinds::NODE_POOL
    }

    async fn say(&self, ctx: &KarpenterContext, planned: &Planned<'_>) -> Diagnostics {
        let mut diags = Diagnostics::new();
        let (prior, pool) = (planned.change.prior, planned.change.planned);
        let spec = pool.get("template").and_then(|t| t.get("spec"));
        let Some(class_ref) = spec.and_then(|s| s.get("node_class_ref")) else {
            return diags;
        };
        if class_ref
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k != kinds::EC2_NODE_CLASS.kind)
        {
            return diags;
        }
        let Some(class_name) = class_ref.get("name").and_then(Value::as_str) else {
            return diags;
        };
        let pool_changed = prior.is_null() || prior != pool;
        let at = AttributePath::root()
            .attr("template")
            .attr("spec")
            .attr("node_class_ref");
        let (class, source, class_changed) = match resolve(ctx, class_name).await {
            ClassOfPool::Known {
                class,
                source,
                changed,
            } => (class, source, changed),
            ClassOfPool::Unknowable(why) => {
                if pool_changed {
                    diags.warning_at(
                        &at,
                        "What the node class's kubelet expressions come to: not known",
                        why,
                    );
                }
                return diags;
            }
        };
        if !(pool_changed || class_changed) {
            return diags;
        }
        let Some(compiled) = compiled(Some(&ctx.plan), &class) else {
            return diags;
        };
        let Some(requirements) = spec
            .and_then(|s| s.get("requirements"))
            .map(written_requirements)
            .unwrap_or(Some(Vec::new()))
        else {
            return diags;
        };
        let Some((evaluation, selected)) = over_the_selection(Some(&ctx.plan), &compiled, &requirements)
        else {
            return diags;
        };
        if selected == 0 {
            return diags; // the pool's own check says it launches nothing
        }
        let lines: Vec<String> = evaluation
            .fields
            .iter()
            .map(|range| {
                format!(
                    "- {}",
                    summary(range, evaluation.types, "types this pool can launch")
                )
            })
            .collect();
        let whose = match source {
            Source::ThisPlan | Source::Configuration => format!("The EC2NodeClass {class_name:?}"),
            Source::Cluster => {
                format!("The EC2NodeClass {class_name:?} (as the cluster has it; it is not in this plan)")
            }
        };
        diags.warning_at(
            &at,
            "What the node class's kubelet expressions come to for this pool",
            format!(
                "{whose} sets kubelet CEL expressions, which Karpenter evaluates for each instance type (from Karpenter \
                 {}'s instance-type table):\n{}",
                catalog::KARPENTER_VERSION,
                lines.join("\n")
            ),
        );
        diags
    }
}
