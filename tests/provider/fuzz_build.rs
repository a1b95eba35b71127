//! CI's fuzz build (`scripts/fuzz.sh ci`) runs in the test build's target directory and reuses
//! its compiled dependencies. That holds only while `fuzz/` (a workspace of its own) resolves
//! every dependency it shares with the main workspace to the same version with the same
//! features: one dependency with other features is another artifact, and everything above it
//! compiles again (a second build of most of the tree, about ten minutes on two cores).
//! `fuzz/Cargo.toml` declares the features the main workspace's test crates turn on; this test
//! fails when an update makes the two drift, naming the dependency and both feature lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// (name, version) → every feature list the build compiles that package with (a package can
/// be compiled twice, e.g. once for build scripts with fewer features).
type Resolved = BTreeMap<(String, String), BTreeSet<String>>;

/// `cargo tree` of the workspace at `dir`, with the edges a `cargo test` build compiles.
fn resolved(dir: &Path, workspace: bool) -> Resolved {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(dir).args([
        "tree",
        "--offline",
        "--locked",
        "-e",
        "normal,build,dev",
        "--prefix",
        "none",
        "-f",
        "{p} [{f}]",
    ]);
    if workspace {
        cmd.arg("--workspace");
    }
    let out = cmd.output().expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree in {} failed (after a change to fuzz/Cargo.toml, run `cargo update --offline \
         --workspace` in fuzz/ and commit its Cargo.lock):\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut packages = Resolved::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // `name vX.Y.Z [(path)] [(proc-macro)] [features] [(*)]`
        let line = line.trim_end_matches(" (*)");
        let (Some(open), true) = (line.rfind(" ["), line.ends_with(']')) else {
            continue;
        };
        let features = line[open + 2..line.len() - 1].to_string();
        let mut words = line[..open].split(' ');
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        if line[..open].contains(" (/") {
            continue; // this repository's crates: the fuzz build compiles them anyway
        }
        packages
            .entry((name.to_string(), version.to_string()))
            .or_default()
            .insert(features);
    }
    packages
}

#[test]
fn the_fuzz_build_resolves_the_dependencies_as_the_test_build_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let main = resolved(root, true);
    let fuzz = resolved(&root.join("fuzz"), false);
    assert!(
        main.len() > 200 && fuzz.len() > 200,
        "cargo tree listed too little: {} / {}",
        main.len(),
        fuzz.len()
    );
    let mut drift = Vec::new();
    for ((name, version), lists) in &fuzz {
        if !main.keys().any(|(n, _)| n == name) {
            continue; // only the fuzz build has it (libfuzzer-sys, arbitrary)
        }
        match main.get(&(name.clone(), version.clone())) {
            None => drift.push(format!(
                "{name} {version}: the main lock file has another version"
            )),
            Some(main_lists) => {
                for list in lists.difference(main_lists) {
                    drift.push(format!(
                        "{name} {version}: the fuzz build needs features [{list}], the test build compiles {main_lists:?}"
                    ));
                }
            }
        }
    }
    assert!(
        drift.is_empty(),
        "fuzz/ no longer reuses the test build's dependencies; align fuzz/Cargo.toml (features) \
         or fuzz/Cargo.lock (versions):\n{}",
        drift.join("\n")
    );
}
