//! DynamicValue msgpack codec, following go-cty's `cty/msgpack` rules (what Terraform sends
//! and expects back):
//!
//! - null is `nil` for every type; an unrefined unknown is the fixext1 `d4 00 00`; a refined
//!   unknown is extension 12 whose payload is a map with integer keys (1 nullness, 2 string
//!   prefix, 3/4 number bounds as `[number, inclusive]`, 5/6 collection length bounds). On
//!   input any extension with a payload of at most one byte is a plain unknown; a longer one
//!   must be code 12.
//! - numbers are written as an int when they are an exact int64, else a float64 when exact,
//!   else a string holding the decimal; any int, uint, float or numeric string is read.
//! - lists, sets and tuples are arrays (tuples of exactly their length), maps are maps with
//!   string keys, objects are maps with exactly the schema's attributes.
//! - a `dynamic` slot holds `[bin(type JSON), value]` (a bare `nil` or unknown stays
//!   untyped).
//!
//! The decoder is a hand-written reader over the input slice: it never panics, bounds nesting
//! at [`MAX_DEPTH`], and never reserves more elements than there are bytes left.

use std::collections::BTreeMap;

use super::trail::Trail;
use super::{DecodeError, EncodeError, MAX_DEPTH, Number, Refinements, Type, Value};

/// Extension code of an unknown value that carries refinements.
const REFINED_UNKNOWN_EXT: i8 = 12;
/// cty refuses refinement payloads above this size.
const MAX_REFINEMENT_PAYLOAD: usize = 1024;
/// Longest string prefix written into a refinement (cty keeps prefixes short as well).
const MAX_PREFIX_BYTES: usize = 256;
/// Longest encoded number bound written into a refinement; longer bounds are left out.
const MAX_BOUND_BYTES: usize = 400;

const REFINE_NULLNESS: i64 = 1;
const REFINE_STRING_PREFIX: i64 = 2;
const REFINE_NUMBER_LOWER: i64 = 3;
const REFINE_NUMBER_UPPER: i64 = 4;
const REFINE_LENGTH_LOWER: i64 = 5;
const REFINE_LENGTH_UPPER: i64 = 6;

/// Decodes msgpack bytes holding one value of type `ty`. Trailing bytes are an error.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, DecodeError> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let value = decode_value(&mut r, ty, &Trail::Root, 0)?;
    if r.pos != bytes.len() {
        return Err(err(
            &Trail::Root,
            format!("{} unexpected bytes after the value", bytes.len() - r.pos),
        ));
    }
    Ok(value)
}

/// Encodes `value` as type `ty`, checking that it conforms (see [`Value::conforms_to`]).
///
/// Refinements that cannot apply to the type (a string prefix on a number, any refinement in
/// a dynamic slot) are left out, as cty does; an unknown refined to "definitely null" is
/// written as null; string prefixes are cut to at most 256 bytes and number bounds longer
/// than 400 bytes are dropped so the payload stays below cty's 1 KiB limit.
pub fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, EncodeError> {
    let mut w = Writer {
        out: Some(Vec::new()),
    };
    encode_value(&mut w, value, ty, &Trail::Root, 0)?;
    Ok(w.out.unwrap_or_default())
}

/// The conformance check of [`encode`] without producing bytes.
pub(crate) fn check(value: &Value, ty: &Type) -> Result<(), EncodeError> {
    let mut w = Writer { out: None };
    encode_value(&mut w, value, ty, &Trail::Root, 0)
}

fn err(trail: &Trail<'_>, message: impl Into<String>) -> DecodeError {
    DecodeError {
        path: trail.to_path(),
        message: message.into(),
    }
}

pub(crate) fn enc_err(trail: &Trail<'_>, message: impl Into<String>) -> EncodeError {
    EncodeError {
        path: trail.to_path(),
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------------
// Reading

/// One msgpack item header; payloads of str/bin/ext borrow the input.
enum Head<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Array(usize),
    Map(usize),
    Ext(i8, &'a [u8]),
}

impl Head<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Head::Nil => "nil",
            Head::Bool(_) => "a msgpack bool",
            Head::Int(_) | Head::Uint(_) => "a msgpack integer",
            Head::Float(_) => "a msgpack float",
            Head::Str(_) => "a msgpack string",
            Head::Bin(_) => "msgpack binary data",
            Head::Array(_) => "a msgpack array",
            Head::Map(_) => "a msgpack map",
            Head::Ext(..) => "a msgpack extension",
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

const TRUNCATED: &str = "unexpected end of msgpack input";

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if n > self.remaining() {
            return Err(TRUNCATED);
        }
        let slice = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    fn u8(&mut self) -> Result<u8, &'static str> {
        Ok(self.take(1)?[0])
    }

    fn be<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn len16(&mut self) -> Result<usize, &'static str> {
        Ok(usize::from(u16::from_be_bytes(self.be()?)))
    }

    fn len32(&mut self) -> Result<usize, &'static str> {
        usize::try_from(u32::from_be_bytes(self.be()?)).map_err(|_| "length too large")
    }

    fn ext(&mut self, len: usize) -> Result<Head<'a>, &'static str> {
        let code = i8::from_be_bytes(self.be()?);
        Ok(Head::Ext(code, self.take(len)?))
    }

    #[inline(never)]
    fn head(&mut self) -> Result<Head<'a>, &'static str> {
        let marker = self.u8()?;
        Ok(match marker {
            0x00..=0x7f => Head::Int(i64::from(marker)),
            0x80..=0x8f => Head::Map(usize::from(marker & 0x0f)),
            0x90..=0x9f => Head::Array(usize::from(marker & 0x0f)),
            0xa0..=0xbf => Head::Str(self.take(usize::from(marker & 0x1f))?),
            0xc0 => Head::Nil,
            0xc1 => return Err("invalid msgpack marker 0xc1"),
            0xc2 => Head::Bool(false),
            0xc3 => Head::Bool(true),
            0xc4 => {
                let n = usize::from(self.u8()?);
                Head::Bin(self.take(n)?)
            }
            0xc5 => {
                let n = self.len16()?;
                Head::Bin(self.take(n)?)
            }
            0xc6 => {
                let n = self.len32()?;
                Head::Bin(self.take(n)?)
            }
            0xc7 => {
                let n = usize::from(self.u8()?);
                self.ext(n)?
            }
            0xc8 => {
                let n = self.len16()?;
                self.ext(n)?
            }
            0xc9 => {
                let n = self.len32()?;
                self.ext(n)?
            }
            0xca => Head::Float(f64::from(f32::from_be_bytes(self.be()?))),
            0xcb => Head::Float(f64::from_be_bytes(self.be()?)),
            0xcc => Head::Uint(u64::from(self.u8()?)),
            0xcd => Head::Uint(u64::from(u16::from_be_bytes(self.be()?))),
            0xce => Head::Uint(u64::from(u32::from_be_bytes(self.be()?))),
            0xcf => Head::Uint(u64::from_be_bytes(self.be()?)),
            0xd0 => Head::Int(i64::from(i8::from_be_bytes(self.be()?))),
            0xd1 => Head::Int(i64::from(i16::from_be_bytes(self.be()?))),
            0xd2 => Head::Int(i64::from(i32::from_be_bytes(self.be()?))),
            0xd3 => Head::Int(i64::from_be_bytes(self.be()?)),
            0xd4 => self.ext(1)?,
            0xd5 => self.ext(2)?,
            0xd6 => self.ext(4)?,
            0xd7 => self.ext(8)?,
            0xd8 => self.ext(16)?,
            0xd9 => {
                let n = usize::from(self.u8()?);
                Head::Str(self.take(n)?)
            }
            0xda => {
                let n = self.len16()?;
                Head::Str(self.take(n)?)
            }
            0xdb => {
                let n = self.len32()?;
                Head::Str(self.take(n)?)
            }
            0xdc => Head::Array(self.len16()?),
            0xdd => Head::Array(self.len32()?),
            0xde => Head::Map(self.len16()?),
            0xdf => Head::Map(self.len32()?),
            0xe0..=0xff => Head::Int(i64::from(marker as i8)),
        })
    }

    /// Skips one complete item without recursion (each item takes at least one byte, so the
    /// pending count can never outrun the input).
    fn skip(&mut self) -> Result<(), &'static str> {
        let mut pending: usize = 1;
        while pending > 0 {
            pending -= 1;
            match self.head()? {
                Head::Array(n) => pending = pending.saturating_add(n),
                Head::Map(n) => pending = pending.saturating_add(n.saturating_mul(2)),
                _ => {}
            }
            if pending > self.remaining() {
                return Err(TRUNCATED);
            }
        }
        Ok(())
    }
}

