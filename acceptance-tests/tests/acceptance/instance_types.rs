//! Issue 39, "which instance types will this pool launch?", through the real terraform CLI:
//!
//! - `data "karpenter_instance_types"` offline answers equal the independent oracle's
//!   (`tests/data/instance_types/expected.json`, written by `oracle.py` from the shared files);
//! - its summaries and per-type attributes (labels, allocatable, price);
//! - `source = "ec2"` against moto: the region's offered types, described as Karpenter
//!   describes them, agree with the offline table where both know a type;
//! - the plan-time checks of `karpenter_node_pool` (self-managed and Auto Mode) and
//!   `karpenter_provisioner`: requirements that match nothing and an unmeetable `min_values` are
//!   errors, limits smaller than every matching type a warning; a requirement still unknown at
//!   plan skips the check; a value the offline data has never seen (a family released since) is
//!   a warning that it cannot be checked, never the no-match error; previous generations and
//!   types without a price are not a mistake.

use std::fmt::Write as _;

use acceptance_tests::Workdir;
use acceptance_tests::kube::Cluster;
use acceptance_tests::moto::Moto;

fn data(file: &str) -> serde_json::Value {
    let path = acceptance_tests::workspace_root()
        .join("tests/data/instance_types")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A requirement list in HCL.
fn hcl_requirements(requirements: &serde_json::Value) -> String {
    let items: Vec<String> = requirements
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            let mut s = format!("{{ key = {}, operator = {}", r["key"], r["operator"]);
            if let Some(values) = r.get("values") {
                let _ = write!(s, ", values = {values}");
            }
            if let Some(m) = r.get("min_values") {
                let _ = write!(s, ", min_values = {m}");
            }
            s + " }"
        })
        .collect();
    format!("[{}]", items.join(", "))
}

#[test]
fn offline_answers_equal_the_oracles() {
    let cases = data("cases.json");
    let expected = data("expected.json");
    let mut config = String::from("provider \"karpenter\" {}\n");
    let mut checked = Vec::new();
    for (i, (case, want)) in cases
        .as_array()
        .expect("cases")
        .iter()
        .zip(expected["cases"].as_array().expect("answers"))
        .enumerate()
    {
        // The data source reads both label spellings; cases written for one kind of pool
        // (Auto Mode or self-managed) are checked by the pool's own tests and the unit test.
        if case.get("flavor").is_some() {
            continue;
        }
        let _ = write!(
            config,
            "data \"karpenter_instance_types\" \"c{i}\" {{\n  requirements = {}\n}}\n\
             output \"c{i}\" {{ value = {{ count = data.karpenter_instance_types.c{i}.match_count, names = \
             data.karpenter_instance_types.c{i}.match_count <= 25 ? sort(data.karpenter_instance_types.c{i}.names) : [], \
             unmet = data.karpenter_instance_types.c{i}.min_values_unmet }} }}\n",
            hcl_requirements(&case["requirements"])
        );
        checked.push((i, want.clone()));
    }
    assert!(checked.len() >= 40, "{} cases through terraform", checked.len());
    let work = Workdir::new(&config);
    work.apply().ok();
    let outputs = work.outputs();
    for (i, want) in checked {
        let got = &outputs[format!("c{i}")]["value"];
        let name = want["name"].as_str().unwrap_or_default();
        assert_eq!(got["count"], want["count"], "{name}");
        if let Some(names) = want.get("names") {
            assert_eq!(&got["names"], names, "{name}");
        }
        let unmet: Vec<u64> = got["unmet"]
            .as_object()
            .map(|m| m.values().filter_map(serde_json::Value::as_u64).collect())
            .unwrap_or_default();
        let want_unmet: Vec<u64> = want["min_values_unmet"]
            .as_object()
            .map(|m| m.values().filter_map(serde_json::Value::as_u64).collect())
            .unwrap_or_default();
        assert_eq!(unmet, want_unmet, "{name}");
    }
}

