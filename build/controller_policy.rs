//! Build step of the controller policy per Karpenter release: reads the committed tables
//! `data/karpenter/controller-policy/v<major>.<minor>.tsv` (the statements of each release's
//! reference template, written by `scripts/karpenter-release.sh`) and writes them as static
//! Rust data into `OUT_DIR`, which `src/policy/releases.rs` includes. A table the provider
//! could not render (an unknown placeholder, a row naming a statement that is not there) fails
//! the build, naming the file and line.

use std::fmt::Write as _;
use std::path::Path;

use super::error::BuildError;

/// The tables, relative to the package.
pub const DIR: &str = "data/karpenter/controller-policy";

/// The placeholders the provider fills in (`src/policy/controller.rs`).
const PLACEHOLDERS: &[&str] = &[
    "AWS::Partition",
    "AWS::Region",
    "AWS::AccountId",
    "ClusterName",
    "KarpenterNodeRole.Arn",
    "KarpenterInterruptionQueue.Arn",
];

#[derive(Default)]
struct Statement {
    sid: String,
    effect: String,
    actions: Vec<String>,
    resources: Vec<String>,
    /// (operator, key, values), in order of first appearance.
    conditions: Vec<(String, String, Vec<String>)>,
}

struct Group {
    name: String,
    logical_id: String,
    policy_name: String,
    statements: Vec<Statement>,
}

struct Release {
    version: String,
    major: u32,
    minor: u32,
    derived_from: Option<String>,
    groups: Vec<Group>,
}

fn placeholders_known(value: &str) -> Result<(), String> {
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("{value:?} has an unclosed ${{"))?;
        let name = &after[..end];
        if !PLACEHOLDERS.contains(&name) {
            return Err(format!(
                "{value:?} has the placeholder ${{{name}}}, which the provider does not fill in (it knows {})",
                PLACEHOLDERS.join(", ")
            ));
        }
        rest = &after[end + 1..];
    }
    Ok(())
}

fn parse(version: &str, text: &str) -> Result<Release, String> {
    let (major, minor) = version
        .strip_prefix('v')
        .and_then(|v| v.split_once('.'))
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .ok_or_else(|| format!("the file name {version}.tsv is not v<major>.<minor>.tsv"))?;
    let mut release = Release {
        version: version.to_string(),
        major,
        minor,
        derived_from: None,
        groups: Vec::new(),
    };
    let mut stated_version = None;
    for (n, line) in text.lines().enumerate() {
        let at = |m: String| format!("line {}: {m}", n + 1);
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let cells: Vec<&str> = line.split('\t').collect();
        for cell in &cells {
            placeholders_known(cell).map_err(at)?;
        }
        match cells[..] {
            ["@karpenter_version", v] => stated_version = Some(v.to_string()),
            ["@derived_from", v] => release.derived_from = Some(v.to_string()),
            ["policy", name, logical_id, policy_name] => release.groups.push(Group {
                name: name.to_string(),
                logical_id: logical_id.to_string(),
                policy_name: policy_name.to_string(),
                statements: Vec::new(),
            }),
            ["statement", group, sid, effect] => {
                if release
                    .groups
                    .iter()
                    .flat_map(|g| &g.statements)
                    .any(|s| s.sid == sid)
                {
                    return Err(at(format!("the statement {sid} is there twice")));
                }
                let g = release
                    .groups
                    .iter_mut()
                    .find(|g| g.name == group)
                    .ok_or_else(|| at(format!("no policy row for the group {group}")))?;
                g.statements.push(Statement {
                    sid: sid.to_string(),
                    effect: effect.to_string(),
                    ..Statement::default()
                });
            }
            ["action" | "resource", sid, value] | ["condition", sid, _, _, value] => {
                let s = release
                    .groups
                    .iter_mut()
                    .flat_map(|g| g.statements.iter_mut())
                    .find(|s| s.sid == sid)
                    .ok_or_else(|| at(format!("no statement row for {sid}")))?;
                match cells[..] {
                    ["action", ..] => s.actions.push(value.to_string()),
                    ["resource", ..] => s.resources.push(value.to_string()),
                    ["condition", _, test, key, _] => {
                        match s.conditions.iter_mut().find(|(t, k, _)| t == test && k == key) {
                            Some((_, _, values)) => values.push(value.to_string()),
                            None => s.conditions.push((
                                test.to_string(),
                                key.to_string(),
                                vec![value.to_string()],
                            )),
                        }
                    }
                    _ => {}
                }
            }
            _ => return Err(at(format!("{line:?} is not a row of the policy table"))),
        }
    }
    if stated_version.as_deref() != Some(version) {
        return Err(format!("its @karpenter_version line must say {version}"));
    }
    if release.groups.is_empty() {
        return Err("no policy rows".to_string());
    }
    for g in &release.groups {
        for s in &g.statements {
            if s.actions.is_empty() || s.resources.is_empty() {
                return Err(format!("the statement {} has no action or no resource", s.sid));
            }
        }
    }
    Ok(release)
}

