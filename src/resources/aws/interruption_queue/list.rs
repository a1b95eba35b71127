//! Listing `karpenter_interruption_queue`: its list schema and `list` (the queues by the
//! Karpenter rules that target them and by this provider's ownership tag). Its identity is in
//! [`super::identity`]; what the three types' listings share is in
//! [`crate::resources::aws::listing`].

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::Value as Json;

use super::calls::queue_arn_from_url;
use super::identity::{QUEUE_IDENTITY, queue_identity};
use super::kinds::{RULE_KINDS, cluster_for_import, rule_prefix_of, split_rule_name};
use super::schema::{CLUSTER_TAG_KEY, TYPE_NAME};
use crate::aws::error::AwsError;
use crate::aws::{EventBridge, Sqs, ownership};
use crate::context::KarpenterContext;
use crate::resources::aws::listing;
use crate::resources::aws::listing::{arn_region_account, cluster_name_filter, imported_and_read};
use crate::terraform::framework::list::name_matches;
use crate::terraform::framework::list::name_prefix_attribute;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{Diagnostics, ListRequest, ListSink, Resource, Schema};
use crate::terraform::tfvalue::Value;

pub static QUEUE_LIST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Finds the Karpenter interruption queues in the account and region of the provider configuration: SQS \
         queues that carry this provider's ownership tag, and queues an EventBridge rule with one of Karpenter's \
         interruption event patterns (Spot interruption, rebalance, AWS Health, instance state change, capacity \
         reservation interruption) targets, as Karpenter's CloudFormation reference builds them.",
        vec![
            name_prefix_attribute("queues"),
            cluster_name_filter(
                "the cluster an import records as `cluster_name` (the queue's cluster tag, else read from its rules' \
                 names or its own name).",
            ),
        ],
    )
});

/// The name a person reads for a queue: its cluster and region, and the queue's own name
/// when it is not the cluster's.
pub(crate) fn queue_display_name(queue_name: &str, cluster: &str, region: &str) -> String {
    if queue_name == cluster {
        format!("{cluster} ({region})")
    } else {
        format!("{cluster} ({region}, queue {queue_name})")
    }
}

/// The last path segment of a queue URL: the queue's name.
pub(crate) fn queue_name_of_url(url: &str) -> &str {
    url.trim_end_matches('/').rsplit('/').next().unwrap_or_default()
}

/// A warning for rules that target a queue under this resource's naming but with a second
/// prefix (a `rule_name_prefix` change that was interrupted): the import takes one prefix, so
/// the others are left as they are. Rules named otherwise altogether (a CloudFormation stack's,
/// terraform-aws-eks's module's) are adopted under their own names (`rule_names`).
pub(crate) fn rules_not_adopted(queue: &str, rule_names: &[String]) -> Diagnostics {
    let prefix = rule_prefix_of(rule_names.iter().map(String::as_str));
    let foreign: Vec<&str> = rule_names
        .iter()
        .map(String::as_str)
        .filter(|n| split_rule_name(n).is_some_and(|(p, _)| Some(p) != prefix))
        .collect();
    let mut d = Diagnostics::new();
    if !foreign.is_empty() {
        d.warning(
            format!("Some EventBridge rules of queue {queue} are not adopted"),
            format!(
                "The rules {} send Karpenter's interruption events to this queue under another rule_name_prefix \
                 than the rest ({}). Importing the queue takes one prefix and leaves these as they are: they keep \
                 working, outside Terraform. Delete them once the imported queue's rules are in place.",
                foreign.join(", "),
                prefix.unwrap_or_default()
            ),
        );
    }
    d
}

