//! Which files the scan reads, and reading them.
//!
//! Terraform starts a provider in its own working directory, which is the root module's (also
//! under `-chdir`, which changes Terraform's directory before it starts anything). The root's
//! `*.tf`, `*.tf.json` and `*.tfquery.hcl` files are read from there (the JSON ones restated in
//! the native syntax by [`super::json`]); installed modules come from
//! `${TF_DATA_DIR:-.terraform}/modules/modules.json`, whose `Dir` is relative to the root and
//! whose `Key` is the dotted path of module calls (`pools.inner`). A module is parsed only if
//! it or a module below it mentions the provider's name: the others cannot hold its blocks
//! or pass values to them.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::Path;

use hcl_edit::structure::Body;

use super::finding::Place;
use super::json::{JsonFile, Segment, original_offset, translate};

/// Largest file the scan reads (configuration, tfvars, decoded YAML or JSON); a larger one
/// is left unchecked.
pub(super) const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One parsed HCL file.
pub(super) struct SourceFile {
    /// The path shown to the user: relative to the root module.
    pub name: String,
    pub body: Body,
    /// `override.tf` or `*_override.tf` (or `.tf.json`): merged into the other files' blocks.
    pub is_override: bool,
    /// The text as written, for places.
    text: String,
    line_starts: Vec<usize>,
    /// For a JSON file: where each part of the native text `body` was parsed from came from.
    segments: Option<Vec<Segment>>,
}

impl SourceFile {
    /// Parses `text`; `None` (logged) when it is not valid HCL — Terraform reports that itself.
    pub fn parse(name: String, text: String) -> Option<SourceFile> {
        Self::parse_native(name, text, None)
    }

    /// Parses a file in Terraform's JSON syntax; `None` (logged) when it is not a JSON object.
    pub fn parse_json(name: String, text: String, kind: JsonFile) -> Option<SourceFile> {
        let Some((native, segments)) = translate(&text, kind) else {
            tracing::debug!(file = %name, "config scan: JSON file not read, left unchecked");
            return None;
        };
        let mut file = Self::parse_native(name, native, Some(segments))?;
        file.line_starts = line_starts(&text);
        file.text = text;
        Some(file)
    }

    /// A file by its name: JSON syntax for `*.json`, native otherwise.
    fn parse_named(name: String, text: String, kind: JsonFile) -> Option<SourceFile> {
        if name.ends_with(".json") {
            Self::parse_json(name, text, kind)
        } else {
            Self::parse(name, text)
        }
    }

    fn parse_native(name: String, text: String, segments: Option<Vec<Segment>>) -> Option<SourceFile> {
        let body = match hcl_edit::parser::parse_body(&text) {
            Ok(body) => body,
            Err(e) => {
                tracing::debug!(file = %name, error = %e, "config scan: file not parsed, left unchecked");
                return None;
            }
        };
        let stem = name.rsplit('/').next().unwrap_or(&name);
        let is_override = matches!(
            stem.strip_suffix(".tf").or_else(|| stem.strip_suffix(".tf.json")),
            Some(s) if s == "override" || s.ends_with("_override")
        );
        Some(SourceFile {
            name,
            body,
            is_override,
            line_starts: line_starts(&text),
            text,
            segments,
        })
    }

    /// Whether the file is written in JSON syntax (its blocks then read as arguments).
    pub fn is_json(&self) -> bool {
        self.segments.is_some()
    }

    /// The line and column (both from 1, the column in characters) of a byte span's start.
    pub fn place(&self, span: Option<Range<usize>>) -> Option<Place> {
        let mut start = span?.start;
        if let Some(segments) = &self.segments {
            start = original_offset(segments, start)?;
        }
        let line = self.line_starts.partition_point(|&s| s <= start);
        let line_start = *self.line_starts.get(line.checked_sub(1)?)?;
        let column = self.text.get(line_start..start)?.chars().count() + 1;
        Some(Place {
            file: self.name.clone(),
            line,
            column,
        })
    }
}

/// The byte offset of each line's start.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// One module of the configuration, with its parsed files.
pub(super) struct ModuleFiles {
    /// `""` for the root, else the dotted path of module calls (`pools`, `pools.inner`).
    pub key: String,
    /// Relative to the root (`.` for the root itself), as `path.module` gives it.
    pub dir: String,
    pub files: Vec<SourceFile>,
}

