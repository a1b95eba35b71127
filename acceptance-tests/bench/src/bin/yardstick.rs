//! `terraform-provider-yardstick`: a test-only provider built on this project's plugin framework
//! (`terraform_provider_karpenter::terraform::{framework, plugin}`) for the bench's figure 11,
//! which separates what the provider's own code costs a plan from what its schema costs
//! Terraform core. It serves two resource types whose create, read, update and delete do
//! nothing but return the planned state (unknowns as null) and whose plan is the framework's
//! generic one:
//!
//! - `yardstick_schema_only`: the schema of `karpenter_node_pool` (`resources::kube::v1::NODE_POOL`,
//!   its validators and defaults included), or one of the reshaped copies of it that
//!   `YARDSTICK_SHAPE` names (the schema-shape experiments, measurement only; see [`SHAPES`]);
//! - `yardstick_tiny`: one required string attribute, `name`.
//!
//! Besides serving (what Terraform starts it for), it answers `--hcl SHAPE N` with N resources of
//! the bench's node pool written for that shape (the configuration must follow the shape: blocks
//! where the shape has blocks, flattened names where it flattens), and `--stats SHAPE` with the
//! shape's size (attributes, nesting, optional+computed, defaults, description bytes).

use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::LazyLock;

use acceptance_tests::standin_provider::Unconfigured;
use async_trait::async_trait;
use serde_json::{Value as Json, json};
use terraform_provider_karpenter::resources::kube::v1::NODE_POOL;
use terraform_provider_karpenter::terraform::framework::schema::{
    AttrType, Attribute, Block, Mode, Nesting, Schema,
};
use terraform_provider_karpenter::terraform::framework::{ApplyOutcome, Diagnostics, ReadOutcome, Resource};
use terraform_provider_karpenter::terraform::plugin::server::ProviderServer;
use terraform_provider_karpenter::terraform::plugin::{PluginInfo, run_with};
use terraform_provider_karpenter::terraform::tfvalue::Value;

/// The schema shapes `YARDSTICK_SHAPE` (and `--hcl`, `--stats`) select, with what each is.
pub const SHAPES: &[(&str, &str)] = &[
    ("schema_only", "`karpenter_node_pool`'s schema as it is"),
    ("no_docs", "the same without descriptions (schema bytes only)"),
    ("no_status", "the same without the computed `status` object"),
    (
        "no_computed",
        "no computed attribute at all: optional+computed attributes optional, their defaults dropped, `status` gone",
    ),
    (
        "flat",
        "every single nested object flattened into top-level attributes (`template_spec_expire_after`); lists of objects stay nested",
    ),
    (
        "blocks",
        "`no_computed` with every nested attribute written as a block (`template { spec { requirements { … } } }`)",
    ),
];

static EMPTY: LazyLock<Schema> =
    LazyLock::new(|| Schema::new("Yardstick provider for the bench (test only).", vec![]));

static TINY: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "One attribute: the floor of a provider-backed resource.",
        vec![Attribute::string("name").required()],
    )
});

static SHAPED: LazyLock<Schema> = LazyLock::new(|| {
    let shape = std::env::var("YARDSTICK_SHAPE").unwrap_or_else(|_| "schema_only".to_string());
    shaped(&shape).unwrap_or_else(|| NODE_POOL.clone())
});

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The node pool's schema reshaped as `shape` says ([`SHAPES`]); `None` for an unknown shape.
fn shaped(shape: &str) -> Option<Schema> {
    let base = NODE_POOL.clone();
    let mut s = base.clone();
    match shape {
        "schema_only" => {}
        "no_docs" => {
            s.description.clear();
            strip_docs(&mut s.attributes);
            for b in &mut s.blocks {
                b.description.clear();
                strip_docs(&mut b.attributes);
            }
        }
        "no_status" => s.attributes.retain(|a| a.name != "status"),
        "no_computed" => s.attributes = no_computed(&base.attributes),
        "flat" => s.attributes = flatten(&base.attributes, "", true),
        "blocks" => {
            let (attributes, blocks) = as_blocks(no_computed(&base.attributes));
            s.attributes = attributes;
            s.blocks.extend(blocks);
        }
        _ => return None,
    }
    Some(s)
}

fn strip_docs(attributes: &mut [Attribute]) {
    for a in attributes {
        a.description.clear();
        if let AttrType::Nested { attributes, .. } = &mut a.ty {
            strip_docs(attributes);
        }
    }
}

/// Every computed attribute gone (computed-only ones removed, optional+computed ones optional,
/// without the defaults that made them computed).
fn no_computed(attributes: &[Attribute]) -> Vec<Attribute> {
    attributes
        .iter()
        .filter(|a| a.mode != Mode::Computed)
        .map(|a| {
            let mut a = a.clone();
            if a.mode == Mode::OptionalComputed {
                a.mode = Mode::Optional;
            }
            a.default = None;
            a.stable = false;
            if let AttrType::Nested { attributes, .. } = &mut a.ty {
                *attributes = no_computed(attributes);
            }
            a
        })
        .collect()
}

