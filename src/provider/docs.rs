//! The provider's registry documentation (`docs/`), generated from the schemas of every
//! registered resource and data source plus the examples under `examples/`. Used by
//! `cargo run --bin docgen` (write or `--check`) and by `tests/provider/docs.rs`, which fails when the
//! committed pages are stale.
//!
//! Layout (the Terraform registry's): `docs/index.md`, `docs/resources/<name>.md`,
//! `docs/data-sources/<name>.md`, and `docs/list-resources/<name>.md` for each resource type
//! with a list schema (Terraform 1.14+ `terraform query`), where `<name>` is the type name
//! without the provider prefix. A resource type with an identity schema (Terraform 1.12+) gets
//! its import by identity and identity schema on its resource page.
//! Examples: `examples/provider/provider.tf`, `examples/resources/<type>/resource.tf`,
//! `import.sh` and `import-by-identity.tf`, `examples/data-sources/<type>/data-source.tf`,
//! `examples/list-resources/<type>/list-resource.tfquery.hcl`; each is optional (the import by
//! identity is generated from the identity schema when its file is missing).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::provider::{KarpenterProvider, PROVIDER_ADDRESS};
use crate::terraform::framework::Provider;
use crate::terraform::framework::markdown::{self, GENERATED_MARKER, Page, PageKind, ProviderPage};

/// The `## Authentication` section of the index page.
const AUTHENTICATION: &str = include_str!("../../templates/authentication.md");
/// The index page's table of types, for self-managed Karpenter and EKS Auto Mode.
const WHAT_IT_MANAGES: &str = include_str!("../../templates/what-it-manages.md");

/// The folders whose generated pages are owned (written and pruned) by the generator.
pub const PAGE_DIRS: &[&str] = &["docs/resources", "docs/data-sources", "docs/list-resources"];

/// The file of each resource type's `import { identity = … }` example, in
/// `examples/resources/<type>/`. Terraform before 1.12 rejects the block, so the example
/// tests that validate those directories with an older Terraform skip this file by name.
pub const IMPORT_BY_IDENTITY_EXAMPLE: &str = "import-by-identity.tf";

/// The file of each list resource's example, in `examples/list-resources/<type>/`.
pub const LIST_RESOURCE_EXAMPLE: &str = "list-resource.tfquery.hcl";

/// The command that regenerates the docs.
pub const FIX_COMMAND: &str = "cargo run --bin docgen";

#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot remove {path}: {source}")]
    Remove { path: PathBuf, source: io::Error },
    #[error("type name {0:?} does not start with the provider prefix {1:?}")]
    TypeName(String, String),
}

/// The provider's name: the last segment of its registry address (`karpenter`).
pub fn provider_name() -> &'static str {
    PROVIDER_ADDRESS.rsplit('/').next().unwrap_or("karpenter")
}

/// Where the reference pages' "Misspelled keys" sections point (#37).
const KEY_CHECK_GUIDE: &str = "../guides/troubleshooting.md#misspelled-keys";

