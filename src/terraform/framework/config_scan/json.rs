//! Terraform's JSON configuration syntax (`*.tf.json`, `*.tfvars.json`), restated in the
//! native syntax the rest of the scan reads.
//!
//! The JSON syntax is defined in terms of the native one: the root object's properties are
//! block types; `resource`/`data` nest two label levels (type, name) and `provider`,
//! `module`, `variable` one before the body object; `locals` is a body itself; an array in
//! place of an object declares several blocks; `"//"` properties are comments. In a body,
//! every property is an argument (or a nested block, which only the schema tells apart, so
//! [`super::check`] reads a property named like a schema block as that block). In an
//! expression, strings are templates — `"${local.pools}"` is the expression `local.pools` —
//! while a variable's `default` and every `*.tfvars.json` value are literal JSON.
//!
//! [`translate`] writes the native text: a key or block as an argument or block of its own,
//! a string as a quoted template (or, when it is one interpolation, its expression), numbers,
//! `true`, `false` and `null` verbatim. Each key's place is kept through a [`Segment`]: the
//! byte where the native text says it maps back to the byte of the JSON text that wrote it.
//! serde_json checks the text and decodes its strings; a small reader walks the structure to
//! know where each key starts (serde_json keeps no positions).

use std::fmt::Write as _;

/// Where a stretch of the native text came from: `generated..generated + len` maps onto
/// `original..original + len`, bytes past `len` onto `original + len`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Segment {
    pub generated: usize,
    pub original: usize,
    pub len: usize,
}

/// The byte of the JSON text that wrote byte `at` of the native text.
pub(super) fn original_offset(segments: &[Segment], at: usize) -> Option<usize> {
    let i = segments.partition_point(|s| s.generated <= at).checked_sub(1)?;
    let s = segments.get(i)?;
    Some(s.original + (at - s.generated).min(s.len))
}

/// Which JSON file: a configuration file, or a variable definitions file (literal values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JsonFile {
    Configuration,
    Variables,
}

/// The native text and its segments, or `None` when `text` is not a JSON object.
pub(super) fn translate(text: &str, kind: JsonFile) -> Option<(String, Vec<Segment>)> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    let root = Reader { text, at: 0 }.value()?;
    let Json::Object(props) = root.value else {
        return None;
    };
    let mut out = Writer::default();
    match kind {
        JsonFile::Variables => out.attributes(props.iter(), Mode::Literal),
        JsonFile::Configuration => {
            for prop in props.iter() {
                let labels = match prop.key.as_str() {
                    "resource" | "data" => 2,
                    "provider" | "module" | "variable" => 1,
                    "locals" => 0,
                    _ => continue,
                };
                out.blocks(&prop.key, &prop.value, labels, &mut Vec::new(), prop.key_at);
            }
        }
    }
    Some((out.text, out.segments))
}

/// A JSON value with the byte offset of where it is written.
struct Located {
    at: usize,
    value: Json,
}

enum Json {
    Object(Vec<Prop>),
    Array(Vec<Located>),
    Str(String),
    /// A number, `true`, `false` or `null`, as written.
    Other(String),
}

struct Prop {
    key: String,
    key_at: usize,
    value: Located,
}

/// Reads a JSON text that serde_json has accepted, keeping where each value and key starts.
/// serde_json checks the syntax and decodes the strings; this only walks the structure.
struct Reader<'t> {
    text: &'t str,
    at: usize,
}

impl Reader<'_> {
    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.byte(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Steps over `want` (after white space); `None` when something else is there.
    fn expect(&mut self, want: u8) -> Option<()> {
        self.skip_space();
        (self.byte()? == want).then(|| self.at += 1)
    }

    /// After an element: `Some(true)` past a comma, `Some(false)` past `close`.
    fn next_or_close(&mut self, close: u8) -> Option<bool> {
        self.skip_space();
        let b = self.byte()?;
        self.at += 1;
        match b {
            b',' => Some(true),
            b if b == close => Some(false),
            _ => None,
        }
    }

    /// Steps over `close` when the container is empty.
    fn empty(&mut self, close: u8) -> Option<bool> {
        self.skip_space();
        let empty = self.byte()? == close;
        if empty {
            self.at += 1;
        }
        Some(empty)
    }

    fn value(&mut self) -> Option<Located> {
        self.skip_space();
        let at = self.at;
        let value = match self.byte()? {
            b'{' => {
                self.at += 1;
                let mut props = Vec::new();
                if !self.empty(b'}')? {
                    loop {
                        self.skip_space();
                        let key_at = self.at;
                        let key = self.string()?;
                        self.expect(b':')?;
                        let value = self.value()?;
                        props.push(Prop { key, key_at, value });
                        if !self.next_or_close(b'}')? {
                            break;
                        }
                    }
                }
                Json::Object(props)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.empty(b']')? {
                    loop {
                        items.push(self.value()?);
                        if !self.next_or_close(b']')? {
                            break;
                        }
                    }
                }
                Json::Array(items)
            }
            b'"' => Json::Str(self.string()?),
            _ => {
                let rest = self.text.get(at..)?;
                let len = rest
                    .find([',', ']', '}', ' ', '\t', '\n', '\r'])
                    .unwrap_or(rest.len());
                self.at += len;
                Json::Other(rest.get(..len)?.to_string())
            }
        };
        Some(Located { at, value })
    }

    /// A string token, decoded by serde_json.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        if self.byte()? != b'"' {
            return None;
        }
        self.at += 1;
        loop {
            match self.byte()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    break;
                }
                _ => self.at += 1,
            }
        }
        serde_json::from_str(self.text.get(start..self.at)?).ok()
    }
}

