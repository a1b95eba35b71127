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
//! at [`MAX_DEPTH`](super::MAX_DEPTH), and never reserves more elements than there are bytes left.

mod read;
mod rules;
mod stream;
mod write;

pub use read::decode;
pub(crate) use rules::missing_message;
pub use stream::Stream;
pub use write::encode;
pub(crate) use write::{
    check_attributes, dynamic_of_dynamic, enc_mismatch, enc_too_deep, enc_tuple_length, unwrapped_dynamic,
};

#[cfg(test)]
mod tests;