/// Whether `a` is an object the flat and block shapes take apart (set by the user, one of it).
fn single_settable(a: &Attribute) -> bool {
    a.mode != Mode::Computed
        && matches!(
            a.ty,
            AttrType::Nested {
                nesting: Nesting::Single,
                ..
            }
        )
}

/// Single nested objects hoisted into their parent with `prefix` (`template_spec_…`); a child
/// stays required only when every object above it is.
fn flatten(attributes: &[Attribute], prefix: &str, required_above: bool) -> Vec<Attribute> {
    let mut out = Vec::new();
    for a in attributes {
        let name = format!("{prefix}{}", a.name);
        match &a.ty {
            AttrType::Nested {
                attributes: inner, ..
            } if single_settable(a) => {
                let required = required_above && a.mode == Mode::Required;
                out.extend(flatten(inner, &format!("{name}_"), required));
            }
            _ => {
                let mut a = a.clone();
                a.name = leak(name);
                if a.mode == Mode::Required && !required_above {
                    a.mode = Mode::Optional;
                }
                out.push(a);
            }
        }
    }
    out
}

/// Settable nested attributes as blocks (computed ones stay attributes: a block cannot be).
fn as_blocks(attributes: Vec<Attribute>) -> (Vec<Attribute>, Vec<Block>) {
    let mut plain = Vec::new();
    let mut blocks = Vec::new();
    for a in attributes {
        match a.ty {
            AttrType::Nested { nesting, attributes }
                if a.mode != Mode::Computed && nesting != Nesting::Map =>
            {
                let (inner, inner_blocks) = as_blocks(attributes);
                blocks.push(Block {
                    name: a.name,
                    nesting,
                    description: a.description,
                    attributes: inner,
                    blocks: inner_blocks,
                    max_items: if nesting == Nesting::Single { 1 } else { 0 },
                });
            }
            ty => plain.push(Attribute { ty, ..a }),
        }
    }
    (plain, blocks)
}

/// One node pool of the bench (the shape of figure 1's, naming its class by name).
fn pool(i: usize) -> Json {
    json!({
        "name": format!("pool-{i}"),
        "template": {
            "metadata": {"labels": {"workload": "general"}},
            "spec": {
                "node_class_ref": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
                    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]}
                ],
                "expire_after": "720h"
            }
        },
        "limits": {"cpu": "1000"},
        "disruption": {
            "consolidation_policy": "WhenEmptyOrUnderutilized",
            "consolidate_after": "1m",
            "budgets": [
                {"nodes": "10%"},
                {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}
            ]
        }
    })
}

/// `value` flattened as [`flatten`] flattens the schema.
fn flatten_value(
    attributes: &[Attribute],
    value: &Json,
    prefix: &str,
    out: &mut serde_json::Map<String, Json>,
) {
    for a in attributes {
        let Some(v) = value.get(a.name) else { continue };
        let name = format!("{prefix}{}", a.name);
        match &a.ty {
            AttrType::Nested {
                attributes: inner, ..
            } if single_settable(a) => {
                flatten_value(inner, v, &format!("{name}_"), out);
            }
            _ => {
                out.insert(name, v.clone());
            }
        }
    }
}

