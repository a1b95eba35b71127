//! #37, "a misspelled key is an error, never a silent default": through the real terraform
//! binary.
//!
//! Terraform core drops the keys of a nested attribute's object that the schema does not
//! declare before the provider sees the configuration; the provider reads the configuration
//! files instead (`terraform::framework::config_scan`). Here:
//!
//! - the typo matrix, generated from the schemas: for every settable attribute inside a
//!   nested attribute (at any depth) of every resource, data source and the provider block, a
//!   misspelled key (`expire_afterr`) and its camelCase spelling (`expireAfter`), written as
//!   literals in one block per type — once in the root module, once in a child module —
//!   validated by one `terraform validate -json` each; every key must come back as an error
//!   naming the key, its full path, the attribute it meant and where it is written, shown by
//!   Terraform on the line of the key (one level inside a top-level attribute) or of the
//!   nested object holding it (deeper: Terraform 1.11–1.14 follow no further);
//! - the issue's own example: `terraform plan` fails on both keys and `apply` writes nothing;
//! - a module that takes whole pool definitions through variables, locals, `for_each`,
//!   `merge()` and `yamldecode(file(…))` applies as before, and a camelCase key in its YAML is
//!   an error naming the YAML file's line;
//! - `terraform -chdir=…` (the provider runs in the root module's directory), values the
//!   provider cannot read (a warning), and the opt-out.

use std::collections::BTreeMap;

use acceptance_tests::kube::Cluster;
use acceptance_tests::{PROVIDER_SOURCE, Workdir};
use serde_json::Value as Json;
use terraform_provider_karpenter::provider::KarpenterProvider;
use terraform_provider_karpenter::terraform::framework::schema::{AttrType, Attribute, camel_case};
use terraform_provider_karpenter::terraform::framework::{Mode, Nesting, Provider, Schema};
use terraform_provider_karpenter::terraform::tfvalue::Type;

/// One misspelled key written in the matrix, and what its error must say.
#[derive(Debug, Clone)]
struct Case {
    /// The file it is written in (relative to the module).
    file: String,
    key: String,
    /// The full path of the key (`template.spec.expireAfter`).
    path: String,
    /// The attribute the error must suggest.
    meant: String,
    /// Line and column of the key.
    line: usize,
    column: usize,
    /// The line Terraform shows: the key's own when it sits right inside a top-level
    /// attribute, else that of the value of the step after the top-level attribute.
    shown_line: usize,
}

/// Writes HCL line by line, counting lines.
struct Text {
    lines: Vec<String>,
}

impl Text {
    fn line(&mut self, s: String) -> usize {
        self.lines.push(s);
        self.lines.len()
    }
}

