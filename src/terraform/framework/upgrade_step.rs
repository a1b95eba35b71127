//! What a schema declares about upgrading its stored state: the type of one version step and
//! its error, and the helpers steps are written with. Below `schema` and `upgrade`, which run
//! the steps ([`super::upgrade`]).

use serde_json::{Map, Value as Json};
use thiserror::Error;

/// One version step: the stored state object of version `v` in, the same state in version
/// `v + 1`'s shape out. Keep it small and pure (it sees only the stored JSON), and test it on
/// its own.
pub type UpgradeStep = fn(Map<String, Json>) -> Result<Map<String, Json>, UpgradeError>;

/// Why a step could not upgrade a stored state.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum UpgradeError {
    /// A stored attribute's value is not what the step can convert.
    #[error("attribute {attribute}: {message}")]
    Attribute { attribute: String, message: String },
    /// The stored state as a whole is not what the step expects.
    #[error("{0}")]
    State(String),
}

impl UpgradeError {
    pub fn at(attribute: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Attribute {
            attribute: attribute.into(),
            message: message.into(),
        }
    }
}

/// Moves the value of `from` to `to` (a rename step's body). A stored `to` is kept if `from`
/// is absent or null; both set is an error, as the step cannot tell which one is right.
pub fn rename(state: &mut Map<String, Json>, from: &str, to: &str) -> Result<(), UpgradeError> {
    let Some(value) = state.remove(from) else {
        return Ok(());
    };
    if value.is_null() && state.contains_key(to) {
        return Ok(());
    }
    if state.get(to).is_some_and(|v| !v.is_null()) {
        return Err(UpgradeError::at(
            from,
            format!("the state has both {from} and its new name {to}"),
        ));
    }
    state.insert(to.to_string(), value);
    Ok(())
}

/// A stored value written under a plain type, in the stored form of a `Dynamic` attribute
/// (`{"value": …, "type": …}`, the type being the one the value has): a step's body when an
/// attribute becomes dynamic. Null stays null.
pub fn to_dynamic(value: Json) -> Json {
    if value.is_null() {
        return value;
    }
    let ty = stored_type(&value);
    let mut wrapped = Map::new();
    wrapped.insert("value".to_string(), value);
    wrapped.insert("type".to_string(), ty);
    Json::Object(wrapped)
}

/// The type (in Terraform's JSON type syntax) that a stored plain value has.
fn stored_type(value: &Json) -> Json {
    match value {
        Json::Null => Json::String("dynamic".to_string()),
        Json::Bool(_) => Json::String("bool".to_string()),
        Json::Number(_) => Json::String("number".to_string()),
        Json::String(_) => Json::String("string".to_string()),
        Json::Array(items) => Json::Array(vec![
            Json::String("tuple".to_string()),
            Json::Array(items.iter().map(stored_type).collect()),
        ]),
        Json::Object(m) => Json::Array(vec![
            Json::String("object".to_string()),
            Json::Object(m.iter().map(|(k, e)| (k.clone(), stored_type(e))).collect()),
        ]),
    }
}