/// How strings are read: as templates (configuration) or as they are (variable values).
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Expression,
    Literal,
}

#[derive(Default)]
struct Writer {
    text: String,
    segments: Vec<Segment>,
}

impl Writer {
    fn mark(&mut self, original: usize, len: usize) {
        self.segments.push(Segment {
            generated: self.text.len(),
            original,
            len,
        });
    }

    /// Blocks of type `keyword` still needing `labels` labels (`found` so far) from `value`.
    fn blocks(&mut self, keyword: &str, value: &Located, labels: usize, found: &mut Vec<String>, at: usize) {
        match &value.value {
            Json::Array(items) => {
                for item in items {
                    self.blocks(keyword, item, labels, found, at);
                }
            }
            Json::Object(props) if labels == 0 => {
                self.mark(at, 0);
                self.text.push_str(keyword);
                for label in found.iter() {
                    let _ = write!(self.text, " \"{label}\"");
                }
                self.text.push_str(" {\n");
                if keyword == "variable" {
                    // A variable's default is a literal value; nothing else of it is read.
                    let default: Vec<&Prop> = props.iter().filter(|p| p.key == "default").collect();
                    self.attributes(default.into_iter(), Mode::Literal);
                } else {
                    self.attributes(props.iter(), Mode::Expression);
                }
                self.text.push_str("}\n");
            }
            Json::Object(props) => {
                for prop in props.iter().filter(|p| p.key != "//") {
                    // A label the native syntax could not write is not one Terraform accepts.
                    if !prop
                        .key
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
                    {
                        continue;
                    }
                    found.push(prop.key.clone());
                    self.blocks(keyword, &prop.value, labels - 1, found, prop.key_at);
                    found.pop();
                }
            }
            _ => {}
        }
    }

    fn attributes<'p>(&mut self, props: impl Iterator<Item = &'p Prop>, mode: Mode) {
        for prop in props {
            if !is_identifier(&prop.key) {
                continue;
            }
            self.mark(prop.key_at, 0);
            let _ = write!(self.text, "{} = ", prop.key);
            self.expression(&prop.value, mode);
            self.text.push('\n');
        }
    }

    fn expression(&mut self, value: &Located, mode: Mode) {
        match &value.value {
            Json::Object(props) => {
                self.text.push_str("{\n");
                for prop in props {
                    self.mark(prop.key_at, 0);
                    self.text.push_str(&string(&prop.key, mode));
                    self.text.push_str(" = ");
                    self.expression(&prop.value, mode);
                    self.text.push('\n');
                }
                self.text.push('}');
            }
            Json::Array(items) => {
                self.text.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str(", ");
                    }
                    self.expression(item, mode);
                }
                self.text.push(']');
            }
            Json::Str(s) => {
                self.mark(value.at, 0);
                self.text.push_str(&string(s, mode));
            }
            Json::Other(raw) => {
                self.mark(value.at, raw.len());
                self.text.push_str(raw);
            }
        }
    }
}

