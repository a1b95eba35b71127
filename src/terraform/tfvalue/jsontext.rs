//! A small strict JSON reader and writer (RFC 8259) for the value and type codecs.
//!
//! Written here rather than taken from serde_json because Terraform numbers need their exact
//! text (serde_json only keeps it with the crate-wide `arbitrary_precision` feature, which
//! changes serde_json's behaviour for every other crate in the build), and because hostile
//! input must be refused with bounded nesting instead of exhausting the stack.

use std::fmt::Write as _;

/// Deepest array/object nesting accepted. A value at [`super::MAX_DEPTH`] wrapped in dynamic
/// objects at every level needs about twice that.
const MAX_NESTING: usize = 2 * super::value::MAX_DEPTH + 8;

/// A parsed JSON document. Numbers keep their source text; object members keep their order
/// and any duplicates (the callers decide what duplicates mean).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a JSON boolean",
            Json::Number(_) => "a JSON number",
            Json::String(_) => "a JSON string",
            Json::Array(_) => "a JSON array",
            Json::Object(_) => "a JSON object",
        }
    }
}

/// Parses a whole document (surrounding whitespace allowed, nothing else after it).
pub(crate) fn parse(bytes: &[u8]) -> Result<Json, String> {
    let mut p = Parser { bytes, pos: 0 };
    p.skip_ws();
    let value = p.value(0)?;
    p.skip_ws();
    if p.pos != bytes.len() {
        return Err(p.error("unexpected data after the JSON value"));
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    #[cold]
    #[inline(never)]
    fn error(&self, what: &str) -> String {
        format!("invalid JSON at byte {}: {what}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    #[inline(never)]
    fn literal(&mut self, word: &[u8], value: Json) -> Result<Json, String> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("unexpected character"))
        }
    }

    // The recursive path (value → array/object → value) keeps small frames: leaves and
    // errors are separate non-inlined functions.
    fn value(&mut self, depth: usize) -> Result<Json, String> {
        match self.peek() {
            None => Err(self.error("unexpected end of input")),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => self.array(depth),
            Some(b'{') => self.object(depth),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    #[inline(never)]
    fn array(&mut self, depth: usize) -> Result<Json, String> {
        if depth >= MAX_NESTING {
            return Err(self.error("nesting too deep"));
        }
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    #[inline(never)]
    fn object(&mut self, depth: usize) -> Result<Json, String> {
        if depth >= MAX_NESTING {
            return Err(self.error("nesting too deep"));
        }
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            let key = self.key()?;
            let value = self.value(depth + 1)?;
            members.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(members));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    /// A member name and its colon.
    #[inline(never)]
    fn key(&mut self) -> Result<String, String> {
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a string key"));
        }
        let key = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("expected ':'"));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(key)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    #[inline(never)]
    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        // Only ASCII was consumed, so this slice is valid UTF-8.
        let text = String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned();
        Ok(Json::Number(text))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let Some(chunk) = self.bytes.get(self.pos..self.pos + 4) else {
            return Err(self.error("truncated \\u escape"));
        };
        let mut v = 0u32;
        for &c in chunk {
            let d = char::from(c)
                .to_digit(16)
                .ok_or_else(|| self.error("invalid \\u escape"))?;
            v = v * 16 + d;
        }
        self.pos += 4;
        Ok(v)
    }

    #[inline(never)]
    fn string(&mut self) -> Result<String, String> {
        // At the opening quote.
        self.pos += 1;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            let chunk = std::str::from_utf8(&self.bytes[start..self.pos])
                .map_err(|_| self.error("string is not valid UTF-8"))?;
            out.push_str(chunk);
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error("unterminated string"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let first = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&first)
                                && self.bytes[self.pos..].starts_with(b"\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let second = self.hex4()?;
                                if (0xdc00..0xe000).contains(&second) {
                                    0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00)
                                } else {
                                    // Not a pair: the lone half becomes U+FFFD (as in Go)
                                    // and the next escape is read on its own.
                                    self.pos = save;
                                    0xfffd
                                }
                            } else {
                                first
                            };
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.error("invalid escape")),
                    }
                }
                Some(_) => return Err(self.error("control character in string")),
            }
        }
    }
}

/// Appends `s` as a JSON string literal.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_documents() {
        let doc = parse(br#" {"a": [1, -2.5e3, true, null], "b\u00e9\n": "x\"y", "c": {}} "#).unwrap();
        assert_eq!(
            doc,
            Json::Object(vec![
                (
                    "a".into(),
                    Json::Array(vec![
                        Json::Number("1".into()),
                        Json::Number("-2.5e3".into()),
                        Json::Bool(true),
                        Json::Null
                    ])
                ),
                ("b\u{e9}\n".into(), Json::String("x\"y".into())),
                ("c".into(), Json::Object(vec![])),
            ])
        );
        assert_eq!(
            parse(br#""\ud83d\ude00 \ud800x""#).unwrap(),
            Json::String("\u{1f600} \u{fffd}x".into())
        );
    }

    #[test]
    fn rejects_bad_documents() {
        for bad in [
            &b""[..],
            b"[1,]",
            b"{\"a\" 1}",
            b"01",
            b"1.",
            b"-",
            b"\"abc",
            b"\"\x01\"",
            b"[1] x",
            b"nul",
            b"\"\\x\"",
            b"\"\xff\"",
            b"{1:2}",
        ] {
            assert!(parse(bad).is_err(), "{:?} should not parse", bad);
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = vec![b'['; 1_000_000];
        let err = parse(&deep).unwrap_err();
        assert!(err.contains("nesting too deep"), "{err}");
    }

    #[test]
    fn writes_escaped_strings() {
        let mut out = String::new();
        write_string(&mut out, "a\"b\\c\n\u{1}é");
        assert_eq!(out, r#""a\"b\\c\n\u0001é""#);
        assert_eq!(
            parse(out.as_bytes()).unwrap(),
            Json::String("a\"b\\c\n\u{1}é".into())
        );
    }
}
