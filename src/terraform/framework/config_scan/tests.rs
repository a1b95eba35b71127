//! Unit tests of the configuration scan: real files in a temporary directory, scanned with a
//! small schema shaped like a node pool's.

use std::path::Path;

use super::{BlockKind, ConfigScan, Finding, Targets};
use crate::terraform::framework::diagnostics::Severity;
use crate::terraform::framework::schema::{Attribute, Block, Schema};
use crate::terraform::tfvalue::{PathStep, Value};

fn schema() -> Schema {
    Schema::new(
        "",
        vec![
            Attribute::string("name").required(),
            Attribute::object(
                "template",
                vec![Attribute::object(
                    "spec",
                    vec![
                        Attribute::string("expire_after"),
                        Attribute::list_of_objects(
                            "requirements",
                            vec![Attribute::string("key"), Attribute::number("min_values")],
                        ),
                        Attribute::object("node_class_ref", vec![Attribute::string("name")]),
                    ],
                )],
            ),
            Attribute::object(
                "disruption",
                vec![
                    Attribute::string("consolidation_policy"),
                    Attribute::string("consolidate_after"),
                ],
            ),
            Attribute::map_of_objects("pools", vec![Attribute::string("size")]),
            Attribute::map_of("labels", crate::terraform::tfvalue::Type::String),
        ],
    )
    .with_blocks(vec![Block::single("timeouts", vec![Attribute::string("create")])])
}

fn scan(dir: &Path) -> ConfigScan {
    let s = schema();
    let targets = Targets::new("kp").with(BlockKind::Resource, "kp_pool", &s);
    ConfigScan::load(dir, Path::new(".terraform"), &targets)
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

fn errors(scan: &ConfigScan) -> Vec<(String, Finding)> {
    scan.findings()
        .into_iter()
        .filter(|(_, f)| f.severity == Severity::Error)
        .collect()
}

fn details(scan: &ConfigScan) -> Vec<String> {
    errors(scan).into_iter().map(|(_, f)| f.detail).collect()
}

#[test]
fn literal_typos_are_errors_with_path_place_and_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
resource "kp_pool" "p" {
  name = "p"
  template = {
    spec = {
      requirements = [{ key = "a", minValue = 1 }]
      expireAfter  = "24h"
    }
  }
  disruption = { consolidate_after = "30s", consolidationPolicy = "WhenEmpty" }
  labels     = { anyKey = "fine" }
  timeouts {
    create = "1m"
  }
}
resource "other_thing" "x" {
  template = { anything = 1 }
}
"#,
    );
    let s = scan(dir.path());
    let d = details(&s);
    assert_eq!(d.len(), 3, "{d:#?}");
    assert!(
        d[0].starts_with("template.spec.requirements[0].minValue: template.spec.requirements[0] has no attribute \"minValue\"; did you mean \"min_values\"?"),
        "{}",
        d[0]
    );
    assert!(d[0].ends_with("Written at main.tf:6:36."), "{}", d[0]);
    assert!(
        d[1].contains("did you mean \"expire_after\"?") && d[1].contains("main.tf:7:7"),
        "{}",
        d[1]
    );
    assert!(d[2].starts_with("disruption.consolidationPolicy:"), "{}", d[2]);
    assert!(
        d[2].contains("did you mean \"consolidation_policy\"?"),
        "{}",
        d[2]
    );
    // Where Terraform can show it: the top-level attribute and the next step as a key.
    let subjects: Vec<Vec<PathStep>> = errors(&s).into_iter().map(|(_, f)| f.subject.steps).collect();
    assert_eq!(
        subjects[0],
        [
            PathStep::Attribute("template".into()),
            PathStep::ElementKeyString("spec".into())
        ]
    );
    assert_eq!(
        subjects[2],
        [
            PathStep::Attribute("disruption".into()),
            PathStep::ElementKeyString("consolidationPolicy".into())
        ]
    );
}

