//! Every example directory passes `terraform validate` on its own, as a user who copies just
//! that directory gets it: no reference to a resource another example declares. Directories
//! that need third-party providers (which cannot be installed offline) are listed with the test
//! that covers them instead; a new example directory is validated here unless it is added to
//! that list on purpose.
//!
//! Terraform 1.11 (the CLI here) validates them, so files written for newer Terraform are left
//! out of the configuration by name ([`NEWER_TERRAFORM_FILES`]); `examples_static.rs` checks
//! those against the schemas instead. Query files (`*.tfquery.hcl`, Terraform 1.14+, under
//! `examples/list-resources/`) are not `.tf` files: Terraform 1.11 and this test never read them.

use std::path::{Path, PathBuf};

use acceptance_tests::{Workdir, workspace_root};

/// Example directories that use providers other than ours, and where they are tested.
const COVERED_ELSEWHERE: &[(&str, &str)] = &[
    (
        "complete-eks",
        "community modules and hashicorp providers: examples_static.rs checks every karpenter block",
    ),
    (
        "eks-auto-mode",
        "the community VPC module and hashicorp/aws: examples_static.rs checks every karpenter block",
    ),
    (
        "migrate-from-kubectl-manifest/before",
        "gavinbunney/kubectl: moves.rs applies it with a stand-in provider",
    ),
    (
        "migrate-from-kubectl-manifest/after",
        "gavinbunney/kubectl: moves.rs applies it with a stand-in provider",
    ),
];

/// `.tf` files that Terraform 1.11 rejects, left out of the validated configuration: each
/// resource type's `import { to = …, identity = { … } }` example (the `identity` argument of
/// `import` blocks arrived in Terraform 1.12). `examples_static.rs` checks their identity
/// attributes against the identity schemas and that each targets a resource of its directory.
const NEWER_TERRAFORM_FILES: &[&str] =
    &[terraform_provider_karpenter::provider::docs::IMPORT_BY_IDENTITY_EXAMPLE];

/// Every directory under `examples/` that holds `.tf` files, relative to `examples/`.
fn example_dirs(root: &Path, dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap_or_else(|e| panic!("read entry: {e}")).path())
        .collect();
    entries.sort();
    if entries
        .iter()
        .any(|p| p.extension().is_some_and(|ext| ext == "tf"))
    {
        found.push(dir.strip_prefix(root).unwrap_or(dir).to_path_buf());
    }
    for path in entries.iter().filter(|p| p.is_dir()) {
        example_dirs(root, path, found);
    }
}

/// All `.tf` files of one directory, in name order, as one configuration, without the
/// [`NEWER_TERRAFORM_FILES`].
fn configuration_of(dir: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap_or_else(|e| panic!("read entry: {e}")).path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "tf"))
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| NEWER_TERRAFORM_FILES.contains(&n))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display())))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_example_directory_validates_alone() {
    let root = workspace_root().join("examples");
    let mut dirs = Vec::new();
    example_dirs(&root, &root, &mut dirs);
    assert!(dirs.len() >= 10, "found only {dirs:?} under {}", root.display());

    let mut failures = Vec::new();
    let mut validated = 0;
    for dir in &dirs {
        let name = dir.to_string_lossy().replace('\\', "/");
        if COVERED_ELSEWHERE.iter().any(|(skip, _)| *skip == name) {
            continue;
        }
        let run = Workdir::new(&configuration_of(&root.join(dir))).validate();
        if !run.success {
            failures.push(format!("examples/{name}:\n{}", run.output()));
        }
        validated += 1;
    }
    for (skip, _) in COVERED_ELSEWHERE {
        assert!(
            dirs.iter().any(|d| d.to_string_lossy() == *skip),
            "examples/{skip} is listed as covered elsewhere but does not exist"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {validated} example directories do not validate on their own:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
