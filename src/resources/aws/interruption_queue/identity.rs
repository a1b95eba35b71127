//! The identity of `karpenter_interruption_queue` (`queue_name`, `region` and `account_id`,
//! from the ARNs in state) and import by identity: the region is checked against the
//! provider's before any call, the account against the queue found.

use std::sync::LazyLock;

use super::schema::TYPE_NAME;
use crate::context::KarpenterContext;
use crate::resources::aws::listing::{account_mismatch, arn_region_account, explain_failed_import};
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

/// `import { identity = { queue_name, region, account_id } }`: the region is checked against
/// the provider's before any call, the account against the queue found (or STS when none is).
pub async fn import_queue_by_identity<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    identity: &Value,
) -> Result<Value, Diagnostics> {
    let name = IdentitySchema::get(identity, "queue_name").unwrap_or_default();
    let wanted_region = IdentitySchema::get(identity, "region");
    let wanted_account = IdentitySchema::get(identity, "account_id");
    let provider_region = ctx.aws().await?.region().map(str::to_string);
    if let (Some(wanted), Some(actual)) = (wanted_region, provider_region.as_deref())
        && wanted != actual
    {
        return Err(region_mismatch(TYPE_NAME, wanted, actual));
    }
    let state = match resource.import(ctx, name).await {
        Ok(s) => s,
        Err(d) => return Err(explain_failed_import(ctx, TYPE_NAME, wanted_account, d).await),
    };
    if let Some((region, account)) = get_str(&state, "queue_arn").and_then(arn_region_account) {
        if let Some(wanted) = wanted_region.filter(|w| *w != region) {
            return Err(region_mismatch(TYPE_NAME, wanted, region));
        }
        if let Some(wanted) = wanted_account.filter(|w| *w != account) {
            return Err(account_mismatch(TYPE_NAME, wanted, account));
        }
    }
    Ok(state)
}

/// The refusal of an identity naming another region than the provider's.
pub fn region_mismatch(type_name: &str, wanted: &str, actual: &str) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.error_at(
        &AttributePath::root().attr("region"),
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