/// An HCL literal: strings quoted (with `${` and `%{` escaped), numbers and bools as they are,
/// lists in brackets, objects and maps as `{ "key" = value }`.
fn literal(v: &Json) -> String {
    match v {
        Json::String(s) => {
            let escaped = s
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace("${", "$${")
                .replace("%{", "%%{");
            format!("\"{escaped}\"")
        }
        Json::Array(items) => format!("[{}]", items.iter().map(literal).collect::<Vec<_>>().join(", ")),
        Json::Object(m) => format!(
            "{{ {} }}",
            m.iter()
                .map(|(k, v)| format!("{} = {}", literal(&Json::String(k.clone())), literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The body of one resource: `value` written along `attributes` (nested attributes as object
/// and list expressions) and `blocks` (as blocks), indented by `pad`.
fn body(attributes: &[Attribute], blocks: &[Block], value: &Json, pad: &str, out: &mut String) {
    for a in attributes {
        let Some(v) = value.get(a.name) else { continue };
        let _ = writeln!(out, "{pad}{} = {}", a.name, expression(a, v, pad));
    }
    for b in blocks {
        let Some(v) = value.get(b.name) else { continue };
        let items: Vec<&Json> = match v {
            Json::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        for item in items {
            let _ = writeln!(out, "{pad}{} {{", b.name);
            body(&b.attributes, &b.blocks, item, &format!("{pad}  "), out);
            let _ = writeln!(out, "{pad}}}");
        }
    }
}

fn expression(a: &Attribute, v: &Json, pad: &str) -> String {
    let AttrType::Nested { nesting, attributes } = &a.ty else {
        return literal(v);
    };
    let object = |item: &Json| {
        let mut inner = String::new();
        body(attributes, &[], item, &format!("{pad}    "), &mut inner);
        format!("{{\n{inner}{pad}  }}")
    };
    match (nesting, v) {
        (Nesting::Single, item) => object(item),
        (_, Json::Array(items)) => format!("[{}]", items.iter().map(object).collect::<Vec<_>>().join(", ")),
        (_, other) => literal(other),
    }
}

/// `n` resources of `shape` (`tiny` for `yardstick_tiny`), as HCL.
fn hcl(shape: &str, n: usize) -> Option<String> {
    let mut out = String::new();
    for i in 0..n {
        if shape == "tiny" {
            let _ = writeln!(
                out,
                "resource \"yardstick_tiny\" \"pool_{i}\" {{\n  name = \"pool-{i}\"\n}}\n"
            );
            continue;
        }
        let schema = shaped(shape)?;
        let mut value = pool(i);
        if shape == "flat" {
            let mut flat = serde_json::Map::new();
            flatten_value(&NODE_POOL.attributes, &value, "", &mut flat);
            value = Json::Object(flat);
        }
        let _ = writeln!(out, "resource \"yardstick_schema_only\" \"pool_{i}\" {{");
        body(&schema.attributes, &schema.blocks, &value, "  ", &mut out);
        let _ = writeln!(out, "}}\n");
    }
    Some(out)
}

/// Size of a shape: (attributes, nested attributes and blocks, deepest nesting, optional+computed,
/// computed only, with a default, description bytes).
fn stats(attributes: &[Attribute], blocks: &[Block], depth: usize, acc: &mut [usize; 7]) {
    acc[2] = acc[2].max(depth);
    for a in attributes {
        acc[0] += 1;
        acc[6] += a.description.len();
        match a.mode {
            Mode::OptionalComputed => acc[3] += 1,
            Mode::Computed => acc[4] += 1,
            _ => {}
        }
        if a.default.is_some() {
            acc[5] += 1;
        }
        if let AttrType::Nested { attributes, .. } = &a.ty {
            acc[1] += 1;
            stats(attributes, &[], depth + 1, acc);
        }
    }
    for b in blocks {
        acc[1] += 1;
        acc[6] += b.description.len();
        stats(&b.attributes, &b.blocks, depth + 1, acc);
    }
}

struct Yardstick {
    name: &'static str,
    schema: &'static LazyLock<Schema>,
}

/// The planned value with its unknowns as null: what an apply that does nothing stores.
fn known(v: &Value) -> Value {
    match v {
        Value::Unknown(_) => Value::Null,
        Value::List(items) => Value::List(items.iter().map(known).collect()),
        Value::Set(items) => Value::Set(items.iter().map(known).collect()),
        Value::Tuple(items) => Value::Tuple(items.iter().map(known).collect()),
        Value::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), known(v))).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), known(v))).collect()),
        other => other.clone(),
    }
}

#[async_trait]
impl Resource<()> for Yardstick {
    fn type_name(&self) -> &'static str {
        self.name
    }
    fn schema(&self) -> &Schema {
        self.schema
    }
    async fn create(&self, _: &(), planned: &Value) -> ApplyOutcome {
        ApplyOutcome::ok(known(planned))
    }
    async fn read(&self, _: &(), current: &Value) -> Result<ReadOutcome, Diagnostics> {
        Ok(ReadOutcome::Found(current.clone()))
    }
    async fn update(&self, _: &(), _: &Value, planned: &Value) -> ApplyOutcome {
        ApplyOutcome::ok(known(planned))
    }
    async fn delete(&self, _: &(), _: &Value) -> Diagnostics {
        Diagnostics::new()
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["--hcl", shape, n] => {
            return match n.parse::<usize>().ok().and_then(|n| hcl(shape, n)) {
                Some(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                None => {
                    eprintln!(
                        "yardstick --hcl SHAPE N: SHAPE is tiny or one of {:?}",
                        shape_names()
                    );
                    ExitCode::from(2)
                }
            };
        }
        ["--stats", shape] => {
            let Some(s) = shaped(shape) else {
                eprintln!("yardstick --stats SHAPE: one of {:?}", shape_names());
                return ExitCode::from(2);
            };
            let mut acc = [0usize; 7];
            stats(&s.attributes, &s.blocks, 0, &mut acc);
            println!(
                "{{\"attributes\": {}, \"nested\": {}, \"depth\": {}, \"optional_computed\": {}, \"computed\": {}, \"defaults\": {}, \"description_bytes\": {}}}",
                acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6]
            );
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    run_with(
        PluginInfo {
            address: "registry.terraform.io/karpenter/yardstick",
            log_module: "yardstick",
            program: "terraform-provider-yardstick",
        },
        || {
            ProviderServer::new(Unconfigured::new(
                &EMPTY,
                vec![
                    Box::new(Yardstick {
                        name: "yardstick_schema_only",
                        schema: &SHAPED,
                    }),
                    Box::new(Yardstick {
                        name: "yardstick_tiny",
                        schema: &TINY,
                    }),
                ],
            ))
        },
    )
}

fn shape_names() -> Vec<&'static str> {
    SHAPES.iter().map(|(n, _)| *n).collect()
}
