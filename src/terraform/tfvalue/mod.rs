//! Terraform's value model as the wire protocol carries it: types, values (with null and
//! unknown), and attribute paths. Nothing here knows gRPC or Karpenter; the codecs for
//! `DynamicValue` live in [`msgpack`] and [`json`], the type JSON of schemas in
//! [`Type::to_json`] / [`Type::from_json`].
//!
//! Strings are taken and written as they come: the NFC normalisation cty applies to strings
//! is not implemented (Terraform normalises what it sends; values we build are ASCII in
//! practice).

mod error;
pub mod json;
mod jsontext;
pub mod msgpack;
mod number;
mod path;
#[cfg(test)]
mod proptests;
mod trail;
mod typejson;
mod value;

pub use error::{DecodeError, EncodeError, TypeJsonError};
pub use number::Number;
pub use path::{AttributePath, PathStep};
pub use value::{MAX_DEPTH, Refinements, Type, Value};

/// Decodes a `DynamicValue` the way Terraform reads one: msgpack when those bytes are present,
/// else JSON (strict), else null.
pub fn decode_dynamic_value(
    msgpack_bytes: &[u8],
    json_bytes: &[u8],
    ty: &Type,
) -> Result<Value, DecodeError> {
    if !msgpack_bytes.is_empty() {
        msgpack::decode(msgpack_bytes, ty)
    } else if !json_bytes.is_empty() {
        json::decode(json_bytes, ty)
    } else {
        Ok(Value::Null)
    }
}
