//! `data/karpenter/kubelet-fields.tsv`, from the Go types of the upstream `KubeletConfiguration`
//! (`types.go` of k8s.io/kubelet/config/v1beta1, and of the component-base packages its
//! `logging` and `tracing` fields come from): one row per JSON path, with the attribute's name
//! and the type the provider gives it (`src/resources/kube/v1/ec2_node_class/kubelet/upstream.rs`
//! reads the table).
//!
//! The path, name and type columns come from the Go types. The `values` and `description`
//! columns are this project's own words, and so is a type that says more than the Go type
//! (`enum` for a `string`, `karpenter` for the 12 fields Karpenter reads, `refused`, …, see
//! [`refines`]): they are kept from the committed table. A field the committed table has no
//! row for, or whose Go type no longer fits its row, is refused with the row to write, so the
//! table never holds a field without a description.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use terraform_provider_karpenter::terraform::framework::schema::snake_case;

use super::error::ReleaseError;
use super::go_types::{self, GoField, GoFile};

/// The import path of the kubelet's configuration types.
pub const KUBELET_PACKAGE: &str = "k8s.io/kubelet/config/v1beta1";

/// The struct the table lists.
pub const ROOT: &str = "KubeletConfiguration";

/// What a type the files do not describe by their fields holds in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// One table type (a string with a syntax of its own, a map of them).
    Type(&'static str),
    /// `apiVersion` and `kind`, inlined.
    TypeMeta,
}

const META: &str = "k8s.io/apimachinery/pkg/apis/meta/v1";
const RESOURCE: &str = "k8s.io/apimachinery/pkg/api/resource";
const CORE: &str = "k8s.io/api/core/v1";
const LOGS: &str = "k8s.io/component-base/logs/api/v1";

/// Types declared elsewhere, or with their own JSON, by import path and name.
const KNOWN: &[(&str, &str, Known)] = &[
    (META, "Duration", Known::Type("duration")),
    (META, "TypeMeta", Known::TypeMeta),
    (RESOURCE, "Quantity", Known::Type("quantity")),
    (RESOURCE, "QuantityValue", Known::Type("quantity")),
    (CORE, "ResourceList", Known::Type("quantity_map")),
    // A duration string, or an integer of nanoseconds (its UnmarshalJSON).
    (LOGS, "TimeOrMetaDuration", Known::Type("duration_or_int")),
];

/// Go's basic types → the table's.
const BASIC: &[(&str, &str)] = &[
    ("bool", "bool"),
    ("string", "string"),
    ("int32", "int32"),
    ("int64", "int64"),
    ("uint32", "uint32"),
    ("float64", "float"),
];

/// A field whose type no file declares (`k8s.io/api/core/v1.Taint`): only a `refused` row,
/// which documents no shape, can hold it.
const EXTERNAL: &str = "external";

/// What a Go type holds in JSON.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    Type(&'static str),
    Struct(Vec<Member>),
    List(Box<Shape>),
    Map(Box<Shape>),
    TypeMeta,
    /// A type none of the files declares: its import path and name.
    External(String),
}

/// A struct field with its shape; an empty `json` is inlined.
#[derive(Debug, Clone, PartialEq)]
struct Member {
    json: String,
    shape: Shape,
}

/// Where a type is looked up: the files, and the package (import path) and file it is named in.
struct Scope<'f> {
    files: &'f [(String, GoFile)],
    package: String,
    file: usize,
}