fn utf8<'a>(bytes: &'a [u8], trail: &Trail<'_>, what: &str) -> Result<&'a str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|_| err(trail, format!("{what} is not valid UTF-8")))
}

// The recursive path (decode_value and the container functions) keeps its frames small:
// error messages and leaf decoding live in separate non-inlined functions, so that nesting up
// to MAX_DEPTH fits a 2 MiB thread stack even in debug builds.
fn decode_value(
    r: &mut Reader<'_>,
    ty: &Type,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<Value, DecodeError> {
    if depth > MAX_DEPTH {
        return Err(too_deep(trail));
    }
    let head = r.head().map_err(|m| err(trail, m))?;
    match (head, ty) {
        (Head::Ext(code, payload), _) => decode_unknown(code, payload, ty, trail),
        (Head::Nil, _) => Ok(Value::Null),
        (head, Type::Dynamic) => decode_dynamic(r, head, trail, depth),
        (head, Type::String | Type::Bool | Type::Number) => decode_primitive(head, ty, trail),
        (Head::Array(n), Type::List(ety)) => Ok(Value::List(decode_elements(r, n, ety, trail, depth)?)),
        (Head::Array(n), Type::Set(ety)) => Ok(Value::Set(decode_elements(r, n, ety, trail, depth)?)),
        (Head::Array(n), Type::Tuple(etys)) => decode_tuple(r, n, ty, etys, trail, depth),
        (Head::Map(n), Type::Map(ety)) => decode_map(r, n, ety, trail, depth),
        (Head::Map(n), Type::Object(attrs)) => decode_object(r, n, attrs, trail, depth),
        (head, _) => Err(mismatch(trail, ty, &head)),
    }
}

#[cold]
#[inline(never)]
fn too_deep(trail: &Trail<'_>) -> DecodeError {
    err(trail, format!("value nests deeper than {MAX_DEPTH} levels"))
}

#[cold]
#[inline(never)]
fn mismatch(trail: &Trail<'_>, ty: &Type, head: &Head<'_>) -> DecodeError {
    err(trail, format!("{ty} is required, found {}", head.kind()))
}

#[inline(never)]
fn decode_dynamic(
    r: &mut Reader<'_>,
    head: Head<'_>,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<Value, DecodeError> {
    let inner_ty = read_dynamic_type(r, head, trail)?;
    let inner = decode_value(r, &inner_ty, trail, depth + 1)?;
    if inner_ty == Type::Dynamic {
        Ok(inner)
    } else {
        Ok(Value::Dynamic(Box::new(inner_ty), Box::new(inner)))
    }
}

#[inline(never)]
fn read_dynamic_type(r: &mut Reader<'_>, head: Head<'_>, trail: &Trail<'_>) -> Result<Type, DecodeError> {
    match head {
        Head::Array(2) => {}
        Head::Array(_) => {
            return Err(err(
                trail,
                "a dynamic value must be a 2-element array [type, value], found an array of another length",
            ));
        }
        other => {
            return Err(err(
                trail,
                format!(
                    "a dynamic value must be a 2-element array [type, value], found {}",
                    other.kind()
                ),
            ));
        }
    }
    let type_json = match r.head().map_err(|m| err(trail, m))? {
        Head::Bin(b) | Head::Str(b) => b,
        other => {
            return Err(err(
                trail,
                format!(
                    "a dynamic value's type must be binary type JSON, found {}",
                    other.kind()
                ),
            ));
        }
    };
    Type::from_json(type_json).map_err(|e| err(trail, e.to_string()))
}

#[inline(never)]
fn decode_primitive(head: Head<'_>, ty: &Type, trail: &Trail<'_>) -> Result<Value, DecodeError> {
    match (ty, head) {
        (Type::String, Head::Str(b) | Head::Bin(b)) => {
            Ok(Value::String(utf8(b, trail, "string")?.to_owned()))
        }
        (Type::Bool, Head::Bool(b)) => Ok(Value::Bool(b)),
        (Type::Number, Head::Int(i)) => Ok(Value::Number(Number::from_i64(i))),
        (Type::Number, Head::Uint(u)) => Ok(Value::Number(Number::from_u64(u))),
        (Type::Number, Head::Float(f)) => Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| err(trail, "NaN is not a valid number")),
        (Type::Number, Head::Str(b)) => {
            let text = utf8(b, trail, "number string")?;
            Number::parse(text)
                .map(Value::Number)
                .ok_or_else(|| err(trail, format!("{text:?} is not a valid number")))
        }
        (_, head) => Err(mismatch(trail, ty, &head)),
    }
}