/// Every generated page, keyed by its path relative to the repository root.
pub fn generate(root: &Path) -> Result<BTreeMap<PathBuf, String>, DocsError> {
    let provider = KarpenterProvider::new();
    let name = provider_name();
    let prefix = format!("{name}_");
    let mut pages = BTreeMap::new();

    let example = read_optional(&root.join("examples/provider/provider.tf"))?;
    let authentication = format!("{WHAT_IT_MANAGES}\n{}", fill_generated(AUTHENTICATION));
    pages.insert(
        PathBuf::from("docs/index.md"),
        markdown::render_provider_page(
            &ProviderPage {
                provider_name: name,
                example: example.as_deref(),
                guide: Some(&authentication),
            },
            provider.schema(),
        ),
    );
    // Guides are written by hand, except their generated sections.
    for guide in guide_paths(root)? {
        let text = read_optional(&root.join(&guide))?.unwrap_or_default();
        let filled = fill_generated(&text);
        if filled != text {
            pages.insert(guide, filled);
        }
    }

    for r in provider.resources() {
        let type_name = r.type_name();
        let dir = root.join("examples/resources").join(type_name);
        let example = read_optional(&dir.join("resource.tf"))?;
        let import = read_optional(&dir.join("import.sh"))?;
        let identity = r.identity_schema();
        let import_by_identity = match identity {
            Some(_) => read_optional(&dir.join(IMPORT_BY_IDENTITY_EXAMPLE))?,
            None => None,
        };
        let page = Page {
            kind: PageKind::Resource,
            type_name,
            provider_name: name,
            subcategory: "",
            example: example.as_deref(),
            import: import.as_deref(),
            identity,
            import_by_identity: import_by_identity.as_deref(),
            key_check_guide: Some(KEY_CHECK_GUIDE),
        };
        pages.insert(
            page_path("docs/resources", type_name, &prefix)?,
            markdown::render_page(&page, r.schema()),
        );

        let Some(list_schema) = r.list_schema() else {
            continue;
        };
        let example = read_optional(
            &root
                .join("examples/list-resources")
                .join(type_name)
                .join(LIST_RESOURCE_EXAMPLE),
        )?;
        let page = Page {
            kind: PageKind::ListResource,
            type_name,
            provider_name: name,
            subcategory: "",
            example: example.as_deref(),
            import: None,
            identity: None,
            import_by_identity: None,
            key_check_guide: Some(KEY_CHECK_GUIDE),
        };
        pages.insert(
            page_path("docs/list-resources", type_name, &prefix)?,
            markdown::render_page(&page, list_schema),
        );
    }
    for d in provider.data_sources() {
        let type_name = d.type_name();
        let example = read_optional(
            &root
                .join("examples/data-sources")
                .join(type_name)
                .join("data-source.tf"),
        )?;
        let page = Page {
            kind: PageKind::DataSource,
            type_name,
            provider_name: name,
            subcategory: "",
            example: example.as_deref(),
            import: None,
            identity: None,
            import_by_identity: None,
            key_check_guide: Some(KEY_CHECK_GUIDE),
        };
        pages.insert(
            page_path("docs/data-sources", type_name, &prefix)?,
            markdown::render_page(&page, d.schema()),
        );
    }
    Ok(pages)
}

/// The hand-written guides, `docs/guides/*.md`.
fn guide_paths(root: &Path) -> Result<Vec<PathBuf>, DocsError> {
    let dir = root.join("docs/guides");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(DocsError::Read { path: dir, source }),
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".md"))
        .map(|n| Path::new("docs/guides").join(n))
        .collect();
    out.sort();
    Ok(out)
}

/// The end of a generated section of a hand-written page.
const END_GENERATED: &str = "<!-- end generated -->";

/// What each generated section holds, by the name in its opening marker
/// (`<!-- generated: NAME -->`).
fn generated_section(name: &str) -> Option<String> {
    match name {
        "kubernetes-permissions" => Some(crate::k8s::permissions::markdown_table()),
        "kubernetes-cluster-role" => Some(format!(
            "```yaml\n{}```\n",
            crate::k8s::permissions::cluster_role_yaml("terraform-karpenter")
        )),
        _ => None,
    }
}

/// `text` with every generated section written anew (one source for what several pages show).
pub fn fill_generated(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!-- generated: ") {
        let Some(close) = rest[start..].find(" -->").map(|i| start + i) else {
            break;
        };
        let name = &rest[start + "<!-- generated: ".len()..close];
        let open_end = close + " -->".len();
        let (Some(content), Some(end)) = (generated_section(name), rest[open_end..].find(END_GENERATED))
        else {
            out.push_str(&rest[..open_end]);
            rest = &rest[open_end..];
            continue;
        };
        out.push_str(&rest[..open_end]);
        out.push('\n');
        out.push_str(&content);
        out.push_str(END_GENERATED);
        rest = &rest[open_end + end + END_GENERATED.len()..];
    }
    out.push_str(rest);
    out
}

fn page_path(dir: &str, type_name: &str, prefix: &str) -> Result<PathBuf, DocsError> {
    let short = type_name
        .strip_prefix(prefix)
        .ok_or_else(|| DocsError::TypeName(type_name.to_string(), prefix.to_string()))?;
    Ok(Path::new(dir).join(format!("{short}.md")))
}

fn read_optional(path: &Path) -> Result<Option<String>, DocsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(DocsError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// How a file on disk differs from what the generator produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// The page should exist but does not.
    Missing(PathBuf),
    /// The page exists with other content.
    Changed(PathBuf),
    /// A generated page for a type that is no longer registered.
    Stale(PathBuf),
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Missing(p) => write!(f, "{} (missing)", p.display()),
            Difference::Changed(p) => write!(f, "{} (out of date)", p.display()),
            Difference::Stale(p) => write!(f, "{} (stale: no such type any more)", p.display()),
        }
    }
}