#[test]
fn values_are_followed_through_locals_for_each_merge_and_yaml() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
locals {
  base  = { expire_after = "24h", expireAftr = "1h" }
  pools = {
    a = { spec = merge(local.base, { node_class_ref = { name = "x", nmae = "y" } }) }
    b = yamldecode(file("${path.module}/pool.yaml"))
  }
}
resource "kp_pool" "each" {
  for_each = local.pools
  name     = each.key
  template = each.value
}
"#,
    );
    write(
        dir.path(),
        "pool.yaml",
        "spec:\n  expire_after: 720h\n  requirements:\n    - key: a\n      minValues: 2\n",
    );
    let s = scan(dir.path());
    let d = details(&s);
    assert_eq!(d.len(), 3, "{d:#?}");
    assert!(
        d.iter()
            .any(|x| x.starts_with("template.spec.expireAftr:") && x.contains("main.tf:3:35")),
        "{d:#?}"
    );
    assert!(
        d.iter()
            .any(|x| x.starts_with("template.spec.node_class_ref.nmae:")
                && x.contains("did you mean \"name\"")),
        "{d:#?}"
    );
    assert!(
        d.iter()
            .any(|x| x.starts_with("template.spec.requirements[0].minValues:")
                && x.contains("did you mean \"min_values\"")
                && x.contains("pool.yaml:5:7")),
        "{d:#?}"
    );
}

#[test]
fn child_modules_are_read_and_their_inputs_followed_to_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
module "pools" {
  source = "./modules/pools"
  pools  = { big = { spec = { expireAfter = "1h" } } }
}
"#,
    );
    write(
        dir.path(),
        "modules/pools/main.tf",
        r#"
variable "pools" { type = any }
resource "kp_pool" "p" {
  for_each = var.pools
  name     = each.key
  template = each.value
  disruption = { consolidationPolicy = "WhenEmpty" }
}
"#,
    );
    write(
        dir.path(),
        ".terraform/modules/modules.json",
        r#"{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"pools","Source":"./modules/pools","Dir":"modules/pools"}]}"#,
    );
    let s = scan(dir.path());
    let e = errors(&s);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(
        e.iter().all(|(address, _)| address == "module.pools.kp_pool.p"),
        "{e:#?}"
    );
    let d: Vec<&str> = e.iter().map(|(_, f)| f.detail.as_str()).collect();
    assert!(
        d.iter()
            .any(|x| x.starts_with("template.spec.expireAfter:") && x.ends_with("Written at main.tf:4:31.")),
        "{d:#?}"
    );
    assert!(
        d.iter().any(|x| x.starts_with("disruption.consolidationPolicy:")
            && x.ends_with("Written at modules/pools/main.tf:7:18.")),
        "{d:#?}"
    );
}

#[test]
fn root_variables_come_from_tfvars_or_defaults_or_warn() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
variable "with_default" {
  default = { spec = { expireAftr = "1h" } }
}
variable "in_tfvars" {}
variable "unseen" {}
resource "kp_pool" "a" {
  name     = "a"
  template = var.with_default
}
resource "kp_pool" "b" {
  name     = "b"
  template = var.in_tfvars
}
resource "kp_pool" "c" {
  name     = "c"
  template = var.unseen
}
"#,
    );
    write(
        dir.path(),
        "terraform.tfvars",
        "in_tfvars = { spec = { expire = \"1h\" } }\n",
    );
    let s = scan(dir.path());
    let all = s.findings();
    assert_eq!(all.len(), 3, "{all:#?}");
    assert!(all[0].1.detail.contains("expireAftr") && all[0].0 == "kp_pool.a");
    assert!(all[1].1.detail.contains("terraform.tfvars:1:24") && all[1].0 == "kp_pool.b");
    assert_eq!(all[2].1.severity, Severity::Warning);
    assert!(
        all[2]
            .1
            .detail
            .starts_with("template: the keys of this object come from var.unseen"),
        "{all:#?}"
    );
}

#[test]
fn override_files_replace_attributes_as_terraform_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
resource "kp_pool" "p" {
  name       = "p"
  disruption = { consolidationPolicy = "WhenEmpty" }
}
"#,
    );
    write(
        dir.path(),
        "override.tf",
        r#"
resource "kp_pool" "p" {
  disruption = { consolidation_policy = "WhenEmpty", consolidateAfter = "1m" }
}
"#,
    );
    let d = details(&scan(dir.path()));
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].contains("consolidateAfter") && d[0].contains("override.tf:3:54"),
        "{d:#?}"
    );
}

