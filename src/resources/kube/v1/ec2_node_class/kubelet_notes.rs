//! What a plan says about Karpenter v1.15 kubelet expressions, beyond Karpenter (which finds out
//! only after the apply): when a node class's expressions are new or change, the range each one
//! evaluates to over the offline instance-type table; and when a node pool (or the class it
//! names) changes, the range over the types that pool's requirements let it launch ("max_pods
//! evaluates to 8–250 over the 412 types this pool can launch"). Warnings, since Terraform has
//! no other way to show a note in a plan; nothing is said when no expression is involved.
//!
//! A pool learns its class's kubelet from the class's own plan in the same provider process
//! (Terraform plans a class before the pools that refer to it): [`remember`] and [`for_pool`].

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use crate::instance_types::catalog;
use crate::instance_types::kubelet_cel::{evaluate, summary};
use crate::instance_types::selection;
use crate::resources::kube::kind::rules::launchable::written_requirements;
use crate::resources::kube::v1::ec2_node_class::kubelet_expressions::{
    compiled, facts, over_the_table, table_words,
};
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

/// The node classes planned in this process: name → (configuration, whether its kubelet changes).
static PLANNED: LazyLock<Mutex<HashMap<String, (Value, bool)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn kubelet_of(v: &Value) -> &Value {
    v.get("kubelet").unwrap_or(&Value::Null)
}

/// Keeps a node class's plan for the pools planned after it.
fn remember(config: &Value, changed: bool) {
    let Some(name) = config.get("name").and_then(Value::as_str) else {
        return;
    };
    if let Ok(mut planned) = PLANNED.lock() {
        planned.insert(name.to_string(), (config.clone(), changed));
    }
}

/// The node class's plan: the ranges over the table when its expressions are new or change.
pub(crate) fn for_class(config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
    let changed = prior.is_null() || kubelet_of(prior) != kubelet_of(planned);
    remember(config, changed);
    if !changed {
        return;
    }
    let Some(evaluation) = over_the_table(config) else {
        return;
    };
    if !evaluation.succeeded() {
        return; // the validation's error says it
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
}

/// A node pool's plan: the ranges of its class's expressions over the types it can launch,
/// when the pool or the class changes and the class was planned in this process.
pub(crate) fn for_pool(config: &Value, prior: &Value, planned: &Value, diags: &mut Diagnostics) {
    let spec = config.get("template").and_then(|t| t.get("spec"));
    let Some(class_ref) = spec.and_then(|s| s.get("node_class_ref")) else {
        return;
    };
    if class_ref
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k != "EC2NodeClass")
    {
        return;
    }
    let Some(class_name) = class_ref.get("name").and_then(Value::as_str) else {
        return;
    };
    let Some((class, class_changed)) = PLANNED.lock().ok().and_then(|p| p.get(class_name).cloned()) else {
        return;
    };
    let pool_changed = prior.is_null() || prior != planned;
    if !(pool_changed || class_changed) {
        return;
    }
    let Some((kubelet, family)) = compiled(&class) else {
        return;
    };
    let Some(requirements) = spec
        .and_then(|s| s.get("requirements"))
        .map(written_requirements)
        .unwrap_or(Some(Vec::new()))
    else {
        return;
    };
    let Some(selected) = selection::select(
        catalog::all(),
        &requirements,
        crate::instance_types::Flavor::SelfManaged,
    ) else {
        return;
    };
    if selected.is_empty() {
        return;
    }
    let evaluation = evaluate(
        &kubelet,
        selected.iter().filter_map(|row| facts(*row, family.as_deref())),
    );
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
    diags.warning_at(
        &AttributePath::root().attr("template").attr("spec").attr("node_class_ref"),
        "What the node class's kubelet expressions come to for this pool",
        format!(
            "The EC2NodeClass {class_name:?} sets kubelet CEL expressions, which Karpenter evaluates for each instance \
             type (from Karpenter {}'s instance-type table):\n{}",
            catalog::KARPENTER_VERSION,
            lines.join("\n")
        ),
    );
}
