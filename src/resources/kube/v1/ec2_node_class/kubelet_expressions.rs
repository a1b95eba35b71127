//! Karpenter v1.15's kubelet expressions at plan (`NodeClassCEL` feature gate): which values
//! are CEL expressions (`max_pods` when it is a string, a `kube_reserved` / `system_reserved`
//! value when it does not read as a Kubernetes quantity, so `"480"` is 480 cores), each checked
//! as Karpenter's environment would compile it ([`crate::instance_types::kubelet_cel`]), and
//! all of them evaluated over every instance type of the offline table, as Karpenter does over
//! every type it knows: an expression that fails for some type (a negative reservation, a
//! division by zero, more pods than an int32) is a plan error, not a NodeClass that Karpenter
//! refuses after the apply.

use crate::instance_types::InstanceType;
use crate::instance_types::catalog;
use crate::instance_types::catalog::KARPENTER_VERSION;
use crate::instance_types::kubelet_cel::{
    Evaluation, ExpressionError, Field, Kubelet, KubeletSource, MaxPodsSource, TypeFacts, compile, evaluate,
    is_expression, summary,
};
use crate::resources::kube::v1::ec2_node_class::kubelet::families::ami_family;
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

/// The kubelet settings the expressions depend on, from a configuration (`None` while a value
/// is unknown).
fn source<'a>(kubelet: &'a Value, family: Option<&str>) -> Option<KubeletSource<'a>> {
    if !kubelet.is_wholly_known() {
        return None;
    }
    let max_pods = match kubelet.get("max_pods").map(Value::strip_dynamic) {
        Some(Value::Number(n)) => Some(MaxPodsSource::Literal(n.as_i64()?)),
        Some(Value::String(s)) => Some(MaxPodsSource::Expression(s)),
        _ => None,
    };
    // Bottlerocket does not apply podsPerCore.
    let pods_per_core = kubelet
        .get("pods_per_core")
        .and_then(Value::as_number)
        .and_then(|n| n.as_i64())
        .filter(|_| family != Some("Bottlerocket"));
    let entries = |name: &str| -> Vec<(&str, &str)> {
        kubelet
            .get(name)
            .and_then(Value::as_entries)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
            .collect()
    };
    Some(KubeletSource {
        max_pods,
        pods_per_core,
        kube_reserved: entries("kube_reserved"),
        system_reserved: entries("system_reserved"),
    })
}

/// The compiled expressions of a node class configuration, when it has any that compile.
pub(crate) fn compiled(config: &Value) -> Option<(Kubelet, Option<String>)> {
    let kubelet = config.get("kubelet")?;
    let family = ami_family(config);
    let compiled = Kubelet::compile(&source(kubelet, family.as_deref())?).ok()?;
    compiled.has_expressions().then_some((compiled, family))
}

/// What Karpenter's expressions see of a type of the offline table, for the AMI family (the
/// Windows families do not limit pods by ENIs: 110). A type the table has no ENI figures for is
/// skipped by the expressions that read them.
pub(crate) fn facts<'a, T: InstanceType + ?Sized>(t: &'a T, family: Option<&str>) -> Option<TypeFacts<'a>> {
    let facts = TypeFacts::of(t, |t| {
        Some((i64::from(t.default_enis()?), i64::from(t.ips_per_eni()?)))
    })?;
    Some(match family {
        Some(f) if f.starts_with("Windows") => facts.with_default_pods(110),
        _ => facts,
    })
}

/// The expressions of `config` over every type of the offline table.
pub(crate) fn over_the_table(config: &Value) -> Option<Evaluation> {
    let (kubelet, family) = compiled(config)?;
    let types = catalog::all()
        .iter()
        .filter_map(|row| facts(row, family.as_deref()));
    Some(evaluate(&kubelet, types))
}

/// What the offline table is, in a sentence's words.
pub(crate) fn table_words() -> String {
    format!("types of Karpenter {KARPENTER_VERSION}'s instance-type table")
}

/// Karpenter evaluates each expression over every instance type it knows and refuses the
/// NodeClass when one fails (`KubeletExpressionEvaluationFailed`): the same over the offline
/// table, as plan errors on the attribute.
pub(crate) fn check_evaluation(config: &Value, diags: &mut Diagnostics) {
    let Some(evaluation) = over_the_table(config) else {
        return;
    };
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