#[test]
fn the_answer_carries_labels_resources_prices_and_summaries() {
    let work = Workdir::new(
        r#"
provider "karpenter" {}
data "karpenter_instance_types" "g5" {
  requirements = [
    { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["g5"] },
  ]
}
data "karpenter_instance_types" "auto" {
  requirements = [
    { key = "eks.amazonaws.com/instance-family", operator = "In", values = ["g5"] },
  ]
}
output "g5" { value = data.karpenter_instance_types.g5 }
output "auto_names" { value = data.karpenter_instance_types.auto.names }
"#,
    );
    work.apply().ok();
    let out = work.outputs();
    let g5 = &out["g5"]["value"];
    assert_eq!(g5["match_count"], 8);
    assert_eq!(g5["cheapest"], "g5.xlarge");
    assert_eq!(g5["largest_by_cpu"], "g5.48xlarge");
    assert_eq!(g5["largest_by_memory"], "g5.48xlarge");
    assert_eq!(g5["karpenter_version"], "v1.14");
    assert_eq!(g5["price_region"], "us-east-1");
    assert_eq!(
        out["auto_names"]["value"], g5["names"],
        "Auto Mode's key names select the same"
    );
    let first = &g5["instance_types"][0];
    assert_eq!(first["name"], "g5.xlarge");
    assert_eq!(first["gpu_count"], 1);
    assert_eq!(first["gpu_name"], "a10g");
    assert_eq!(first["gpu_manufacturer"], "nvidia");
    assert_eq!(first["gpu_memory_mib"], 22888);
    assert_eq!(first["cpu"], 4);
    assert_eq!(first["memory_mib"], 16384);
    assert_eq!(first["arch"], "amd64");
    assert_eq!(first["generation"], 5);
    assert_eq!(first["allocatable"]["cpu"], "3920m");
    assert_eq!(first["allocatable"]["memory"], "14162Mi");
    assert_eq!(first["allocatable"]["nvidia.com/gpu"], "1");
    assert_eq!(first["labels"]["karpenter.k8s.aws/instance-local-nvme"], "250");
    assert!(
        first["on_demand_price"]
            .as_f64()
            .is_some_and(|p| p > 0.5 && p < 2.0),
        "{first}"
    );
    let prices: Vec<f64> = g5["instance_types"]
        .as_array()
        .expect("types")
        .iter()
        .filter_map(|t| t["on_demand_price"].as_f64())
        .collect();
    assert!(
        prices.windows(2).all(|w| w[0] <= w[1]),
        "cheapest first: {prices:?}"
    );
    assert!(work.plan_is_empty(), "a second plan is empty");
}

#[test]
fn region_and_zones_belong_to_ec2() {
    let work = Workdir::new(
        r#"
provider "karpenter" {}
data "karpenter_instance_types" "x" {
  zones = ["us-east-1a"]
}
"#,
    );
    let run = work.validate().failed();
    let text = run.text();
    assert!(text.contains("Only with source = \"ec2\""), "{}", run.output());
    assert!(
        text.contains("data.karpenter_instance_types.x"),
        "{}",
        run.output()
    );
}

