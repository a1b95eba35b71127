//! Go type declarations, read as far as the kubelet-fields table needs them: a file's package
//! and imports, its structs (each field's Go name, type and JSON tag, in order), its other named
//! types (`type HairpinMode string`) and the types that decode their own JSON (an
//! `UnmarshalJSON` method). Not a Go parser: top-level declarations in gofmt's layout, which
//! Kubernetes' API types follow; anything else in a struct is refused rather than guessed.

use std::collections::{BTreeMap, BTreeSet};

use super::error::ReleaseError;

/// One Go file's declarations.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct GoFile {
    /// The `package` clause's name.
    pub package: String,
    /// Import name (the alias, else the path's last element) → import path.
    pub imports: BTreeMap<String, String>,
    /// Struct name → its fields, in order.
    pub structs: BTreeMap<String, Vec<GoField>>,
    /// Other named type → the type it is defined as (`string`, `[]VModuleItem`).
    pub named: BTreeMap<String, String>,
    /// Types with their own `UnmarshalJSON`: their JSON is not their fields'.
    pub own_json: BTreeSet<String>,
}

/// A struct field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoField {
    /// The Go name; empty for an embedded type.
    pub name: String,
    /// The type as written (`*metav1.Duration`, `map[string][]string`).
    pub ty: String,
    /// The JSON name: the tag's, else (no tag) the Go name, as encoding/json does; empty when
    /// the fields are inlined (embedded, or tagged `,inline`).
    pub json: String,
}

impl GoFile {
    /// Whether the file declares `name` (a struct or another named type).
    pub fn declares(&self, name: &str) -> bool {
        self.structs.contains_key(name) || self.named.contains_key(name)
    }
}

/// `text` without its comments (strings, raw strings and runes kept as they are).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' | '`' | '\'' => {
                out.push(c);
                let mut escaped = false;
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c && !escaped {
                        break;
                    }
                    escaped = c != '`' && d == '\\' && !escaped;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The JSON name a field's tag gives (`json:"name,omitempty"` → `name`; `json:",inline"` →
/// empty), `None` without a `json` key.
fn json_name(tag: &str) -> Option<&str> {
    let start = tag.find("json:\"")? + "json:\"".len();
    let value = &tag[start..];
    let value = &value[..value.find('"')?];
    Some(value.split(',').next().unwrap_or_default())
}

/// One line of a struct's body; `None` for a field JSON leaves out (`json:"-"`).
fn field(line: &str, fail: &dyn Fn(String) -> ReleaseError) -> Result<Option<GoField>, ReleaseError> {
    let (decl, tag) = match line.split_once('`') {
        Some((decl, rest)) => (decl.trim(), rest.trim_end().trim_end_matches('`')),
        None => (line.trim(), ""),
    };
    let words: Vec<&str> = decl.split_whitespace().collect();
    let (name, ty) = match words[..] {
        [ty] => ("", ty),
        [name, ty] if !name.ends_with(',') => (name, ty),
        _ => return Err(fail(format!("a struct field this does not read: {line:?}"))),
    };
    if ty.contains('{') || ty.contains('(') {
        return Err(fail(format!(
            "an inline struct, interface or func type: {line:?}"
        )));
    }
    let json = match json_name(tag) {
        Some("-") => return Ok(None),
        Some(json) => json.to_string(),
        None => name.to_string(),
    };
    Ok(Some(GoField {
        name: name.to_string(),
        ty: ty.to_string(),
        json,
    }))
}

/// An import line's name and path (`logsapi "k8s.io/…/v1"`, `"k8s.io/…/resource"`).
fn import(line: &str) -> Option<(String, String)> {
    let line = line.trim();
    let (alias, path) = match line.split_once(' ') {
        Some((alias, path)) => (Some(alias), path.trim()),
        None => (None, line),
    };
    let path = path.strip_prefix('"')?.strip_suffix('"')?;
    let name = alias.unwrap_or_else(|| path.rsplit('/').next().unwrap_or(path));
    Some((name.to_string(), path.to_string()))
}

/// Reads the declarations of one Go file (`name` says which in errors).
pub fn read(name: &str, text: &str) -> Result<GoFile, ReleaseError> {
    let fail = |m: String| ReleaseError::Input(format!("{name}: {m}"));
    let code = without_comments(text);
    let mut file = GoFile::default();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_end();
        if let Some(package) = line.strip_prefix("package ") {
            file.package = package.trim().to_string();
        } else if line == "import (" {
            for line in lines.by_ref() {
                if line.trim() == ")" {
                    break;
                }
                file.imports.extend(import(line));
            }
        } else if let Some(rest) = line.strip_prefix("import ") {
            file.imports.extend(import(rest));
        } else if let Some(rest) = line.strip_prefix("func (") {
            // `func (t *TimeOrMetaDuration) UnmarshalJSON(b []byte) error {`
            if let Some((receiver, method)) = rest.split_once(')')
                && method.trim_start().starts_with("UnmarshalJSON(")
            {
                let ty = receiver.split_whitespace().last().unwrap_or_default();
                file.own_json.insert(ty.trim_start_matches('*').to_string());
            }
        } else if let Some(rest) = line.strip_prefix("type ") {
            let (type_name, definition) = rest
                .split_once(char::is_whitespace)
                .ok_or_else(|| fail(format!("a type declaration this does not read: {line:?}")))?;
            let definition = definition.trim().trim_start_matches("= ");
            if definition == "struct {" {
                let mut fields = Vec::new();
                for line in lines.by_ref() {
                    let line = line.trim();
                    if line == "}" {
                        break;
                    }
                    if !line.is_empty() {
                        fields.extend(field(line, &fail)?);
                    }
                }
                file.structs.insert(type_name.to_string(), fields);
            } else if definition == "struct{}" {
                file.structs.insert(type_name.to_string(), Vec::new());
            } else if definition.contains('{') || definition == "(" {
                return Err(fail(format!("a type declaration this does not read: {line:?}")));
            } else {
                file.named.insert(type_name.to_string(), definition.to_string());
            }
        }
    }
    if file.package.is_empty() {
        return Err(fail("no package clause: not a Go file".into()));
    }
    Ok(file)
}
