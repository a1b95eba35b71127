//! The state of `data "karpenter_instance_types"`: each matching type as an object, in
//! price order, and the summaries (match count, cheapest, largest by cpu and by memory, unmet
//! `min_values`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::instance_types::requirements::Requirement;
use crate::instance_types::selection;
use crate::instance_types::{Flavor, InstanceType, catalog, price_text};
use crate::terraform::framework::values::{object, opt_string, string_list, string_map};
use crate::terraform::tfvalue::{Number, Value};

fn label<'a, T: InstanceType + ?Sized>(t: &'a T, key: &str) -> Option<&'a str> {
    catalog::label_index(key).and_then(|i| t.label(i))
}

fn number_label<T: InstanceType + ?Sized>(t: &T, key: &str) -> Value {
    label(t, key)
        .and_then(|v| v.parse::<i64>().ok())
        .map_or(Value::Null, Value::number)
}

fn text_label<T: InstanceType + ?Sized>(t: &T, key: &str) -> Value {
    opt_string(label(t, key))
}

fn price<T: InstanceType + ?Sized>(t: &T) -> Value {
    t.price_micros()
        .and_then(|p| Number::parse(&price_text(p)))
        .map_or(Value::Null, Value::Number)
}

fn number_of<T: InstanceType + ?Sized>(t: &T, key: &str) -> i64 {
    label(t, key).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// One type as the state's object.
fn type_state<T: InstanceType + ?Sized>(t: &T) -> Value {
    let labels: BTreeMap<&str, &str> = catalog::LABEL_KEYS
        .iter()
        .enumerate()
        .filter(|(_, key)| **key != "kubernetes.io/os")
        .filter_map(|(i, key)| Some((*key, t.label(i)?)))
        .collect();
    object([
        ("name", Value::string(t.name())),
        ("category", text_label(t, "karpenter.k8s.aws/instance-category")),
        ("family", text_label(t, "karpenter.k8s.aws/instance-family")),
        (
            "generation",
            number_label(t, "karpenter.k8s.aws/instance-generation"),
        ),
        ("size", text_label(t, "karpenter.k8s.aws/instance-size")),
        ("arch", text_label(t, "kubernetes.io/arch")),
        ("cpu", number_label(t, "karpenter.k8s.aws/instance-cpu")),
        ("memory_mib", number_label(t, "karpenter.k8s.aws/instance-memory")),
        (
            "cpu_manufacturer",
            text_label(t, "karpenter.k8s.aws/instance-cpu-manufacturer"),
        ),
        (
            "hypervisor",
            text_label(t, "karpenter.k8s.aws/instance-hypervisor"),
        ),
        (
            "gpu_count",
            number_label(t, "karpenter.k8s.aws/instance-gpu-count"),
        ),
        ("gpu_name", text_label(t, "karpenter.k8s.aws/instance-gpu-name")),
        (
            "gpu_manufacturer",
            text_label(t, "karpenter.k8s.aws/instance-gpu-manufacturer"),
        ),
        (
            "gpu_memory_mib",
            number_label(t, "karpenter.k8s.aws/instance-gpu-memory"),
        ),
        (
            "accelerator_count",
            number_label(t, "karpenter.k8s.aws/instance-accelerator-count"),
        ),
        (
            "accelerator_name",
            text_label(t, "karpenter.k8s.aws/instance-accelerator-name"),
        ),
        (
            "network_bandwidth_mbps",
            number_label(t, "karpenter.k8s.aws/instance-network-bandwidth"),
        ),
        (
            "ebs_bandwidth_mbps",
            number_label(t, "karpenter.k8s.aws/instance-ebs-bandwidth"),
        ),
        (
            "local_nvme_gib",
            number_label(t, "karpenter.k8s.aws/instance-local-nvme"),
        ),
        ("labels", string_map(labels)),
        ("allocatable", string_map(t.allocatable())),
        ("on_demand_price", price(t)),
        ("zones", string_list(t.zones())),
    ])
}

/// Cheapest first; types without a price last; then by name.
fn by_price<T: InstanceType + ?Sized>(a: &T, b: &T) -> Ordering {
    let key = |t: &T| t.price_micros().unwrap_or(u32::MAX);
    key(a).cmp(&key(b)).then_with(|| a.name().cmp(b.name()))
}

/// The computed attributes for the `selected` types (in any order) of `requirements`.
pub fn computed<T: InstanceType>(
    mut selected: Vec<&T>,
    requirements: &[Requirement],
    flavor: Flavor,
) -> BTreeMap<String, Value> {
    selected.sort_by(|a, b| by_price(*a, *b));
    let cpu = |t: &T| number_of(t, "karpenter.k8s.aws/instance-cpu");
    let memory = |t: &T| number_of(t, "karpenter.k8s.aws/instance-memory");
    // The largest: the most of one, then the most of the other, then the cheaper (the list is
    // cheapest first, so the first of equals wins).
    let largest = |primary: &dyn Fn(&T) -> i64, secondary: &dyn Fn(&T) -> i64| {
        selected
            .iter()
            .copied()
            .rev()
            .max_by_key(|t| (primary(t), secondary(t)))
            .map(|t| t.name().to_string())
    };
    let largest_by_cpu = largest(&cpu, &memory);
    let largest_by_memory = largest(&memory, &cpu);
    let cheapest = selected
        .first()
        .filter(|t| t.price_micros().is_some())
        .map(|t| t.name().to_string());
    let unmet: BTreeMap<String, Value> = selection::min_values_short(&selected, requirements, flavor)
        .into_iter()
        .map(|s| (s.key, Value::number(s.found.len() as u64)))
        .collect();
    BTreeMap::from([
        (
            "instance_types".to_string(),
            Value::List(selected.iter().map(|t| type_state(*t)).collect()),
        ),
        (
            "names".to_string(),
            string_list(selected.iter().map(|t| t.name())),
        ),
        ("match_count".to_string(), Value::number(selected.len() as u64)),
        ("cheapest".to_string(), opt_string(cheapest)),
        ("largest_by_cpu".to_string(), opt_string(largest_by_cpu)),
        ("largest_by_memory".to_string(), opt_string(largest_by_memory)),
        ("min_values_unmet".to_string(), Value::Map(unmet)),
        (
            "karpenter_version".to_string(),
            Value::string(catalog::KARPENTER_VERSION),
        ),
        ("price_region".to_string(), Value::string(catalog::PRICE_REGION)),
    ])
}