impl Scope<'_> {
    fn fail(&self, m: String) -> ReleaseError {
        ReleaseError::Input(format!("{}: {m}", self.files[self.file].0))
    }

    /// The shape of the type written `ty` in this scope (`depth` guards against a cycle).
    fn shape(&self, ty: &str, depth: usize) -> Result<Shape, ReleaseError> {
        if depth > 20 {
            return Err(self.fail(format!("{ty}: types nested more than 20 deep (a cycle?)")));
        }
        let ty = ty.trim_start_matches('*');
        if let Some(item) = ty.strip_prefix("[]") {
            return Ok(Shape::List(Box::new(self.shape(item, depth + 1)?)));
        }
        if let Some(rest) = ty.strip_prefix("map[") {
            let (_, value) = rest
                .split_once(']')
                .ok_or_else(|| self.fail(format!("{ty}: not a map type")))?;
            return Ok(Shape::Map(Box::new(self.shape(value, depth + 1)?)));
        }
        if let Some((_, table)) = BASIC.iter().find(|(go, _)| *go == ty) {
            return Ok(Shape::Type(table));
        }
        let file = &self.files[self.file].1;
        let (package, name) = match ty.split_once('.') {
            Some((import, name)) => {
                let path = file
                    .imports
                    .get(import)
                    .ok_or_else(|| self.fail(format!("{ty}: {import} is not imported")))?;
                (path.clone(), name)
            }
            None => (self.package.clone(), ty),
        };
        if let Some((_, _, known)) = KNOWN.iter().find(|(p, n, _)| *p == package && *n == name) {
            return Ok(match known {
                Known::Type(t) => Shape::Type(t),
                Known::TypeMeta => Shape::TypeMeta,
            });
        }
        let Some(at) = self.declaring(&package, name)? else {
            return Ok(Shape::External(format!("{package}.{name}")));
        };
        let scope = Scope {
            files: self.files,
            package,
            file: at,
        };
        let declared = &self.files[at].1;
        if declared.own_json.contains(name) {
            return Err(scope.fail(format!(
                "{name} decodes its own JSON: say in KNOWN (kubelet_fields.rs) what it holds"
            )));
        }
        if let Some(definition) = declared.named.get(name) {
            return scope.shape(definition, depth + 1);
        }
        let fields = declared.structs.get(name).map(Vec::as_slice).unwrap_or_default();
        let members = fields
            .iter()
            .map(|f: &GoField| {
                Ok(Member {
                    json: f.json.clone(),
                    shape: scope.shape(&f.ty, depth + 1)?,
                })
            })
            .collect::<Result<_, ReleaseError>>()?;
        Ok(Shape::Struct(members))
    }

    /// The file that declares `name` of `package`: the kubelet's own types are in the file
    /// that declares [`ROOT`], another package's in the one other file of that Go package that
    /// declares it (the current file first, for a name of its own package).
    fn declaring(&self, package: &str, name: &str) -> Result<Option<usize>, ReleaseError> {
        if package == self.package && self.files[self.file].1.declares(name) {
            return Ok(Some(self.file));
        }
        let root = |f: &GoFile| f.structs.contains_key(ROOT);
        let found: Vec<usize> = self
            .files
            .iter()
            .enumerate()
            .filter(|(_, (_, f))| f.declares(name) && root(f) == (package == KUBELET_PACKAGE))
            .filter(|(_, (_, f))| package.rsplit('/').next() == Some(f.package.as_str()))
            .map(|(i, _)| i)
            .collect();
        match found[..] {
            [] => Ok(None),
            [one] => Ok(Some(one)),
            _ => Err(self.fail(format!(
                "{package}.{name} is declared in more than one of the files given"
            ))),
        }
    }
}

/// One row of the table as the Go types say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    /// The JSON path, `logging.vmodule[].filePattern`.
    pub path: String,
    /// The table type the Go type is, [`EXTERNAL`] for a type no file declares.
    pub ty: String,
    /// That type's import path and name, for an [`EXTERNAL`] one.
    pub external: Option<String>,
}

