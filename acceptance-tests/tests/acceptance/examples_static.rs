//! Checks the examples that cannot be `terraform init`ed here (they need the AWS, Helm and
//! community-module downloads, e.g. `examples/complete-eks/`) without Terraform: every file is
//! `terraform fmt` clean, and every `resource "karpenter_*"` / `data "karpenter_*"` block of
//! every example is checked against the provider's own schema — attribute names exist and are
//! settable, required attributes are present, and literal values pass the schema's validators
//! and the type's cross-attribute rules. Expressions (references, function calls, templates)
//! are treated as unknown, just as Terraform's validation sees them before apply.
//!
//! The same goes for what Terraform 1.11 (the CLI here) cannot validate: the `list` blocks of
//! the query files (`examples/list-resources/*/list-resource.tfquery.hcl`, Terraform 1.14+)
//! against each type's list schema, and the `import { identity = { … } }` blocks (Terraform
//! 1.12+, only in `import-by-identity.tf` files, which `examples_validate.rs` skips) against
//! each type's identity schema.

use std::path::{Path, PathBuf};
use std::process::Command;

use acceptance_tests::{terraform_binary, workspace_root};
use hcl::{Body, Expression, ObjectKey};
use terraform_provider_karpenter::provider::KarpenterProvider;
use terraform_provider_karpenter::provider::docs::{IMPORT_BY_IDENTITY_EXAMPLE, LIST_RESOURCE_EXAMPLE};
use terraform_provider_karpenter::terraform::framework::Provider;
use terraform_provider_karpenter::terraform::framework::diagnostics::Diagnostics;
use terraform_provider_karpenter::terraform::framework::schema::validate_attributes;
use terraform_provider_karpenter::terraform::framework::schema::{
    AttrType, Attribute, Block, Mode, Nesting, Schema,
};
use terraform_provider_karpenter::terraform::tfvalue::{AttributePath, Number, Type, Value};

/// Meta-arguments Terraform handles itself, in any resource or data block.
const META_ARGUMENTS: &[&str] = &["count", "for_each", "depends_on", "provider"];
const META_BLOCKS: &[&str] = &["lifecycle", "connection", "provisioner"];

fn tf_files(dir: &Path, found: &mut Vec<PathBuf>) {
    files_ending(dir, ".tf", found);
}

/// Every file under `dir` whose name ends with `suffix`, in path order.
fn files_ending(dir: &Path, suffix: &str, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_ending(&path, suffix, found);
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(suffix))
        {
            found.push(path);
        }
    }
}

fn object_key(key: &ObjectKey) -> Option<String> {
    match key {
        ObjectKey::Identifier(id) => Some(id.as_str().to_string()),
        ObjectKey::Expression(Expression::String(s)) => Some(s.clone()),
        _ => None,
    }
}

fn number(n: &hcl::Number) -> Value {
    match n.as_i64() {
        Some(i) => Value::Number(Number::from_i64(i)),
        None => n
            .as_f64()
            .and_then(Number::from_f64)
            .map_or_else(Value::unknown, Value::Number),
    }
}

/// A plain-typed literal as the value Terraform would convert it to; unknown for expressions.
fn plain_value(expr: &Expression, ty: &Type) -> Value {
    match (expr, ty) {
        (Expression::Null, _) => Value::Null,
        (Expression::Parenthesis(inner), _) => plain_value(inner, ty),
        (Expression::String(s), Type::String) => Value::String(s.clone()),
        (Expression::Number(n), Type::String) => Value::String(n.to_string()),
        (Expression::Bool(b), Type::String) => Value::String(b.to_string()),
        (Expression::Number(n), Type::Number) => number(n),
        (Expression::Bool(b), Type::Bool) => Value::Bool(*b),
        (Expression::Array(items), Type::List(element)) => {
            Value::List(items.iter().map(|i| plain_value(i, element)).collect())
        }
        (Expression::Array(items), Type::Set(element)) => {
            Value::Set(items.iter().map(|i| plain_value(i, element)).collect())
        }
        (Expression::Object(entries), Type::Map(element)) => {
            let mut map = std::collections::BTreeMap::new();
            for (key, value) in entries {
                let Some(key) = object_key(key) else {
                    return Value::unknown();
                };
                map.insert(key, plain_value(value, element));
            }
            Value::Map(map)
        }
        _ => Value::unknown(),
    }
}

