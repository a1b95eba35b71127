//! The value codec between tfplugin6's `DynamicValue`s (msgpack or JSON) and the framework's
//! [`Value`]s, for values of a schema's type and for resource identities. What does not decode
//! is a "Malformed …" diagnostic; what does not encode is an internal error.

use super::reply::{internal, malformed};
use crate::terraform::framework::{Diagnostics, Resource};
use crate::terraform::plugin::proto::tfplugin6 as pb;
use crate::terraform::tfvalue::{Type, Value, json, msgpack};

/// Decodes a DynamicValue (msgpack, or JSON when only that is set; absent means null).
pub(super) fn decode(value: Option<&pb::DynamicValue>, ty: &Type, what: &str) -> Result<Value, Diagnostics> {
    let Some(v) = value else { return Ok(Value::Null) };
    let decoded = if !v.msgpack.is_empty() {
        msgpack::decode(&v.msgpack, ty).map_err(|e| e.to_string())
    } else if !v.json.is_empty() {
        json::decode(&v.json, ty).map_err(|e| e.to_string())
    } else {
        return Ok(Value::Null);
    };
    let value = decoded.map_err(|e| malformed(what, &e))?;
    // Terraform never sends a wholly unknown state or configuration (only attributes in it may be
    // unknown): one at the root would reach the resources' code as a value of no shape.
    if value.is_unknown() {
        return Err(malformed(what, "the whole value is unknown"));
    }
    Ok(value)
}

/// Decodes a configuration. Terraform always sends one as an object (validation, configure,
/// data source reads): a missing or null configuration is malformed rather than "nothing set".
pub(super) fn decode_config(
    value: Option<&pb::DynamicValue>,
    ty: &Type,
    what: &str,
) -> Result<Value, Diagnostics> {
    let value = decode(value, ty, what)?;
    if value.is_null() {
        return Err(malformed(what, "it is missing or null"));
    }
    Ok(value)
}

/// Encodes a value as msgpack.
pub(super) fn encode(value: &Value, ty: &Type, what: &str) -> Result<pb::DynamicValue, Diagnostics> {
    msgpack::encode(value, ty)
        .map(|msgpack| pb::DynamicValue {
            msgpack,
            json: Vec::new(),
        })
        .map_err(|e| internal(&format!("could not encode the {what}: {e}")))
}

/// An identity ready to send (`None` for a null one).
pub(super) fn identity_data<C: Send + Sync>(
    resource: &dyn Resource<C>,
    identity: &Value,
) -> Result<Option<pb::ResourceIdentityData>, Diagnostics> {
    match resource.identity_schema() {
        Some(schema) if !identity.is_null() => Ok(Some(pb::ResourceIdentityData {
            identity_data: Some(encode(identity, &schema.value_type(), "resource identity")?),
        })),
        _ => Ok(None),
    }
}

/// An identity Terraform sent (null when absent, or when the type has none).
pub(super) fn decode_identity<C: Send + Sync>(
    resource: &dyn Resource<C>,
    data: Option<&pb::ResourceIdentityData>,
) -> Result<Value, Diagnostics> {
    let (Some(schema), Some(data)) = (resource.identity_schema(), data) else {
        return Ok(Value::Null);
    };
    decode(
        data.identity_data.as_ref(),
        &schema.value_type(),
        "resource identity",
    )
}
