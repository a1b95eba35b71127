//! One build of the dependencies, whatever the command (#53): `cargo test -p acceptance-tests`,
//! `cargo build --bins`, the quick-start's build and the acceptance harness's narrow build of
//! the provider binary must compile every dependency with the features the full `cargo test
//! --workspace` build does, or they compile it (and everything above it) a second time into the
//! same target directory. `workspace-hack/Cargo.toml` turns those features on for every member;
//! this test fails, naming the dependency and the line to add there, when they drift.

use std::path::Path;

use crate::cargo_tree::{drift, resolved};

/// The commands a developer, the scripts and the harness run, as (package selection, edges).
const COMMANDS: &[(&[&str], &str)] = &[
    (&["--workspace"], "normal,build"),
    (&["-p", "terraform-provider-karpenter"], "normal,build"),
    (&["-p", "terraform-provider-karpenter"], "normal,build,dev"),
    (&["-p", "acceptance-tests"], "normal,build,dev"),
    (&["-p", "acceptance-tests"], "normal,build"),
    (
        &["-p", "terraform-provider-karpenter", "-p", "acceptance-tests"],
        "normal,build",
    ),
    (&["-p", "kube-testserver"], "normal,build,dev"),
    (&["-p", "kube-testserver"], "normal,build"),
    (&["-p", "bench"], "normal,build,dev"),
];

#[test]
fn every_command_compiles_the_dependencies_as_the_workspace_test_build_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let full = resolved(root, &["--workspace"], "normal,build,dev");
    assert!(full.len() > 200, "cargo tree listed too little: {}", full.len());
    let mut problems = Vec::new();
    for (selection, edges) in COMMANDS {
        let narrow = resolved(root, selection, edges);
        assert!(narrow.len() > 100, "cargo tree {selection:?} listed too little");
        for line in drift(&full, &narrow) {
            problems.push(format!("`{}` (edges {edges}): {line}", selection.join(" ")));
        }
    }
    assert!(
        problems.is_empty(),
        "these commands would compile dependencies a second time; add the missing features to \
         workspace-hack/Cargo.toml ([build-dependencies] for a crate only build scripts and \
         proc-macros use):\n{}",
        problems.join("\n")
    );
}
