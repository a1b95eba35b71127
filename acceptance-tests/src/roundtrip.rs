//! The way in for objects that exist before Terraform manages them, as one helper: objects made
//! with kubectl are imported with `plan -generate-config-out`, which must plan nothing but the
//! imports; the import applies and re-plans empty; then the generated configuration alone,
//! against a second, empty cluster, creates objects whose `spec` equals the originals' field by
//! field, with the same JSON types (a number stays a number, a string a string).

use serde_json::{Value as Json, json};

use crate::Workdir;
use crate::kube::Cluster;

/// One object to import: its Terraform address (`karpenter_node_pool.default`) and import ID.
#[derive(Debug, Clone)]
pub struct Import {
    pub address: String,
    pub id: String,
}

impl Import {
    pub fn new(resource_type: &str, resource_name: &str, id: &str) -> Self {
        Self {
            address: format!("{resource_type}.{resource_name}"),
            id: id.to_string(),
        }
    }
}

/// `import {}` blocks for `imports`.
pub fn import_blocks(imports: &[Import]) -> String {
    imports
        .iter()
        .map(|i| format!("import {{\n  to = {}\n  id = \"{}\"\n}}\n", i.address, i.id))
        .collect()
}

/// Imports `imports` from `cluster` with generated configuration (`extra` is added to the
/// configuration, e.g. resources the imported ones refer to); checks the plan imports them all
/// and changes nothing, applies, and checks the next plan is empty. Returns the generated
/// configuration.
pub fn import_with_generated_config(cluster: &Cluster, imports: &[Import], extra: &str) -> String {
    let importer = Workdir::new(&format!(
        "{}\n{extra}\n{}",
        cluster.provider_block(),
        import_blocks(imports)
    ));
    let run = importer
        .terraform(&[
            "plan",
            "-no-color",
            "-input=false",
            "-generate-config-out=generated.tf",
        ])
        .ok();
    let count = imports.len();
    assert!(
        run.stdout
            .contains(&format!("{count} to import, 0 to add, 0 to change, 0 to destroy")),
        "{}",
        run.output()
    );
    let generated = std::fs::read_to_string(importer.path().join("generated.tf")).expect("generated.tf");
    importer.apply().ok();
    assert!(
        importer.plan_is_empty(),
        "plan after import:\n{}\n{generated}",
        importer.plan().output()
    );
    generated
}

/// Applies `configuration` (a generated one, with `extra`) against `cluster`: it plans `count`
/// objects to add, applies, and plans empty.
pub fn recreate(cluster: &Cluster, configuration: &str, extra: &str, count: usize) {
    let recreator = Workdir::new(&format!("{}\n{extra}\n{configuration}", cluster.provider_block()));
    let run = recreator.plan().ok();
    assert!(
        run.stdout
            .contains(&format!("Plan: {count} to add, 0 to change, 0 to destroy.")),
        "{}\n{configuration}",
        run.output()
    );
    recreator.apply().ok();
    assert!(
        recreator.plan_is_empty(),
        "plan after recreating:\n{}",
        recreator.plan().output()
    );
}

/// Where `recreated` differs from `original` (two `spec`s), JSON types included.
pub fn spec_differences(original: &Json, recreated: &Json) -> Vec<String> {
    let mut out = Vec::new();
    differences(
        &json!({"spec": original["spec"]}),
        &json!({"spec": recreated["spec"]}),
        "",
        &mut out,
    );
    out
}

fn differences(original: &Json, recreated: &Json, path: &str, out: &mut Vec<String>) {
    match (original, recreated) {
        (Json::Object(a), Json::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                differences(
                    a.get(key).unwrap_or(&Json::Null),
                    b.get(key).unwrap_or(&Json::Null),
                    &format!("{path}.{key}"),
                    out,
                );
            }
        }
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{path}[{i}]"), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(format!("{path}: {a} was recreated as {b}")),
    }
}
