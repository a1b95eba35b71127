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

mod read;
mod write;
pub(crate) use read::*;
pub(crate) use write::*;

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

#[cfg(test)]
mod tests;
