//! DynamicValue / RawState JSON codec. PLACEHOLDER: to be written.
