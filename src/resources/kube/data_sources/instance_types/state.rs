//! The state of `data "karpenter_instance_types"`: each matching type as an object, in
//! price order, and the summaries (match count, cheapest, largest by cpu and by memory, unmet
//! `min_values`).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::LazyLock;

use super::schema::SCHEMA;
use crate::instance_types::requirements::Requirement;
use crate::instance_types::selection;
use crate::instance_types::{Flavor, InstanceType, catalog};
use crate::terraform::framework::values::{opt_string, string_list, string_map};
use crate::terraform::tfvalue::msgpack::Stream;
use crate::terraform::tfvalue::{EncodeError, Number, Type, Value};

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

fn number_of<T: InstanceType + ?Sized>(t: &T, key: &str) -> i64 {
    catalog::label_index(key)
        .and_then(|i| t.label(i))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Where an attribute of a type's object comes from.
#[derive(Clone, Copy)]
enum Source {
    Name,
    Labels,
    Allocatable,
    Price,
    Zones,
    /// One of [`LABEL_ATTRIBUTES`]: its label index and how it reads.
    Label(Option<usize>, Read),
}

/// One attribute's value for one type, before it is a [`Value`] or msgpack.
enum Cell<'a> {
    Text(Option<&'a str>),
    Whole(Option<i64>),
    /// Micro-dollars per hour.
    Price(Option<u32>),
    /// A map of strings, sorted by key.
    Pairs(Vec<(&'a str, &'a str)>),
    OwnedPairs(Vec<(String, String)>),
    Texts(&'a [String]),
}

impl Source {
    fn of(attribute: &str) -> Option<Self> {
        Some(match attribute {
            "name" => Self::Name,
            "labels" => Self::Labels,
            "allocatable" => Self::Allocatable,
            "on_demand_price" => Self::Price,
            "zones" => Self::Zones,
            other => {
                let at = LABEL_ATTRIBUTES.iter().position(|(name, _, _)| *name == other)?;
                Self::Label(LABEL_INDEXES[at], LABEL_ATTRIBUTES[at].2)
            }
        })
    }

    fn cell<'a, T: InstanceType + ?Sized>(self, t: &'a T) -> Cell<'a> {
        match self {
            Self::Name => Cell::Text(Some(t.name())),
            Self::Labels => Cell::Pairs(
                MAP_LABELS
                    .iter()
                    .filter_map(|(i, key)| Some((*key, t.label(*i)?)))
                    .collect(),
            ),
            Self::Allocatable => Cell::OwnedPairs(t.allocatable()),
            Self::Price => Cell::Price(t.price_micros()),
            Self::Zones => Cell::Texts(t.zones()),
            Self::Label(index, read) => {
                let label = index.and_then(|i| t.label(i));
                match read {
                    Read::Text => Cell::Text(label),
                    Read::Number => Cell::Whole(label.and_then(|v| v.parse::<i64>().ok())),
                }
            }
        }
    }
}

fn price_number(micros: u32) -> Number {
    Number::from_scaled(u64::from(micros), -6)
}

impl Cell<'_> {
    fn value(self) -> Value {
        match self {
            Cell::Text(text) => opt_string(text),
            Cell::Whole(n) => n.map_or(Value::Null, Value::number),
            Cell::Price(p) => p.map_or(Value::Null, |p| Value::Number(price_number(p))),
            Cell::Pairs(pairs) => string_map(pairs),
            Cell::OwnedPairs(pairs) => string_map(pairs),
            Cell::Texts(items) => string_list(items),
        }
    }

    fn write(self, out: &mut Stream) -> Result<(), EncodeError> {
        fn pairs<K: AsRef<str> + Ord, V: AsRef<str>>(
            out: &mut Stream,
            mut pairs: Vec<(K, V)>,
        ) -> Result<(), EncodeError> {
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            pairs.dedup_by(|a, b| a.0 == b.0);
            out.map(pairs.len())?;
            for (k, v) in &pairs {
                out.str(k.as_ref())?;
                out.str(v.as_ref())?;
            }
            Ok(())
        }
        match self {
            Cell::Text(Some(text)) => out.str(text)?,
            Cell::Whole(Some(n)) => out.int(n),
            Cell::Price(Some(p)) => out.number(&price_number(p))?,
            Cell::Text(None) | Cell::Whole(None) | Cell::Price(None) => out.null(),
            Cell::Pairs(p) => pairs(out, p)?,
            Cell::OwnedPairs(p) => pairs(out, p)?,
            Cell::Texts(items) => {
                out.array(items.len())?;
                for item in items {
                    out.str(item)?;
                }
            }
        }
        Ok(())
    }
}

/// The attributes of a type's object, in the schema's (sorted) order, each with its source;
/// an attribute the schema has and this module cannot fill is an error naming it.
static COLUMNS: LazyLock<Result<Vec<(String, Source)>, String>> = LazyLock::new(|| {
    let Type::Object(attributes) = SCHEMA.value_type() else {
        return Err("the data source's schema is not an object".to_string());
    };
    let Some(Type::List(element)) = attributes.get("instance_types") else {
        return Err("instance_types is not a list in the schema".to_string());
    };
    let Type::Object(columns) = element.as_ref() else {
        return Err("instance_types' elements are not objects in the schema".to_string());
    };
    columns
        .keys()
        .map(|name| {
            Source::of(name)
                .map(|source| (name.clone(), source))
                .ok_or_else(|| format!("instance_types.{name} has no source"))
        })
        .collect()
});

fn columns() -> Result<&'static [(String, Source)], String> {
    COLUMNS.as_deref().map_err(Clone::clone)
}