/// Reads HCL into values shaped by the schema, recording what the schema does not allow.
struct Reader<'a> {
    place: &'a str,
    findings: Vec<String>,
}

impl Reader<'_> {
    fn finding(&mut self, path: &str, what: String) {
        self.findings.push(format!("{} {path}: {what}", self.place));
    }

    /// A nested object from `name = value` pairs (an HCL object literal or a block body).
    fn object<'e>(
        &mut self,
        attributes: &[Attribute],
        pairs: impl Iterator<Item = (Option<String>, &'e Expression)>,
        path: &str,
    ) -> Value {
        let mut fields = std::collections::BTreeMap::new();
        for (name, expr) in pairs {
            let Some(name) = name else {
                return Value::unknown();
            };
            let Some(attribute) = attributes.iter().find(|a| a.name == name) else {
                let known: Vec<_> = attributes.iter().map(|a| a.name).collect();
                self.finding(
                    path,
                    format!("unknown attribute `{name}` (known: {})", known.join(", ")),
                );
                continue;
            };
            if attribute.mode == Mode::Computed {
                self.finding(path, format!("`{name}` is computed and cannot be set"));
            }
            let value = self.value(attribute, expr, &format!("{path}.{name}"));
            fields.insert(name, value);
        }
        for attribute in attributes {
            if !fields.contains_key(attribute.name) {
                if attribute.mode == Mode::Required {
                    self.finding(
                        path,
                        format!("required attribute `{}` is missing", attribute.name),
                    );
                }
                fields.insert(attribute.name.to_string(), Value::Null);
            }
        }
        Value::Object(fields)
    }

    fn object_literal(&mut self, attributes: &[Attribute], expr: &Expression, path: &str) -> Value {
        match expr {
            Expression::Object(entries) => {
                self.object(attributes, entries.iter().map(|(k, v)| (object_key(k), v)), path)
            }
            Expression::Null => Value::Null,
            _ => Value::unknown(),
        }
    }

    fn value(&mut self, attribute: &Attribute, expr: &Expression, path: &str) -> Value {
        match &attribute.ty {
            AttrType::Plain(ty) => plain_value(expr, ty),
            AttrType::Nested { nesting, attributes } => match (nesting, expr) {
                (Nesting::Single, _) => self.object_literal(attributes, expr, path),
                (Nesting::List | Nesting::Set, Expression::Array(items)) => {
                    let values = items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| self.object_literal(attributes, item, &format!("{path}[{i}]")))
                        .collect();
                    if *nesting == Nesting::List {
                        Value::List(values)
                    } else {
                        Value::Set(values)
                    }
                }
                (Nesting::Map, Expression::Object(entries)) => {
                    let mut map = std::collections::BTreeMap::new();
                    for (key, item) in entries {
                        let Some(key) = object_key(key) else {
                            return Value::unknown();
                        };
                        let value = self.object_literal(attributes, item, &format!("{path}[{key:?}]"));
                        map.insert(key, value);
                    }
                    Value::Map(map)
                }
                (_, Expression::Null) => Value::Null,
                _ => Value::unknown(),
            },
        }
    }

    /// The configuration value of a resource or data block body.
    fn body(&mut self, attributes: &[Attribute], blocks: &[Block], body: &Body, path: &str) -> Value {
        let pairs: Vec<_> = body
            .attributes()
            .filter(|a| !META_ARGUMENTS.contains(&a.key.as_str()))
            .map(|a| (Some(a.key.as_str().to_string()), &a.expr))
            .collect();
        let Value::Object(mut fields) = self.object(attributes, pairs.into_iter(), path) else {
            return Value::unknown();
        };
        for block in body.blocks() {
            let name = block.identifier.as_str();
            if META_BLOCKS.contains(&name) {
                continue;
            }
            if name == "dynamic" {
                let target = block
                    .labels
                    .first()
                    .map(|l| l.as_str().to_string())
                    .unwrap_or_default();
                if blocks.iter().any(|b| b.name == target) {
                    fields.insert(target, Value::unknown());
                } else {
                    self.finding(path, format!("dynamic block for unknown block `{target}`"));
                }
                continue;
            }
            let Some(schema_block) = blocks.iter().find(|b| b.name == name) else {
                self.finding(path, format!("unknown block `{name}`"));
                continue;
            };
            let value = self.body(
                &schema_block.attributes,
                &schema_block.blocks,
                &block.body,
                &format!("{path}.{name}"),
            );
            if schema_block.nesting == Nesting::Single {
                fields.insert(name.to_string(), value);
            } else {
                let list = fields
                    .entry(name.to_string())
                    .or_insert_with(|| Value::List(Vec::new()));
                if let Value::List(items) = list {
                    items.push(value);
                }
            }
        }
        for schema_block in blocks {
            fields.entry(schema_block.name.to_string()).or_insert(Value::Null);
        }
        Value::Object(fields)
    }
}