/// A type-correct placeholder (the provider's validators may reject it; only Terraform's
/// type conversion has to accept it, so that the provider is asked to validate the block).
fn placeholder(t: &Type) -> String {
    match t {
        Type::String | Type::Dynamic => "\"x\"".into(),
        Type::Number => "1".into(),
        Type::Bool => "true".into(),
        Type::List(e) | Type::Set(e) => format!("[{}]", placeholder(e)),
        Type::Map(e) => format!("{{ k = {} }}", placeholder(e)),
        Type::Object(fields) => format!(
            "{{ {} }}",
            fields
                .iter()
                .map(|(k, t)| format!("{k} = {}", placeholder(t)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Type::Tuple(items) => format!(
            "[{}]",
            items.iter().map(placeholder).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn misspelled(name: &str) -> String {
    let last = name.chars().last().unwrap_or('x');
    format!("{name}{last}")
}

/// Writes the object of a nested attribute's element: its required plain attributes, every
/// settable nested attribute (recursively), and for every settable attribute its misspelled
/// and camelCase keys. `path` is the element's path, `second` the line Terraform shows for
/// keys below the top-level attribute (`None` while writing the top-level object itself).
#[allow(clippy::too_many_arguments)]
fn object(
    text: &mut Text,
    cases: &mut Vec<Case>,
    file: &str,
    attributes: &[Attribute],
    path: &str,
    indent: usize,
    second: Option<usize>,
) {
    let pad = " ".repeat(indent);
    for a in attributes.iter().filter(|a| a.is_settable()) {
        let inner_path = format!("{path}.{}", a.name);
        match &a.ty {
            AttrType::Nested { nesting, attributes } => {
                let (open, close, element_path) = match nesting {
                    Nesting::Single => ("{".to_string(), "}", inner_path.clone()),
                    Nesting::List | Nesting::Set => ("[{".to_string(), "}]", format!("{inner_path}[0]")),
                    Nesting::Map => ("{ k = {".to_string(), "} }", format!("{inner_path}[\"k\"]")),
                };
                let line = text.line(format!("{pad}{} = {open}", a.name));
                object(
                    text,
                    cases,
                    file,
                    attributes,
                    &element_path,
                    indent + 2,
                    Some(second.unwrap_or(line)),
                );
                text.line(format!("{pad}{close}"));
            }
            AttrType::Plain(t) if a.mode == Mode::Required => {
                text.line(format!("{pad}{} = {}", a.name, placeholder(t)));
            }
            AttrType::Plain(_) => {}
        }
        let camel = camel_case(a.name);
        let spellings = std::iter::once(misspelled(a.name)).chain((camel != a.name).then_some(camel));
        for key in spellings {
            let line = text.line(format!("{pad}{key} = \"x\""));
            cases.push(Case {
                file: file.to_string(),
                path: format!("{path}.{key}"),
                key,
                meant: a.name.to_string(),
                line,
                column: indent + 1,
                shown_line: second.unwrap_or(line),
            });
        }
    }
}

/// The block of one type: its required top-level attributes and every settable nested
/// attribute, full of misspelled keys. `None` when the type has no settable nested attribute.
fn typo_block(keyword: &str, type_name: &str, schema: &Schema, file: &str) -> Option<(String, Vec<Case>)> {
    let mut text = Text { lines: Vec::new() };
    let mut cases = Vec::new();
    let header = match keyword {
        "provider" => format!("provider \"{type_name}\" {{"),
        _ => format!("{keyword} \"{type_name}\" \"typos\" {{"),
    };
    text.line(header);
    for a in schema.attributes.iter().filter(|a| a.is_settable()) {
        match &a.ty {
            AttrType::Nested { nesting, attributes } => {
                let (open, close, element) = match nesting {
                    Nesting::Single => ("{", "}", a.name.to_string()),
                    Nesting::List | Nesting::Set => ("[{", "}]", format!("{}[0]", a.name)),
                    Nesting::Map => ("{ k = {", "} }", format!("{}[\"k\"]", a.name)),
                };
                text.line(format!("  {} = {open}", a.name));
                // Keys right inside the top-level object are shown on their own line; for a
                // list or map the element's line is shown.
                let second = (*nesting != Nesting::Single).then_some(text.lines.len());
                object(&mut text, &mut cases, file, attributes, &element, 4, second);
                text.line(format!("  {close}"));
            }
            AttrType::Plain(t) if a.mode == Mode::Required => {
                text.line(format!("  {} = {}", a.name, placeholder(t)));
            }
            AttrType::Plain(_) => {}
        }
    }
    text.line("}".into());
    (!cases.is_empty()).then(|| (text.lines.join("\n") + "\n", cases))
}

/// Every type's typo block, by file name.
fn matrix() -> (BTreeMap<String, String>, Vec<Case>, Vec<String>) {
    let provider = KarpenterProvider::new();
    let mut blocks: Vec<(&str, String, Schema)> = Vec::new();
    for r in provider.resources() {
        blocks.push(("resource", r.type_name().to_string(), r.schema().clone()));
    }
    for d in provider.data_sources() {
        blocks.push(("data", d.type_name().to_string(), d.schema().clone()));
    }
    blocks.push(("provider", "karpenter".to_string(), provider.schema().clone()));
    // A list resource's `config { … }` (in `*.tfquery.hcl`) is scanned too, but none has an
    // object in it: should one get one, this stops the matrix until it has list cases.
    for r in provider.resources() {
        if let Some(list) = r.list_schema() {
            let objects: Vec<&str> = list
                .attributes
                .iter()
                .filter(|a| holds_objects(a))
                .map(|a| a.name)
                .collect();
            assert!(
                objects.is_empty() && list.blocks.is_empty(),
                "list {}: config attributes {objects:?} (or blocks) hold objects; add list blocks to the matrix",
                r.type_name()
            );
        }
    }
    let mut files = BTreeMap::new();
    let mut cases = Vec::new();
    let mut without = Vec::new();
    for (keyword, type_name, schema) in blocks {
        let file = format!("{keyword}_{type_name}.tf");
        match typo_block(keyword, &type_name, &schema, &file) {
            Some((text, mut c)) => {
                files.insert(file, text);
                cases.append(&mut c);
            }
            None => without.push(format!("{keyword} {type_name}")),
        }
    }
    (files, cases, without)
}

/// Whether Terraform's conversion could drop keys of this attribute's value.
fn holds_objects(a: &Attribute) -> bool {
    fn in_type(t: &Type) -> bool {
        match t {
            Type::Object(_) => true,
            Type::List(e) | Type::Set(e) | Type::Map(e) => in_type(e),
            Type::Tuple(items) => items.iter().any(in_type),
            Type::String | Type::Number | Type::Bool | Type::Dynamic => false,
        }
    }
    match &a.ty {
        AttrType::Nested { .. } => true,
        AttrType::Plain(t) => in_type(t),
    }
}

fn required_providers() -> String {
    format!(
        "terraform {{\n  required_providers {{\n    karpenter = {{ source = \"{PROVIDER_SOURCE}\" }}\n  }}\n}}\n"
    )
}

/// `terraform validate -json`'s error diagnostics.
fn validate_errors(work: &Workdir) -> Vec<Json> {
    let run = work.terraform(&["validate", "-json", "-no-color"]);
    let json: Json =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("validate -json: {e}\n{}", run.output()));
    json["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d["severity"] == "error")
        .collect()
}

/// Checks every case against the diagnostics; `dir` is where the files are, relative to the
/// root module.
fn check_cases(cases: &[Case], diagnostics: &[Json], dir: &str) {
    let mut missing = Vec::new();
    for case in cases {
        let file = format!("{dir}{}", case.file);
        // Several types share a path (`metadata.labels`): the case's own diagnostic is the one
        // written in its file.
        let found = diagnostics.iter().find(|d| {
            d["summary"] == format!("Unsupported attribute \"{}\"", case.key)
                && d["detail"].as_str().is_some_and(|t| {
                    t.starts_with(&format!("{}: ", case.path)) && t.contains(&format!("Written at {file}:"))
                })
        });
        let Some(d) = found else {
            missing.push(format!("{} (no error)", case.path));
            continue;
        };
        let detail = d["detail"].as_str().unwrap_or_default();
        let written = format!("Written at {file}:{}:{}.", case.line, case.column);
        let suggestion = format!("did you mean \"{}\"?", case.meant);
        if !detail.contains(&suggestion) || !detail.contains(&written) {
            missing.push(format!(
                "{}: {detail:?} lacks {suggestion:?} or {written:?}",
                case.path
            ));
            continue;
        }
        let range = &d["range"];
        if range["filename"] != file.as_str() || range["start"]["line"] != case.shown_line {
            missing.push(format!(
                "{}: shown at {}:{} instead of line {}",
                case.path, range["filename"], range["start"]["line"], case.shown_line
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "{} of {} cases failed:\n{}",
        missing.len(),
        cases.len(),
        missing.join("\n")
    );
}

#[test]
fn every_misspelled_or_camel_case_key_is_an_error_in_the_root_module() {
    let (files, cases, without) = matrix();
    // A floor that notices a generator that silently stops producing cases (it made 286 when
    // this was written: two per nested key, one when the camelCase spelling is the same).
    assert!(cases.len() >= 280, "the matrix is too small: {}", cases.len());
    // Types whose nested objects are all computed, or that have none: Terraform's own
    // "Unsupported argument" covers their keys.
    assert!(without.contains(&"provider karpenter".to_string()), "{without:?}");
    let work = Workdir::new("");
    for (name, text) in &files {
        work.write(name, text);
    }
    check_cases(&cases, &validate_errors(&work), "");
}

#[test]
fn every_misspelled_or_camel_case_key_is_an_error_in_a_child_module() {
    let (files, cases, _) = matrix();
    let work = Workdir::new("module \"typos\" {\n  source = \"./modules/typos\"\n}\n");
    std::fs::create_dir_all(work.path().join("modules/typos")).unwrap();
    work.write("modules/typos/versions.tf", &required_providers());
    for (name, text) in &files {
        // The provider block belongs to the root module.
        if !name.starts_with("provider_") {
            work.write(&format!("modules/typos/{name}"), text);
        }
    }
    // Modules only: `init` would also look the provider up in the registry, which the
    // development override makes unnecessary (and this machine cannot reach).
    work.terraform(&["get", "-no-color"]).ok();
    let cases: Vec<Case> = cases
        .into_iter()
        .filter(|c| !c.file.starts_with("provider_"))
        .collect();
    check_cases(&cases, &validate_errors(&work), "modules/typos/");
}

/// The issue's example, as a new user porting a NodePool from YAML writes it.
const ISSUE_EXAMPLE: &str = r#"
resource "karpenter_node_pool" "p" {
  name = "p"
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements   = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }]
      expireAfter    = "24h"
    }
  }
  disruption = { consolidate_after = "30s", consolidationPolicy = "WhenEmpty" }
}
"#;

#[test]
fn the_issues_example_fails_to_plan_and_applies_nothing() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!("{}\n{ISSUE_EXAMPLE}", cluster.provider_block()));
    let plan = work.plan().failed();
    let text = plan.text();
    for expected in [
        "Unsupported attribute \"expireAfter\"",
        "template.spec.expireAfter: template.spec has no attribute \"expireAfter\"; did you mean \"expire_after\"?",
        "disruption.consolidationPolicy: disruption has no attribute \"consolidationPolicy\"; did you mean \"consolidation_policy\"?",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing:\n{}",
            plan.output()
        );
    }
    // Shown on the line of the key itself (it sits right inside a top-level attribute).
    let main = std::fs::read_to_string(work.path().join("main.tf")).unwrap();
    let line = main
        .lines()
        .position(|l| l.contains("consolidationPolicy"))
        .unwrap()
        + 1;
    let shown = format!("on main.tf line {line}, in resource \"karpenter_node_pool\" \"p\":");
    assert!(text.contains(&shown), "{shown:?} missing:\n{}", plan.output());
    work.apply().failed();
    assert!(cluster.node_pool("p").is_none(), "nothing may be applied");
}

/// A module that takes whole pool definitions, as a module author writes one.
const POOLS_MODULE: &str = r#"
variable "pools" {
  type = any
}

variable "class_name" {
  type = string
}

locals {
  default_disruption = { consolidation_policy = "WhenEmptyOrUnderutilized", consolidate_after = "1m" }
}

resource "karpenter_node_pool" "this" {
  for_each   = var.pools
  name       = each.key
  template   = merge(each.value.template, { spec = merge(each.value.template.spec, { node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = var.class_name } }) })
  disruption = merge(local.default_disruption, try(each.value.disruption, {}))
  limits     = try(each.value.limits, null)
}
"#;

const POOL_A_YAML: &str = "template:
  spec:
    requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: [spot]
    expire_after: 24h
disruption:
  consolidation_policy: WhenEmpty
limits:
  cpu: \"100\"
";

const ROOT: &str = r#"
locals {
  general = {
    template = {
      spec = {
        requirements = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }]
      }
    }
  }
}

