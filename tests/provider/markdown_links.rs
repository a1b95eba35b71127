//! Every link of every Markdown file in the repository (README, CONTRIBUTING, CHANGELOG, `docs/`,
//! `templates/`, `examples/`, `acceptance-tests/` …; not `target/` or hidden folders) leads
//! somewhere (#52):
//!
//! - a relative link names a file or folder that exists, and its `#anchor`, when it points into
//!   a Markdown file, is a heading of that file (GitHub's slugs, `-1`, `-2` … for repeated
//!   headings) or an `<a id>`/`<a name>` of it; a bare `#anchor` is checked against its own file.
//!   `templates/` is rendered into `docs/index.md`, so its links resolve from there;
//! - nothing links to this repository by a GitHub address: nothing in the repository
//!   establishes one (`Cargo.toml` has no `repository`), so a page links relatively, `docs/`
//!   included (the provider is on no registry: its pages are read in the repository).
//!
//! Links in code (fenced blocks, inline code spans) are not links and are skipped. External
//! links are not fetched.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// Folders never searched for Markdown (build output, virtualenvs, VCS data).
const SKIPPED_DIRS: &[&str] = &["target", "node_modules"];

/// Every Markdown file under `root`, relative to it, in path order.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name) {
                    walk(root, &path, out);
                }
            } else if name.ends_with(".md")
                && let Ok(relative) = path.strip_prefix(root)
            {
                out.push(relative.to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// Where a file's relative links resolve from: its own place, except `templates/`, whose text
/// the docs generator renders into `docs/index.md`.
fn rendered_at(file: &Path) -> PathBuf {
    if file.starts_with("templates") {
        PathBuf::from("docs/index.md")
    } else {
        file.to_path_buf()
    }
}

/// The lines of `text` outside fenced code blocks and front matter, with their line numbers
/// (1-based).
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    let mut in_front_matter = text.starts_with("---\n");
    for (i, line) in text.lines().enumerate() {
        if in_front_matter {
            if i > 0 && line == "---" {
                in_front_matter = false;
            }
            continue;
        }
        let trimmed = line.trim_start();
        match fence {
            Some(marker) => {
                if trimmed.starts_with(marker) {
                    fence = None;
                }
                continue;
            }
            None => {
                if trimmed.starts_with("```") {
                    fence = Some("```");
                    continue;
                }
                if trimmed.starts_with("~~~") {
                    fence = Some("~~~");
                    continue;
                }
            }
        }
        out.push((i + 1, line.to_string()));
    }
    out
}

/// `line` with the content of every inline code span replaced by spaces.
fn blank_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(c);
        } else if in_code {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// The destinations of the inline links and images of one line (`[text](dest "title")`,
/// `![alt](<dest>)`) and of a reference definition (`[label]: dest`).
fn link_destinations(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let trimmed = line.trim_start();
    if trimmed.starts_with('[')
        && let Some(close) = trimmed.find("]:")
        && !trimmed[..close].contains("](")
    {
        if let Some(dest) = trimmed[close + 2..].split_whitespace().next() {
            out.push(dest.trim_start_matches('<').trim_end_matches('>').to_string());
        }
        return out;
    }
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(found) = line[i..].find("](") {
        let start = i + found + 2;
        // The destination runs to the parenthesis that closes the link (balanced, as in
        // CommonMark), or to a space before a title.
        let mut depth = 0usize;
        let mut end = start;
        while end < bytes.len() {
            match bytes[end] {
                b'(' => depth += 1,
                b')' if depth == 0 => break,
                b')' => depth -= 1,
                _ => {}
            }
            end += 1;
        }
        let inside = line[start..end].trim();
        let dest = if let Some(rest) = inside.strip_prefix('<') {
            rest.split('>').next().unwrap_or_default()
        } else {
            inside.split_whitespace().next().unwrap_or_default()
        };
        if !dest.is_empty() {
            out.push(dest.to_string());
        }
        i = end.min(bytes.len());
        if i >= bytes.len() {
            break;
        }
    }
    out
}

/// GitHub's anchor for a heading's text: inline code and link markup dropped to their text,
/// lower case, everything but letters, digits, `-`, `_` and spaces removed, spaces as `-`.
pub fn github_slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](url)` → `text`
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors a Markdown text defines: its ATX headings' slugs (repeats numbered as GitHub
/// numbers them) and its explicit `<a id="…">` / `<a name="…">`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (_, line) in prose_lines(text) {
        let trimmed = line.trim_start();
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            let heading = trimmed[hashes..].trim().trim_end_matches('#').trim();
            let slug = github_slug(&heading.replace('`', ""));
            let n = seen.entry(slug.clone()).or_insert(0);
            out.insert(if *n == 0 {
                slug.clone()
            } else {
                format!("{slug}-{n}")
            });
            *n += 1;
        }
    }
    // Explicit anchors may sit anywhere outside code (also on a heading's line).
    for (_, line) in prose_lines(text) {
        let line = blank_code_spans(&line);
        for attribute in ["<a id=\"", "<a name=\""] {
            let mut rest = line.as_str();
            while let Some(at) = rest.find(attribute) {
                rest = &rest[at + attribute.len()..];
                if let Some(end) = rest.find('"') {
                    out.insert(rest[..end].to_string());
                }
            }
        }
    }
    out
}

