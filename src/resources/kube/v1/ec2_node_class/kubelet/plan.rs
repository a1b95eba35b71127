//! A node class's kubelet expressions at plan, computed once per command: compiled once per
//! distinct setting (the expressions and the AMI family), evaluated once over the offline
//! instance-type table and once per set of pool requirements, each kept in the plan's memory
//! ([`PlanMemory`]). Without a memory (Terraform's validate walk, before the provider is
//! configured) the same is computed for the one call.

use std::sync::Arc;

use crate::context::memo::Memo;
use crate::context::plan_memory::{CompiledKubelet, PlanMemory};
use crate::instance_types::InstanceType;
use crate::instance_types::catalog::{self, Row};
use crate::instance_types::kubelet_cel::{
    Evaluation, Kubelet, KubeletSource, MaxPodsSource, TypeFacts, evaluate,
};
use crate::instance_types::requirements::Requirement;
use crate::instance_types::{Flavor, selection};
use crate::resources::kube::v1::ec2_node_class::ami_family;
use crate::terraform::tfvalue::Value;

/// The AMI family the expressions are compiled for, when known and named.
fn family_of(class: &Value) -> Option<String> {
    ami_family::resolve(class).name().map(str::to_string)
}

/// The selection key of the whole table.
const TABLE: &str = "the table";

/// `compute` through `memo` when there is one.
fn kept<K: Eq + std::hash::Hash, V>(
    memo: Option<&Memo<K, V>>,
    key: K,
    compute: impl FnOnce() -> V,
) -> Arc<V> {
    match memo {
        Some(memo) => memo.get_or_compute(key, compute),
        None => Arc::new(compute()),
    }
}

/// What a node class's expressions are compiled from, as a key: its kubelet settings and AMI
/// family. `None` when it has no kubelet or a value is still unknown.
pub(crate) fn key_of(class: &Value) -> Option<String> {
    let kubelet = class.get("kubelet").filter(|k| !k.is_null())?;
    let family = family_of(class);
    let source = source(kubelet, family.as_deref())?;
    Some(format!("{source:?} {family:?}"))
}

/// The compiled expressions of a node class (its configuration or planned value), when it has
/// any and they all compile.
pub(crate) fn compiled(memory: Option<&PlanMemory>, class: &Value) -> Option<Arc<CompiledKubelet>> {
    let key = key_of(class)?;
    let compiled = kept(memory.map(|m| &m.kubelets), key.clone(), || {
        let kubelet = class.get("kubelet")?;
        let family = family_of(class);
        let compiled = Kubelet::compile(&source(kubelet, family.as_deref())?).ok()?;
        compiled.has_expressions().then(|| {
            Arc::new(CompiledKubelet {
                key,
                kubelet: compiled,
                family,
            })
        })
    });
    compiled.as_ref().clone()
}

/// The expressions over every type of the offline table.
pub(crate) fn over_the_table(memory: Option<&PlanMemory>, class: &CompiledKubelet) -> Arc<Evaluation> {
    kept(
        memory.map(|m| &m.evaluations),
        (class.key.clone(), TABLE.to_string()),
        || over(class, catalog::all().iter()),
    )
}

/// The offline table's types `requirements` select (self-managed Karpenter's labels); `None`
/// when a requirement is malformed.
pub(crate) fn selection(
    memory: Option<&PlanMemory>,
    requirements: &[Requirement],
) -> Arc<Option<Vec<&'static Row>>> {
    kept(memory.map(|m| &m.selections), selection_key(requirements), || {
        selection::select(catalog::all(), requirements, Flavor::SelfManaged)
    })
}

fn selection_key(requirements: &[Requirement]) -> String {
    format!("{requirements:?}")
}

/// The expressions over the types `requirements` select, with how many that is; `None` when a
/// requirement is malformed.
pub(crate) fn over_the_selection(
    memory: Option<&PlanMemory>,
    class: &CompiledKubelet,
    requirements: &[Requirement],
) -> Option<(Arc<Evaluation>, usize)> {
    let selected = selection(memory, requirements);
    let rows = selected.as_ref().as_ref()?;
    let evaluation = kept(
        memory.map(|m| &m.evaluations),
        (class.key.clone(), selection_key(requirements)),
        || over(class, rows.iter().copied()),
    );
    Some((evaluation, rows.len()))
}

fn over<'r>(class: &CompiledKubelet, rows: impl Iterator<Item = &'r Row>) -> Evaluation {
    evaluate(
        &class.kubelet,
        rows.filter_map(|row| facts(row, class.family.as_deref())),
    )
}

/// The kubelet settings the expressions depend on, from a configuration (`None` while a value
/// is unknown).
pub(crate) fn source<'a>(kubelet: &'a Value, family: Option<&str>) -> Option<KubeletSource<'a>> {
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