module "pools" {
  source     = "./modules/pools"
  class_name = "default"
  pools = {
    spot    = yamldecode(file("${path.module}/pools/spot.yaml"))
    general = local.general
  }
}
"#;

#[test]
fn whole_objects_through_variables_locals_for_each_and_yaml_keep_working_and_are_checked() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!("{}\n{ROOT}", cluster.provider_block()));
    std::fs::create_dir_all(work.path().join("modules/pools")).unwrap();
    std::fs::create_dir_all(work.path().join("pools")).unwrap();
    work.write(
        "modules/pools/main.tf",
        &format!("{}\n{POOLS_MODULE}", required_providers()),
    );
    work.write("pools/spot.yaml", POOL_A_YAML);
    // Modules only: `init` would also look the provider up in the registry, which the
    // development override makes unnecessary (and this machine cannot reach).
    work.terraform(&["get", "-no-color"]).ok();
    let apply = work.apply().ok();
    assert!(!apply.text().contains("Keys not checked"), "{}", apply.output());
    let spot = cluster.node_pool("spot").expect("the spot pool");
    assert_eq!(spot["spec"]["template"]["spec"]["expireAfter"], "24h", "{spot}");
    assert_eq!(
        spot["spec"]["disruption"]["consolidationPolicy"], "WhenEmpty",
        "{spot}"
    );
    assert_eq!(spot["spec"]["limits"]["cpu"], "100", "{spot}");
    let general = cluster.node_pool("general").expect("the general pool");
    assert_eq!(
        general["spec"]["disruption"]["consolidationPolicy"], "WhenEmptyOrUnderutilized",
        "{general}"
    );
    assert!(work.plan_is_empty());

    // The manifest's camelCase spelling, as copied from Karpenter's docs.
    work.write(
        "pools/spot.yaml",
        &POOL_A_YAML.replace("expire_after: 24h", "expireAfter: 12h"),
    );
    let plan = work.plan().failed();
    let text = plan.text();
    for expected in [
        "template.spec.expireAfter: template.spec has no attribute \"expireAfter\"; did you mean \"expire_after\"?",
        "Written at pools/spot.yaml:7:5.",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing:\n{}",
            plan.output()
        );
    }
    // And in the caller's local.
    work.write("pools/spot.yaml", POOL_A_YAML);
    work.set_config(&format!(
        "{}\n{}",
        cluster.provider_block(),
        ROOT.replace(
            "values = [\"on-demand\"] }]",
            "values = [\"on-demand\"], minValues = 1 }]"
        )
    ));
    let plan = work.plan().failed();
    assert!(
        plan.text().contains("template.spec.requirements[0].minValues: template.spec.requirements[0] has no attribute \"minValues\"; did you mean \"min_values\"?"),
        "{}",
        plan.output()
    );
    assert!(plan.text().contains("Written at main.tf:"), "{}", plan.output());
    assert_eq!(
        cluster.node_pool("spot").expect("still there")["spec"]["template"]["spec"]["expireAfter"],
        "24h",
        "nothing applied"
    );
}