/// The rows of `members` under `prefix`, in the order of the Go fields.
fn rows(members: &[Member], prefix: &str, out: &mut Vec<Derived>) -> Result<(), ReleaseError> {
    for m in members {
        let path = format!("{prefix}{}", m.json);
        let mut push = |ty: &str, external: Option<&String>| {
            out.push(Derived {
                path: path.clone(),
                ty: ty.to_string(),
                external: external.cloned(),
            })
        };
        match (&m.shape, m.json.is_empty()) {
            (Shape::Struct(inner), true) => rows(inner, prefix, out)?,
            (Shape::TypeMeta, true) => {
                for field in ["apiVersion", "kind"] {
                    out.push(Derived {
                        path: format!("{prefix}{field}"),
                        ty: "typemeta".into(),
                        external: None,
                    });
                }
            }
            (_, true) => {
                return Err(ReleaseError::Input(format!(
                    "an inlined field under {prefix:?} that is not a struct: {:?}",
                    m.shape
                )));
            }
            (Shape::Type(t), false) => push(t, None),
            (Shape::External(name), false) => push(EXTERNAL, Some(name)),
            (Shape::Struct(inner), false) => {
                push("object", None);
                rows(inner, &format!("{path}."), out)?;
            }
            (Shape::List(item), false) => match item.as_ref() {
                Shape::Type("string") => push("strings", None),
                Shape::Type("int32") => push("int32s", None),
                Shape::External(name) => push(EXTERNAL, Some(name)),
                Shape::Struct(inner) => {
                    push("objects", None);
                    rows(inner, &format!("{path}[]."), out)?;
                }
                other => return Err(unsayable(&path, other)),
            },
            (Shape::Map(value), false) => {
                let ty = match value.as_ref() {
                    Shape::Type("string") => "string_map",
                    Shape::Type("bool") => "bool_map",
                    Shape::Type("quantity") => "quantity_map",
                    Shape::List(item) if **item == Shape::Type("string") => "strings_map",
                    other => return Err(unsayable(&path, other)),
                };
                push(ty, None);
            }
            (Shape::TypeMeta, false) => return Err(unsayable(&path, &m.shape)),
        }
    }
    Ok(())
}

fn unsayable(path: &str, shape: &Shape) -> ReleaseError {
    ReleaseError::Input(format!(
        "{path}: the table has no type for {shape:?} (add one to kubelet/upstream.rs and here)"
    ))
}

/// Every field of [`ROOT`] in `files` (each a name for errors and its declarations), as rows.
pub fn derive(files: &[(String, GoFile)]) -> Result<Vec<Derived>, ReleaseError> {
    let root = files
        .iter()
        .position(|(_, f)| f.structs.contains_key(ROOT))
        .ok_or_else(|| ReleaseError::Input(format!("no file given declares {ROOT}")))?;
    let scope = Scope {
        files,
        package: KUBELET_PACKAGE.into(),
        file: root,
    };
    let Shape::Struct(members) = scope.shape(ROOT, 0)? else {
        return Err(scope.fail(format!("{ROOT} is not a struct")));
    };
    let mut out = Vec::new();
    rows(&members, "", &mut out)?;
    Ok(out)
}

/// Whether a row's `table` type may stand for the Go type's `derived` one: the same, or one
/// that says more (which values a string takes, that a string map holds quantities or eviction
/// thresholds), or what Karpenter does with it (`karpenter`: one of the 12 it reads, typed by
/// hand; `refused`: it sets the field itself, any value is refused).
pub fn refines(derived: &str, table: &str) -> bool {
    if derived == EXTERNAL {
        return table == "refused";
    }
    table == derived
        || matches!(table, "karpenter" | "refused")
        || matches!(
            (derived, table),
            ("string", "enum" | "quantity")
                | ("strings", "enums")
                | ("string_map", "quantity_map" | "eviction_map")
        )
}

/// A row of the table: path, name, type, values (`|`-separated), description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub path: String,
    pub name: String,
    pub ty: String,
    pub values: String,
    pub description: String,
}

/// The rows of a table's text (comments skipped).
pub fn read_table(text: &str) -> Result<Vec<Row>, ReleaseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let [path, name, ty, values, description] = line.split('\t').collect::<Vec<_>>()[..] else {
            return Err(ReleaseError::Input(format!(
                "kubelet-fields.tsv line {}: not 5 columns",
                i + 1
            )));
        };
        out.push(Row {
            path: path.into(),
            name: name.into(),
            ty: ty.into(),
            values: values.into(),
            description: description.into(),
        });
    }
    Ok(out)
}