/// `base/relative` without `.` and `..`, or `None` when it climbs out of the repository.
fn join_normalized(base: &Path, relative: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = base
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_string()),
            _ => None,
        })
        .collect();
    for piece in relative.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other.to_string()),
        }
    }
    Some(parts.iter().collect())
}

/// What the checker found wrong with the links of the files under `root` (`file:line: …`).
pub fn check(root: &Path) -> (usize, Vec<String>) {
    let files = markdown_files(root);
    let mut anchor_cache: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut anchors_of = |path: &Path| -> BTreeSet<String> {
        anchor_cache
            .entry(path.to_path_buf())
            .or_insert_with(|| anchors(&std::fs::read_to_string(root.join(path)).unwrap_or_default()))
            .clone()
    };
    let mut checked = 0;
    let mut findings = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let at = rendered_at(file);
        let dir = at.parent().map(Path::to_path_buf).unwrap_or_default();
        for (line, prose) in prose_lines(&text) {
            for dest in link_destinations(&blank_code_spans(&prose)) {
                checked += 1;
                let place = format!("{}:{line}", file.display());
                let (path_part, anchor) = match dest.split_once('#') {
                    Some((p, a)) => (p.to_string(), Some(a.to_string())),
                    None => (dest.clone(), None),
                };
                // The target, as a path relative to the repository root.
                let target = if path_part.contains("github.com/")
                    && path_part.contains("/terraform-provider-karpenter")
                    && !path_part.contains("/terraform-provider-karpenter-")
                {
                    findings.push(format!(
                        "{place}: {dest}: nothing in the repository establishes a GitHub address for it \
                         (Cargo.toml has no `repository`); link relatively"
                    ));
                    continue;
                } else if path_part.contains(':') {
                    continue; // another site or scheme: not fetched
                } else if path_part.is_empty() {
                    file.clone()
                } else {
                    let Some(joined) = join_normalized(&dir, &path_part) else {
                        findings.push(format!("{place}: {dest}: leads out of the repository"));
                        continue;
                    };
                    joined
                };
                let full = root.join(&target);
                if !full.exists() {
                    findings.push(format!("{place}: {dest}: {} does not exist", target.display()));
                    continue;
                }
                let Some(anchor) = anchor else {
                    continue;
                };
                let markdown = if full.is_dir() {
                    None
                } else if target.extension().is_some_and(|e| e == "md") {
                    Some(target.clone())
                } else {
                    None
                };
                // An anchor into a file of another kind (`main.tf#L10`) is GitHub's, not checked.
                if let Some(markdown) = markdown {
                    let into = if path_part.is_empty() {
                        file.clone()
                    } else {
                        markdown
                    };
                    if !anchors_of(&into).contains(&anchor) {
                        findings.push(format!(
                            "{place}: {dest}: {} has no heading or anchor #{anchor}",
                            into.display()
                        ));
                    }
                }
            }
        }
    }
    (checked, findings)
}