#[inline(never)]
fn decode_elements(
    r: &mut Reader<'_>,
    n: usize,
    ety: &Type,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<Vec<Value>, DecodeError> {
    let mut items = Vec::with_capacity(n.min(r.remaining()));
    for i in 0..n {
        items.push(decode_value(r, ety, &trail.index(i), depth + 1)?);
    }
    Ok(items)
}

#[inline(never)]
fn decode_tuple(
    r: &mut Reader<'_>,
    n: usize,
    ty: &Type,
    etys: &[Type],
    trail: &Trail<'_>,
    depth: usize,
) -> Result<Value, DecodeError> {
    if n != etys.len() {
        return Err(tuple_length(trail, ty, etys.len(), n));
    }
    let mut items = Vec::with_capacity(n);
    for (i, ety) in etys.iter().enumerate() {
        items.push(decode_value(r, ety, &trail.index(i), depth + 1)?);
    }
    Ok(Value::Tuple(items))
}

#[cold]
#[inline(never)]
fn tuple_length(trail: &Trail<'_>, ty: &Type, want: usize, found: usize) -> DecodeError {
    err(
        trail,
        format!("{ty} needs exactly {want} elements, found {found}"),
    )
}

#[inline(never)]
fn decode_map(
    r: &mut Reader<'_>,
    n: usize,
    ety: &Type,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<Value, DecodeError> {
    let mut entries = BTreeMap::new();
    for _ in 0..n {
        let key = read_key(r, trail, "map key")?;
        let value = decode_value(r, ety, &trail.key(key), depth + 1)?;
        if entries.insert(key.to_owned(), value).is_some() {
            return Err(named(trail, "duplicate map key", key));
        }
    }
    Ok(Value::Map(entries))
}

#[inline(never)]
fn decode_object(
    r: &mut Reader<'_>,
    n: usize,
    attrs: &BTreeMap<String, Type>,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<Value, DecodeError> {
    let mut entries = BTreeMap::new();
    for _ in 0..n {
        let key = read_key(r, trail, "attribute name")?;
        let Some(aty) = attrs.get(key) else {
            return Err(named(trail, "unsupported attribute", key));
        };
        let value = decode_value(r, aty, &trail.attr(key), depth + 1)?;
        if entries.insert(key.to_owned(), value).is_some() {
            return Err(named(trail, "duplicate attribute", key));
        }
    }
    if entries.len() != attrs.len() {
        return Err(err(trail, missing_message(attrs, &entries)));
    }
    Ok(Value::Object(entries))
}

#[cold]
#[inline(never)]
fn named(trail: &Trail<'_>, what: &str, name: &str) -> DecodeError {
    err(trail, format!("{what} {name:?}"))
}

/// "object is missing attribute "a"" / "… attributes "a", "b"".
pub(crate) fn missing_message<T, U>(attrs: &BTreeMap<String, T>, have: &BTreeMap<String, U>) -> String {
    let missing: Vec<String> = attrs
        .keys()
        .filter(|k| !have.contains_key(*k))
        .map(|k| format!("{k:?}"))
        .collect();
    format!(
        "object is missing attribute{} {} (every attribute of the type must be present, null if unset)",
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", ")
    )
}

#[inline(never)]
fn read_key<'a>(r: &mut Reader<'a>, trail: &Trail<'_>, what: &str) -> Result<&'a str, DecodeError> {
    match r.head().map_err(|m| err(trail, m))? {
        Head::Str(b) | Head::Bin(b) => utf8(b, trail, what),
        other => Err(err(
            trail,
            format!("{what} must be a string, found {}", other.kind()),
        )),
    }
}

#[inline(never)]
fn decode_unknown(code: i8, payload: &[u8], ty: &Type, trail: &Trail<'_>) -> Result<Value, DecodeError> {
    if payload.len() <= 1 {
        return Ok(Value::unknown());
    }
    if code != REFINED_UNKNOWN_EXT {
        return Err(err(
            trail,
            format!(
                "unsupported msgpack extension type {code} with a {}-byte payload",
                payload.len()
            ),
        ));
    }
    if payload.len() > MAX_REFINEMENT_PAYLOAD {
        return Err(err(
            trail,
            format!(
                "unknown value refinements too large ({} bytes, at most {MAX_REFINEMENT_PAYLOAD})",
                payload.len()
            ),
        ));
    }
    let bad = |what: &str| err(trail, format!("invalid unknown value refinements: {what}"));
    let mut r = Reader { buf: payload, pos: 0 };
    let Ok(Head::Map(n)) = r.head() else {
        return Err(bad("not a map"));
    };
    if *ty == Type::Dynamic {
        // cty never refines an unknown of unknown type and ignores such refinements.
        return Ok(Value::unknown());
    }
    let mut refinements = Refinements::default();
    let mut definitely_null = false;
    for _ in 0..n {
        let key = match r.head() {
            Ok(Head::Int(i)) => i,
            Ok(Head::Uint(u)) => i64::try_from(u).unwrap_or(i64::MAX),
            _ => return Err(bad("keys must be integers")),
        };
        match key {
            REFINE_NULLNESS => match r.head() {
                Ok(Head::Bool(is_null)) => {
                    definitely_null = is_null;
                    refinements.nullable = Some(is_null);
                }
                _ => return Err(bad("nullness must be a bool")),
            },
            REFINE_STRING_PREFIX => {
                if *ty != Type::String {
                    return Err(bad(&format!("string prefix for a value of type {ty}")));
                }
                match r.head() {
                    Ok(Head::Str(b)) | Ok(Head::Bin(b)) => {
                        let prefix =
                            std::str::from_utf8(b).map_err(|_| bad("string prefix is not valid UTF-8"))?;
                        // Kept as the encoder would write it, so a decoded value re-encodes to
                        // itself: cut like any prefix we write, and an empty prefix says nothing.
                        let prefix = safe_prefix(prefix);
                        refinements.string_prefix = (!prefix.is_empty()).then(|| prefix.to_owned());
                    }
                    _ => return Err(bad("string prefix must be a string")),
                }
            }
            REFINE_NUMBER_LOWER | REFINE_NUMBER_UPPER => {
                if *ty != Type::Number {
                    return Err(bad(&format!("number bound for a value of type {ty}")));
                }
                let bound = read_bound(&mut r).ok_or_else(|| bad("a number bound must be [number, bool]"))?;
                // A bound too long for the encoder to write is left out here as well (an unknown
                // with fewer refinements is still true), so a decoded value re-encodes to itself.
                let bound = encoded_bound(&bound.0, bound.1)
                    .is_some_and(|item| item.len() <= MAX_BOUND_BYTES)
                    .then_some(bound);
                if key == REFINE_NUMBER_LOWER {
                    refinements.number_lower = bound;
                } else {
                    refinements.number_upper = bound;
                }
            }
            REFINE_LENGTH_LOWER | REFINE_LENGTH_UPPER => {
                if !ty.is_collection() {
                    return Err(bad(&format!("length bound for a value of type {ty}")));
                }
                let length = match r.head() {
                    Ok(Head::Int(i)) => u64::try_from(i).ok(),
                    Ok(Head::Uint(u)) => Some(u),
                    _ => None,
                }
                .ok_or_else(|| bad("a length bound must be a non-negative integer"))?;
                if key == REFINE_LENGTH_LOWER {
                    refinements.length_lower = Some(length);
                } else {
                    refinements.length_upper = Some(length);
                }
            }
            // Keys from a newer Terraform: skip their value.
            _ => r.skip().map_err(&bad)?,
        }
    }
    // Anything after the map is ignored, as cty does (room for future extensions).
    if definitely_null {
        return Ok(Value::Null);
    }
    Ok(Value::Unknown(refinements))
}

fn read_bound(r: &mut Reader<'_>) -> Option<(Number, bool)> {
    let Ok(Head::Array(2)) = r.head() else {
        return None;
    };
    let number = match r.head().ok()? {
        Head::Int(i) => Number::from_i64(i),
        Head::Uint(u) => Number::from_u64(u),
        Head::Float(f) => Number::from_f64(f)?,
        Head::Str(b) => Number::parse(std::str::from_utf8(b).ok()?)?,
        _ => return None,
    };
    let Ok(Head::Bool(inclusive)) = r.head() else {
        return None;
    };
    Some((number, inclusive))
}

// ---------------------------------------------------------------------------------------
// Writing

/// Appends msgpack items; with `out == None` it only validates (for [`check`]).
struct Writer {
    out: Option<Vec<u8>>,
}

impl Writer {
    fn put(&mut self, bytes: &[u8]) {
        if let Some(out) = &mut self.out {
            out.extend_from_slice(bytes);
        }
    }

    fn nil(&mut self) {
        self.put(&[0xc0]);
    }

    fn bool(&mut self, b: bool) {
        self.put(&[if b { 0xc3 } else { 0xc2 }]);
    }

    fn uint(&mut self, u: u64) {
        if u < 0x80 {
            self.put(&[u as u8]);
        } else if let Ok(v) = u8::try_from(u) {
            self.put(&[0xcc, v]);
        } else if let Ok(v) = u16::try_from(u) {
            self.put(&[0xcd]);
            self.put(&v.to_be_bytes());
        } else if let Ok(v) = u32::try_from(u) {
            self.put(&[0xce]);
            self.put(&v.to_be_bytes());
        } else {
            self.put(&[0xcf]);
            self.put(&u.to_be_bytes());
        }
    }

    /// Smallest encoding, as cty's compact encoder does.
    fn int(&mut self, i: i64) {
        if let Ok(u) = u64::try_from(i) {
            self.uint(u);
        } else if i >= -32 {
            self.put(&[i as u8]);
        } else if let Ok(v) = i8::try_from(i) {
            self.put(&[0xd0]);
            self.put(&v.to_be_bytes());
        } else if let Ok(v) = i16::try_from(i) {
            self.put(&[0xd1]);
            self.put(&v.to_be_bytes());
        } else if let Ok(v) = i32::try_from(i) {
            self.put(&[0xd2]);
            self.put(&v.to_be_bytes());
        } else {
            self.put(&[0xd3]);
            self.put(&i.to_be_bytes());
        }
    }

    fn f64(&mut self, f: f64) {
        self.put(&[0xcb]);
        self.put(&f.to_be_bytes());
    }

    /// Header with a length: the fix form when `fix` is given and the length fits its 4 or 5
    /// bits, else the 8/16/32-bit forms (`m8` may be absent, as for arrays and maps).
    fn sized(
        &mut self,
        len: usize,
        fix: Option<(u8, usize)>,
        m8: Option<u8>,
        m16: u8,
        m32: u8,
    ) -> Result<(), &'static str> {
        match fix {
            Some((base, max)) if len <= max => {
                self.put(&[base | len as u8]);
                return Ok(());
            }
            _ => {}
        }
        if let (Some(m), Ok(v)) = (m8, u8::try_from(len)) {
            self.put(&[m, v]);
        } else if let Ok(v) = u16::try_from(len) {
            self.put(&[m16]);
            self.put(&v.to_be_bytes());
        } else if let Ok(v) = u32::try_from(len) {
            self.put(&[m32]);
            self.put(&v.to_be_bytes());
        } else {
            return Err("too long for msgpack (more than 2^32-1 items or bytes)");
        }
        Ok(())
    }

    fn str(&mut self, s: &str) -> Result<(), &'static str> {
        self.sized(s.len(), Some((0xa0, 31)), Some(0xd9), 0xda, 0xdb)?;
        self.put(s.as_bytes());
        Ok(())
    }

    fn bin(&mut self, b: &[u8]) -> Result<(), &'static str> {
        self.sized(b.len(), None, Some(0xc4), 0xc5, 0xc6)?;
        self.put(b);
        Ok(())
    }

    fn array(&mut self, len: usize) -> Result<(), &'static str> {
        self.sized(len, Some((0x90, 15)), None, 0xdc, 0xdd)
    }

    fn map(&mut self, len: usize) -> Result<(), &'static str> {
        self.sized(len, Some((0x80, 15)), None, 0xde, 0xdf)
    }

    fn ext(&mut self, code: i8, payload: &[u8]) -> Result<(), &'static str> {
        let fixed = match payload.len() {
            1 => Some(0xd4),
            2 => Some(0xd5),
            4 => Some(0xd6),
            8 => Some(0xd7),
            16 => Some(0xd8),
            _ => None,
        };
        match fixed {
            Some(marker) => self.put(&[marker]),
            None => self.sized(payload.len(), None, Some(0xc7), 0xc8, 0xc9)?,
        }
        self.put(&code.to_be_bytes());
        self.put(payload);
        Ok(())
    }

    fn number(&mut self, n: &Number) -> Result<(), &'static str> {
        if let Some(i) = n.as_i64() {
            self.int(i);
        } else if let Some(f) = n.to_exact_f64() {
            self.f64(f);
        } else {
            self.str(&n.to_string())?;
        }
        Ok(())
    }

    fn unknown(&mut self, refinements: &Refinements, ty: &Type) -> Result<(), &'static str> {
        if *ty == Type::Dynamic {
            self.put(&[0xd4, 0, 0]);
            return Ok(());
        }
        if refinements.nullable == Some(true) {
            self.nil();
            return Ok(());
        }
        let mut body = Writer {
            out: Some(Vec::new()),
        };
        let mut entries = 0;
        if refinements.nullable == Some(false) {
            entries += 1;
            body.int(REFINE_NULLNESS);
            body.bool(false);
        }
        match ty {
            Type::String => {
                if let Some(prefix) = refinements.string_prefix.as_deref() {
                    let prefix = safe_prefix(prefix);
                    if !prefix.is_empty() {
                        entries += 1;
                        body.int(REFINE_STRING_PREFIX);
                        body.str(prefix)?;
                    }
                }
            }
            Type::Number => {
                for (key, bound) in [
                    (REFINE_NUMBER_LOWER, &refinements.number_lower),
                    (REFINE_NUMBER_UPPER, &refinements.number_upper),
                ] {
                    let Some((n, inclusive)) = bound else {
                        continue;
                    };
                    let Some(item) = encoded_bound(n, *inclusive) else {
                        continue;
                    };
                    if item.len() <= MAX_BOUND_BYTES {
                        entries += 1;
                        body.int(key);
                        body.put(&item);
                    }
                }
            }
            Type::List(_) | Type::Set(_) | Type::Map(_) => {
                for (key, bound) in [
                    (REFINE_LENGTH_LOWER, refinements.length_lower),
                    (REFINE_LENGTH_UPPER, refinements.length_upper),
                ] {
                    if let Some(n) = bound {
                        entries += 1;
                        body.int(key);
                        body.uint(n);
                    }
                }
            }
            _ => {}
        }
        if entries == 0 {
            self.put(&[0xd4, 0, 0]);
            return Ok(());
        }
        let mut payload = Writer {
            out: Some(Vec::new()),
        };
        payload.map(entries)?;
        payload.put(&body.out.unwrap_or_default());
        self.ext(REFINED_UNKNOWN_EXT, &payload.out.unwrap_or_default())
    }
}