/// A type's cross-attribute validation.
type CrossCheck<'a> = Box<dyn Fn(&Value, &mut Diagnostics) + 'a>;

/// What a `karpenter_*` block of `kind` ("resource" or "data") gets wrong, as readable lines.
fn check_block(
    provider: &KarpenterProvider,
    place: &str,
    kind: &str,
    type_name: &str,
    body: &Body,
) -> Vec<String> {
    let mut reader = Reader {
        place,
        findings: Vec::new(),
    };
    let mut diags = Diagnostics::new();
    // The type's schema, and its cross-attribute rules (run as Terraform's validation would).
    let found: Option<(&Schema, CrossCheck<'_>)> = if kind == "resource" {
        provider
            .resources()
            .iter()
            .find(|r| r.type_name() == type_name)
            .map(|r| {
                (
                    r.schema(),
                    Box::new(move |v: &Value, d: &mut Diagnostics| r.validate(v, d)) as CrossCheck<'_>,
                )
            })
    } else {
        provider
            .data_sources()
            .iter()
            .find(|r| r.type_name() == type_name)
            .map(|r| {
                (
                    r.schema(),
                    Box::new(move |v: &Value, d: &mut Diagnostics| r.validate(v, d)) as CrossCheck<'_>,
                )
            })
    };
    let Some((schema, cross_check)) = found else {
        return vec![format!("{place}: the provider has no {kind} type {type_name}")];
    };
    let (attributes, blocks) = (&schema.attributes, &schema.blocks);
    let config = reader.body(attributes, blocks, body, "");
    validate_attributes(attributes, blocks, &config, &AttributePath::root(), &mut diags);
    cross_check(&config, &mut diags);
    let mut findings = reader.findings;
    findings.extend(diags.iter().map(|d| format!("{place}: {d}")));
    findings
}

/// Checks every `karpenter_*` resource and data block in `source`; `place` names the file.
pub(crate) fn check_source(provider: &KarpenterProvider, place: &str, source: &str) -> (usize, Vec<String>) {
    let body = match hcl::parse(source) {
        Ok(body) => body,
        Err(e) => return (0, vec![format!("{place}: not valid HCL: {e}")]),
    };
    let mut checked = 0;
    let mut findings = Vec::new();
    for block in body.blocks() {
        let kind = block.identifier.as_str();
        if kind != "resource" && kind != "data" {
            continue;
        }
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        let [type_name, name] = labels[..] else {
            continue;
        };
        if !type_name.starts_with("karpenter_") {
            continue;
        }
        checked += 1;
        let place = format!("{place} {kind}.{type_name}.{name}");
        findings.extend(check_block(provider, &place, kind, type_name, &block.body));
    }
    (checked, findings)
}