fn render(releases: &[Release]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Generated by build/controller_policy.rs from {DIR}/*.tsv. Do not edit."
    );
    let _ = writeln!(
        out,
        "/// Every release the provider knows the controller policy of, oldest first."
    );
    let _ = writeln!(out, "pub static RELEASES: &[Release] = &[");
    for r in releases {
        let _ = writeln!(
            out,
            "    Release {{ version: {:?}, major: {}, minor: {}, derived_from: {:?}, groups: &[",
            r.version, r.major, r.minor, r.derived_from
        );
        for g in &r.groups {
            let _ = writeln!(
                out,
                "        GroupTemplate {{ name: {:?}, logical_id: {:?}, policy_name: {:?}, statements: &[",
                g.name, g.logical_id, g.policy_name
            );
            for s in &g.statements {
                let conditions: Vec<String> = s
                    .conditions
                    .iter()
                    .map(|(t, k, v)| {
                        format!("ConditionTemplate {{ test: {t:?}, key: {k:?}, values: &{v:?} }}")
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "            StatementTemplate {{ sid: {:?}, effect: {:?}, actions: &{:?}, resources: &{:?}, conditions: &[{}] }},",
                    s.sid,
                    s.effect,
                    s.actions,
                    s.resources,
                    conditions.join(", ")
                );
            }
            let _ = writeln!(out, "        ] }},");
        }
        let _ = writeln!(out, "    ] }},");
    }
    let _ = writeln!(out, "];");
    out
}

/// Whether the build can read `text` as `version`'s table (the generator checks what it writes).
pub fn check(version: &str, text: &str) -> Result<(), BuildError> {
    parse(version, text)
        .map(drop)
        .map_err(|m| BuildError(format!("{DIR}/{version}.tsv: {m}")))
}

/// Reads every table and writes the Rust data to `out`; tells cargo what to watch.
pub fn generate(manifest_dir: &Path, out: &Path) -> Result<(), BuildError> {
    let dir = manifest_dir.join(DIR);
    println!("cargo:rerun-if-changed={}", dir.display());
    let fail = |m: String| BuildError(m);
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        fail(format!(
            "{DIR} cannot be read ({e}); it is part of the repository."
        ))
    })?;
    let mut releases = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(version) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".tsv"))
            .map(str::to_string)
        else {
            continue;
        };
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        releases.push(parse(&version, &text).map_err(|m| fail(format!("{DIR}/{version}.tsv: {m}")))?);
    }
    releases.sort_by_key(|r| (r.major, r.minor));
    if releases.is_empty() {
        return Err(fail(format!("{DIR} holds no v<major>.<minor>.tsv")));
    }
    std::fs::write(out, render(&releases))
        .map_err(|e| fail(format!("{} cannot be written: {e}", out.display())))
}
