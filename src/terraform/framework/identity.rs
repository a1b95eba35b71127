//! Resource identity (tfplugin6 6.9, Terraform 1.12+): the few attributes that name the remote
//! object a resource instance manages, kept by Terraform beside the state and used by
//! `import { identity = { … } }` and by list resources.
//!
//! A resource type declares an [`IdentitySchema`] and derives its identity from its state
//! ([`super::Resource::identity`]). The identity contract Terraform and its plugin framework
//! hold providers to, which the server checks on every answer ([`check_unchanged`]):
//!
//! - read, apply and import return a wholly known identity of the schema's type;
//! - an update (neither create nor replace) plans and applies the identity it had: identity
//!   attributes are derived only from attributes that replace the object when they change;
//! - a refresh never changes a stored identity.

use crate::terraform::framework::diagnostics::Diagnostics;
use crate::terraform::tfvalue::{Type, Value, json};

/// One identity attribute.
#[derive(Debug, Clone)]
pub struct IdentityAttribute {
    pub name: &'static str,
    pub ty: Type,
    /// `import { identity = … }` must set it.
    pub required_for_import: bool,
    pub description: &'static str,
}

impl IdentityAttribute {
    /// A string attribute an identity import must give.
    pub fn required(name: &'static str, description: &'static str) -> Self {
        Self {
            name,
            ty: Type::String,
            required_for_import: true,
            description,
        }
    }

    /// A string attribute an identity import may leave out.
    pub fn optional(name: &'static str, description: &'static str) -> Self {
        Self {
            name,
            ty: Type::String,
            required_for_import: false,
            description,
        }
    }
}

/// The identity schema of one resource type.
#[derive(Debug, Clone)]
pub struct IdentitySchema {
    /// Bumped when the attributes change; `UpgradeResourceIdentity` converts older ones.
    pub version: i64,
    pub attributes: Vec<IdentityAttribute>,
}

impl IdentitySchema {
    pub fn new(attributes: Vec<IdentityAttribute>) -> Self {
        Self {
            version: 0,
            attributes,
        }
    }

    /// The object type identities of this schema have.
    pub fn value_type(&self) -> Type {
        Type::object(self.attributes.iter().map(|a| (a.name, a.ty.clone())))
    }

    /// An identity object from attribute values (absent ones null).
    pub fn value<'a>(&self, values: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
        let mut given: std::collections::BTreeMap<String, Value> =
            values.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        Value::object(
            self.attributes
                .iter()
                .map(|a| (a.name, given.remove(a.name).unwrap_or(Value::Null))),
        )
    }

    /// Reads a stored identity (`UpgradeResourceIdentity`): JSON as Terraform kept it, in
    /// this schema or an older one; attributes no longer declared are dropped, missing ones
    /// are null.
    pub fn upgrade(&self, version: i64, raw_json: &[u8]) -> Result<Value, Diagnostics> {
        if version > self.version {
            return Err(Diagnostics::from_error(
                "Identity written by a newer provider",
                format!(
                    "This resource identity has schema version {version} but this provider knows version {}. \
                     Use the provider version that wrote it, or newer.",
                    self.version
                ),
            ));
        }
        if version < 0 {
            return Err(Diagnostics::from_error(
                "Malformed identity version",
                format!(
                    "Terraform sent identity schema version {version}; versions start at 0. This is a bug in \
                     Terraform or the provider."
                ),
            ));
        }
        json::decode_lenient(raw_json, &self.value_type()).map_err(|e| {
            Diagnostics::from_error(
                "Unreadable resource identity",
                format!("The stored resource identity could not be read: {e}"),
            )
        })
    }

    /// The string value of an identity attribute, if set and known.
    pub fn get<'a>(identity: &'a Value, name: &str) -> Option<&'a str> {
        identity.get(name).and_then(Value::as_str)
    }

    /// Checks an identity given to `import { identity = … }`: every attribute required for
    /// import is set.
    pub fn check_import(&self, identity: &Value, type_name: &str) -> Result<(), Diagnostics> {
        let missing: Vec<&str> = self
            .attributes
            .iter()
            .filter(|a| a.required_for_import && identity.get(a.name).is_none_or(Value::is_null))
            .map(|a| a.name)
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(Diagnostics::from_error(
            "Incomplete resource identity",
            format!(
                "Importing a {type_name} by identity needs {}: set it in the import block's identity.",
                missing.join(", ")
            ),
        ))
    }
}

/// The identity contract's "it must not change": `before` is the identity Terraform holds (null
/// when it holds none, e.g. a state written before identities existed), `after` the one about
/// to be returned. An error when both are set and differ, naming both, since it means the
/// provider would silently re-point the resource at another object.
pub fn check_unchanged(
    type_name: &str,
    during: &str,
    before: &Value,
    after: &Value,
) -> Result<(), Diagnostics> {
    if before.is_null() || after.is_null() || !after.is_wholly_known() || before == after {
        return Ok(());
    }
    Err(Diagnostics::from_error(
        "Unexpected identity change",
        format!(
            "During {during}, the {type_name} resource's identity changed from {before:?} to {after:?}. An \
             identity names the remote object and never changes for the same object; this is a bug in the \
             provider. Remove the resource from state (`terraform state rm`) and import it again if the object \
             really is another one."
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> IdentitySchema {
        IdentitySchema::new(vec![
            IdentityAttribute::required("name", "The name."),
            IdentityAttribute::optional("namespace", "The namespace."),
        ])
    }

    #[test]
    fn value_fills_absent_attributes_with_null_and_drops_unknown_ones() {
        let v = schema().value([("name", Value::string("a")), ("other", Value::string("x"))]);
        assert_eq!(
            v,
            Value::object([("name", Value::string("a")), ("namespace", Value::Null)])
        );
    }

    #[test]
    fn upgrade_reads_json_leniently_and_refuses_newer_versions() {
        let s = schema();
        let v = s.upgrade(0, br#"{"name":"a","gone":1}"#).expect("upgrade");
        assert_eq!(
            v,
            Value::object([("name", Value::string("a")), ("namespace", Value::Null)])
        );
        assert!(s.upgrade(1, b"{}").is_err());
        assert!(s.upgrade(-1, b"{}").is_err());
        assert!(s.upgrade(0, b"[").is_err());
    }

    #[test]
    fn import_needs_the_required_attributes() {
        let s = schema();
        assert!(
            s.check_import(&s.value([("name", Value::string("a"))]), "t")
                .is_ok()
        );
        let d = s.check_import(&s.value([]), "t").expect_err("missing name");
        assert!(d.iter().any(|d| d.detail.contains("needs name")));
    }

    #[test]
    fn a_changed_identity_is_an_error_and_a_new_one_is_not() {
        let a = schema().value([("name", Value::string("a"))]);
        let b = schema().value([("name", Value::string("b"))]);
        assert!(check_unchanged("t", "refresh", &a, &a).is_ok());
        assert!(check_unchanged("t", "refresh", &Value::Null, &b).is_ok());
        assert!(check_unchanged("t", "refresh", &a, &Value::Null).is_ok());
        assert!(check_unchanged("t", "refresh", &a, &b).is_err());
    }
}