/// The table's rows: the Go types' paths, in their order, with what `committed` says of each.
/// Refused, with every row to write, when a field has no described row or its Go type no
/// longer fits the row's type.
pub fn merge(derived: &[Derived], committed: &[Row]) -> Result<Vec<Row>, ReleaseError> {
    let by_path: BTreeMap<&str, &Row> = committed.iter().map(|r| (r.path.as_str(), r)).collect();
    let mut out = Vec::new();
    let mut to_write = Vec::new();
    for d in derived {
        let wire = d.path.rsplit(['.', ']']).next().unwrap_or(&d.path);
        let external = d.external.as_deref().unwrap_or_default();
        match by_path.get(d.path.as_str()) {
            Some(row) if d.ty == EXTERNAL && row.ty != "refused" => to_write.push(format!(
                "{}: its type, {external}, is in none of the files given: give its file with --kubelet-types",
                d.path
            )),
            Some(row) if !refines(&d.ty, &row.ty) => to_write.push(format!(
                "{}: the row's type {} does not fit the Go type's ({}); rewrite the row",
                d.path, row.ty, d.ty
            )),
            Some(row) if row.description.is_empty() && row.ty != "karpenter" => {
                to_write.push(format!("{}: the row has no description", d.path));
            }
            Some(row) => out.push((*row).clone()),
            None if d.ty == EXTERNAL => to_write.push(format!(
                "{}: a new field of a type none of the files declares ({external}): give its file \
                 with --kubelet-types, or add the row as `refused` with Karpenter's reason",
                d.path
            )),
            None => to_write.push(format!(
                "{}: a new field; add its row with a description (and a narrower type where one fits): \
                 {}\t{}\t{}\t\t<description>",
                d.path,
                d.path,
                snake_case(wire),
                d.ty
            )),
        }
    }
    if !to_write.is_empty() {
        return Err(ReleaseError::Input(format!(
            "data/karpenter/kubelet-fields.tsv is left as it is until each of these is done (then run again):\n{}",
            to_write.join("\n")
        )));
    }
    Ok(out)
}

/// The text of `data/karpenter/kubelet-fields.tsv`: the rows, with a header saying where they
/// come from (`kubelet_version`, the k8s.io/kubelet version Karpenter `version` builds against).
pub fn render(version: &str, kubelet_version: &str, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The fields of the upstream KubeletConfiguration (k8s.io/kubelet/config/v1beta1 at {kubelet_version}, the\n\
         # version Karpenter {version} builds against) that an EC2NodeClass `spec.kubelet` may set from Karpenter\n\
         # v1.15 on. One row per JSON path (\"[]\" marks the items of a list).\n\
         # Written by scripts/karpenter-release.sh (--kubelet-types): path, name and type from the Go types\n\
         # (types.go of k8s.io/kubelet/config/v1beta1 and of the component-base packages of `logging` and\n\
         # `tracing`). The values and description columns, and a type that says more than the Go type (enum,\n\
         # quantity, enums, quantity_map, eviction_map, karpenter, refused), are this project's own, written\n\
         # here by hand: the generator keeps them, and refuses a new field until its row is written.\n\
         #\n\
         # type: bool | int32 | int64 | uint32 | float | string | duration (Go duration, \"1m30s\") |\n\
         #   quantity | enum (values: the allowed values) | strings | int32s | enums (a list of enum values) |\n\
         #   string_map | bool_map | strings_map | quantity_map | eviction_map (keys: eviction signals;\n\
         #   values: percentages or quantities) | object | objects (a list of objects) |\n\
         #   duration_or_int (a Go duration, or an integer of nanoseconds) |\n\
         #   karpenter: one of the 12 fields Karpenter itself reads, typed by hand in kubelet/mod.rs |\n\
         #   refused: Karpenter refuses it (it sets the field itself) | typemeta: not a setting, left out\n\
         # path\tname\ttype\tvalues\tdescription"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}",
            r.path, r.name, r.ty, r.values, r.description
        );
    }
    out
}

/// The table's text from the Go files (each a name for errors and its text) and the committed
/// table's text.
pub fn table(
    version: &str,
    kubelet_version: &str,
    go_files: &[(String, String)],
    committed: &str,
) -> Result<String, ReleaseError> {
    let files = go_files
        .iter()
        .map(|(name, text)| Ok((name.clone(), go_types::read(name, text)?)))
        .collect::<Result<Vec<_>, ReleaseError>>()?;
    let rows = merge(&derive(&files)?, &read_table(committed)?)?;
    Ok(render(version, kubelet_version, &rows))
}