/// Generated pages (they carry the marker) in the page folders that are not in `pages`.
fn stale_pages(root: &Path, pages: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, DocsError> {
    let mut stale = Vec::new();
    for dir in PAGE_DIRS {
        let entries = match std::fs::read_dir(root.join(dir)) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(source) => {
                return Err(DocsError::Read {
                    path: root.join(dir),
                    source,
                });
            }
        };
        for entry in entries {
            let entry = entry.map_err(|source| DocsError::Read {
                path: root.join(dir),
                source,
            })?;
            let file_name = entry.file_name();
            let relative = Path::new(dir).join(&file_name);
            if !file_name.to_string_lossy().ends_with(".md") || pages.contains_key(&relative) {
                continue;
            }
            let text = read_optional(&entry.path())?.unwrap_or_default();
            if is_generated(&text) {
                stale.push(relative);
            }
        }
    }
    stale.sort();
    Ok(stale)
}

/// Whether a page was written by this generator (and so may be replaced or removed by it).
pub fn is_generated(text: &str) -> bool {
    text.lines().take(3).any(|l| l == GENERATED_MARKER)
}

/// Compares `pages` with the files under `root`.
pub fn check(root: &Path, pages: &BTreeMap<PathBuf, String>) -> Result<Vec<Difference>, DocsError> {
    let mut differences = Vec::new();
    for (path, text) in pages {
        match read_optional(&root.join(path))? {
            None => differences.push(Difference::Missing(path.clone())),
            Some(current) if current != *text => differences.push(Difference::Changed(path.clone())),
            Some(_) => {}
        }
    }
    differences.extend(stale_pages(root, pages)?.into_iter().map(Difference::Stale));
    Ok(differences)
}