#[test]
fn chdir_runs_the_provider_in_the_root_module() {
    let work = Workdir::new(ISSUE_EXAMPLE);
    let elsewhere = tempfile::tempdir().unwrap();
    let chdir = format!("-chdir={}", work.path().display());
    let run = work
        .command(&[chdir.as_str(), "validate", "-no-color"])
        .current_dir(elsewhere.path())
        .output()
        .expect("terraform runs");
    let text = String::from_utf8_lossy(&run.stdout).to_string() + &String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{text}");
    // Terraform wraps a diagnostic's detail at its terminal width.
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined.contains("did you mean \"expire_after\"?"), "{text}");
}

#[test]
fn values_the_provider_cannot_read_warn_and_the_check_can_be_turned_off() {
    let config = r#"
variable "template" {
  type = any
}
resource "karpenter_node_pool" "p" {
  name     = "p"
  template = var.template
}
"#;
    let work = Workdir::new(config);
    let run = work.validate().ok();
    assert!(run.text().contains("Keys not checked"), "{}", run.output());
    assert!(
        run.text()
            .contains("template: the keys of this object come from var.template"),
        "{}",
        run.output()
    );

    let mut work = Workdir::new(ISSUE_EXAMPLE);
    work.validate().failed();
    work.env("TF_KARPENTER_KEY_CHECK", "off");
    work.validate().ok();
}