/// A name the native syntax accepts as an argument name.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A JSON string as a native expression: literally (every `${` and `%{` escaped), or as a
/// template whose literal parts are escaped and whose interpolations and directives are kept;
/// a template that is one interpolation is that expression. A template the native parser
/// cannot read is kept as a literal string (Terraform reports its syntax itself).
fn string(s: &str, mode: Mode) -> String {
    if mode == Mode::Literal {
        return quoted(&[Piece::Literal(s)], true);
    }
    let Some(pieces) = template_pieces(s) else {
        return quoted(&[Piece::Literal(s)], true);
    };
    let candidate = match pieces.as_slice() {
        [Piece::Interpolation(inner)] => {
            let inner = inner
                .strip_prefix("${")
                .and_then(|i| i.strip_suffix('}'))
                .unwrap_or(inner);
            let inner = inner.trim_start_matches('~').trim_end_matches('~');
            format!("({inner})")
        }
        _ => quoted(&pieces, false),
    };
    if hcl_edit::parser::parse_expr(&candidate).is_ok() {
        candidate
    } else {
        quoted(&[Piece::Literal(s)], true)
    }
}

enum Piece<'s> {
    Literal(&'s str),
    /// `${…}` or `%{…}`, braces included, as written.
    Interpolation(&'s str),
}

/// Splits a template into literal text and `${…}`/`%{…}` sequences (`$${` and `%%{` are
/// literal); `None` when a sequence is not closed.
fn template_pieces(s: &str) -> Option<Vec<Piece<'_>>> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut literal_from) = (0, 0);
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"$${") || rest.starts_with(b"%%{") {
            i += 3;
            continue;
        }
        if rest.starts_with(b"${") || rest.starts_with(b"%{") {
            if literal_from < i {
                out.push(Piece::Literal(&s[literal_from..i]));
            }
            let end = closing_brace(bytes, i + 2)?;
            out.push(Piece::Interpolation(&s[i..=end]));
            i = end + 1;
            literal_from = i;
            continue;
        }
        i += 1;
    }
    if literal_from < bytes.len() {
        out.push(Piece::Literal(&s[literal_from..]));
    }
    Some(out)
}

/// The index of the `}` closing a sequence whose body starts at `from`, skipping nested
/// braces and quoted strings.
fn closing_brace(bytes: &[u8], from: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut i) = (0usize, false, from);
    while i < bytes.len() {
        match (in_string, bytes[i]) {
            (true, b'\\') => i += 1,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'{') => depth += 1,
            (false, b'}') if depth == 0 => return Some(i),
            (false, b'}') => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// A native quoted string of `pieces`; literal parts escaped (and, when `escape_templates`,
/// their `${`/`%{` too), sequences as written.
fn quoted(pieces: &[Piece<'_>], escape_templates: bool) -> String {
    let mut out = String::from("\"");
    for piece in pieces {
        match piece {
            Piece::Interpolation(seq) => out.push_str(seq),
            Piece::Literal(text) => {
                let mut chars = text.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '"' => out.push_str("\\\""),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        '$' | '%' if escape_templates && chars.peek() == Some(&'{') => {
                            out.push(c);
                            out.push(c);
                        }
                        c if c.is_control() => {
                            let _ = write!(out, "\\u{:04x}", u32::from(c));
                        }
                        c => out.push(c),
                    }
                }
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::{JsonFile, original_offset, translate};

    #[test]
    fn blocks_keys_and_strings_are_restated_with_their_places() {
        let text = r#"{
  "resource": {"kp_pool": {"a": {"for_each": "${local.pools}", "template": {"spec": {"expireAfter": "24h"}}}}},
  "locals": [{"x": "a ${var.y} \"b\""}, {"z": "${yamldecode(file(\"p.yaml\"))}"}],
  "variable": {"v": {"type": "object({})", "default": {"k": "${not.an.expression}"}}},
  "output": {"o": {"value": 1}}
}"#;
        let (native, segments) = translate(text, JsonFile::Configuration).unwrap();
        assert!(native.contains("resource \"kp_pool\" \"a\" {"), "{native}");
        assert!(native.contains("for_each = (local.pools)"), "{native}");
        assert!(native.contains(r#"x = "a ${var.y} \"b\"""#), "{native}");
        assert!(native.contains(r#"z = (yamldecode(file("p.yaml")))"#), "{native}");
        assert!(native.contains(r#""k" = "$${not.an.expression}""#), "{native}");
        assert!(!native.contains("output"), "{native}");
        hcl_edit::parser::parse_body(&native).unwrap();
        let key = native.find("\"expireAfter\"").unwrap();
        assert_eq!(original_offset(&segments, key), text.find("\"expireAfter\""));
    }

    #[test]
    fn variable_files_are_literal_and_not_json_objects_are_refused() {
        let (native, _) = translate(r#"{"pools": {"a": "${x}"}}"#, JsonFile::Variables).unwrap();
        assert!(native.contains(r#""a" = "$${x}""#), "{native}");
        assert!(translate("[1]", JsonFile::Configuration).is_none());
        assert!(translate("{", JsonFile::Configuration).is_none());
    }
}