/// A number bound of a refinement as written: `[number, inclusive]`.
fn encoded_bound(n: &Number, inclusive: bool) -> Option<Vec<u8>> {
    let mut item = Writer {
        out: Some(Vec::new()),
    };
    item.array(2).ok()?;
    item.number(n).ok()?;
    item.bool(inclusive);
    item.out
}

/// A prefix short enough for cty's payload limit. When it has to be cut, it is cut just
/// before an ASCII character, which can never combine with what precedes it, so the shorter
/// prefix stays a true prefix of the final (NFC-normalised) string. Empty if no such place.
fn safe_prefix(prefix: &str) -> &str {
    if prefix.len() <= MAX_PREFIX_BYTES {
        return prefix;
    }
    let bytes = prefix.as_bytes();
    let cut = (0..=MAX_PREFIX_BYTES)
        .rev()
        .find(|&i| bytes[i].is_ascii())
        .unwrap_or(0);
    &prefix[..cut]
}

fn encode_value(
    w: &mut Writer,
    value: &Value,
    ty: &Type,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    if depth > MAX_DEPTH {
        return Err(enc_too_deep(trail));
    }
    match (ty, value) {
        (_, Value::Null) => {
            w.nil();
            Ok(())
        }
        (_, Value::Unknown(refinements)) => w.unknown(refinements, ty).map_err(|m| enc_err(trail, m)),
        (Type::Dynamic, Value::Dynamic(inner_ty, inner)) => encode_dynamic(w, inner_ty, inner, trail, depth),
        (Type::Dynamic, other) => Err(unwrapped_dynamic(trail, other)),
        (_, Value::Dynamic(inner_ty, inner)) if **inner_ty == *ty => {
            encode_value(w, inner, ty, trail, depth + 1)
        }
        (Type::String | Type::Number | Type::Bool, _) => encode_primitive(w, value, ty, trail),
        (Type::List(ety), Value::List(items)) | (Type::Set(ety), Value::Set(items)) => {
            encode_elements(w, items, ety, trail, depth)
        }
        (Type::Tuple(etys), Value::Tuple(items)) => encode_tuple(w, items, ty, etys, trail, depth),
        (Type::Map(ety), Value::Map(entries)) => encode_map(w, entries, ety, trail, depth),
        (Type::Object(attrs), Value::Object(entries)) => encode_object(w, entries, ty, attrs, trail, depth),
        (_, other) => Err(enc_mismatch(trail, ty, other)),
    }
}