/// The issue's example in Terraform's JSON syntax (as a generator writes it), and a pool
/// whose template comes whole from `terraform.tfvars.json`.
const ISSUE_EXAMPLE_JSON: &str = r#"{
  "variable": {"template": {"type": "any"}},
  "resource": {
    "karpenter_node_pool": {
      "p": {
        "name": "p",
        "template": {
          "spec": {
            "node_class_ref": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
            "expireAfter": "24h"
          }
        },
        "disruption": {"consolidate_after": "30s", "consolidationPolicy": "WhenEmpty"}
      },
      "q": {"name": "q", "template": "${var.template}"}
    }
  }
}
"#;

const TFVARS_JSON: &str = r#"{
  "template": {
    "spec": {
      "node_class_ref": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
      "expireAftr": "12h"
    }
  }
}
"#;

/// `file:line:column` of the first `"key"` in `text`.
fn json_place(file: &str, text: &str, key: &str) -> String {
    let quoted = format!("\"{key}\"");
    let (i, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(&quoted))
        .unwrap_or_else(|| panic!("{key} not in {file}"));
    let column = line.find(&quoted).unwrap_or(0) + 1;
    format!("{file}:{}:{column}", i + 1)
}

#[test]
fn keys_in_json_configuration_and_tfvars_json_are_checked() {
    let work = Workdir::new("");
    work.write("pools.tf.json", ISSUE_EXAMPLE_JSON);
    work.write("terraform.tfvars.json", TFVARS_JSON);
    let errors = validate_errors(&work);
    for (key, path, meant, file, text) in [
        (
            "expireAfter",
            "template.spec.expireAfter",
            "expire_after",
            "pools.tf.json",
            ISSUE_EXAMPLE_JSON,
        ),
        (
            "consolidationPolicy",
            "disruption.consolidationPolicy",
            "consolidation_policy",
            "pools.tf.json",
            ISSUE_EXAMPLE_JSON,
        ),
        (
            "expireAftr",
            "template.spec.expireAftr",
            "expire_after",
            "terraform.tfvars.json",
            TFVARS_JSON,
        ),
    ] {
        let written = format!("Written at {}.", json_place(file, text, key));
        let found = errors.iter().any(|d| {
            d["summary"] == format!("Unsupported attribute \"{key}\"")
                && d["detail"].as_str().is_some_and(|t| {
                    t.starts_with(&format!("{path}: "))
                        && t.contains(&format!("did you mean \"{meant}\"?"))
                        && t.contains(&written)
                })
        });
        assert!(found, "no error for {path} ({written}) in {errors:#?}");
    }
    assert_eq!(errors.len(), 3, "{errors:#?}");
}
