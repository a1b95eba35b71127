//! `tags_all` of the AWS resources (`karpenter_interruption_queue`, `karpenter_node_role`,
//! `karpenter_controller_role`), as hashicorp/aws has it: the provider's default tags
//! (`aws { default_tags { tags } }`) merged with the resource's `tags`, planned at plan time
//! and written on every part the resource creates. Read reports the tags a part carries as
//! `tags_all` and the resource's own part of them as `tags`, so drift in either shows.

use std::collections::BTreeMap;

use crate::aws::tags;
use crate::context::KarpenterContext;
use crate::terraform::framework::Attribute;
use crate::terraform::framework::values::string_map;
use crate::terraform::tfvalue::{Type, Value};

/// The attribute's name, after hashicorp/aws.
pub const TAGS_ALL: &str = "tags_all";

/// The computed `tags_all` attribute; `parts` says which parts carry the tags.
pub fn attribute(parts: &str) -> Attribute {
    Attribute::map_of(TAGS_ALL, Type::String)
        .computed()
        .describe(format!(
            "The tags {parts} carry: the provider's `aws {{ default_tags }}` merged with `tags` (a key in `tags` wins). \
             Known at plan time unless the default tags are not known yet; a change to the default tags updates it \
             in place, and a change made to the tags outside Terraform shows here."
        ))
}

/// A string map attribute as a BTreeMap (null → empty).
fn map_of(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_entries)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect()
}

/// The planned `tags_all` for `planned` (whose `tags` is planned already): the merged map, or
/// unknown while the default tags or `tags` are not known (or the provider is not configured).
pub fn plan(ctx: Option<&KarpenterContext>, planned: &Value) -> Value {
    let own = planned.get("tags");
    let defaults = ctx.and_then(KarpenterContext::default_tags);
    match defaults {
        Some(defaults) if own.is_none_or(Value::is_wholly_known) => {
            string_map(tags::merge(defaults, &map_of(own)))
        }
        _ => Value::unknown(),
    }
}

/// Sets the planned `tags_all` in `planned`.
pub fn plan_into(ctx: Option<&KarpenterContext>, planned: &mut Value) {
    let value = plan(ctx, planned);
    if let Value::Object(fields) = planned {
        fields.insert(TAGS_ALL.into(), value);
    }
}

/// The default tags at apply or read time (known then; empty when not configured).
pub fn defaults(ctx: &KarpenterContext) -> BTreeMap<String, String> {
    ctx.default_tags().cloned().unwrap_or_default()
}

/// The tags every part should carry for `planned`: its planned `tags_all` when known, else
/// (planned before the default tags were known) the default tags merged with `tags` now.
pub fn wanted(ctx: &KarpenterContext, planned: &Value) -> BTreeMap<String, String> {
    match planned.get(TAGS_ALL) {
        Some(v) if v.is_wholly_known() && !v.is_null() => map_of(Some(v)),
        _ => tags::merge(&defaults(ctx), &map_of(planned.get("tags"))),
    }
}

/// `tags` and `tags_all` for state, from the tags a part carries (`all`, bookkeeping tags left
/// out). `prior_tags` is the resource's `tags` as last recorded: null stays null when the
/// resource has no tags of its own.
pub fn read(
    all: &BTreeMap<String, String>,
    defaults: &BTreeMap<String, String>,
    prior_tags: Option<&Value>,
) -> (Value, Value) {
    let own = tags::own_part(all, defaults, &map_of(prior_tags));
    let own_value = if own.is_empty() && prior_tags.is_none_or(Value::is_null) {
        Value::Null
    } else {
        string_map(own)
    };
    (own_value, string_map(all.iter()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ProviderSettings;
    use crate::terraform::framework::values::object;
    use crate::terraform::tfvalue::AttributePath;

    fn ctx(defaults: &[(&str, &str)], unknown: bool) -> KarpenterContext {
        let mut settings = ProviderSettings::default();
        settings.aws.default_tags = defaults
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if unknown {
            settings.unknown.push(
                AttributePath::root()
                    .attr("aws")
                    .attr("default_tags")
                    .attr("tags"),
            );
        }
        KarpenterContext::new(settings)
    }

    #[test]
    fn tags_all_is_planned_merged_and_unknown_while_the_defaults_are() {
        let planned = object([("tags", string_map([("team", "k")]))]);
        let known = ctx(&[("env", "prod"), ("team", "platform")], false);
        assert_eq!(
            plan(Some(&known), &planned),
            string_map([("env", "prod"), ("team", "k")])
        );
        // no tags anywhere: an empty map, never null
        assert_eq!(
            plan(Some(&ctx(&[], false)), &object([("tags", Value::Null)])),
            Value::Map(BTreeMap::new())
        );
        assert!(plan(Some(&ctx(&[], true)), &planned).is_unknown());
        assert!(plan(None, &planned).is_unknown());
        assert!(plan(Some(&known), &object([("tags", Value::unknown())])).is_unknown());
    }

    #[test]
    fn apply_writes_the_planned_set_or_merges_when_it_was_unknown() {
        let c = ctx(&[("env", "prod")], false);
        let planned = object([
            ("tags", string_map([("a", "1")])),
            (TAGS_ALL, string_map([("a", "1"), ("env", "stage")])),
        ]);
        assert_eq!(wanted(&c, &planned).get("env").map(String::as_str), Some("stage"));
        let planned = object([("tags", string_map([("a", "1")])), (TAGS_ALL, Value::unknown())]);
        assert_eq!(
            wanted(&c, &planned),
            tags::merge(&defaults(&c), &map_of(Some(&string_map([("a", "1")]))))
        );
    }

    #[test]
    fn read_splits_the_carried_tags() {
        let all: BTreeMap<String, String> = [("env", "prod"), ("team", "k")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let defaults: BTreeMap<String, String> = [("env".to_string(), "prod".to_string())].into();
        let (own, every) = read(&all, &defaults, Some(&Value::Null));
        assert_eq!(own, string_map([("team", "k")]));
        assert_eq!(every, string_map(all.iter()));
        let (own, _) = read(&defaults, &defaults, None);
        assert_eq!(own, Value::Null);
    }
}