#[cold]
#[inline(never)]
pub(crate) fn enc_too_deep(trail: &Trail<'_>) -> EncodeError {
    enc_err(trail, format!("value nests deeper than {MAX_DEPTH} levels"))
}

#[cold]
#[inline(never)]
pub(crate) fn enc_mismatch(trail: &Trail<'_>, ty: &Type, value: &Value) -> EncodeError {
    enc_err(trail, format!("{ty} is required, found {}", value.kind()))
}

#[cold]
#[inline(never)]
pub(crate) fn unwrapped_dynamic(trail: &Trail<'_>, value: &Value) -> EncodeError {
    enc_err(
        trail,
        format!(
            "a known value in a dynamic slot must be wrapped as Value::Dynamic(type, value), found {}",
            value.kind()
        ),
    )
}

#[cold]
#[inline(never)]
pub(crate) fn dynamic_of_dynamic(trail: &Trail<'_>) -> EncodeError {
    enc_err(trail, "a dynamic value must carry a concrete type, not dynamic")
}

/// Checks an object value's attribute names against its type.
#[inline(never)]
pub(crate) fn check_attributes(
    entries: &BTreeMap<String, Value>,
    ty: &Type,
    attrs: &BTreeMap<String, Type>,
    trail: &Trail<'_>,
) -> Result<(), EncodeError> {
    if let Some(extra) = entries.keys().find(|k| !attrs.contains_key(*k)) {
        return Err(enc_err(
            trail,
            format!("unsupported attribute {extra:?} (not in {ty})"),
        ));
    }
    if entries.len() != attrs.len() {
        return Err(enc_err(trail, missing_message(attrs, entries)));
    }
    Ok(())
}

#[cold]
#[inline(never)]
pub(crate) fn enc_tuple_length(trail: &Trail<'_>, ty: &Type, want: usize, found: usize) -> EncodeError {
    enc_err(
        trail,
        format!("{ty} needs exactly {want} elements, found {found}"),
    )
}

#[inline(never)]
fn encode_dynamic(
    w: &mut Writer,
    inner_ty: &Type,
    inner: &Value,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    if *inner_ty == Type::Dynamic {
        return Err(dynamic_of_dynamic(trail));
    }
    w.array(2).map_err(|m| enc_err(trail, m))?;
    if w.out.is_some() {
        w.bin(&inner_ty.to_json()).map_err(|m| enc_err(trail, m))?;
    }
    encode_value(w, inner, inner_ty, trail, depth + 1)
}

#[inline(never)]
fn encode_primitive(w: &mut Writer, value: &Value, ty: &Type, trail: &Trail<'_>) -> Result<(), EncodeError> {
    match (ty, value) {
        (Type::String, Value::String(s)) => w.str(s).map_err(|m| enc_err(trail, m)),
        (Type::Number, Value::Number(n)) => w.number(n).map_err(|m| enc_err(trail, m)),
        (Type::Bool, Value::Bool(b)) => {
            w.bool(*b);
            Ok(())
        }
        (_, other) => Err(enc_mismatch(trail, ty, other)),
    }
}

#[inline(never)]
fn encode_elements(
    w: &mut Writer,
    items: &[Value],
    ety: &Type,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    w.array(items.len()).map_err(|m| enc_err(trail, m))?;
    for (i, item) in items.iter().enumerate() {
        encode_value(w, item, ety, &trail.index(i), depth + 1)?;
    }
    Ok(())
}

#[inline(never)]
fn encode_tuple(
    w: &mut Writer,
    items: &[Value],
    ty: &Type,
    etys: &[Type],
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    if items.len() != etys.len() {
        return Err(enc_tuple_length(trail, ty, etys.len(), items.len()));
    }
    w.array(items.len()).map_err(|m| enc_err(trail, m))?;
    for (i, (item, ety)) in items.iter().zip(etys).enumerate() {
        encode_value(w, item, ety, &trail.index(i), depth + 1)?;
    }
    Ok(())
}

#[inline(never)]
fn encode_map(
    w: &mut Writer,
    entries: &BTreeMap<String, Value>,
    ety: &Type,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    w.map(entries.len()).map_err(|m| enc_err(trail, m))?;
    for (key, item) in entries {
        w.str(key).map_err(|m| enc_err(trail, m))?;
        encode_value(w, item, ety, &trail.key(key), depth + 1)?;
    }
    Ok(())
}

