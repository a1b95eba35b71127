//! The identities of the AWS types, derived from the ARNs in state, and import by identity:
//! the identity's region and account checked against the provider configuration, then the
//! import by name.

use std::sync::LazyLock;

use crate::context::KarpenterContext;
use crate::policy::arn::Arn;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{Diagnostics, IdentityAttribute, IdentitySchema, Resource};
use crate::terraform::tfvalue::{AttributePath, Value};

pub static QUEUE_IDENTITY: LazyLock<IdentitySchema> = LazyLock::new(|| {
    IdentitySchema::new(vec![
        IdentityAttribute::required("queue_name", "The SQS queue's name (`queue_name`)."),
        IdentityAttribute::optional(
            "region",
            "The queue's AWS region. When set, an import checks that the provider configuration it uses is \
             configured for this region.",
        ),
        IdentityAttribute::optional(
            "account_id",
            "The queue's AWS account ID. When set, an import checks that the provider's credentials belong to \
             this account.",
        ),
    ])
});

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

/// The region and account of an ARN (`arn:<partition>:<service>:<region>:<account>:…`), in
/// any partition.
pub fn arn_region_account(arn: &str) -> Option<(&str, &str)> {
    Arn::fields(arn).map(|[_, _, region, account, _]| (region, account))
}

/// The identity of an interruption queue state: its name, and the region and account of its
/// ARN (or, while the queue is gone and its rules are not, of a rule's ARN: the rules are made
/// in the queue's account and region). Null until all three are known.
pub fn queue_identity(state: &Value) -> Value {
    let Some(name) = get_str(state, "queue_name") else {
        return Value::Null;
    };
    let rule_arns = state
        .get("rules")
        .and_then(Value::as_entries)
        .into_iter()
        .flatten()
        .filter_map(|(_, r)| get_str(r, "arn"));
    let located = get_str(state, "queue_arn")
        .into_iter()
        .chain(rule_arns)
        .find_map(arn_region_account)
        .filter(|(region, account)| !region.is_empty() && !account.is_empty());
    let Some((region, account)) = located else {
        return Value::Null;
    };
    QUEUE_IDENTITY.value([
        ("queue_name", Value::string(name)),
        ("region", Value::string(region)),
        ("account_id", Value::string(account)),
    ])
}

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

fn identity_path(name: &str) -> AttributePath {
    AttributePath::root().attr(name)
}

/// The refusal of an identity naming another account than the credentials'.
pub fn account_mismatch(type_name: &str, wanted: &str, actual: &str) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.error_at(
        &identity_path("account_id"),
        "Identity in another AWS account",
        format!(
            "The identity names a {type_name} in account {wanted}, but this provider configuration's AWS credentials \
             belong to account {actual}. Import it with a provider configuration whose credentials are in account \
             {wanted} (e.g. a provider \"karpenter\" block with alias = \"other\" and aws {{ assume_role {{ role_arn = \
             \"arn:aws:iam::{wanted}:role/<role>\" }} }}, and provider = karpenter.other in the import block), or \
             correct account_id."
        ),
    );
    d
}

/// The refusal of an identity naming another region than the provider's.
pub fn region_mismatch(type_name: &str, wanted: &str, actual: &str) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.error_at(
        &identity_path("region"),
        "Identity in another AWS region",
        format!(
            "The identity names a {type_name} in {wanted}, but this provider configuration is configured for \
             {actual}. Import it with a provider configuration for {wanted} (e.g. a provider \"karpenter\" block \
             with alias = \"{alias}\" and aws {{ region = \"{wanted}\" }}, and provider = karpenter.{alias} in the \
             import block), or correct region.",
            alias = region_alias(wanted),
        ),
    );
    d
}

/// A short provider alias for a region, as people write them: `us-east-1` → `use1`.
pub fn region_alias(region: &str) -> String {
    let parts: Vec<&str> = region.split('-').collect();
    match parts.as_slice() {
        [first, rest @ ..] if !rest.is_empty() => {
            let mut alias = first.to_string();
            for p in rest {
                match p.parse::<u32>() {
                    Ok(_) => alias.push_str(p),
                    Err(_) => alias.extend(p.chars().next()),
                }
            }
            alias
        }
        _ => region.replace('-', "_"),
    }
}

/// The account the provider's credentials are in (STS), when it can be asked.
async fn caller_account(ctx: &KarpenterContext) -> Option<String> {
    let aws = ctx.aws().await.ok()?;
    crate::aws::account::caller_account(aws)
        .await
        .map_err(|e| tracing::debug!(error = %e, "could not ask STS for the caller's account"))
        .ok()
}

/// After an import by name failed for an identity naming an account: when the credentials are
/// in another account, that is the reason, and the refusal says so.
pub async fn explain_failed_import(
    ctx: &KarpenterContext,
    type_name: &str,
    wanted_account: Option<&str>,
    failure: Diagnostics,
) -> Diagnostics {
    let Some(wanted) = wanted_account else {
        return failure;
    };
    match caller_account(ctx).await {
        Some(actual) if actual != wanted => account_mismatch(type_name, wanted, &actual),
        _ => failure,
    }
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