#[test]
fn ec2_source_asks_the_region_and_agrees_with_the_offline_table() {
    let moto = Moto::start();
    let work = moto.workdir(
        r#"
locals {
  m5 = [{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5", "g5"] }]
}
data "karpenter_instance_types" "ec2" {
  source       = "ec2"
  requirements = local.m5
}
data "karpenter_instance_types" "zone" {
  source       = "ec2"
  zones        = ["us-east-1a"]
  requirements = local.m5
}
data "karpenter_instance_types" "offline" {
  requirements = local.m5
}
output "ec2" { value = data.karpenter_instance_types.ec2.instance_types }
output "zone" { value = data.karpenter_instance_types.zone.instance_types }
output "offline" { value = data.karpenter_instance_types.offline.instance_types }
"#,
    );
    work.apply().ok();
    let out = work.outputs();
    let by_name = |list: &serde_json::Value| -> std::collections::BTreeMap<String, serde_json::Value> {
        list.as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|t| (t["name"].as_str().unwrap_or_default().to_string(), t.clone()))
            .collect()
    };
    let ec2 = by_name(&out["ec2"]["value"]);
    let offline = by_name(&out["offline"]["value"]);
    assert!(
        ec2.len() >= 10,
        "moto offers m5 and g5 in us-east-1: {:?}",
        ec2.keys()
    );
    let mut compared = 0;
    for (name, from_ec2) in &ec2 {
        assert!(
            name.starts_with("m5.") || name.starts_with("g5."),
            "{name}: only what the requirements select"
        );
        let Some(known) = offline.get(name) else { continue };
        compared += 1;
        for attribute in [
            "category",
            "family",
            "generation",
            "size",
            "arch",
            "cpu",
            "memory_mib",
            "gpu_count",
            "gpu_name",
        ] {
            assert_eq!(from_ec2[attribute], known[attribute], "{name}: {attribute}");
        }
        for resource in ["cpu", "memory", "pods", "nvidia.com/gpu"] {
            assert_eq!(
                from_ec2["allocatable"][resource], known["allocatable"][resource],
                "{name}: allocatable {resource}"
            );
        }
        assert_eq!(
            from_ec2["on_demand_price"], known["on_demand_price"],
            "{name}: price"
        );
        assert_eq!(from_ec2["zones"], serde_json::json!([]), "{name}: region-wide");
    }
    assert!(compared >= 10, "types both sources know: {compared}");
    let zone = by_name(&out["zone"]["value"]);
    assert!(!zone.is_empty());
    for (name, t) in &zone {
        assert_eq!(t["zones"], serde_json::json!(["us-east-1a"]), "{name}");
    }
}

const CLASS_REF: &str =
    r#"node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }"#;
const AUTO_REF: &str =
    r#"node_class_ref = { group = "eks.amazonaws.com", kind = "NodeClass", name = "default" }"#;

fn pool(name: &str, class_ref: &str, requirements: &str, extra: &str) -> String {
    format!(
        r#"
resource "karpenter_node_pool" "{name}" {{
  name = "{name}"
  template = {{
    spec = {{
      {class_ref}
      requirements = [{requirements}]
    }}
  }}
  {extra}
}}
"#
    )
}

/// `terraform validate` of `config` (plan-time checks need no cluster), with its folded text.
fn validate(config: &str) -> (bool, String, String) {
    let work = Workdir::new(&format!("provider \"karpenter\" {{}}\n{config}"));
    let run = work.validate();
    (run.success, run.text(), run.output())
}

#[test]
fn requirements_that_match_nothing_are_an_error_naming_the_one_that_emptied_the_list() {
    let (ok, text, output) = validate(&pool(
        "gpu-on-arm",
        CLASS_REF,
        r#"{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] },
           { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["p"] },
           { key = "kubernetes.io/arch", operator = "In", values = ["arm64"] }"#,
        "",
    ));
    assert!(!ok, "{output}");
    assert!(
        text.contains("No instance type matches these requirements"),
        "{output}"
    );
    assert!(
        text.contains("requirements[2] (kubernetes.io/arch In [arm64]) removed the last 9 instance types"),
        "{output}"
    );
    assert!(
        text.contains("p4d.24xlarge"),
        "names some of what was left: {output}"
    );
    assert!(text.contains("template.spec.requirements[2]"), "{output}");
    assert!(text.contains("Karpenter v1.14"), "{output}");

    // A GPU pool whose families have no GPU.
    let (ok, text, output) = validate(&pool(
        "gpu",
        CLASS_REF,
        r#"{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["c5", "m5"] },
           { key = "karpenter.k8s.aws/instance-gpu-manufacturer", operator = "In", values = ["nvidia"] }"#,
        "",
    ));
    assert!(!ok, "{output}");
    assert!(
        text.contains(
            "requirements[1] (karpenter.k8s.aws/instance-gpu-manufacturer In [nvidia]) removed the last 18"
        ),
        "{output}"
    );
}

#[test]
fn an_auto_mode_pool_is_checked_with_auto_modes_label_names() {
    let (ok, text, output) = validate(&pool(
        "auto",
        AUTO_REF,
        r#"{ key = "eks.amazonaws.com/instance-category", operator = "In", values = ["g"] },
           { key = "eks.amazonaws.com/instance-gpu-name", operator = "In", values = ["h100"] }"#,
        "",
    ));
    assert!(!ok, "{output}");
    assert!(
        text.contains("requirements[1] (eks.amazonaws.com/instance-gpu-name In [h100])"),
        "{output}"
    );
    // The same keys on a self-managed pool are not instance labels there: left alone.
    let (ok, text, output) = validate(&pool(
        "self",
        CLASS_REF,
        r#"{ key = "eks.amazonaws.com/instance-category", operator = "In", values = ["g"] },
           { key = "eks.amazonaws.com/instance-gpu-name", operator = "In", values = ["h100"] }"#,
        "",
    ));
    assert!(ok, "{output}");
    assert!(!text.contains("No instance type matches"), "{output}");
}

#[test]
fn an_unmeetable_min_values_is_an_error_on_it() {
    let (ok, text, output) = validate(&pool(
        "flexible",
        CLASS_REF,
        r#"{ key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
           { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m7g", "c7g", "r7g", "t4g"], min_values = 4 }"#,
        "",
    ));
    assert!(!ok, "{output}");
    assert!(text.contains("min_values cannot be met"), "{output}");
    assert!(
        text.contains("template.spec.requirements[1].min_values"),
        "{output}"
    );
    assert!(text.contains("have only 3: c7g, m7g, r7g"), "{output}");
}

#[test]
fn limits_smaller_than_every_matching_type_are_a_warning() {
    // One pool per run: terraform folds warnings of one summary into "and N more".
    let (ok, text, output) = validate(&pool(
        "big",
        CLASS_REF,
        r#"{ key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
           { key = "karpenter.k8s.aws/instance-cpu", operator = "Gte", values = ["32"] }"#,
        r#"limits = { cpu = "16", memory = "1000Gi" }"#,
    ));
    assert!(ok, "a warning, not an error: {output}");
    assert!(
        text.contains("Warning: This pool can never launch a node"),
        "{output}"
    );
    assert!(
        text.contains("The limit cpu = \"16\" is smaller than every instance type"),
        "{output}"
    );
    assert!(text.contains("has 32 cpu"), "{output}");
    assert!(
        !text.contains("similar warning"),
        "only cpu is too small: {output}"
    );
    let (ok, text, output) = validate(&pool(
        "h100",
        CLASS_REF,
        r#"{ key = "karpenter.k8s.aws/instance-gpu-name", operator = "In", values = ["h100"] }"#,
        r#"limits = { "nvidia.com/gpu" = "0" }"#,
    ));
    assert!(ok, "{output}");
    assert!(text.contains("The limit nvidia.com/gpu = \"0\""), "{output}");
    assert!(text.contains("p5.4xlarge, has 1 nvidia.com/gpu"), "{output}");
    // Limits some matching type fits under: no warning.
    let (ok, text, output) = validate(&pool(
        "fits",
        CLASS_REF,
        r#"{ key = "karpenter.k8s.aws/instance-gpu-name", operator = "In", values = ["h100"] }"#,
        r#"limits = { cpu = "16", memory = "300Gi", "nvidia.com/gpu" = "1" }"#,
    ));
    assert!(ok && !text.contains("never launch"), "{output}");
}

#[test]
fn a_legacy_provisioner_is_checked_with_its_webhooks_defaults() {
    let (ok, text, output) = validate(
        r#"
resource "karpenter_provisioner" "gpu" {
  name         = "gpu"
  provider_ref = { name = "default" }
  requirements = [
    { key = "karpenter.k8s.aws/instance-gpu-count", operator = "Gt", values = ["0"] },
  ]
}
"#,
    );
    assert!(!ok, "{output}");
    assert!(
        text.contains("No instance type matches these requirements"),
        "{output}"
    );
    assert!(
        text.contains(
            "karpenter.k8s.aws/instance-category In [c, m, r] (the default Karpenter v0.32's webhook adds"
        ),
        "{output}"
    );
    // Naming a category stops the default: the same pool with g is fine.
    let (ok, _, output) = validate(
        r#"
resource "karpenter_provisioner" "gpu" {
  name         = "gpu"
  provider_ref = { name = "default" }
  requirements = [
    { key = "karpenter.k8s.aws/instance-gpu-count", operator = "Gt", values = ["0"] },
    { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["g", "p"] },
  ]
  limits = { resources = { cpu = "1" } }
}
"#,
    );
    assert!(ok, "{output}");
    assert!(output.contains("This pool can never launch a node"), "{output}");
}

#[test]
fn a_requirement_unknown_at_plan_skips_the_check() {
    let cluster = Cluster::with_v1_crds();
    let config = |arch: &str| {
        format!(
            "{}\nresource \"terraform_data\" \"arch\" {{ input = \"arm64\" }}\n{}",
            cluster.provider_block(),
            pool(
                "later",
                CLASS_REF,
                &format!(
                    r#"{{ key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["p"] }},
                       {{ key = "kubernetes.io/arch", operator = "In", values = [{arch}] }}"#
                ),
                "",
            )
        )
    };
    let work = Workdir::new(&config("terraform_data.arch.output"));
    let run = work.plan().ok();
    assert!(
        !run.text().contains("No instance type matches"),
        "{}",
        run.output()
    );
    // The same pool with the value written out fails: the check itself is on.
    work.set_config(&config("\"arm64\""));
    let run = work.plan().failed();
    assert!(
        run.text().contains("No instance type matches these requirements"),
        "{}",
        run.output()
    );
}

/// Stale data must not block a valid pool: a family released after Karpenter v1.14 (not in the
/// offline data) is a warning that the requirement cannot be checked, also with min_values,
/// while known values that cannot go together stay an error.
#[test]
fn a_value_the_data_has_never_seen_is_a_warning_not_an_error() {
    let (ok, text, output) = validate(&pool(
        "new-family",
        CLASS_REF,
        r#"{ key = "kubernetes.io/arch", operator = "In", values = ["arm64"] },
           { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m10g", "c10g"], min_values = 2 }"#,
        "",
    ));
    assert!(ok, "a warning, not an error: {output}");
    assert!(
        text.contains("Warning: Not in the provider's instance-type data: not checked"),
        "{output}"
    );
    assert!(
        text.contains("\"m10g\", \"c10g\", which no instance type in Karpenter v1.14's reference has"),
        "{output}"
    );
    assert!(text.contains("and its min_values"), "{output}");
    assert!(!text.contains("No instance type matches"), "{output}");

    // Known families that arm64 excludes: still the error.
    let (ok, text, output) = validate(&pool(
        "known-family",
        CLASS_REF,
        r#"{ key = "kubernetes.io/arch", operator = "In", values = ["arm64"] },
           { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5", "c5"] }"#,
        "",
    ));
    assert!(!ok, "{output}");
    assert!(
        text.contains("No instance type matches these requirements"),
        "{output}"
    );
    assert!(!text.contains("not checked"), "{output}");
}

/// Previous generations and types the price table does not know are valid choices: the plan
/// says nothing about them.
#[test]
fn previous_generations_and_unpriced_types_get_no_diagnostic() {
    for (name, requirements) in [
        (
            "old",
            r#"{ key = "karpenter.k8s.aws/instance-generation", operator = "Lt", values = ["3"] }"#,
        ),
        (
            "unpriced",
            r#"{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["hpc7a", "x8aedz"] }"#,
        ),
    ] {
        let (ok, text, output) = validate(&pool(name, CLASS_REF, requirements, ""));
        assert!(ok, "{output}");
        // Terraform's own warning about the development override is not the provider's.
        let own = text.replace("Warning: Provider development overrides are in effect", "");
        assert!(
            !own.contains("Warning:") && !own.contains("Error:"),
            "{name}: {output}"
        );
    }
    // The unpriced pool really selects types without a price.
    let work = Workdir::new(
        r#"
provider "karpenter" {}
data "karpenter_instance_types" "hpc" {
  requirements = [{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["hpc7a", "x8aedz"] }]
}
output "prices" { value = [for t in data.karpenter_instance_types.hpc.instance_types : t.on_demand_price] }
"#,
    );
    work.apply().ok();
    let prices = &work.outputs()["prices"]["value"];
    assert!(
        prices
            .as_array()
            .is_some_and(|p| !p.is_empty() && p.iter().all(serde_json::Value::is_null)),
        "{prices}"
    );
}
