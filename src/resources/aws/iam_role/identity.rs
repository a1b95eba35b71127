//! The identity both IAM role types share (`name` and `account_id`, from the ARN in state) and
//! import by identity: the import by name, refused when the role found is in another account.

use std::sync::LazyLock;

use crate::context::KarpenterContext;
use crate::resources::aws::listing::{account_mismatch, arn_region_account, explain_failed_import};
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{Diagnostics, IdentityAttribute, IdentitySchema, Resource};
use crate::terraform::tfvalue::Value;

pub static ROLE_IDENTITY: LazyLock<IdentitySchema> = LazyLock::new(|| {
    IdentitySchema::new(vec![
        IdentityAttribute::required("name", "The IAM role's name."),
        IdentityAttribute::optional(
            "account_id",
            "The role's AWS account ID. When set, an import checks that the provider's credentials belong to this \
             account.",
        ),
    ])
});

/// The identity of a role state: its name and the account of its ARN; null until both are
/// known (a create whose name is generated).
pub fn role_identity(state: &Value) -> Value {
    let (Some(name), Some((_, account))) = (
        get_str(state, "name"),
        get_str(state, "arn").and_then(arn_region_account),
    ) else {
        return Value::Null;
    };
    if account.is_empty() {
        return Value::Null;
    }
    ROLE_IDENTITY.value([
        ("name", Value::string(name)),
        ("account_id", Value::string(account)),
    ])
}

/// `import { identity = { name, account_id } }` of a role: the import by name, refused when
/// the role found is in another account than the identity names.
pub async fn import_role_by_identity<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    identity: &Value,
) -> Result<Value, Diagnostics> {
    let name = IdentitySchema::get(identity, "name").unwrap_or_default();
    let wanted = IdentitySchema::get(identity, "account_id");
    match resource.import(ctx, name).await {
        Ok(state) => {
            if let (Some(wanted), Some((_, actual))) =
                (wanted, get_str(&state, "arn").and_then(arn_region_account))
                && wanted != actual
            {
                return Err(account_mismatch(resource.type_name(), wanted, actual));
            }
            Ok(state)
        }
        Err(d) => Err(explain_failed_import(ctx, resource.type_name(), wanted, d).await),
    }
}