#[inline(never)]
fn encode_object(
    w: &mut Writer,
    entries: &BTreeMap<String, Value>,
    ty: &Type,
    attrs: &BTreeMap<String, Type>,
    trail: &Trail<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    check_attributes(entries, ty, attrs, trail)?;
    w.map(attrs.len()).map_err(|m| enc_err(trail, m))?;
    for ((name, aty), item) in attrs.iter().zip(entries.values()) {
        w.str(name).map_err(|m| enc_err(trail, m))?;
        encode_value(w, item, aty, &trail.attr(name), depth + 1)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::tfvalue::{AttributePath, PathStep};

    fn hex(s: &str) -> Vec<u8> {
        let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..clean.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&clean[i..i + 2], 16).unwrap())
            .collect()
    }

    fn num(s: &str) -> Value {
        Value::Number(Number::parse(s).unwrap())
    }

    fn round_trip(v: &Value, ty: &Type) {
        let bytes = encode(v, ty).unwrap();
        assert_eq!(&decode(&bytes, ty).unwrap(), v, "bytes {bytes:02x?}");
    }

    #[test]
    fn null_and_unknown_bytes() {
        assert_eq!(encode(&Value::Null, &Type::String).unwrap(), [0xc0]);
        assert_eq!(encode(&Value::unknown(), &Type::String).unwrap(), [0xd4, 0, 0]);
        assert_eq!(decode(&[0xc0], &Type::list(Type::Number)).unwrap(), Value::Null);
        assert_eq!(decode(&[0xd4, 0, 0], &Type::Number).unwrap(), Value::unknown());
        // Any ext code with a payload of at most one byte is a plain unknown.
        assert_eq!(decode(&[0xc7, 0, 0], &Type::Bool).unwrap(), Value::unknown());
        assert_eq!(decode(&[0xd4, 7, 9], &Type::Dynamic).unwrap(), Value::unknown());
        assert_eq!(decode(&[0xd4, 12, 0], &Type::String).unwrap(), Value::unknown());
        // A longer payload needs code 12.
        let e = decode(&[0xd5, 3, 0x81, 0x01], &Type::String).unwrap_err();
        assert!(e.message.contains("extension type 3"), "{e}");
    }

    #[test]
    fn refined_unknown_string_decodes() {
        // ext 12, payload {1: false, 2: "ab"}
        let bytes = hex("c7 07 0c 82 01 c2 02 a2 61 62");
        let v = decode(&bytes, &Type::String).unwrap();
        assert_eq!(
            v,
            Value::Unknown(Refinements {
                nullable: Some(false),
                string_prefix: Some("ab".into()),
                ..Default::default()
            })
        );
        assert_eq!(encode(&v, &Type::String).unwrap(), bytes);
    }

    #[test]
    fn refined_unknown_number_and_collection() {
        // {3: [1, true], 4: [1.5 as float64, false]}: 17 payload bytes.
        let v = Value::Unknown(Refinements {
            number_lower: Some((Number::from_i64(1), true)),
            number_upper: Some((Number::parse("1.5").unwrap(), false)),
            ..Default::default()
        });
        let bytes = encode(&v, &Type::Number).unwrap();
        assert_eq!(bytes[..3], [0xc7, 17, 12]);
        assert_eq!(decode(&bytes, &Type::Number).unwrap(), v);
        // Not-null only: fixext2 is not used for a 3-byte payload: c7 03 0c 81 01 c2.
        let nn = Value::Unknown(Refinements {
            nullable: Some(false),
            ..Default::default()
        });
        assert_eq!(encode(&nn, &Type::Bool).unwrap(), hex("c7 03 0c 81 01 c2"));
        let lengths = Value::Unknown(Refinements {
            length_lower: Some(1),
            length_upper: Some(3),
            ..Default::default()
        });
        assert_eq!(
            encode(&lengths, &Type::list(Type::String)).unwrap(),
            hex("c7 05 0c 82 05 01 06 03")
        );
        round_trip(&lengths, &Type::map(Type::Bool));
    }

    #[test]
    fn refinements_that_do_not_fit_the_type() {
        // A prefix on a number is an error on input (as in cty) ...
        let e = decode(&hex("c7 04 0c 81 02 a1 61"), &Type::Number).unwrap_err();
        assert!(e.message.contains("string prefix"), "{e}");
        // ... and left out on output.
        let v = Value::Unknown(Refinements {
            string_prefix: Some("x".into()),
            ..Default::default()
        });
        assert_eq!(encode(&v, &Type::Number).unwrap(), [0xd4, 0, 0]);
        // Dynamic unknowns never carry refinements; incoming ones are ignored.
        assert_eq!(
            decode(&hex("c7 03 0c 81 01 c2"), &Type::Dynamic).unwrap(),
            Value::unknown()
        );
        // Unknown keys are skipped, nested values included.
        assert_eq!(
            decode(&hex("c7 09 0c 82 63 92 01 81 01 02 01 c2"), &Type::Bool).unwrap(),
            Value::Unknown(Refinements {
                nullable: Some(false),
                ..Default::default()
            })
        );
        // "definitely null" collapses to null.
        assert_eq!(
            decode(&hex("c7 03 0c 81 01 c3"), &Type::Bool).unwrap(),
            Value::Null
        );
        let definitely_null = Value::Unknown(Refinements {
            nullable: Some(true),
            ..Default::default()
        });
        assert_eq!(encode(&definitely_null, &Type::Bool).unwrap(), [0xc0]);
        // Oversized payloads are refused.
        let mut big = vec![0xc8, 0x04, 0x01, 12, 0x81, 0x02, 0xda, 0x03, 0xfc];
        big.extend(std::iter::repeat_n(b'a', 0x3fc));
        assert!(
            decode(&big, &Type::String)
                .unwrap_err()
                .message
                .contains("too large")
        );
    }

    #[test]
    fn long_prefixes_are_cut_before_an_ascii_character() {
        let long = format!("{}é{}", "a".repeat(255), "b".repeat(300));
        let v = Value::Unknown(Refinements {
            string_prefix: Some(long),
            ..Default::default()
        });
        let back = decode(&encode(&v, &Type::String).unwrap(), &Type::String).unwrap();
        let Value::Unknown(r) = back else {
            panic!("not unknown")
        };
        assert_eq!(r.string_prefix.as_deref(), Some(&*"a".repeat(254)));
    }

    /// Fuzz crash (tfvalue_msgpack, fuzz/corpus/tfvalue_msgpack/crash-8918bd23…): a refined
    /// unknown string whose prefix is empty, `d7 0c 81 02 a0 …`, decoded with `Some("")` but
    /// re-encoded without the (meaningless) prefix, so the round trip changed the value.
    #[test]
    fn decoded_refinements_re_encode_to_themselves() {
        let empty_prefix = [0xd7, 0x0c, 0x81, 0x02, 0xa0, 0x27, 0x37, 0x3d, 0x00, 0x3b];
        let v = decode(&empty_prefix, &Type::String).unwrap();
        assert_eq!(v, Value::unknown());
        assert_eq!(
            decode(&encode(&v, &Type::String).unwrap(), &Type::String).unwrap(),
            v
        );

        // A refined unknown (extension 12) with a one-entry map: key, then the value's bytes.
        let refined = |key: u8, value: &[u8]| {
            let mut payload = vec![0x81, key];
            payload.extend_from_slice(value);
            let mut bytes = vec![0xc8];
            bytes.extend_from_slice(&u16::try_from(payload.len()).unwrap().to_be_bytes());
            bytes.push(0x0c);
            bytes.extend_from_slice(&payload);
            bytes
        };
        let str16 = |text: &str| {
            let mut out = vec![0xda];
            out.extend_from_slice(&u16::try_from(text.len()).unwrap().to_be_bytes());
            out.extend_from_slice(text.as_bytes());
            out
        };

        // A prefix longer than the encoder writes is cut on the way in as well.
        let v = decode(&refined(0x02, &str16(&"a".repeat(300))), &Type::String).unwrap();
        let Value::Unknown(r) = &v else {
            panic!("not unknown: {v:?}")
        };
        assert_eq!(r.string_prefix.as_deref(), Some(&*"a".repeat(256)));
        assert_eq!(
            decode(&encode(&v, &Type::String).unwrap(), &Type::String).unwrap(),
            v
        );

        // A number bound too long to write back is left out on the way in.
        let mut bound = vec![0x92];
        bound.extend_from_slice(&str16(&"9".repeat(500)));
        bound.push(0xc3);
        let bytes = refined(0x03, &bound);
        let v = decode(&bytes, &Type::Number).unwrap();
        assert_eq!(v, Value::unknown());
        assert_eq!(
            decode(&encode(&v, &Type::Number).unwrap(), &Type::Number).unwrap(),
            v
        );
    }

    #[test]
    fn numbers_use_int_float_or_string() {
        assert_eq!(encode(&num("1"), &Type::Number).unwrap(), [0x01]);
        assert_eq!(encode(&num("1.0"), &Type::Number).unwrap(), [0x01]);
        assert_eq!(encode(&num("-1"), &Type::Number).unwrap(), [0xff]);
        assert_eq!(encode(&num("200"), &Type::Number).unwrap(), [0xcc, 200]);
        assert_eq!(encode(&num("-200"), &Type::Number).unwrap(), hex("d1 ff 38"));
        assert_eq!(
            encode(&num("-9223372036854775808"), &Type::Number).unwrap(),
            hex("d3 80 00 00 00 00 00 00 00")
        );
        let mut half = vec![0xcb];
        half.extend(0.5f64.to_be_bytes());
        assert_eq!(encode(&num("0.5"), &Type::Number).unwrap(), half);
        let mut e20 = vec![0xcb];
        e20.extend(1e20f64.to_be_bytes());
        assert_eq!(encode(&num("1e20"), &Type::Number).unwrap(), e20);
        let mut tenth = vec![0xa3];
        tenth.extend(b"0.1");
        assert_eq!(encode(&num("0.1"), &Type::Number).unwrap(), tenth);
        let big = "123456789012345678901234567890";
        let mut big_bytes = vec![0xbe];
        big_bytes.extend(big.as_bytes());
        assert_eq!(encode(&num(big), &Type::Number).unwrap(), big_bytes);
        for s in [big, "1e400", "-1e-400", "0.1", "18446744073709551615", "1e5000"] {
            round_trip(&num(s), &Type::Number);
        }
        let mut inf = vec![0xcb];
        inf.extend(f64::INFINITY.to_be_bytes());
        assert_eq!(
            encode(&Value::Number(Number::positive_infinity()), &Type::Number).unwrap(),
            inf
        );
        round_trip(&Value::Number(Number::negative_infinity()), &Type::Number);
    }

    #[test]
    fn numbers_decode_from_every_form() {
        assert_eq!(decode(&[0x05], &Type::Number).unwrap(), num("5"));
        assert_eq!(
            decode(&hex("cf ff ff ff ff ff ff ff ff"), &Type::Number).unwrap(),
            num("18446744073709551615")
        );
        assert_eq!(decode(&hex("d0 80"), &Type::Number).unwrap(), num("-128"));
        assert_eq!(decode(&hex("ca 3f c0 00 00"), &Type::Number).unwrap(), num("1.5"));
        assert_eq!(
            decode(&hex("a4 31 65 34 30"), &Type::Number).unwrap(),
            num("1e40")
        );
        assert!(decode(&hex("a3 61 62 63"), &Type::Number).is_err());
        let mut nan = vec![0xcb];
        nan.extend(f64::NAN.to_be_bytes());
        assert!(decode(&nan, &Type::Number).unwrap_err().message.contains("NaN"));
        let mut plain400 = vec![0xda, 0x01, 0x91];
        plain400.push(b'1');
        plain400.extend(std::iter::repeat_n(b'0', 400));
        assert_eq!(decode(&plain400, &Type::Number).unwrap(), num("1e400"));
    }

    #[test]
    fn objects_need_exactly_their_attributes() {
        let ty = Type::object([("a", Type::String), ("b", Type::Number)]);
        let ok = Value::Object(BTreeMap::from([
            ("a".to_string(), Value::string("x")),
            ("b".to_string(), Value::Null),
        ]));
        assert_eq!(encode(&ok, &ty).unwrap(), hex("82 a1 61 a1 78 a1 62 c0"));
        round_trip(&ok, &ty);
        // Any key order decodes.
        assert_eq!(decode(&hex("82 a1 62 c0 a1 61 a1 78"), &ty).unwrap(), ok);

        let e = decode(&hex("81 a1 61 a1 78"), &ty).unwrap_err();
        assert_eq!(
            e.message.split(" (").next(),
            Some("object is missing attribute \"b\"")
        );
        let e = decode(&hex("83 a1 61 a1 78 a1 62 c0 a1 63 c0"), &ty).unwrap_err();
        assert_eq!(e.message, "unsupported attribute \"c\"");
        let e = decode(&hex("82 a1 61 c0 a1 61 c0"), &ty).unwrap_err();
        assert!(e.message.contains("duplicate attribute"), "{e}");

        let missing = Value::Object(BTreeMap::from([("a".to_string(), Value::Null)]));
        let e = encode(&missing, &ty).unwrap_err();
        assert!(e.message.contains("missing attribute \"b\""), "{e}");
        let nested = Type::object([("spec", ty.clone())]);
        let wrapped = Value::Object(BTreeMap::from([("spec".to_string(), missing)]));
        let e = encode(&wrapped, &nested).unwrap_err();
        assert_eq!(e.path, AttributePath::root().attr("spec"));
        assert!(
            e.to_string()
                .starts_with("spec: object is missing attribute \"b\""),
            "{e}"
        );
        assert_eq!(
            wrapped.conforms_to(&nested).unwrap_err().0,
            AttributePath::root().attr("spec")
        );
    }

    #[test]
    fn errors_carry_the_path() {
        let ty = Type::object([("items", Type::list(Type::map(Type::Number)))]);
        // {"items": [{"k": "notnum"}]}
        let bytes = hex("81 a5 6974656d73 91 81 a1 6b a3 61 62 63");
        let e = decode(&bytes, &ty).unwrap_err();
        assert_eq!(
            e.path.steps,
            vec![
                PathStep::Attribute("items".into()),
                PathStep::ElementKeyInt(0),
                PathStep::ElementKeyString("k".into())
            ]
        );
        assert_eq!(e.to_string(), "items[0][\"k\"]: \"abc\" is not a valid number");
        let bad = Value::Object(BTreeMap::from([(
            "items".to_string(),
            Value::List(vec![Value::Map(BTreeMap::from([(
                "k".to_string(),
                Value::string("x"),
            )]))]),
        )]));
        let e = encode(&bad, &ty).unwrap_err();
        assert_eq!(
            e.to_string(),
            "items[0][\"k\"]: number is required, found a string"
        );
    }

    #[test]
    fn collections_and_tuples() {
        let list = Value::List(vec![Value::string("a"), Value::Null, Value::unknown()]);
        assert_eq!(
            encode(&list, &Type::list(Type::String)).unwrap(),
            hex("93 a1 61 c0 d4 00 00")
        );
        round_trip(&list, &Type::list(Type::String));
        round_trip(&Value::Set(vec![num("1"), num("2")]), &Type::set(Type::Number));
        round_trip(&Value::List(vec![]), &Type::list(Type::Bool));
        let map = Value::Map(BTreeMap::from([("k".to_string(), Value::Bool(true))]));
        assert_eq!(encode(&map, &Type::map(Type::Bool)).unwrap(), hex("81 a1 6b c3"));
        let tuple_ty = Type::Tuple(vec![Type::String, Type::Bool]);
        let tuple = Value::Tuple(vec![Value::string("a"), Value::Bool(false)]);
        assert_eq!(encode(&tuple, &tuple_ty).unwrap(), hex("92 a1 61 c2"));
        assert!(decode(&hex("91 a1 61"), &tuple_ty).is_err());
        assert!(encode(&Value::Tuple(vec![]), &tuple_ty).is_err());
        // Kinds are not interchangeable.
        let e = encode(&Value::List(vec![]), &Type::set(Type::String)).unwrap_err();
        assert_eq!(e.message, "set(string) is required, found a list");
        assert!(decode(&hex("81 01 c0"), &Type::map(Type::Bool)).is_err());
    }

    #[test]
    fn dynamic_values() {
        let v = Value::Dynamic(Box::new(Type::String), Box::new(Value::string("hi")));
        let mut expected = vec![0x92, 0xc4, 8];
        expected.extend(b"\"string\"");
        expected.extend([0xa2, b'h', b'i']);
        assert_eq!(encode(&v, &Type::Dynamic).unwrap(), expected);
        round_trip(&v, &Type::Dynamic);
        assert_eq!(v.as_str(), Some("hi"));

        let complex_ty = Type::object([("n", Type::Number), ("l", Type::list(Type::Dynamic))]);
        let complex = Value::Dynamic(
            Box::new(complex_ty.clone()),
            Box::new(Value::Object(BTreeMap::from([
                ("n".to_string(), num("1e400")),
                (
                    "l".to_string(),
                    Value::List(vec![
                        Value::Dynamic(Box::new(Type::Bool), Box::new(Value::Bool(true))),
                        Value::Null,
                        Value::unknown(),
                    ]),
                ),
            ]))),
        );
        round_trip(&complex, &Type::Dynamic);
        round_trip(&Value::Null, &Type::Dynamic);
        assert_eq!(encode(&Value::unknown(), &Type::Dynamic).unwrap(), [0xd4, 0, 0]);
        assert_eq!(decode(&[0xc0], &Type::Dynamic).unwrap(), Value::Null);
        // Typed null and typed unknown keep their type.
        let typed_null = Value::Dynamic(Box::new(Type::String), Box::new(Value::Null));
        round_trip(&typed_null, &Type::Dynamic);
        assert!(typed_null.is_null());
        let typed_unknown = Value::Dynamic(Box::new(Type::Number), Box::new(Value::unknown()));
        round_trip(&typed_unknown, &Type::Dynamic);
        assert!(typed_unknown.is_unknown());
        // Type JSON may also come as a msgpack string.
        let mut as_str = vec![0x92, 0xa6];
        as_str.extend(b"\"bool\"");
        as_str.push(0xc2);
        assert_eq!(
            decode(&as_str, &Type::Dynamic).unwrap(),
            Value::Dynamic(Box::new(Type::Bool), Box::new(Value::Bool(false)))
        );
        // A bare known value cannot go into a dynamic slot.
        assert!(encode(&Value::string("x"), &Type::Dynamic).is_err());
        assert!(decode(&hex("93 c0 c0 c0"), &Type::Dynamic).is_err());
        // A dynamic wrapper of the right type is accepted in a typed slot.
        assert_eq!(encode(&v, &Type::String).unwrap(), hex("a2 68 69"));
        assert!(encode(&v, &Type::Number).is_err());
    }

    #[test]
    fn hostile_input_is_refused_cleanly() {
        // Truncated everything.
        let good = encode(
            &Value::List(vec![Value::string("abc"), Value::string("d")]),
            &Type::list(Type::String),
        )
        .unwrap();
        for cut in 0..good.len() {
            assert!(decode(&good[..cut], &Type::list(Type::String)).is_err());
        }
        // Trailing bytes.
        assert!(decode(&[0xc0, 0xc0], &Type::String).is_err());
        // A huge declared length with nothing behind it.
        assert!(decode(&hex("dd ff ff ff ff"), &Type::list(Type::String)).is_err());
        assert!(decode(&hex("df ff ff ff ff"), &Type::map(Type::String)).is_err());
        assert!(decode(&hex("db ff ff ff ff"), &Type::String).is_err());
        // Deep nesting through types ...
        let mut deep_ty = Type::String;
        for _ in 0..1000 {
            deep_ty = Type::list(deep_ty);
        }
        let mut deep = vec![0x91; 1000];
        deep.push(0xc0);
        let e = decode(&deep, &deep_ty).unwrap_err();
        assert!(e.message.contains("deeper"), "{e}");
        // ... and through dynamic wrappers, which carry their own type.
        let mut chain = Vec::new();
        for _ in 0..100_000 {
            chain.extend([0x92, 0xc4, 9]);
            chain.extend(b"\"dynamic\"");
        }
        chain.push(0xc0);
        assert!(decode(&chain, &Type::Dynamic).is_err());
        // Invalid UTF-8 in a string.
        assert!(decode(&hex("a1 ff"), &Type::String).is_err());
        // The reserved marker.
        assert!(decode(&[0xc1], &Type::Bool).is_err());
    }
}
#[cfg(test)]
mod depth_tests {
    use super::*;
    use crate::terraform::tfvalue::json;

