//! Writing one value piece by piece, for answers too large to build as a [`Value`] first (the
//! offline instance-type table, about 80,000 values for every type): the caller writes maps,
//! arrays and primitives in msgpack order and hands built values to [`Stream::value`] where it
//! has them. The bytes are what [`encode`](super::encode) writes for the equivalent built value,
//! provided the caller writes each object as a map of exactly its type's attributes in the
//! type's (sorted) order; the callers' tests compare the two.

use super::write::{Writer, enc_err, encode_value};
use crate::terraform::tfvalue::error::EncodeError;
use crate::terraform::tfvalue::number::Number;
use crate::terraform::tfvalue::trail::Trail;
use crate::terraform::tfvalue::value::{Type, Value};

/// A msgpack value being written.
pub struct Stream {
    w: Writer,
}

impl Default for Stream {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl Stream {
    /// An empty stream with room for `bytes`.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            w: Writer {
                out: Some(Vec::with_capacity(bytes)),
            },
        }
    }

    /// A map (or object) of `len` entries follows: each a key written with [`Stream::str`], then
    /// its value.
    pub fn map(&mut self, len: usize) -> Result<(), EncodeError> {
        self.w.map(len).map_err(|m| enc_err(&Trail::Root, m))
    }

    /// A list, set or tuple of `len` elements follows.
    pub fn array(&mut self, len: usize) -> Result<(), EncodeError> {
        self.w.array(len).map_err(|m| enc_err(&Trail::Root, m))
    }

    pub fn str(&mut self, s: &str) -> Result<(), EncodeError> {
        self.w.str(s).map_err(|m| enc_err(&Trail::Root, m))
    }

    pub fn null(&mut self) {
        self.w.nil();
    }

    pub fn int(&mut self, i: i64) {
        self.w.int(i);
    }

    pub fn number(&mut self, n: &Number) -> Result<(), EncodeError> {
        self.w.number(n).map_err(|m| enc_err(&Trail::Root, m))
    }

    /// A built value of type `ty`, checked and written as [`encode`](super::encode) writes it.
    pub fn value(&mut self, value: &Value, ty: &Type) -> Result<(), EncodeError> {
        encode_value(&mut self.w, value, ty, &Trail::Root, 0)
    }

    /// The bytes written.
    pub fn finish(self) -> Vec<u8> {
        self.w.out.unwrap_or_default()
    }
}