#[test]
fn examples_are_terraform_fmt_clean() {
    let run = Command::new(terraform_binary())
        .current_dir(workspace_root())
        .args(["fmt", "-check", "-recursive", "-diff", "-no-color", "examples/"])
        .env("CHECKPOINT_DISABLE", "1")
        .output()
        .expect("run terraform fmt");
    assert!(
        run.status.success(),
        "terraform fmt -check found unformatted examples:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn every_karpenter_block_in_the_examples_fits_the_schema() {
    let provider = KarpenterProvider::new();
    let root = workspace_root();
    let mut files = Vec::new();
    tf_files(&root.join("examples"), &mut files);
    let mut checked = 0;
    let mut findings = Vec::new();
    let mut complete_eks = 0;
    let mut auto_mode = 0;
    for file in &files {
        let place = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {place}: {e}"));
        let (n, f) = check_source(&provider, &place, &source);
        if place.starts_with("examples/complete-eks") {
            complete_eks += n;
        }
        if place.starts_with("examples/eks-auto-mode") {
            auto_mode += n;
        }
        checked += n;
        findings.extend(f);
    }
    assert!(
        findings.is_empty(),
        "examples do not fit the schema:\n{}",
        findings.join("\n")
    );
    // node role, queue, controller role, node class and the two pools
    assert!(
        complete_eks >= 6,
        "only {complete_eks} karpenter blocks in examples/complete-eks"
    );
    // node role, node class and the two pools
    assert!(
        auto_mode >= 4,
        "only {auto_mode} karpenter blocks in examples/eks-auto-mode"
    );
    assert!(checked > complete_eks + auto_mode, "{checked} blocks checked");
}

/// The checker itself: each kind of mistake in a block is reported, on its attribute.
#[test]
fn the_checker_reports_wrong_names_missing_required_and_bad_literals() {
    let provider = KarpenterProvider::new();
    let source = r#"
resource "karpenter_node_pool" "bad" {
  name   = "Not_A_Name"
  weight = 500
  colour = "blue"
  template = {
    spec = {
      requirements = [{ key = "karpenter.sh/capacity-type", operator = "Maybe", values = ["spot"] }]
    }
  }
  disruption = {
    consolidate_after = "1m"
    budgets           = [{ nodes = "1", schedule = "@daily" }]
  }
  status = {}
  timeouts {
    create = "soon"
  }
}

resource "karpenter_node_pool" "fine" {
  name     = var.name
  template = {
    spec = {
      node_class_ref = { name = karpenter_ec2_node_class.x.name }
      requirements   = var.requirements
    }
  }
  limits = { cpu = "${var.cpu}" }
}

data "karpenter_nothing" "x" {}
"#;
    let (checked, findings) = check_source(&provider, "test.tf", source);
    assert_eq!(checked, 3);
    let all = findings.join("\n");
    let expect = [
        "resource.karpenter_node_pool.bad : unknown attribute `colour`",
        "resource.karpenter_node_pool.bad .template.spec: required attribute `node_class_ref` is missing",
        "resource.karpenter_node_pool.bad : `status` is computed and cannot be set",
        "(at name)",
        "(at weight)",
        "(at template.spec.requirements[0].operator)",
        "(at disruption.budgets[0]",
        "(at timeouts.create)",
        "the provider has no data type karpenter_nothing",
    ];
    for e in expect {
        assert!(all.contains(e), "missing {e:?} in:\n{all}");
    }
    assert!(
        !all.contains("karpenter_node_pool.fine"),
        "expressions must count as unknown, not as errors:\n{all}"
    );
}

/// Terraform 1.11's `fmt` does not know query files (1.14 added them) and skips them; its
/// formatting is the same for any HCL body, so each is checked as a copy named `.tf`.
#[test]
fn query_files_are_terraform_fmt_clean() {
    let root = workspace_root();
    let mut files = Vec::new();
    files_ending(&root.join("examples"), ".tfquery.hcl", &mut files);
    assert!(files.len() >= 9, "query files: {files:?}");
    let dir = tempfile::tempdir().expect("temp dir");
    for (i, file) in files.iter().enumerate() {
        std::fs::copy(file, dir.path().join(format!("{i}.tf"))).expect("copy query file");
    }
    let run = Command::new(terraform_binary())
        .current_dir(dir.path())
        .args(["fmt", "-check", "-diff", "-no-color", "."])
        .env("CHECKPOINT_DISABLE", "1")
        .output()
        .expect("run terraform fmt");
    let names: Vec<String> = files
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{i}.tf = {}", f.strip_prefix(&root).unwrap_or(f).display()))
        .collect();
    assert!(
        run.status.success(),
        "terraform fmt -check found unformatted query files ({}):\n{}{}",
        names.join(", "),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Arguments of a `list` block that Terraform handles itself (Terraform 1.14).
const LIST_ARGUMENTS: &[&str] = &["provider", "count", "for_each", "include_resource", "limit"];

/// `karpenter_x.name` of an `import` block's `to`, as (type, name).
fn address(expr: &Expression) -> Option<(String, String)> {
    let Expression::Traversal(traversal) = expr else {
        return None;
    };
    let Expression::Variable(type_name) = &traversal.expr else {
        return None;
    };
    match traversal.operators.as_slice() {
        [hcl::expr::TraversalOperator::GetAttr(name)] => Some((type_name.to_string(), name.to_string())),
        _ => None,
    }
}

/// What the `list` blocks of one query file get wrong; counts the blocks checked against a
/// list schema, and names the types that have none yet.
fn check_query_file(
    provider: &KarpenterProvider,
    place: &str,
    source: &str,
    pending: &mut Vec<String>,
) -> (usize, Vec<String>) {
    let body = match hcl::parse(source) {
        Ok(body) => body,
        Err(e) => return (0, vec![format!("{place}: not valid HCL: {e}")]),
    };
    let mut checked = 0;
    let mut findings = Vec::new();
    for block in body.blocks() {
        if block.identifier.as_str() != "list" {
            findings.push(format!(
                "{place}: unexpected block `{}`",
                block.identifier.as_str()
            ));
            continue;
        }
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        let [type_name, name] = labels[..] else {
            findings.push(format!(
                "{place}: a list block takes a type and a name: {labels:?}"
            ));
            continue;
        };
        let place = format!("{place} list.{type_name}.{name}");
        let Some(resource) = provider.resources().iter().find(|r| r.type_name() == type_name) else {
            findings.push(format!("{place}: the provider has no resource type {type_name}"));
            continue;
        };
        for attribute in block.body.attributes() {
            if !LIST_ARGUMENTS.contains(&attribute.key.as_str()) {
                findings.push(format!(
                    "{place}: `{}` is not a list block argument",
                    attribute.key.as_str()
                ));
            }
        }
        if !block.body.attributes().any(|a| a.key.as_str() == "provider") {
            findings.push(format!("{place}: list blocks must name their provider"));
        }
        let configs: Vec<&hcl::Block> = block.body.blocks().collect();
        if configs.iter().any(|b| b.identifier.as_str() != "config") || configs.len() > 1 {
            findings.push(format!(
                "{place}: a list block holds one `config` block and nothing else"
            ));
        }
        let Some(schema) = resource.list_schema() else {
            pending.push(type_name.to_string());
            continue;
        };
        checked += 1;
        let mut reader = Reader {
            place: &place,
            findings: Vec::new(),
        };
        let empty = Body::default();
        let config_body = configs.first().map_or(&empty, |b| &b.body);
        let config = reader.body(&schema.attributes, &schema.blocks, config_body, ".config");
        let mut diags = Diagnostics::new();
        validate_attributes(
            &schema.attributes,
            &schema.blocks,
            &config,
            &AttributePath::root(),
            &mut diags,
        );
        resource.validate_list(&config, &mut diags);
        findings.extend(reader.findings);
        findings.extend(diags.iter().map(|d| format!("{place}: {d}")));
    }
    (checked, findings)
}

/// What the `import { identity = … }` blocks of one `.tf` file get wrong; `declared` are the
/// resources of its directory (an import must target one of them).
fn check_identity_imports(
    provider: &KarpenterProvider,
    place: &str,
    body: &Body,
    declared: &[(String, String)],
    pending: &mut Vec<String>,
) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut findings = Vec::new();
    for block in body.blocks().filter(|b| b.identifier.as_str() == "import") {
        let Some(identity) = block.body.attributes().find(|a| a.key.as_str() == "identity") else {
            continue;
        };
        if !place.ends_with(&format!("/{IMPORT_BY_IDENTITY_EXAMPLE}")) {
            findings.push(format!(
                "{place}: `import {{ identity }}` needs Terraform 1.12; keep it in {IMPORT_BY_IDENTITY_EXAMPLE}, \
                 which examples_validate.rs (Terraform 1.11) skips"
            ));
        }
        let to = block.body.attributes().find(|a| a.key.as_str() == "to");
        let Some((type_name, name)) = to.and_then(|a| address(&a.expr)) else {
            findings.push(format!("{place}: import block without a `to = <type>.<name>`"));
            continue;
        };
        let place = format!("{place} import to {type_name}.{name}");
        if !declared.contains(&(type_name.clone(), name.clone())) {
            findings.push(format!(
                "{place}: no resource \"{type_name}\" \"{name}\" in this directory"
            ));
        }
        let Some(resource) = provider.resources().iter().find(|r| r.type_name() == type_name) else {
            findings.push(format!("{place}: the provider has no resource type {type_name}"));
            continue;
        };
        let Some(schema) = resource.identity_schema() else {
            pending.push(type_name);
            continue;
        };
        checked += 1;
        let Expression::Object(entries) = &identity.expr else {
            findings.push(format!("{place}: `identity` is not an object literal"));
            continue;
        };
        let keys: Vec<Option<String>> = entries.keys().map(object_key).collect();
        for key in &keys {
            match key {
                Some(key) if schema.attributes.iter().any(|a| a.name == key) => {}
                Some(key) => findings.push(format!("{place}: `{key}` is not an identity attribute")),
                None => findings.push(format!("{place}: identity keys must be names")),
            }
        }
        for attribute in schema.attributes.iter().filter(|a| a.required_for_import) {
            if !keys.iter().any(|k| k.as_deref() == Some(attribute.name)) {
                findings.push(format!(
                    "{place}: identity attribute `{}` is required",
                    attribute.name
                ));
            }
        }
        for (key, value) in entries {
            if !matches!(value, Expression::String(s) if !s.is_empty()) {
                findings.push(format!(
                    "{place}: identity `{key:?}` should be a non-empty string literal"
                ));
            }
        }
    }
    (checked, findings)
}

/// The query files' `list` blocks fit the list schemas, and the identity imports the identity
/// schemas. A type whose list or identity schema has not landed yet is named, not failed:
/// `provider::docs`'s tests require the examples of every type that has them.
#[test]
fn list_and_identity_examples_fit_the_schemas() {
    let provider = KarpenterProvider::new();
    let root = workspace_root();
    let mut pending = Vec::new();
    let mut findings = Vec::new();

    let mut query_files = Vec::new();
    files_ending(&root.join("examples"), ".tfquery.hcl", &mut query_files);
    let mut lists = 0;
    for file in &query_files {
        let place = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        if !place.ends_with(&format!("/{LIST_RESOURCE_EXAMPLE}")) {
            findings.push(format!(
                "{place}: query examples are named {LIST_RESOURCE_EXAMPLE}"
            ));
        }
        let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {place}: {e}"));
        let (n, f) = check_query_file(&provider, &place, &source, &mut pending);
        lists += n;
        findings.extend(f);
    }

    let mut files = Vec::new();
    tf_files(&root.join("examples"), &mut files);
    let mut imports = 0;
    for file in &files {
        let place = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {place}: {e}"));
        let Ok(body) = hcl::parse(&source) else {
            continue; // reported by every_karpenter_block_in_the_examples_fits_the_schema
        };
        // the resources declared next to it (its directory is one configuration)
        let mut declared = Vec::new();
        let mut siblings = Vec::new();
        if let Some(dir) = file.parent() {
            for sibling in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                siblings.push(sibling.path());
            }
        }
        for sibling in siblings
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "tf"))
        {
            let text = std::fs::read_to_string(sibling).unwrap_or_default();
            for block in hcl::parse(&text).map(|b| b.into_blocks()).into_iter().flatten() {
                if let (Some(t), Some(n), "resource") = (
                    block.labels.first(),
                    block.labels.get(1),
                    block.identifier.as_str(),
                ) {
                    declared.push((t.as_str().to_string(), n.as_str().to_string()));
                }
            }
        }
        let (n, f) = check_identity_imports(&provider, &place, &body, &declared, &mut pending);
        imports += n;
        findings.extend(f);
    }

    assert!(
        findings.is_empty(),
        "list and identity examples do not fit the schemas:\n{}",
        findings.join("\n")
    );
    pending.sort();
    pending.dedup();
    if !pending.is_empty() {
        eprintln!("not checked (no list or identity schema yet): {pending:?}");
    }
    // the six Kubernetes kinds have both
    assert!(lists >= 6, "{lists} list blocks checked");
    assert!(imports >= 6, "{imports} identity imports checked");
}

