//! Fails when the committed `docs/` differ from what the generator produces from the current
//! schemas and examples, so stale docs cannot be merged (fix: `cargo run --bin docgen`), when
//! `docs/` breaks the registry's layout, and when the versions guide misses a value of the
//! provider's table of enum values later Karpenter releases added.

use std::path::Path;

use terraform_provider_karpenter::k8s::served_values::FIRST_VALUE_RELEASES;
use terraform_provider_karpenter::provider::docs;

#[test]
fn committed_docs_match_the_schemas() -> Result<(), docs::DocsError> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = docs::generate(root)?;
    let differences = docs::check(root, &pages)?;
    let list: Vec<String> = differences.iter().map(|d| format!("  {d}")).collect();
    assert!(
        differences.is_empty(),
        "docs/ is out of date with the schemas:\n{}\nRun `{}` and commit the result.",
        list.join("\n"),
        docs::FIX_COMMAND
    );
    Ok(())
}

/// The registry publishes `docs/` by its layout: `index.md` at the root, pages only in the
/// known subdirectories, and every hand-written guide with front matter in the one "" guides
/// subcategory. A project page (figures, reports) dropped into `docs/` would be published as a
/// provider page, so this fails on it.
#[test]
fn docs_follow_the_registry_layout() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    const SUBDIRECTORIES: &[&str] = &[
        "resources",
        "data-sources",
        "guides",
        "list-resources",
        "functions",
    ];
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(&docs).expect("read docs/") {
        let path = entry.expect("docs/ entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if path.is_dir() {
            if !SUBDIRECTORIES.contains(&name.as_str()) {
                problems.push(format!("docs/{name}/ is not a registry subdirectory"));
            }
        } else if name != "index.md" {
            problems.push(format!("docs/{name}: only index.md belongs in the docs root"));
        }
    }
    for entry in std::fs::read_dir(docs.join("guides")).expect("read docs/guides/") {
        let path = entry.expect("guide").path();
        let text = std::fs::read_to_string(&path).expect("read guide");
        let front = text
            .strip_prefix("---\n")
            .and_then(|rest| rest.split_once("\n---\n"))
            .map(|(front, _)| front);
        match front {
            None => problems.push(format!("{}: no front matter", path.display())),
            Some(front) => {
                for key in ["page_title:", "description:"] {
                    if !front.lines().any(|l| l.starts_with(key)) {
                        problems.push(format!("{}: front matter without {key}", path.display()));
                    }
                }
                if !front.lines().any(|l| l == "subcategory: \"\"") {
                    problems.push(format!("{}: guides share the subcategory \"\"", path.display()));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "docs/ does not follow the registry layout:\n{}",
        problems.join("\n")
    );
}

/// #52: the versions guide lists every enum value a later Karpenter release added, with that
/// release, in its values table (the provider refuses each on an older cluster and names the
/// release; the guide is where a user looks before upgrading).
#[test]
fn versions_guide_lists_every_later_enum_value_with_its_release() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guides/karpenter-versions.md");
    let guide = std::fs::read_to_string(&path).expect("read the versions guide");
    let section = guide
        .split("## Minimum Karpenter version per value")
        .nth(1)
        .expect("the guide's section \"Minimum Karpenter version per value\"");
    // The table's own rows: from its delimiter row to the first line that is not a row (a row
    // after a blank line renders as plain text, outside the table).
    let table: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with("|---"))
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let mut missing = Vec::new();
    for (_, wire, value, release) in FIRST_VALUE_RELEASES {
        let row = table.iter().any(|l| {
            l.contains(&format!("`{wire}`"))
                && l.contains(&format!("| `{value}` |"))
                && l.trim_end().ends_with(&format!("| {release} |"))
        });
        if !row {
            missing.push(format!("{wire} = {value} ({release})"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/guides/karpenter-versions.md has no row for: {}",
        missing.join(", ")
    );
}