/// Writes `pages` under `root` (only those that changed) and removes stale generated pages.
/// Returns what was done, as differences that existed before.
pub fn write(root: &Path, pages: &BTreeMap<PathBuf, String>) -> Result<Vec<Difference>, DocsError> {
    let differences = check(root, pages)?;
    for difference in &differences {
        match difference {
            Difference::Missing(path) | Difference::Changed(path) => {
                let full = root.join(path);
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent).map_err(|source| DocsError::Write {
                        path: parent.to_path_buf(),
                        source,
                    })?;
                }
                let text = pages.get(path).map(String::as_str).unwrap_or_default();
                std::fs::write(&full, text).map_err(|source| DocsError::Write { path: full, source })?;
            }
            Difference::Stale(path) => {
                let full = root.join(path);
                std::fs::remove_file(&full).map_err(|source| DocsError::Remove { path: full, source })?;
            }
        }
    }
    Ok(differences)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages() -> BTreeMap<PathBuf, String> {
        [
            (PathBuf::from("docs/index.md"), "index\n".to_string()),
            (
                PathBuf::from("docs/resources/a.md"),
                format!("---\n{GENERATED_MARKER}\na\n"),
            ),
        ]
        .into()
    }

    #[test]
    fn write_then_check_is_clean_and_prunes_only_generated_pages() -> Result<(), DocsError> {
        let dir = tempfile::tempdir().map_err(|source| DocsError::Write {
            path: PathBuf::from("tmp"),
            source,
        })?;
        let root = dir.path();
        let pages = pages();
        assert_eq!(
            check(root, &pages)?,
            [
                Difference::Missing("docs/index.md".into()),
                Difference::Missing("docs/resources/a.md".into())
            ]
        );
        write(root, &pages)?;
        assert_eq!(check(root, &pages)?, []);

        // a generated page of a removed type is stale; a hand-written page is left alone
        let stale = format!("---\n{GENERATED_MARKER}\nold\n");
        std::fs::write(root.join("docs/resources/old.md"), stale).ok();
        std::fs::write(root.join("docs/resources/hand.md"), "# by hand\n").ok();
        std::fs::write(root.join("docs/index.md"), "edited\n").ok();
        assert_eq!(
            check(root, &pages)?,
            [
                Difference::Changed("docs/index.md".into()),
                Difference::Stale("docs/resources/old.md".into())
            ]
        );
        write(root, &pages)?;
        assert_eq!(check(root, &pages)?, []);
        assert!(!root.join("docs/resources/old.md").exists());
        assert!(root.join("docs/resources/hand.md").exists());
        Ok(())
    }

    #[test]
    fn generates_a_page_per_registered_type() -> Result<(), DocsError> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let pages = generate(root)?;
        let provider = KarpenterProvider::new();
        let listing = provider
            .resources()
            .iter()
            .filter(|r| r.list_schema().is_some())
            .count();
        assert!(listing >= 6, "the Kubernetes kinds list");
        assert_eq!(
            pages.len(),
            1 + provider.resources().len() + provider.data_sources().len() + listing
        );
        for r in provider.resources() {
            let short = r.type_name().trim_start_matches("karpenter_");
            let page = &pages[&PathBuf::from(format!("docs/resources/{short}.md"))];
            assert!(page.contains(&format!("# {} (Resource)", r.type_name())));
            assert!(is_generated(page));
            if let Some(identity) = r.identity_schema() {
                let import = page.split("\n## Import\n").nth(1).unwrap_or_default();
                assert!(
                    import.contains(&format!("  to = {}.", r.type_name()))
                        && import.contains("  identity = {"),
                    "{short}: no import by identity"
                );
                assert!(
                    import.contains("### Identity Schema\n\n#### Required\n"),
                    "{short}"
                );
                for a in &identity.attributes {
                    assert!(
                        import.contains(&format!("- `{}` (String) ", a.name)),
                        "{short}: {}",
                        a.name
                    );
                }
            } else {
                assert!(!page.contains("Identity Schema"), "{short}");
            }
            let list_page = pages.get(&PathBuf::from(format!("docs/list-resources/{short}.md")));
            match (r.list_schema(), list_page) {
                (Some(schema), Some(page)) => {
                    assert!(page.contains(&format!("# {} (List Resource)", r.type_name())));
                    assert!(page.contains(&format!(
                        "page_title: \"{} List Resource - karpenter\"",
                        r.type_name()
                    )));
                    assert!(page.contains("## Example Usage\n\n```terraform\n"), "{short}");
                    assert!(
                        page.contains(&format!("\nlist \"{}\" ", r.type_name())),
                        "{short}"
                    );
                    for a in &schema.attributes {
                        assert!(page.contains(&format!("- `{}` (", a.name)), "{short}: {}", a.name);
                    }
                    assert!(is_generated(page));
                }
                (None, None) => {}
                (schema, page) => panic!(
                    "{short}: list schema {} but list page {}",
                    schema.is_some(),
                    page.is_some()
                ),
            }
        }
        for d in provider.data_sources() {
            let short = d.type_name().trim_start_matches("karpenter_");
            let page = &pages[&PathBuf::from(format!("docs/data-sources/{short}.md"))];
            assert!(page.contains(&format!("# {} (Data Source)", d.type_name())));
        }
        // every "see below" link of every page lands on an anchor of that page
        for (path, page) in &pages {
            for link in page.split("](#").skip(1) {
                let target = link.split(')').next().unwrap_or_default();
                assert!(
                    page.contains(&format!("<a id=\"{target}\"></a>")),
                    "{}: no anchor for #{target}",
                    path.display()
                );
            }
        }
        let index = &pages[&PathBuf::from("docs/index.md")];
        assert!(index.contains("## Authentication"));
        assert!(index.contains("<a id=\"nestedblock--kubernetes--exec\"></a>"));
        assert!(index.contains("`KUBE_HOST`"));
        Ok(())
    }

    /// Every type with an identity has its `import-by-identity.tf`, every type that lists its
    /// `list-resource.tfquery.hcl`, and every example folder names a registered resource type.
    #[test]
    fn identity_and_list_examples_exist_for_every_type() -> Result<(), DocsError> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let provider = KarpenterProvider::new();
        let mut missing = Vec::new();
        for r in provider.resources() {
            let resource_dir = root.join("examples/resources").join(r.type_name());
            let list_dir = root.join("examples/list-resources").join(r.type_name());
            if r.identity_schema().is_some() && !resource_dir.join(IMPORT_BY_IDENTITY_EXAMPLE).exists() {
                missing.push(format!(
                    "examples/resources/{}/{IMPORT_BY_IDENTITY_EXAMPLE}",
                    r.type_name()
                ));
            }
            if r.list_schema().is_some() && !list_dir.join(LIST_RESOURCE_EXAMPLE).exists() {
                missing.push(format!(
                    "examples/list-resources/{}/{LIST_RESOURCE_EXAMPLE}",
                    r.type_name()
                ));
            }
        }
        assert!(missing.is_empty(), "missing examples: {missing:?}");
        let dir = root.join("examples/list-resources");
        let entries = std::fs::read_dir(&dir).map_err(|source| DocsError::Read {
            path: dir.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| DocsError::Read {
                path: dir.clone(),
                source,
            })?;
            let name = entry.file_name().to_string_lossy().to_string();
            assert!(
                provider.resources().iter().any(|r| r.type_name() == name),
                "examples/list-resources/{name}: no such resource type"
            );
        }
        Ok(())
    }
}
