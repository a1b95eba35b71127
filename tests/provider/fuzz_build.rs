//! CI's fuzz build (`scripts/fuzz.sh ci`) reuses the test build's compiled dependencies (its
//! target directory is seeded with links to them). That holds only while `fuzz/` (a workspace
//! of its own) resolves every dependency it shares with the main workspace to the same version
//! with the same features: one dependency with other features is another artifact, and
//! everything above it compiles again (a second build of most of the tree, about ten minutes
//! on two cores).
//! `fuzz/Cargo.toml` depends on `workspace-hack`, which turns on the features the main
//! workspace's test crates do; this test fails when an update makes the two drift, naming the
//! dependency and both feature lists.

use std::path::Path;

use crate::cargo_tree::{drift, resolved};

#[test]
fn the_fuzz_build_resolves_the_dependencies_as_the_test_build_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let main = resolved(root, &["--workspace"], "normal,build,dev");
    let fuzz = resolved(&root.join("fuzz"), &[], "normal,build,dev");
    assert!(
        main.len() > 200 && fuzz.len() > 200,
        "cargo tree listed too little: {} / {}",
        main.len(),
        fuzz.len()
    );
    // Only the fuzz build has libfuzzer-sys and arbitrary: `drift` skips what the test build lacks.
    let drift = drift(&main, &fuzz);
    assert!(
        drift.is_empty(),
        "fuzz/ no longer reuses the test build's dependencies; it depends on workspace-hack for \
         the features (see workspace-hack/Cargo.toml), so align fuzz/Cargo.lock (versions):\n{}",
        drift.join("\n")
    );
}
