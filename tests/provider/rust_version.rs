//! The minimum Rust the README and `Cargo.toml` name is the real one: no locked dependency that
//! a build of this workspace compiles on this platform declares a higher `rust-version`, and
//! every member declares the same one. (The workspace's own code is held to it by clippy's
//! `incompatible_msrv` lint, which reads `rust-version`, in the CI build.)

use std::path::Path;
use std::process::Command;

/// `1.94.1` → (1, 94, 1).
fn version(text: &str) -> (u64, u64, u64) {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

#[test]
fn rust_version_is_the_highest_any_locked_dependency_declares() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let host = std::env::var("TARGET").ok().or_else(|| {
        let out = Command::new("rustc").arg("-vV").output().ok()?;
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
    });
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["metadata", "--offline", "--locked", "--format-version", "1"]);
    if let Some(host) = &host {
        cmd.args(["--filter-platform", host]);
    }
    let out = cmd.output().expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let members: Vec<&str> = meta["workspace_members"]
        .as_array()
        .expect("workspace_members")
        .iter()
        .filter_map(|m| m.as_str())
        .collect();
    // the packages a build on this platform compiles (the resolve graph, filtered to it)
    let resolved: Vec<&str> = meta["resolve"]["nodes"]
        .as_array()
        .expect("resolve.nodes")
        .iter()
        .filter_map(|n| n["id"].as_str())
        .collect();
    let packages = meta["packages"].as_array().expect("packages");
    let declared = |id: &str| -> Option<(String, String)> {
        let p = packages.iter().find(|p| p["id"] == id)?;
        Some((
            format!("{} {}", p["name"].as_str()?, p["version"].as_str()?),
            p["rust_version"].as_str()?.to_string(),
        ))
    };
    let ours: Vec<(String, String)> = members.iter().filter_map(|m| declared(m)).collect();
    let root_version = ours
        .iter()
        .find(|(name, _)| name.starts_with("terraform-provider-karpenter "))
        .map(|(_, v)| v.clone())
        .expect("Cargo.toml declares rust-version");
    for (name, v) in &ours {
        assert_eq!(
            v, &root_version,
            "{name} declares rust-version {v}, the workspace {root_version}: one minimum for all"
        );
    }
    let dependencies: Vec<(String, String)> = resolved
        .iter()
        .filter(|id| !members.contains(id))
        .filter_map(|id| declared(id))
        .collect();
    assert!(dependencies.len() > 200, "{} dependencies", dependencies.len());
    let highest = dependencies
        .iter()
        .map(|(_, v)| version(v))
        .max()
        .expect("a dependency declares rust-version");
    let above: Vec<String> = dependencies
        .iter()
        .filter(|(_, v)| version(v) > version(&root_version))
        .map(|(name, v)| format!("{name} (rust-version {v})"))
        .collect();
    assert!(
        above.is_empty(),
        "Cargo.toml says rust-version = \"{root_version}\", but these locked dependencies need more; raise it \
         (and the README's \"What you need\") to the highest:\n{}",
        above.join("\n")
    );
    assert_eq!(
        version(&root_version),
        highest,
        "rust-version = \"{root_version}\" is above what any dependency needs ({highest:?}): say why in Cargo.toml, \
         or lower it"
    );
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    assert!(
        readme.contains(&format!("Rust **{root_version}** or newer")),
        "the README's \"What you need\" does not say Rust **{root_version}** or newer"
    );
}
