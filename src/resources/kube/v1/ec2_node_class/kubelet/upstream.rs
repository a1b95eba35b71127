//! The kubelet settings of Karpenter v1.15's open `spec.kubelet` beyond the 12 Karpenter reads
//! itself: every other field of the upstream `KubeletConfiguration`, typed, from the table in
//! `data/karpenter/kubelet-fields.tsv` (one row per JSON path, written by
//! `scripts/karpenter-release.sh --kubelet-types` from the Go types, with this project's
//! descriptions). A misspelled kubelet key is therefore a plan error like every other
//! misspelled key, where Karpenter would accept the object and report
//! `ValidationSucceeded = False` after the apply.
//!
//! What is checked is what Karpenter checks (the upstream types: integer ranges, lists, maps),
//! plus what the kubelet itself cannot start with (a duration that does not parse, a value
//! outside a closed set), said in each attribute's docs.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use thiserror::Error;

use crate::resources::kube::kind::rules;
use crate::resources::kube::v1::ec2_node_class::kubelet::maps::eviction_map;
use crate::terraform::framework::Attribute;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{Type, Value};

/// The table: `path`, `name`, `type`, `values`, `description`, tab-separated.
const TABLE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/data/karpenter/kubelet-fields.tsv"
));

/// How a row says what the field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldType {
    Bool,
    Int32,
    Int64,
    Uint32,
    Float,
    String,
    Duration,
    Quantity,
    Enum,
    Strings,
    Int32s,
    Enums,
    StringMap,
    BoolMap,
    StringsMap,
    QuantityMap,
    /// A map from eviction signals to thresholds (as `eviction_hard`), which Karpenter v1.15
    /// checks as it checks the eviction settings it reads.
    EvictionMap,
    Object,
    Objects,
    DurationOrInt,
    /// One of the fields Karpenter reads itself, typed by hand in `kubelet/mod.rs`.
    Karpenter,
    /// Karpenter refuses it: it sets the field itself.
    Refused,
    /// `apiVersion` and `kind`: not settings.
    TypeMeta,
}

impl FieldType {
    fn parse(code: &str) -> Option<Self> {
        Some(match code {
            "bool" => Self::Bool,
            "int32" => Self::Int32,
            "int64" => Self::Int64,
            "uint32" => Self::Uint32,
            "float" => Self::Float,
            "string" => Self::String,
            "duration" => Self::Duration,
            "quantity" => Self::Quantity,
            "enum" => Self::Enum,
            "strings" => Self::Strings,
            "int32s" => Self::Int32s,
            "enums" => Self::Enums,
            "string_map" => Self::StringMap,
            "bool_map" => Self::BoolMap,
            "strings_map" => Self::StringsMap,
            "quantity_map" => Self::QuantityMap,
            "eviction_map" => Self::EvictionMap,
            "object" => Self::Object,
            "objects" => Self::Objects,
            "duration_or_int" => Self::DurationOrInt,
            "karpenter" => Self::Karpenter,
            "refused" => Self::Refused,
            "typemeta" => Self::TypeMeta,
            _ => return None,
        })
    }
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    /// The JSON path in the upstream type, `logging.vmodule[].filePattern`.
    pub path: &'static str,
    /// The attribute name, `file_pattern`.
    pub name: &'static str,
    pub ty: FieldType,
    /// The allowed values of an `enum`/`enums` field.
    pub values: Vec<&'static str>,
    pub description: &'static str,
}

impl Field {
    /// The JSON name of the field itself (the last step of the path).
    pub fn wire_name(&self) -> &'static str {
        self.path.rsplit('.').next().unwrap_or(self.path)
    }

    /// The path of the object this field is in (`logging.vmodule[]`), empty at the top.
    fn parent(&self) -> &'static str {
        match self.path.rfind('.') {
            Some(i) => &self.path[..i],
            None => "",
        }
    }
}

/// A row the table cannot hold.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("data/karpenter/kubelet-fields.tsv line {line}: {problem}")]
pub(crate) struct TableError {
    line: usize,
    problem: String,
}