#[test]
fn every_markdown_link_and_anchor_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files(root);
    assert!(
        files.len() >= 30 && files.iter().any(|f| f == Path::new("README.md")),
        "only {} Markdown files found",
        files.len()
    );
    let (checked, findings) = check(root);
    assert!(
        findings.is_empty(),
        "{} broken links in the Markdown files:\n{}",
        findings.len(),
        findings.join("\n")
    );
    assert!(checked >= 200, "only {checked} links checked");
}

/// The checker itself finds each kind of broken link, and passes what GitHub resolves.
#[test]
fn the_link_checker_finds_dead_links_anchors_and_guessed_addresses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    };
    write("examples/a/main.tf", "# example\n");
    write(
        "docs/guides/b.md",
        "---\npage_title: \"b\"\n---\n\n# B guide\n\n## The `karpenter` chart, and v1.0–v1.15\n\n## Twice\n\n## Twice\n\n\
         <a id=\"explicit\"></a>\n",
    );
    write(
        "docs/guides/a.md",
        "# A\n\n\
         [ok](b.md#the-karpenter-chart-and-v10v115) [ok](b.md#twice-1) [ok](b.md#explicit) [ok](#a)\n\
         [ok](../../examples/a/main.tf) [ok](../../examples/a/)\n\
         `[not a link](nowhere.md)`\n\n```md\n[not a link](nowhere.md)\n```\n\
         [dead](c.md) [dead anchor](b.md#nope) [dead own anchor](#nope)\n\
         [dead out of docs](../../examples/b/main.tf)\n\
         [guessed](https://github.com/karpenter/terraform-provider-karpenter/blob/main/examples/a/main.tf)\n\
         [guessed](https://github.com/someone/terraform-provider-karpenter/blob/main/README.md)\n\
         [other project](https://github.com/someone/terraform-provider-karpenter-extras)\n",
    );
    write(
        "templates/t.md",
        "[ok](guides/b.md) [ok](../examples/a/main.tf) [dead](../examples/c/)\n",
    );
    write(
        "README.md",
        "[ok](examples/a/main.tf) [ok](docs/guides/b.md#twice) [dead](docs/x.md)\n",
    );
    let (checked, findings) = check(root);
    let text = findings.join("\n");
    for expected in [
        "docs/guides/a.md:10: c.md: docs/guides/c.md does not exist",
        "docs/guides/a.md:10: b.md#nope: docs/guides/b.md has no heading or anchor #nope",
        "docs/guides/a.md:10: #nope: docs/guides/a.md has no heading or anchor #nope",
        "docs/guides/a.md:11: ../../examples/b/main.tf: examples/b/main.tf does not exist",
        "docs/guides/a.md:12: https://github.com/karpenter/terraform-provider-karpenter/blob/main/examples/a/main.tf: \
         nothing in the repository establishes a GitHub address",
        "docs/guides/a.md:13: https://github.com/someone/terraform-provider-karpenter/blob/main/README.md: nothing \
         in the repository establishes a GitHub address",
        "templates/t.md:1: ../examples/c/: examples/c does not exist",
        "README.md:1: docs/x.md: docs/x.md does not exist",
    ] {
        assert!(text.contains(expected), "no {expected:?} in:\n{text}");
    }
    assert_eq!(findings.len(), 8, "{text}");
    assert_eq!(checked, 8 + 11, "{text}");
}

#[test]
fn github_slugs_drop_punctuation_and_keep_words() {
    assert_eq!(
        github_slug("Failed applying … : CRD … did not become Established"),
        "failed-applying---crd--did-not-become-established"
    );
    assert_eq!(
        github_slug("Unsupported attribute \"…\" (misspelled keys)"),
        "unsupported-attribute--misspelled-keys"
    );
    assert_eq!(
        github_slug("force_destroy needs the cluster's name"),
        "force_destroy-needs-the-clusters-name"
    );
    assert_eq!(github_slug("From [v1alpha5](x.md) to v1"), "from-v1alpha5-to-v1");
}