    /// The deepest value the decoders accept goes through both codecs on a 2 MiB thread (the
    /// default for test threads and tokio workers), in either build profile, and one level
    /// more is refused, not overflowed.
    #[test]
    fn deepest_values_fit_a_worker_stack() {
        let worker = std::thread::Builder::new().stack_size(2 << 20);
        let handle = worker
            .spawn(|| {
                let mut ty = Type::String;
                let mut v = Value::string("x");
                for _ in 0..MAX_DEPTH {
                    ty = Type::list(ty);
                    v = Value::List(vec![v]);
                }
                let bytes = encode(&v, &ty).unwrap();
                assert_eq!(decode(&bytes, &ty).unwrap(), v);
                let text = json::encode(&v, &ty).unwrap();
                assert_eq!(json::decode(&text, &ty).unwrap(), v);
                assert_eq!(json::decode_lenient(&text, &ty).unwrap(), v);

                let deeper_ty = Type::list(ty.clone());
                let deeper = Value::List(vec![v.clone()]);
                assert!(
                    encode(&deeper, &deeper_ty)
                        .unwrap_err()
                        .message
                        .contains("deeper")
                );
                assert!(json::encode(&deeper, &deeper_ty).is_err());
                let mut deeper_bytes = vec![0x91];
                deeper_bytes.extend(&bytes);
                assert!(
                    decode(&deeper_bytes, &deeper_ty)
                        .unwrap_err()
                        .message
                        .contains("deeper")
                );
                let mut deeper_text = b"[".to_vec();
                deeper_text.extend(&text);
                deeper_text.push(b']');
                assert!(json::decode(&deeper_text, &deeper_ty).is_err());
            })
            .unwrap();
        assert!(handle.join().is_ok());
    }
}
