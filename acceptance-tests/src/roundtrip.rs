//! The way in for objects that exist before Terraform manages them, as one helper: objects made
//! outside Terraform (kubectl, the AWS API, another module) are imported with `plan
//! -generate-config-out` ([`generate_config`]), which must plan nothing but the imports; the
//! import applies and re-plans empty ([`import_and_plan_empty`]; from a cluster, with its
//! provider block, [`importer`] and [`import_with_generated_config`]); then the generated
//! configuration alone, against a second, empty cluster, creates objects whose `spec` equals the
//! originals' field by field, with the same JSON types (a number stays a number, a string a
//! string: [`recreate`], [`spec_differences`]).

use serde_json::{Value as Json, json};

use crate::kube::Cluster;
use crate::{Run, Workdir};

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

/// `terraform plan -generate-config-out=<file>` in `work`, whose configuration holds `import {}`
/// blocks: the plan's run (it must succeed) and the configuration Terraform wrote.
pub fn generate_config(work: &Workdir, file: &str) -> (Run, String) {
    let run = work
        .terraform(&[
            "plan",
            "-no-color",
            "-input=false",
            &format!("-generate-config-out={file}"),
        ])
        .ok();
    let generated = std::fs::read_to_string(work.path().join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}\n{}", run.output()));
    (run, generated)
}

/// In `work`, whose configuration holds `count` `import {}` blocks (and the provider's, and
/// whatever they refer to): generates their configuration and checks the plan imports them all
/// and changes nothing, applies, and checks the next plan is empty. Returns the generated
/// configuration.
pub fn import_and_plan_empty(work: &Workdir, count: usize) -> String {
    let (run, generated) = generate_config(work, "generated.tf");
    assert!(
        run.stdout
            .contains(&format!("{count} to import, 0 to add, 0 to change, 0 to destroy")),
        "{}\n{generated}",
        run.output()
    );
    work.apply().ok();
    assert!(
        work.plan_is_empty(),
        "plan after import:\n{}\n{generated}",
        work.plan().output()
    );
    generated
}

/// Imports `imports` from `cluster` with generated configuration ([`import_and_plan_empty`]),
/// in a new working directory whose configuration is the cluster's provider block, `extra`
/// (e.g. resources the imported ones refer to, data sources, outputs) and the import blocks.
/// Returns the directory (to read outputs, remove the imports from state, destroy) and the
/// generated configuration.
pub fn importer(cluster: &Cluster, imports: &[Import], extra: &str) -> (Workdir, String) {
    let work = Workdir::new(&format!(
        "{}\n{extra}\n{}",
        cluster.provider_block(),
        import_blocks(imports)
    ));
    let generated = import_and_plan_empty(&work, imports.len());
    (work, generated)
}

/// [`importer`], when only the generated configuration matters.
pub fn import_with_generated_config(cluster: &Cluster, imports: &[Import], extra: &str) -> String {
    importer(cluster, imports, extra).1
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
