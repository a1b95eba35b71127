//! What features a cargo command compiles each dependency with, read from `cargo tree` (which
//! resolves features exactly as a build of the same package selection does): the shared input
//! of the checks that keep one build of the dependencies ([`crate::one_build`],
//! [`crate::fuzz_build`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// (name, version) → every feature list the build compiles that package with (a package can
/// be compiled twice, e.g. once for build scripts with fewer features).
pub type Resolved = BTreeMap<(String, String), BTreeSet<String>>;

/// `cargo tree` run in `dir` with `selection` (e.g. `["--workspace"]`, `["-p", "bench"]`) and
/// `edges` (`"normal,build,dev"` for a `cargo test`, `"normal,build"` for a `cargo build`);
/// this repository's own crates are left out.
pub fn resolved(dir: &Path, selection: &[&str], edges: &str) -> Resolved {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(dir)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            edges,
            "--prefix",
            "none",
            "-f",
            "{p} [{f}]",
        ])
        .args(selection);
    let out = cmd.output().expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree {selection:?} in {} failed (after a change to a Cargo.toml, run `cargo update \
         --offline --workspace` there and commit its Cargo.lock):\n{}",
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
            continue; // this repository's crates: every build compiles them anyway
        }
        packages
            .entry((name.to_string(), version.to_string()))
            .or_default()
            .insert(features);
    }
    packages
}

/// Every way `narrow` compiles a dependency that `full` does not: a feature list the full
/// build never compiles it with, or a version the full build does not have (a dependency only
/// `narrow` has at all is not reported).
pub fn drift(full: &Resolved, narrow: &Resolved) -> Vec<String> {
    let mut out = Vec::new();
    for ((name, version), lists) in narrow {
        if !full.keys().any(|(n, _)| n == name) {
            continue;
        }
        match full.get(&(name.clone(), version.clone())) {
            None => out.push(format!("{name} {version}: the full build has another version")),
            Some(full_lists) => {
                for list in lists.difference(full_lists) {
                    out.push(format!(
                        "{name} {version}: compiled with [{list}], the full build compiles {full_lists:?}"
                    ));
                }
            }
        }
    }
    out
}