fn pool_config(name: &str) -> Value {
    Value::object([
        ("name", Value::string(name)),
        ("template", Value::Null),
        ("disruption", Value::Null),
        ("pools", Value::Null),
        ("labels", Value::Null),
        ("timeouts", Value::Null),
    ])
}

#[test]
fn each_call_takes_the_findings_of_the_block_its_configuration_matches_once() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
resource "kp_pool" "clean" {
  name       = "clean"
}
resource "kp_pool" "dirty" {
  name       = "dirty"
  disruption = { consolidationPolicy = "WhenEmpty" }
}
resource "kp_pool" "also" {
  name       = 7
  disruption = { consolidateAftr = "1m" }
}
"#,
    );
    let s = scan(dir.path());
    assert!(
        s.take(BlockKind::Resource, "kp_pool", &pool_config("clean"))
            .is_empty()
    );
    let mut dirty = pool_config("dirty");
    if let Value::Object(m) = &mut dirty {
        m.insert(
            "disruption".into(),
            Value::object([("consolidation_policy", Value::Null)]),
        );
    }
    let taken = s.take(BlockKind::Resource, "kp_pool", &dirty);
    assert_eq!(taken.len(), 1);
    assert!(taken[0].detail.contains("consolidationPolicy"));
    // The number written for a string attribute arrives converted.
    let taken = s.take(BlockKind::Resource, "kp_pool", &pool_config("7"));
    assert_eq!(taken.len(), 1, "{taken:#?}");
    assert!(taken[0].detail.contains("consolidateAftr"));
    assert!(
        s.take(BlockKind::Resource, "kp_pool", &pool_config("dirty"))
            .is_empty()
    );
}

#[test]
fn findings_of_a_block_no_call_matched_come_with_the_last_call_of_its_type() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
resource "kp_pool" "a" {
  name       = "a"
  disruption = { consolidationPolicy = "WhenEmpty" }
}
resource "kp_pool" "b" {
  name       = "b"
}
"#,
    );
    let s = scan(dir.path());
    assert!(
        s.take(BlockKind::Resource, "kp_pool", &pool_config("b"))
            .is_empty()
    );
    // A configuration none of the remaining blocks agrees with (as if the matcher missed).
    let taken = s.take(BlockKind::Resource, "kp_pool", &pool_config("renamed"));
    assert_eq!(taken.len(), 1, "{taken:#?}");
    assert!(
        taken[0].detail.ends_with("In kp_pool.a (main.tf:2:1)."),
        "{}",
        taken[0].detail
    );
}

#[test]
fn no_files_or_no_mention_of_the_provider_finds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(scan(dir.path()).finding_count(), 0);
    write(
        dir.path(),
        "main.tf",
        "resource \"other\" \"x\" {\n  template = { a = 1 }\n}\n",
    );
    write(dir.path(), "broken.tf", "resource \"kp_pool\" {{{{\n");
    assert_eq!(scan(dir.path()).finding_count(), 0);
}

#[test]
fn cycles_and_unknowns_end_quietly() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
locals {
  a = local.b
  b = local.a
  c = [for x in local.a : x]
}
resource "kp_pool" "p" {
  name       = "p"
  template   = local.a
  disruption = kp_other.x.disruption
  pools      = { for k, v in local.c : k => v }
}
"#,
    );
    assert_eq!(scan(dir.path()).finding_count(), 0);
}