/// `list "karpenter_interruption_queue" …`: one ListRules and a ListTargetsByRule per rule
/// with an interruption pattern first, then the queues in name order, each with one
/// ListQueueTags (and the import, when states are asked for).
pub async fn list_queues<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    request: &ListRequest,
    sink: &ListSink,
) {
    let aws = match ctx.aws().await {
        Ok(a) => a,
        Err(d) => return sink.fail(d).await,
    };
    let sqs = Sqs::new(aws.sqs(), aws.endpoint_for("sqs"));
    let events = EventBridge::new(aws.events(), aws.endpoint_for("events"));
    let region = aws.region().map(str::to_string);
    let config = &request.config;

    // The queues Karpenter's rules send to, with the names of those rules.
    let rules = match events.list_rules(None).await {
        Ok(r) => r,
        Err(e) => return sink.fail(e.to_diagnostics()).await,
    };
    let mut targeted: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for rule in rules
        .iter()
        .filter(|r| r.event_pattern.as_deref().is_some_and(is_interruption_pattern))
    {
        match events.list_targets(&rule.name).await {
            Ok(targets) => {
                for t in targets.unwrap_or_default() {
                    if t.arn.split(':').nth(2) == Some("sqs") {
                        targeted.entry(t.arn).or_default().push(rule.name.clone());
                    }
                }
            }
            Err(e) => {
                let more = sink
                    .skip(
                        format!("EventBridge rule {} not read", rule.name),
                        format!(
                            "It has one of Karpenter's interruption event patterns, but its targets could not be listed \
                             ({e}); a queue it targets is listed only if it carries this provider's ownership tag."
                        ),
                    )
                    .await;
                if !more {
                    return;
                }
            }
        }
    }

    let mut urls = match sqs.list_queues(get_str(config, "name_prefix")).await {
        Ok(u) => u,
        Err(e) => return sink.fail(e.to_diagnostics()).await,
    };
    urls.sort_by(|a, b| queue_name_of_url(a).cmp(queue_name_of_url(b)));
    let cluster_filter = get_str(config, "cluster_name");
    for url in urls {
        let name = queue_name_of_url(&url).to_string();
        if name.is_empty() || !name_matches(config, &name) {
            continue;
        }
        if !sink.wants_more() {
            return;
        }
        let (arn, tags) = match arn_and_tags(&sqs, &url, region.as_deref()).await {
            Ok(Some(found)) => found,
            // Deleted since it was listed.
            Ok(None) => continue,
            Err(e) => {
                let more = sink
                    .skip(
                        format!("SQS queue {name} not listed"),
                        format!(
                            "It could not be read ({e}), so whether it is a Karpenter interruption queue is not known."
                        ),
                    )
                    .await;
                if !more {
                    return;
                }
                continue;
            }
        };
        let rule_names = targeted.get(&arn);
        if rule_names.is_none() && !ownership::is_owned_by(&tags, TYPE_NAME) {
            continue;
        }
        let state = if sink.include_state() {
            match imported_and_read(resource, ctx, &name).await {
                Ok(s) => Some(s),
                Err(why) => {
                    let more = sink
                        .skip(
                            format!("SQS queue {name} not listed"),
                            format!(
                                "It looks like a Karpenter interruption queue, but importing it failed: {why}"
                            ),
                        )
                        .await;
                    if !more {
                        return;
                    }
                    continue;
                }
            }
        } else {
            None
        };
        // The cluster as the import records it.
        let cluster = match state.as_ref().and_then(|s| get_str(s, "cluster_name")) {
            Some(c) => c.to_string(),
            None => cluster_for_import(
                &name,
                tags.get(CLUSTER_TAG_KEY).map(String::as_str),
                rule_prefix_of(rule_names.into_iter().flatten().map(String::as_str)),
            ),
        };
        if cluster_filter.is_some_and(|want| want != cluster) {
            continue;
        }
        let (arn_region, arn_account) = arn_region_account(&arn).unwrap_or_default();
        let identity = match &state {
            Some(s) => queue_identity(s),
            None => QUEUE_IDENTITY.value([
                ("queue_name", Value::string(name.clone())),
                ("region", Value::string(arn_region)),
                ("account_id", Value::string(arn_account)),
            ]),
        };
        let display_name = queue_display_name(&name, &cluster, arn_region);
        let notes = rules_not_adopted(&name, rule_names.map(Vec::as_slice).unwrap_or_default());
        if !sink.found(identity, display_name, state, notes).await {
            return;
        }
    }
}

/// A listed queue's ARN (from its URL when the region is known, else from its attributes) and
/// its tags; `None` when it was deleted in the meantime.
async fn arn_and_tags(
    sqs: &Sqs,
    url: &str,
    region: Option<&str>,
) -> Result<Option<(String, BTreeMap<String, String>)>, AwsError> {
    let found = async {
        let arn = match region.and_then(|r| queue_arn_from_url(url, r)) {
            Some(arn) => arn,
            None => sqs
                .get_attributes(url)
                .await?
                .get("QueueArn")
                .cloned()
                .unwrap_or_default(),
        };
        Ok::<_, AwsError>((arn, sqs.list_tags(url).await?))
    };
    match found.await {
        Ok(found) => Ok(Some(found)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether an EventBridge event pattern is one of Karpenter's interruption patterns: its
/// `source` and `detail-type` include one kind's (other fields may narrow it further).
pub fn is_interruption_pattern(pattern: &str) -> bool {
    let Ok(doc) = serde_json::from_str::<Json>(pattern) else {
        return false;
    };
    RULE_KINDS.iter().any(|k| {
        listing::strings(&doc["source"]).contains(&k.source)
            && listing::strings(&doc["detail-type"]).contains(&k.detail_type)
    })
}