/// Reads the table (comments and blank lines skipped).
pub(crate) fn parse(table: &'static str) -> Result<Vec<Field>, TableError> {
    let mut fields = Vec::new();
    for (i, line) in table.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |problem: String| TableError { line: i + 1, problem };
        let columns: Vec<&'static str> = line.split('\t').collect();
        let [path, name, ty, values, description] = columns[..] else {
            return Err(fail(format!("{} columns, not 5", columns.len())));
        };
        let ty = FieldType::parse(ty).ok_or_else(|| fail(format!("unknown type {ty:?}")))?;
        let values: Vec<&'static str> = values.split('|').filter(|x| !x.is_empty()).collect();
        if matches!(ty, FieldType::Enum | FieldType::Enums) == values.is_empty() {
            return Err(fail(
                "values go with the enum types, and only with them".to_string(),
            ));
        }
        if description.is_empty() && !matches!(ty, FieldType::Karpenter) {
            return Err(fail(format!("{path} has no description")));
        }
        fields.push(Field {
            path,
            name,
            ty,
            values,
            description,
        });
    }
    Ok(fields)
}

/// Every row of the table, read once. A table that does not read is a bug caught by the unit
/// tests; the provider then offers no upstream fields rather than failing.
pub(crate) fn fields() -> &'static [Field] {
    static FIELDS: LazyLock<Vec<Field>> = LazyLock::new(|| match parse(TABLE) {
        Ok(fields) => fields,
        Err(e) => {
            tracing::error!("{e}");
            Vec::new()
        }
    });
    &FIELDS
}

/// The attributes of the upstream fields at the top of `spec.kubelet` that Karpenter does not
/// read itself (the 12 it reads are typed in `kubelet/mod.rs`), with their nested attributes.
pub(crate) fn attributes() -> Vec<Attribute> {
    let all = fields();
    let mut children: BTreeMap<&str, Vec<&Field>> = BTreeMap::new();
    for f in all {
        children.entry(f.parent()).or_default().push(f);
    }
    children
        .get("")
        .into_iter()
        .flatten()
        .filter(|f| !matches!(f.ty, FieldType::Karpenter | FieldType::TypeMeta))
        .map(|f| attribute(f, &children))
        .collect()
}

fn attribute(f: &Field, children: &BTreeMap<&str, Vec<&Field>>) -> Attribute {
    let nested = |prefix: &str| -> Vec<Attribute> {
        children
            .get(prefix)
            .into_iter()
            .flatten()
            .map(|c| attribute(c, children))
            .collect()
    };
    let a = match f.ty {
        FieldType::Bool => Attribute::bool(f.name),
        FieldType::Int32 => Attribute::number(f.name).validate(rules::numbers::whole_number(None, true)),
        FieldType::Int64 => Attribute::number(f.name).validate(rules::numbers::whole_number(None, false)),
        FieldType::Uint32 => Attribute::number(f.name).validate(v::int_range(0, i64::from(u32::MAX))),
        FieldType::Float => Attribute::number(f.name),
        FieldType::String => Attribute::string(f.name),
        FieldType::Duration => Attribute::string(f.name).validate(v::go_duration_because(
            " (the kubelet cannot start with anything else)",
            "",
        )),
        FieldType::Quantity => Attribute::string(f.name).validate(rules::numbers::quantity()),
        FieldType::Enum => Attribute::string(f.name).validate(v::one_of(leak(&f.values))),
        FieldType::Strings => Attribute::list_of(f.name, Type::String),
        FieldType::Int32s => Attribute::list_of(f.name, Type::Number)
            .validate(v::each(rules::numbers::whole_number(None, true))),
        FieldType::Enums => {
            Attribute::list_of(f.name, Type::String).validate(v::each(v::one_of(leak(&f.values))))
        }
        FieldType::StringMap => Attribute::map_of(f.name, Type::String),
        FieldType::BoolMap => Attribute::map_of(f.name, Type::Bool),
        FieldType::StringsMap => Attribute::map_of(f.name, Type::list(Type::String)),
        FieldType::QuantityMap => {
            Attribute::map_of(f.name, Type::String).validate(v::each(rules::numbers::quantity()))
        }
        FieldType::EvictionMap => eviction_map(f.name, f.description),
        FieldType::Object => Attribute::object(f.name, nested(f.path)),
        FieldType::Objects => Attribute::list_of_objects(f.name, nested(&format!("{}[]", f.path))),
        FieldType::DurationOrInt => Attribute::dynamic(f.name)
            .type_label("Number or String")
            .validate(duration_or_nanoseconds()),
        // Any value is refused, so its shape does not matter: the rows below it only document it.
        FieldType::Refused => Attribute::dynamic(f.name)
            .type_label("Not settable")
            .validate(refused(f.wire_name(), f.description)),
        FieldType::Karpenter | FieldType::TypeMeta => Attribute::string(f.name),
    };
    a.wire_name(f.wire_name()).describe(f.description)
}