/// The list and identity checkers themselves report each kind of mistake.
#[test]
fn the_list_and_identity_checkers_report_mistakes() {
    let provider = KarpenterProvider::new();
    let mut pending = Vec::new();
    let query = r#"
list "karpenter_node_pool" "bad" {
  include_resource = true
  colour           = "blue"
  config {
    name_prefix = ""
    namespace   = "x"
  }
}

list "karpenter_nothing" "x" {
  provider = karpenter
}

list "karpenter_capacity_buffer" "fine" {
  provider = karpenter
  config {
    namespace = var.namespace
  }
}
"#;
    let (checked, findings) = check_query_file(&provider, "q.tfquery.hcl", query, &mut pending);
    assert_eq!(checked, 2);
    let all = findings.join("\n");
    for expect in [
        "list.karpenter_node_pool.bad: list blocks must name their provider",
        "list.karpenter_node_pool.bad: `colour` is not a list block argument",
        "unknown attribute `namespace`",
        "(at name_prefix)",
        "the provider has no resource type karpenter_nothing",
    ] {
        assert!(all.contains(expect), "missing {expect:?} in:\n{all}");
    }
    assert!(!all.contains("fine"), "{all}");

    let imports = r#"
import {
  to = karpenter_node_pool.default
  identity = {
    nmae = "default"
  }
}

import {
  to = karpenter_capacity_buffer.gone
  identity = {
    name      = "x"
    namespace = var.ns
  }
}
"#;
    let body = hcl::parse(imports).expect("parse");
    let declared = vec![("karpenter_node_pool".to_string(), "default".to_string())];
    let (checked, findings) =
        check_identity_imports(&provider, "examples/x/main.tf", &body, &declared, &mut pending);
    assert_eq!(checked, 2);
    let all = findings.join("\n");
    for expect in [
        "keep it in import-by-identity.tf",
        "`nmae` is not an identity attribute",
        "identity attribute `name` is required",
        "no resource \"karpenter_capacity_buffer\" \"gone\" in this directory",
        "should be a non-empty string literal",
    ] {
        assert!(all.contains(expect), "missing {expect:?} in:\n{all}");
    }
}
