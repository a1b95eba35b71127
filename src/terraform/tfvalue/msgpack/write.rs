//! Writing msgpack (and, with no output, only checking that a value fits its type), with the
//! encoder's errors.

use std::collections::BTreeMap;

use super::rules::{
    MAX_BOUND_BYTES, MAX_PREFIX_BYTES, REFINE_LENGTH_LOWER, REFINE_LENGTH_UPPER, REFINE_NULLNESS,
    REFINE_NUMBER_LOWER, REFINE_NUMBER_UPPER, REFINE_STRING_PREFIX, REFINED_UNKNOWN_EXT, missing_message,
};
use crate::terraform::tfvalue::error::EncodeError;
use crate::terraform::tfvalue::number::Number;
use crate::terraform::tfvalue::path::AttributePath;
use crate::terraform::tfvalue::trail::Trail;
use crate::terraform::tfvalue::value::{MAX_DEPTH, Refinements, Type, Value};

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

impl Value {
    /// Checks that the value can stand for `ty` (exactly the check the encoders make):
    /// collections and objects of the right kind, every object attribute present and no other,
    /// tuples of the right length, known values in dynamic slots wrapped in
    /// [`Value::Dynamic`]. Nulls and unknowns fit anywhere. On failure, where and why.
    pub fn conforms_to(&self, ty: &Type) -> Result<(), (AttributePath, String)> {
        check(self, ty).map_err(|e| (e.path, e.message))
    }
}

/// The conformance check of [`encode`] without producing bytes.
fn check(value: &Value, ty: &Type) -> Result<(), EncodeError> {
    let mut w = Writer { out: None };
    encode_value(&mut w, value, ty, &Trail::Root, 0)
}

pub(crate) fn enc_err(trail: &Trail<'_>, message: impl Into<String>) -> EncodeError {
    EncodeError {
        path: trail.to_path(),
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------------
// Writing

/// Appends msgpack items; with `out == None` it only validates (for [`check`]).
pub(super) struct Writer {
    pub(super) out: Option<Vec<u8>>,
}

impl Writer {
    pub(super) fn put(&mut self, bytes: &[u8]) {
        if let Some(out) = &mut self.out {
            out.extend_from_slice(bytes);
        }
    }

    pub(super) fn nil(&mut self) {
        self.put(&[0xc0]);
    }

    pub(super) fn bool(&mut self, b: bool) {
        self.put(&[if b { 0xc3 } else { 0xc2 }]);
    }

    pub(super) fn uint(&mut self, u: u64) {
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
    pub(super) fn int(&mut self, i: i64) {
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

    pub(super) fn f64(&mut self, f: f64) {
        self.put(&[0xcb]);
        self.put(&f.to_be_bytes());
    }

    /// Header with a length: the fix form when `fix` is given and the length fits its 4 or 5
    /// bits, else the 8/16/32-bit forms (`m8` may be absent, as for arrays and maps).
    pub(super) fn sized(
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

    pub(super) fn str(&mut self, s: &str) -> Result<(), &'static str> {
        self.sized(s.len(), Some((0xa0, 31)), Some(0xd9), 0xda, 0xdb)?;
        self.put(s.as_bytes());
        Ok(())
    }

    pub(super) fn bin(&mut self, b: &[u8]) -> Result<(), &'static str> {
        self.sized(b.len(), None, Some(0xc4), 0xc5, 0xc6)?;
        self.put(b);
        Ok(())
    }

    pub(super) fn array(&mut self, len: usize) -> Result<(), &'static str> {
        self.sized(len, Some((0x90, 15)), None, 0xdc, 0xdd)
    }

    pub(super) fn map(&mut self, len: usize) -> Result<(), &'static str> {
        self.sized(len, Some((0x80, 15)), None, 0xde, 0xdf)
    }

    pub(super) fn ext(&mut self, code: i8, payload: &[u8]) -> Result<(), &'static str> {
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

    pub(super) fn number(&mut self, n: &Number) -> Result<(), &'static str> {
        if let Some(i) = n.as_i64() {
            self.int(i);
        } else if let Some(f) = n.to_exact_f64() {
            self.f64(f);
        } else {
            self.str(&n.to_string())?;
        }
        Ok(())
    }

    pub(super) fn unknown(&mut self, refinements: &Refinements, ty: &Type) -> Result<(), &'static str> {
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
pub(super) fn encoded_bound(n: &Number, inclusive: bool) -> Option<Vec<u8>> {
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
pub(super) fn safe_prefix(prefix: &str) -> &str {
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

pub(super) fn encode_value(
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
pub(super) fn encode_dynamic(
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
pub(super) fn encode_primitive(
    w: &mut Writer,
    value: &Value,
    ty: &Type,
    trail: &Trail<'_>,
) -> Result<(), EncodeError> {
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
pub(super) fn encode_elements(
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
pub(super) fn encode_tuple(
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
pub(super) fn encode_map(
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
pub(super) fn encode_object(
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
