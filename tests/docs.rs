//! Fails when the committed `docs/` differ from what the generator produces from the current
//! schemas and examples, so stale docs cannot be merged. Fix: `cargo run --bin docgen`.

use std::path::Path;

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