/// A module as listed, before parsing.
struct Listed {
    key: String,
    dir: String,
    texts: Vec<(String, String)>,
    mentions: bool,
}

/// The modules of the configuration rooted at `root` — the root first — each with its parsed
/// files, leaving out (unparsed) every module that neither mentions `marker` nor has a module
/// below it that does. `data_dir` is Terraform's data directory (`TF_DATA_DIR`, relative to
/// the root unless absolute).
pub(super) fn load_modules(root: &Path, data_dir: &Path, marker: &str) -> Vec<ModuleFiles> {
    let mut listed = vec![listed("", ".", root, true)];
    for (key, dir) in installed_modules(&root.join(data_dir)) {
        listed.push(listed_module(&key, &dir, &root.join(&dir)));
    }
    for l in &mut listed {
        l.mentions = l.texts.iter().any(|(_, text)| text.contains(marker));
    }
    let wanted: BTreeSet<String> = listed
        .iter()
        .filter(|l| l.mentions)
        .flat_map(|l| ancestors(&l.key))
        .collect();
    listed
        .into_iter()
        .filter(|l| wanted.contains(&l.key))
        .map(|l| ModuleFiles {
            files: l
                .texts
                .into_iter()
                .filter_map(|(name, text)| SourceFile::parse_named(name, text, JsonFile::Configuration))
                .collect(),
            key: l.key,
            dir: l.dir,
        })
        .collect()
}

fn listed_module(key: &str, dir: &str, path: &Path) -> Listed {
    listed(key, dir, path, false)
}

fn listed(key: &str, dir: &str, path: &Path, root: bool) -> Listed {
    let mut names: Vec<String> = std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".tf") || n.ends_with(".tf.json") || (root && n.ends_with(".tfquery.hcl")))
        .collect();
    names.sort();
    let texts = names
        .into_iter()
        .filter_map(|n| {
            let text = read_text(&path.join(&n))?;
            let shown = if dir == "." {
                n
            } else {
                format!("{}/{n}", dir.trim_end_matches('/'))
            };
            Some((shown, text))
        })
        .collect();
    Listed {
        key: key.to_string(),
        dir: dir.to_string(),
        texts,
        mentions: false,
    }
}

/// A text file's contents, or `None` when it cannot be read or is too large.
pub(super) fn read_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_FILE_BYTES {
        tracing::debug!(file = %path.display(), "config scan: file too large, left unchecked");
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The key and itself and every key above it (`a.b` → `a.b`, `a`, and the root `""`).
fn ancestors(key: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut current = String::new();
    for part in key.split('.').filter(|p| !p.is_empty()) {
        if !current.is_empty() {
            current.push('.');
        }
        current.push_str(part);
        out.push(current.clone());
    }
    out
}

/// `(Key, Dir)` of every installed module but the root, from `modules/modules.json` in the
/// data directory; none when there is no such file (no `terraform init`, or no modules).
fn installed_modules(data_dir: &Path) -> Vec<(String, String)> {
    let Some(text) = read_text(&data_dir.join("modules").join("modules.json")) else {
        return Vec::new();
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    json.get("Modules")
        .and_then(|m| m.as_array())
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let key = m.get("Key")?.as_str()?;
            let dir = m.get("Dir")?.as_str()?;
            (!key.is_empty()).then(|| (key.to_string(), dir.to_string()))
        })
        .collect()
}

/// The root module's variable files Terraform reads without being asked, in its order (later
/// ones win): `terraform.tfvars`, `terraform.tfvars.json`, then `*.auto.tfvars` and
/// `*.auto.tfvars.json` in name order. The JSON ones hold literal values.
pub(super) fn root_variable_files(root: &Path) -> Vec<SourceFile> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".auto.tfvars") || n.ends_with(".auto.tfvars.json"))
        .collect();
    names.sort();
    ["terraform.tfvars", "terraform.tfvars.json"]
        .into_iter()
        .map(String::from)
        .chain(names)
        .filter_map(|n| SourceFile::parse_named(n.clone(), read_text(&root.join(&n))?, JsonFile::Variables))
        .collect()
}
