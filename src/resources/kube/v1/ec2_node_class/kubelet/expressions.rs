//! Karpenter v1.15's kubelet expressions at plan (`NodeClassCEL` feature gate): which values
//! are CEL expressions (`max_pods` when it is a string, a `kube_reserved` / `system_reserved`
//! value when it does not read as a Kubernetes quantity, so `"480"` is 480 cores), each checked
//! as Karpenter's environment would compile it ([`crate::instance_types::kubelet_cel`]), and
//! all of them evaluated over every instance type of the offline table, as Karpenter does over
//! every type it knows: an expression that fails for some type (a negative reservation, a
//! division by zero, more pods than an int32) is a plan error, not a NodeClass that Karpenter
//! refuses after the apply.

use crate::context::plan_memory::PlanMemory;
use crate::instance_types::catalog::KARPENTER_VERSION;
use crate::instance_types::kubelet_cel::{ExpressionError, Field, compile, is_expression, summary};
use crate::resources::kube::v1::ec2_node_class::kubelet::plan;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::validate::Validator;
use crate::terraform::tfvalue::{AttributePath, Value};

/// The attribute path of an expression's field (`kubelet.kube_reserved["cpu"]`).
fn path_of(field: &Field) -> AttributePath {
    let kubelet = AttributePath::root().attr("kubelet");
    match field {
        Field::MaxPods => kubelet.attr("max_pods"),
        Field::KubeReserved(key) => kubelet.attr("kube_reserved").key(key.clone()),
        Field::SystemReserved(key) => kubelet.attr("system_reserved").key(key.clone()),
    }
}

/// The diagnostic of an expression that does not compile (an error), or that the provider could
/// not check (a warning: Karpenter judges it after the apply).
fn report(e: &ExpressionError, path: &AttributePath, diags: &mut Diagnostics) {
    if e.refused() {
        diags.error_at(path, "Invalid kubelet expression", format!("{e}."));
    } else {
        diags.warning_at(path, "Kubelet expression not checked", format!("{e}."));
    }
}

/// `max_pods`: a whole number from 0 to 2147483647, or a CEL expression.
pub(crate) fn max_pods() -> impl Validator {
    MaxPods
}

struct MaxPods;

impl Validator for MaxPods {
    fn description(&self) -> String {
        "A whole number from 0 to 2147483647, or a CEL expression that gives one for every instance type."
            .to_string()
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        match value.strip_dynamic() {
            Value::Number(n) => match n.as_i64() {
                Some(i) if (0..=i64::from(i32::MAX)).contains(&i) => {}
                _ => diags.error_at(
                    path,
                    "Invalid attribute value",
                    format!("{n} is not allowed: max_pods must be a whole number from 0 to 2147483647."),
                ),
            },
            Value::String(text) => {
                if let Err(e) = compile(&Field::MaxPods, text) {
                    report(&e, path, diags);
                } else if text.trim().parse::<i64>().is_ok() {
                    diags.warning_at(
                        path,
                        "max_pods is a string: Karpenter reads it as a CEL expression",
                        format!(
                            "max_pods = {text:?} is a string, which Karpenter v1.15 takes for a CEL expression: the \
                             NodeClass needs the NodeClassCEL feature gate, and older Karpenter versions refuse it. \
                             For a number, write max_pods = {}.",
                            text.trim()
                        ),
                    );
                }
            }
            other => diags.error_at(
                path,
                "Invalid attribute value",
                format!(
                    "Expected a whole number or a CEL expression (a string) for max_pods, got {}.",
                    other.kind()
                ),
            ),
        }
    }
}

/// The values of `kube_reserved` (`kube = true`) or `system_reserved`: each a quantity or a CEL
/// expression that compiles.
pub(crate) fn quantities_or_expressions(kube: bool) -> impl Validator {
    QuantitiesOrExpressions { kube }
}

struct QuantitiesOrExpressions {
    kube: bool,
}

impl Validator for QuantitiesOrExpressions {
    fn description(&self) -> String {
        "Each a Kubernetes quantity (`100m`, `1Gi`) or a CEL expression (Karpenter v1.15).".to_string()
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        for (key, v) in value.as_entries().into_iter().flatten() {
            let Some(text) = v.as_str() else { continue };
            if !is_expression(text) {
                continue;
            }
            let field = if self.kube {
                Field::KubeReserved(key.clone())
            } else {
                Field::SystemReserved(key.clone())
            };
            if let Err(e) = compile(&field, text) {
                report(&e, &path.key(key.clone()), diags);
            }
        }
    }
}

/// What the offline table is, in a sentence's words.
pub(crate) fn table_words() -> String {
    format!("types of Karpenter {KARPENTER_VERSION}'s instance-type table")
}

/// Karpenter evaluates each expression over every instance type it knows and refuses the
/// NodeClass when one fails (`KubeletExpressionEvaluationFailed`): the same over the offline
/// table, as plan errors on the attribute. With the plan's memory (the plan walk), the
/// compilation and the evaluation are kept for the plan's notes.
pub(crate) fn check_evaluation(config: &Value, memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    let Some(class) = plan::compiled(memory, config) else {
        return;
    };
    let evaluation = plan::over_the_table(memory, &class);
    for range in evaluation.fields.iter().filter(|f| f.failed > 0) {
        diags.error_at(
            &path_of(&range.field),
            "Kubelet expression fails for some instance types",
            format!(
                "{}. Karpenter evaluates the expression for every instance type it knows and refuses the whole \
                 NodeClass when it fails for one (ValidationSucceeded = False, KubeletExpressionEvaluationFailed): \
                 no node would launch.",
                summary(range, evaluation.types, &table_words())
            ),
        );
    }
}
