//! Reading msgpack: a hand-written reader over the input slice that never panics, bounds nesting
//! at [`MAX_DEPTH`], and never reserves more elements than there are bytes left.

use std::collections::BTreeMap;

use super::rules::{
    MAX_BOUND_BYTES, MAX_REFINEMENT_PAYLOAD, REFINE_LENGTH_LOWER, REFINE_LENGTH_UPPER, REFINE_NULLNESS,
    REFINE_NUMBER_LOWER, REFINE_NUMBER_UPPER, REFINE_STRING_PREFIX, REFINED_UNKNOWN_EXT, missing_message,
};
use super::write::{encoded_bound, safe_prefix};
use crate::terraform::tfvalue::error::DecodeError;
use crate::terraform::tfvalue::number::Number;
use crate::terraform::tfvalue::trail::Trail;
use crate::terraform::tfvalue::value::{MAX_DEPTH, Refinements, Type, Value};

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

fn err(trail: &Trail<'_>, message: impl Into<String>) -> DecodeError {
    DecodeError {
        path: trail.to_path(),
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------------
// Reading

/// One msgpack item header; payloads of str/bin/ext borrow the input.
pub(super) enum Head<'a> {
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
    pub(super) fn kind(&self) -> &'static str {
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

pub(super) struct Reader<'a> {
    pub(super) buf: &'a [u8],
    pub(super) pos: usize,
}

pub(super) const TRUNCATED: &str = "unexpected end of msgpack input";

impl<'a> Reader<'a> {
    pub(super) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if n > self.remaining() {
            return Err(TRUNCATED);
        }
        let slice = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    pub(super) fn u8(&mut self) -> Result<u8, &'static str> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn be<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(super) fn len16(&mut self) -> Result<usize, &'static str> {
        Ok(usize::from(u16::from_be_bytes(self.be()?)))
    }

    pub(super) fn len32(&mut self) -> Result<usize, &'static str> {
        usize::try_from(u32::from_be_bytes(self.be()?)).map_err(|_| "length too large")
    }

    pub(super) fn ext(&mut self, len: usize) -> Result<Head<'a>, &'static str> {
        let code = i8::from_be_bytes(self.be()?);
        Ok(Head::Ext(code, self.take(len)?))
    }

    #[inline(never)]
    pub(super) fn head(&mut self) -> Result<Head<'a>, &'static str> {
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
    pub(super) fn skip(&mut self) -> Result<(), &'static str> {
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

pub(super) fn utf8<'a>(bytes: &'a [u8], trail: &Trail<'_>, what: &str) -> Result<&'a str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|_| err(trail, format!("{what} is not valid UTF-8")))
}

// The recursive path (decode_value and the container functions) keeps its frames small:
// error messages and leaf decoding live in separate non-inlined functions, so that nesting up
// to MAX_DEPTH fits a 2 MiB thread stack even in debug builds.
pub(super) fn decode_value(
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
pub(super) fn too_deep(trail: &Trail<'_>) -> DecodeError {
    err(trail, format!("value nests deeper than {MAX_DEPTH} levels"))
}

#[cold]
#[inline(never)]
pub(super) fn mismatch(trail: &Trail<'_>, ty: &Type, head: &Head<'_>) -> DecodeError {
    err(trail, format!("{ty} is required, found {}", head.kind()))
}

#[inline(never)]
pub(super) fn decode_dynamic(
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
pub(super) fn read_dynamic_type(
    r: &mut Reader<'_>,
    head: Head<'_>,
    trail: &Trail<'_>,
) -> Result<Type, DecodeError> {
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
pub(super) fn decode_primitive(head: Head<'_>, ty: &Type, trail: &Trail<'_>) -> Result<Value, DecodeError> {
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
pub(super) fn decode_elements(
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
pub(super) fn decode_tuple(
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
pub(super) fn tuple_length(trail: &Trail<'_>, ty: &Type, want: usize, found: usize) -> DecodeError {
    err(
        trail,
        format!("{ty} needs exactly {want} elements, found {found}"),
    )
}

#[inline(never)]
pub(super) fn decode_map(
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
pub(super) fn decode_object(
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
pub(super) fn named(trail: &Trail<'_>, what: &str, name: &str) -> DecodeError {
    err(trail, format!("{what} {name:?}"))
}

#[inline(never)]
pub(super) fn read_key<'a>(
    r: &mut Reader<'a>,
    trail: &Trail<'_>,
    what: &str,
) -> Result<&'a str, DecodeError> {
    match r.head().map_err(|m| err(trail, m))? {
        Head::Str(b) | Head::Bin(b) => utf8(b, trail, what),
        other => Err(err(
            trail,
            format!("{what} must be a string, found {}", other.kind()),
        )),
    }
}

#[inline(never)]
pub(super) fn decode_unknown(
    code: i8,
    payload: &[u8],
    ty: &Type,
    trail: &Trail<'_>,
) -> Result<Value, DecodeError> {
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
    Ok(Value::Unknown(Box::new(refinements)))
}

pub(super) fn read_bound(r: &mut Reader<'_>) -> Option<(Number, bool)> {
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