/// The allowed values of an enum field, for the life of the process (the schemas are built
/// once and kept).
fn leak(values: &[&'static str]) -> &'static [&'static str] {
    Box::leak(values.to_vec().into_boxed_slice())
}

/// `logging.flush_frequency`: a duration string or a whole number of nanoseconds.
fn duration_or_nanoseconds() -> impl Validator {
    v::check(
        "A duration such as `5s`, or a whole number of nanoseconds.",
        |value| match value.strip_dynamic() {
            Value::String(s) if v::parse_go_duration(s).is_some() => None,
            Value::String(s) => Some(format!(
                "{s:?} is not a duration: use a number with a unit, such as \"5s\", or a whole number of nanoseconds."
            )),
            Value::Number(n) if n.as_i64().is_some_and(|i| i >= 0) => None,
            other => Some(format!(
                "Expected a duration such as \"5s\" or a whole number of nanoseconds, got {}.",
                other.kind()
            )),
        },
    )
}

/// A field Karpenter refuses, with its reason: any value is an error.
fn refused(wire: &'static str, reason: &'static str) -> impl Validator {
    v::check(format!("Cannot be set: {reason}"), move |value| {
        (!value.is_null()).then(|| {
                format!("Karpenter refuses spec.kubelet.{wire} (the NodeClass would never become Ready): {reason} Remove it.")
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::schema::snake_case;

    #[test]
    fn the_table_reads_and_every_row_has_a_description() {
        let fields = parse(TABLE).expect("the table reads");
        assert!(fields.len() > 150, "{} rows", fields.len());
        let karpenter: Vec<&str> = fields
            .iter()
            .filter(|f| f.ty == FieldType::Karpenter)
            .map(|f| f.path)
            .collect();
        assert_eq!(karpenter.len(), 12, "{karpenter:?}");
    }

    /// Names no rule derives (two acronyms in a row, a plural acronym), written by hand.
    const SPELLED_OUT: &[(&str, &str)] = &[
        ("kubeAPIQPS", "kube_api_qps"),
        ("reservedSystemCPUs", "reserved_system_cpus"),
    ];

    #[test]
    fn names_are_the_snake_case_of_the_json_names() {
        for f in fields() {
            if let Some((_, name)) = SPELLED_OUT.iter().find(|(wire, _)| *wire == f.wire_name()) {
                assert_eq!(f.name, *name);
                continue;
            }
            assert_eq!(f.name, snake_case(f.wire_name()), "{}", f.path);
        }
    }

    #[test]
    fn every_parent_of_a_nested_row_is_an_object_row() {
        let fields = fields();
        for f in fields.iter().filter(|f| f.path.contains('.')) {
            let parent = f.parent().trim_end_matches("[]");
            let row = fields.iter().find(|p| p.path == parent).expect("a parent row");
            assert!(
                matches!(
                    row.ty,
                    FieldType::Object | FieldType::Objects | FieldType::Refused
                ),
                "{} is under {}",
                f.path,
                row.path
            );
        }
    }

    #[test]
    fn a_table_that_does_not_read_says_where() {
        assert_eq!(
            parse("a\tb\tnope\t\tx\n").unwrap_err().to_string(),
            "data/karpenter/kubelet-fields.tsv line 1: unknown type \"nope\""
        );
        assert!(parse("a\tb\tstring\t\t\n").is_err());
        assert!(parse("a\tb\tenum\t\td\n").is_err());
    }

    #[test]
    fn attributes_are_typed_and_named_on_the_wire() {
        let attributes = attributes();
        let by_name = |n: &str| attributes.iter().find(|a| a.name == n).expect(n);
        assert_eq!(
            by_name("registry_pull_qps").wire_field().as_deref(),
            Some("registryPullQPS")
        );
        assert_eq!(by_name("feature_gates").value_type(), Type::map(Type::Bool));
        let logging = by_name("logging");
        let (_, nested) = logging.nested().expect("an object");
        assert!(nested.iter().any(|a| a.name == "vmodule"));
        assert!(
            attributes
                .iter()
                .all(|a| a.name != "max_pods" && a.name != "api_version")
        );
    }
}