/// One type as the state's object.
fn type_state<T: InstanceType + ?Sized>(t: &T, columns: &[(String, Source)]) -> Value {
    Value::Object(
        columns
            .iter()
            .map(|(name, source)| (name.clone(), source.cell(t).value()))
            .collect(),
    )
}

/// One type as msgpack, the bytes [`type_state`] encodes to.
fn write_type<T: InstanceType + ?Sized>(
    out: &mut Stream,
    t: &T,
    columns: &[(String, Source)],
) -> Result<(), EncodeError> {
    out.map(columns.len())?;
    for (name, source) in columns {
        out.str(name)?;
        source.cell(t).write(out)?;
    }
    Ok(())
}

/// Cheapest first; types without a price last; then by name.
fn by_price<T: InstanceType + ?Sized>(a: &T, b: &T) -> Ordering {
    let key = |t: &T| t.price_micros().unwrap_or(u32::MAX);
    key(a).cmp(&key(b)).then_with(|| a.name().cmp(b.name()))
}

/// The selected types in the answer's order: cheapest first, types without a price last, then
/// by name.
fn in_answer_order<T: InstanceType>(mut selected: Vec<&T>) -> Vec<&T> {
    selected.sort_by(|a, b| by_price(*a, *b));
    selected
}

/// The computed attributes but `instance_types`, for the `selected` types in answer order.
fn summaries<T: InstanceType>(
    selected: &[&T],
    requirements: &[Requirement],
    flavor: Flavor,
) -> BTreeMap<String, Value> {
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
    let unmet: BTreeMap<String, Value> = selection::min_values_short(selected, requirements, flavor)
        .into_iter()
        .map(|s| (s.key, Value::number(s.found.len() as u64)))
        .collect();
    BTreeMap::from([
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

/// The computed attributes for the `selected` types (in any order) of `requirements`, as
/// values.
pub fn computed<T: InstanceType>(
    selected: Vec<&T>,
    requirements: &[Requirement],
    flavor: Flavor,
) -> Result<BTreeMap<String, Value>, String> {
    let columns = columns()?;
    let selected = in_answer_order(selected);
    let mut computed = summaries(&selected, requirements, flavor);
    computed.insert(
        "instance_types".to_string(),
        Value::List(selected.iter().map(|t| type_state(*t, columns)).collect()),
    );
    Ok(computed)
}

/// The whole state, `config` with the computed attributes, as msgpack of the schema's type
/// `ty`: the bytes [`computed`]'s values encode to, with `instance_types` written straight from
/// the types instead of built as values first (about 80,000 of them for every type of the table:
/// building, encoding and freeing them took most of the answer's time).
pub fn encoded<T: InstanceType>(
    config: &Value,
    selected: Vec<&T>,
    requirements: &[Requirement],
    flavor: Flavor,
    ty: &Type,
) -> Result<Vec<u8>, String> {
    let columns = columns()?;
    let selected = in_answer_order(selected);
    let summaries = summaries(&selected, requirements, flavor);
    let Type::Object(attributes) = ty else {
        return Err("the data source's type is not an object".to_string());
    };
    // about 1.2 KB per type
    let mut out = Stream::with_capacity(4096 + selected.len() * 1280);
    let fail = |e: EncodeError| e.to_string();
    out.map(attributes.len()).map_err(fail)?;
    for (name, attribute_ty) in attributes {
        out.str(name).map_err(fail)?;
        if name == "instance_types" {
            out.array(selected.len()).map_err(fail)?;
            for t in &selected {
                write_type(&mut out, *t, columns).map_err(fail)?;
            }
            continue;
        }
        let value = summaries
            .get(name)
            .or_else(|| config.get(name))
            .unwrap_or(&Value::Null);
        out.value(value, attribute_ty)
            .map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(out.finish())
}

#[cfg(test)]
mod tests {
    use super::{computed, encoded};
    use crate::instance_types::requirements::{Operator, Requirement};
    use crate::instance_types::{Flavor, catalog, selection};
    use crate::resources::kube::data_sources::instance_types::schema::SCHEMA;
    use crate::terraform::tfvalue::{Value, msgpack};

    /// The answer written straight from the table is byte for byte the answer built as values
    /// and encoded: for every type, a family, the GPU types and an unmet `min_values`.
    #[test]
    fn the_streamed_answer_is_the_built_answers_bytes() {
        let ty = SCHEMA.value_type();
        let mut fields: std::collections::BTreeMap<String, Value> = SCHEMA
            .attributes
            .iter()
            .map(|a| (a.name.to_string(), Value::Null))
            .collect();
        fields.insert("requirements".to_string(), Value::List(Vec::new()));
        let config = Value::Object(fields);
        let mut unmet = Requirement::new("karpenter.k8s.aws/instance-family", Operator::In, &["m5", "c5"]);
        unmet.min_values = Some(3);
        let cases = [
            Vec::new(),
            vec![Requirement::new(
                "karpenter.k8s.aws/instance-family",
                Operator::In,
                &["m5"],
            )],
            vec![Requirement::new(
                "karpenter.k8s.aws/instance-gpu-count",
                Operator::Exists,
                &[],
            )],
            vec![unmet],
        ];
        for requirements in cases {
            let selected = selection::select(catalog::all(), &requirements, Flavor::Either).unwrap();
            assert!(!selected.is_empty());
            let mut state = config.clone();
            if let Value::Object(fields) = &mut state {
                fields.extend(computed(selected.clone(), &requirements, Flavor::Either).unwrap());
            }
            let built = msgpack::encode(&state, &ty).unwrap();
            let streamed = encoded(&config, selected, &requirements, Flavor::Either, &ty).unwrap();
            assert!(built == streamed, "{requirements:?}: the streamed answer differs");
            assert_eq!(msgpack::decode(&streamed, &ty).unwrap(), state);
        }
    }
}