#[test]
fn json_configuration_and_variable_files_are_checked_with_places() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf.json",
        r#"{
  "//": "generated",
  "variable": {"from_tfvars": {"type": "any"}},
  "locals": {"spec": {"expireAfter": "24h"}},
  "resource": {
    "kp_pool": {
      "a": {
        "name": "a",
        "template": {"spec": {"requirements": [{"key": "k", "minValue": 1}]}}
      },
      "b": [{"name": "b", "template": {"spec": "${local.spec}"}}],
      "c": {"name": "c", "template": "${var.from_tfvars}"}
    }
  }
}"#,
    );
    write(
        dir.path(),
        "terraform.tfvars.json",
        "{\n  \"from_tfvars\": {\"spec\": {\"expire\": \"${not evaluated}\"}}\n}\n",
    );
    let s = scan(dir.path());
    let mut all: Vec<(String, String)> = errors(&s).into_iter().map(|(a, f)| (a, f.detail)).collect();
    all.sort();
    assert_eq!(all.len(), 3, "{all:#?}");
    assert!(
        all[0].0 == "kp_pool.a"
            && all[0].1.starts_with("template.spec.requirements[0].minValue:")
            && all[0].1.contains("did you mean \"min_values\"?")
            && all[0].1.ends_with("Written at main.tf.json:9:61."),
        "{all:#?}"
    );
    assert!(
        all[1].0 == "kp_pool.b"
            && all[1].1.starts_with("template.spec.expireAfter:")
            && all[1].1.contains("main.tf.json:4:23"),
        "{all:#?}"
    );
    assert!(
        all[2].0 == "kp_pool.c"
            && all[2].1.starts_with("template.spec.expire:")
            && all[2].1.contains("terraform.tfvars.json:2:28"),
        "{all:#?}"
    );
}

#[test]
fn json_nested_blocks_are_read_as_properties() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf.json",
        r#"{"resource": {"kp_pool": {"p": {"settings": [{"inner": {"b": "x"}}]}}}}"#,
    );
    let s = Schema::new("", vec![]).with_blocks(vec![Block::single(
        "settings",
        vec![Attribute::object("inner", vec![Attribute::string("a")])],
    )]);
    let targets = Targets::new("kp").with(BlockKind::Resource, "kp_pool", &s);
    let found = ConfigScan::load(dir.path(), Path::new(".terraform"), &targets);
    let d = details(&found);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].starts_with("settings.inner.b:"), "{}", d[0]);
}

/// The configuration as written: the values at the paths asked for, one per readable
/// `for_each` element, unknown where the scan cannot follow, absent where nothing is written.
#[test]
fn written_values_follow_the_paths_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        r#"
locals {
  class = "workers"
  pools = { a = { size = "s" }, b = { size = "m" } }
}
variable "from_cli" { type = string }
resource "kp_pool" "literal" {
  name     = "p-literal"
  template = { spec = { node_class_ref = { name = local.class }, expire_after = "1h" } }
}
resource "kp_pool" "each" {
  for_each = local.pools
  name     = "p-${each.value.size}"
  template = { spec = { node_class_ref = { name = "workers" } } }
}
resource "kp_pool" "computed" {
  name     = var.from_cli
  template = { spec = { node_class_ref = { name = other_resource.x.name } } }
}
"#,
    );
    let s = schema();
    let targets = Targets::new("kp").with(BlockKind::Resource, "kp_pool", &s);
    let written = super::Written::load(
        dir.path(),
        Path::new(".terraform"),
        &targets,
        &["name", "template.spec.node_class_ref.name"],
    );
    let blocks = written.blocks(BlockKind::Resource, "kp_pool");
    let at = |v: &Value| -> (Option<Value>, Option<Value>) {
        let class = v
            .get("template")
            .and_then(|t| t.get("spec"))
            .and_then(|s| s.get("node_class_ref"))
            .and_then(|r| r.get("name"))
            .cloned();
        (v.get("name").cloned(), class)
    };
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0].address, "kp_pool.literal");
    assert_eq!(
        at(&blocks[0].instances[0]),
        (Some(Value::string("p-literal")), Some(Value::string("workers")))
    );
    assert!(
        blocks[0].instances[0]
            .get("template")
            .and_then(|t| t.get("spec"))
            .and_then(|s| s.get("expire_after"))
            .is_none(),
        "only the paths asked for"
    );
    assert!(blocks[1].repeated);
    assert_eq!(blocks[1].instances.len(), 2, "one per for_each element");
    assert_eq!(at(&blocks[1].instances[1]).1, Some(Value::string("workers")));
    let (name, class) = at(&blocks[2].instances[0]);
    assert!(name.is_some_and(|n| n.is_unknown()) && class.is_some_and(|c| c.is_unknown()));
}
