//! The state of `data "karpenter_instance_types"`: each matching type as an object, in
//! price order, and the summaries (match count, cheapest, largest by cpu and by memory, unmet
//! `min_values`).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::instance_types::requirements::Requirement;
use crate::instance_types::selection;
use crate::instance_types::{Flavor, InstanceType, catalog};
use crate::terraform::framework::values::{opt_string, string_list, string_map};
use crate::terraform::tfvalue::{Number, Value};

/// How a typed attribute of a type's object reads its label.
#[derive(Clone, Copy)]
enum Read {
    Text,
    Number,
}

/// The typed attributes of a type's object, each the value of one Karpenter label.
const LABEL_ATTRIBUTES: [(&str, &str, Read); 18] = [
    ("category", "karpenter.k8s.aws/instance-category", Read::Text),
    ("family", "karpenter.k8s.aws/instance-family", Read::Text),
    (
        "generation",
        "karpenter.k8s.aws/instance-generation",
        Read::Number,
    ),
    ("size", "karpenter.k8s.aws/instance-size", Read::Text),
    ("arch", "kubernetes.io/arch", Read::Text),
    ("cpu", "karpenter.k8s.aws/instance-cpu", Read::Number),
    ("memory_mib", "karpenter.k8s.aws/instance-memory", Read::Number),
    (
        "cpu_manufacturer",
        "karpenter.k8s.aws/instance-cpu-manufacturer",
        Read::Text,
    ),
    ("hypervisor", "karpenter.k8s.aws/instance-hypervisor", Read::Text),
    ("gpu_count", "karpenter.k8s.aws/instance-gpu-count", Read::Number),
    ("gpu_name", "karpenter.k8s.aws/instance-gpu-name", Read::Text),
    (
        "gpu_manufacturer",
        "karpenter.k8s.aws/instance-gpu-manufacturer",
        Read::Text,
    ),
    (
        "gpu_memory_mib",
        "karpenter.k8s.aws/instance-gpu-memory",
        Read::Number,
    ),
    (
        "accelerator_count",
        "karpenter.k8s.aws/instance-accelerator-count",
        Read::Number,
    ),
    (
        "accelerator_name",
        "karpenter.k8s.aws/instance-accelerator-name",
        Read::Text,
    ),
    (
        "network_bandwidth_mbps",
        "karpenter.k8s.aws/instance-network-bandwidth",
        Read::Number,
    ),
    (
        "ebs_bandwidth_mbps",
        "karpenter.k8s.aws/instance-ebs-bandwidth",
        Read::Number,
    ),
    (
        "local_nvme_gib",
        "karpenter.k8s.aws/instance-local-nvme",
        Read::Number,
    ),
];

/// The label index of each of [`LABEL_ATTRIBUTES`], looked up once (a state of every type reads
/// them 1,363 times each).
static LABEL_INDEXES: LazyLock<[Option<usize>; 18]> =
    LazyLock::new(|| LABEL_ATTRIBUTES.map(|(_, key, _)| catalog::label_index(key)));

/// The label indexes that go into the `labels` map: every key but `kubernetes.io/os` (which
/// the data does not vary).
static MAP_LABELS: LazyLock<Vec<(usize, &'static str)>> = LazyLock::new(|| {
    catalog::LABEL_KEYS
        .iter()
        .enumerate()
        .filter(|(_, key)| **key != "kubernetes.io/os")
        .map(|(i, key)| (i, *key))
        .collect()
});

fn price<T: InstanceType + ?Sized>(t: &T) -> Value {
    t.price_micros().map_or(Value::Null, |p| {
        Value::Number(Number::from_scaled(u64::from(p), -6))
    })
}

fn number_of<T: InstanceType + ?Sized>(t: &T, key: &str) -> i64 {
    catalog::label_index(key)
        .and_then(|i| t.label(i))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// One type as the state's object.
fn type_state<T: InstanceType + ?Sized>(t: &T) -> Value {
    let mut fields: BTreeMap<String, Value> = LABEL_ATTRIBUTES
        .iter()
        .zip(LABEL_INDEXES.iter())
        .map(|((name, _, read), index)| {
            let label = index.and_then(|i| t.label(i));
            let value = match read {
                Read::Text => opt_string(label),
                Read::Number => label
                    .and_then(|v| v.parse::<i64>().ok())
                    .map_or(Value::Null, Value::number),
            };
            (name.to_string(), value)
        })
        .collect();
    let labels: BTreeMap<String, Value> = MAP_LABELS
        .iter()
        .filter_map(|(i, key)| Some((key.to_string(), Value::string(t.label(*i)?))))
        .collect();
    fields.extend([
        ("name".to_string(), Value::string(t.name())),
        ("labels".to_string(), Value::Map(labels)),
        ("allocatable".to_string(), string_map(t.allocatable())),
        ("on_demand_price".to_string(), price(t)),
        ("zones".to_string(), string_list(t.zones())),
    ]);
    Value::Object(fields)
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
