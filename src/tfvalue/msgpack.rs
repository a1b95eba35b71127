//! DynamicValue msgpack codec. PLACEHOLDER: to be written.
