//! Resource `karpenter_interruption_queue`: the SQS queue Karpenter reads interruption events
//! from, its queue policy, and the EventBridge rules (one per event kind, each with the queue as
//! its target), managed as one object, after Karpenter's CloudFormation reference.
//!
//! Contract: every part is recorded in state as soon as it exists, so a failure midway returns
//! what exists plus the error, and the next apply finishes (Terraform marks a failed create as
//! tainted and replaces it; deletion removes exactly what is recorded plus our derived names).
//! Read checks every part (queue attributes, policy, each rule's pattern and state, each
//! target); modify_plan plans the desired value of each, so drift shows as exactly that part.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::aws::error::{AwsError, AwsErrorKind};
use crate::aws::eventbridge::RuleRemoval;
use crate::aws::ownership;
use crate::aws::sqs::QUEUE_DELETED_RECENTLY;
use crate::aws::{EventBridge, Sqs};
use crate::context::KarpenterContext;
use crate::resources::aws::listing;
use crate::resources::aws::tags_all;
use crate::resources::taken_name::{Marks, Taken, owner_tag_mark};
use crate::terraform::framework::validate as v;
use crate::terraform::framework::values::{get_str, object, opt_string};
use crate::terraform::framework::{
    ApplyOutcome, Attribute, Diagnostics, IdentitySchema, ListRequest, ListSink, ReadOutcome, Resource,
    Schema, timeouts,
};
use crate::terraform::tfvalue::{AttributePath, Number, Type, Value};

/// The resource type.
pub struct InterruptionQueue;

/// The resource type, also the value of the ownership tag on every part it creates.
pub const TYPE_NAME: &str = "karpenter_interruption_queue";
/// A second bookkeeping tag, on the queue only: the cluster it was made for, so that import
/// recovers `cluster_name` even when the rule prefix is a shortened hash and the queue is
/// named apart from the cluster. Hidden from `tags` like the ownership tag.
pub const CLUSTER_TAG_KEY: &str = "terraform-provider-karpenter/cluster-name";
/// SQS and EventBridge allow 50 tags per resource; the provider keeps two for itself.
pub const MAX_USER_TAGS: usize = 48;

/// The target Id upstream's template gives the queue on every rule.
pub const TARGET_ID: &str = "KarpenterInterruptionQueueTarget";
/// Default message retention (seconds), as upstream.
pub const DEFAULT_RETENTION: i64 = 300;
/// AWS's default data key reuse period when a KMS key is used.
pub const DEFAULT_KMS_REUSE: i64 = 300;
/// EventBridge rule names are at most 64 characters.
pub const RULE_NAME_MAX: usize = 64;
/// SQS queue names are at most 80 characters.
pub const QUEUE_NAME_MAX: usize = 80;

/// One kind of event Karpenter handles, and its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleKind {
    /// The key in `enabled_rules` and `rules`.
    pub key: &'static str,
    /// Appended to `rule_name_prefix` to form the rule name.
    pub suffix: &'static str,
    pub source: &'static str,
    pub detail_type: &'static str,
}

/// The five rules of the upstream template, in its order.
pub const RULE_KINDS: &[RuleKind] = &[
    RuleKind {
        key: "scheduled_change",
        suffix: "ScheduledChange",
        source: "aws.health",
        detail_type: "AWS Health Event",
    },
    RuleKind {
        key: "spot_interruption",
        suffix: "SpotInterruption",
        source: "aws.ec2",
        detail_type: "EC2 Spot Instance Interruption Warning",
    },
    RuleKind {
        key: "rebalance",
        suffix: "Rebalance",
        source: "aws.ec2",
        detail_type: "EC2 Instance Rebalance Recommendation",
    },
    RuleKind {
        key: "instance_state_change",
        suffix: "InstanceStateChange",
        source: "aws.ec2",
        detail_type: "EC2 Instance State-change Notification",
    },
    RuleKind {
        key: "capacity_reservation_interruption",
        suffix: "CapacityReservationInterruption",
        source: "aws.ec2",
        detail_type: "EC2 Capacity Reservation Instance Interruption Warning",
    },
];

const KIND_KEYS: &[&str] = &[
    "scheduled_change",
    "spot_interruption",
    "rebalance",
    "instance_state_change",
    "capacity_reservation_interruption",
];

/// The longest rule-name suffix; a prefix may use the rest of the 64 characters.
pub fn max_prefix_len() -> usize {
    RULE_NAME_MAX - RULE_KINDS.iter().map(|k| k.suffix.len()).max().unwrap_or(0)
}

pub fn kind(key: &str) -> Option<&'static RuleKind> {
    RULE_KINDS.iter().find(|k| k.key == key)
}

impl RuleKind {
    /// The rule's event pattern, as compact JSON with sorted keys.
    pub fn event_pattern(&self) -> String {
        serde_json::json!({ "source": [self.source], "detail-type": [self.detail_type] }).to_string()
    }

    pub fn rule_name(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.suffix)
    }

    fn description(&self) -> String {
        format!(
            "Karpenter interruption handling: {} events to the interruption queue",
            self.detail_type
        )
    }
}

/// Whether a tag key is the provider's bookkeeping rather than the user's.
fn is_bookkeeping_tag(key: &str) -> bool {
    ownership::is_reserved_key(key) || key == CLUSTER_TAG_KEY
}

/// The tags a user sees and manages (`tags`, `rules[*].tags`): the bookkeeping ones left out.
fn visible_tags(tags: BTreeMap<String, String>) -> BTreeMap<String, String> {
    ownership::user_tags(&tags)
        .into_iter()
        .filter(|(k, _)| !is_bookkeeping_tag(k))
        .collect()
}

/// FNV-1a, for a short stable suffix when a name has to be shortened.
fn short_hash(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{:04x}", h & 0xffff)
}

/// The cluster an imported queue belongs to: the one its cluster tag names (queues this
/// provider created); else the queue's own name when its default rule prefix is the one the
/// rules carry (the upstream convention, and the only reading of a shortened, hashed prefix);
/// else the cluster spelled out in a `Karpenter-<cluster>-` prefix that is not a shortened one;
/// else the queue's name.
pub(crate) fn cluster_for_import(
    queue: &str,
    cluster_tag: Option<&str>,
    rule_prefix: Option<&str>,
) -> String {
    if let Some(cluster) = cluster_tag.filter(|c| !c.is_empty()) {
        return cluster.to_string();
    }
    let Some(p) = rule_prefix else {
        return queue.to_string();
    };
    if default_rule_prefix(queue) == p {
        return queue.to_string();
    }
    p.strip_prefix("Karpenter-")
        .and_then(|c| c.strip_suffix('-'))
        .filter(|c| !c.is_empty() && default_rule_prefix(c) == p && !is_shortened_prefix(p))
        .map_or_else(|| queue.to_string(), str::to_string)
}

/// Whether `prefix` has the shape of a shortened default prefix (`Karpenter-<head>-<4 hex>-`
/// at the full length), which no cluster name can be read back from.
fn is_shortened_prefix(prefix: &str) -> bool {
    let Some(rest) = prefix.strip_suffix('-') else {
        return false;
    };
    let hash = rest.rsplit('-').next().unwrap_or_default();
    prefix.len() == max_prefix_len() && hash.len() == 4 && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The default rule-name prefix for a cluster: `Karpenter-<cluster>-`, shortened (with a hash
/// of the full name, so two long names stay apart) to fit the 64-character rule-name limit.
pub fn default_rule_prefix(cluster: &str) -> String {
    let full = format!("Karpenter-{cluster}-");
    let max = max_prefix_len();
    if full.len() <= max {
        return full;
    }
    // "Karpenter-" + head + "-" + 4 hex + "-"
    let head_len = max - "Karpenter-".len() - 6;
    let head: String = cluster.chars().take(head_len).collect();
    format!("Karpenter-{head}-{}-", short_hash(cluster))
}

/// One extra policy statement from `policy_statements`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExtraStatement {
    pub sid: Option<String>,
    pub effect: String,
    pub actions: Vec<String>,
    /// (type, identifiers); type `*` means everyone.
    pub principals: Vec<(String, Vec<String>)>,
    /// (test, variable, values)
    pub conditions: Vec<(String, String, Vec<String>)>,
}

/// The queue policy: upstream's two statements (events/sqs may send; deny non-TLS) plus extras.
pub fn policy_document(queue_arn: &str, extra: &[ExtraStatement]) -> String {
    use serde_json::{Map, Value as J, json};
    let mut statements = vec![
        json!({
            "Sid": "AllowEventBridgeAndSqs",
            "Effect": "Allow",
            "Principal": { "Service": ["events.amazonaws.com", "sqs.amazonaws.com"] },
            "Action": "sqs:SendMessage",
            "Resource": queue_arn,
        }),
        json!({
            "Sid": "DenyHTTP",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "sqs:*",
            "Resource": queue_arn,
            "Condition": { "Bool": { "aws:SecureTransport": "false" } },
        }),
    ];
    for s in extra {
        let mut o = Map::new();
        if let Some(sid) = &s.sid {
            o.insert("Sid".into(), J::String(sid.clone()));
        }
        o.insert("Effect".into(), J::String(s.effect.clone()));
        if s.principals.iter().any(|(t, _)| t == "*") || s.principals.is_empty() {
            o.insert("Principal".into(), J::String("*".into()));
        } else {
            let mut p = Map::new();
            for (t, ids) in &s.principals {
                let entry = p.entry(t.clone()).or_insert_with(|| J::Array(vec![]));
                if let J::Array(a) = entry {
                    a.extend(ids.iter().cloned().map(J::String));
                }
            }
            o.insert("Principal".into(), J::Object(p));
        }
        o.insert("Action".into(), json!(s.actions));
        o.insert("Resource".into(), J::String(queue_arn.to_string()));
        if !s.conditions.is_empty() {
            let mut c = Map::new();
            for (test, variable, values) in &s.conditions {
                let t = c.entry(test.clone()).or_insert_with(|| J::Object(Map::new()));
                if let J::Object(t) = t {
                    t.insert(variable.clone(), json!(values));
                }
            }
            o.insert("Condition".into(), J::Object(c));
        }
        statements.push(J::Object(o));
    }
    json!({ "Version": "2012-10-17", "Id": "EC2InterruptionPolicy", "Statement": statements }).to_string()
}

/// `doc` in the canonical form this resource writes (compact, keys sorted), so a document AWS
/// returns reformatted compares equal to the one planned; not JSON → unchanged.
pub fn canonical_json(doc: &str) -> String {
    serde_json::from_str::<serde_json::Value>(doc).map_or_else(|_| doc.to_string(), |v| v.to_string())
}

static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let rule_object = vec![
        Attribute::string("name").computed().describe("Rule name."),
        Attribute::string("arn").computed().describe("Rule ARN."),
        Attribute::string("event_pattern")
            .computed()
            .describe("The rule's event pattern (JSON)."),
        Attribute::bool("enabled")
            .computed()
            .describe("Whether the rule is enabled."),
        Attribute::list_of("other_target_ids", Type::String).computed().describe(
            "Ids of targets on the rule that this resource did not add (someone else's); null when none. They are \
             never changed or removed: the plan warns about them, and destroy keeps the rule for them.",
        ),
        Attribute::string("target_arn").computed().describe(
            "ARN of the rule's `KarpenterInterruptionQueueTarget` target (the queue); null when missing.",
        ),
        Attribute::map_of("tags", Type::String)
            .computed()
            .describe("The rule's tags (the resource's `tags_all`)."),
    ];
    Schema::new(
        "The SQS queue Karpenter's interruption handling reads, its queue policy, and the EventBridge rules \
         that send it AWS Health, Spot interruption, rebalance, instance state-change and capacity \
         reservation interruption events, after Karpenter's getting-started CloudFormation template. \
         Feed `queue_name` to the Helm value `settings.interruptionQueue` and `queue_arn` to the \
         `karpenter_controller_policy` data source.\n\n\
         **Ownership.** Create never takes over what already exists: a queue or rule of the same name \
         fails the apply (on `name`/`cluster_name` or `rule_name_prefix`) and is left untouched, \
         whoever made it — another Terraform state, the CloudFormation template, or an apply of this \
         configuration interrupted before Terraform recorded the queue (the error says when it \
         carries this provider's ownership tag, and gives the `import {}` block); adopt an existing queue on purpose with \
         `terraform import` or an `import {}` block (the rules that target it come with it; the next \
         apply adds the ownership tag). Parts recorded in state are this resource's, tagged or not \
         (states of earlier versions keep working). Destroy removes only this resource's target from \
         each rule and deletes a rule only when no other target is left (a warning names a rule kept \
         for someone else's targets). A queue deleted out of band is recreated by the next apply, \
         which keeps the rules and points them at it; destroy still removes the rules. A new \
         `rule_name_prefix` creates the new rules before deleting the old ones. On AWS, a deleted \
         queue's name cannot be reused for 60 seconds (the provider retries within the create \
         timeout).",
        vec![
            Attribute::string("cluster_name")
                .required()
                .describe("Name of the EKS cluster. The queue is named after it unless `name` is set.")
                .validate(v::length(1, 100))
                .validate(v::matches(
                    r"^[0-9A-Za-z][A-Za-z0-9_-]*$",
                    "an EKS cluster name: letters, digits, hyphens and underscores, starting with a letter or digit",
                )),
            Attribute::string("name")
                .optional()
                .describe("Queue name; defaults to `cluster_name`. Changing it replaces the queue.")
                .validate(v::length(1, QUEUE_NAME_MAX))
                .validate(v::matches(
                    r"^[A-Za-z0-9_-]+$",
                    "an SQS queue name: letters, digits, hyphens and underscores (FIFO queues are not used)",
                )),
            Attribute::string("queue_name").computed().stable().describe("The queue's name."),
            Attribute::string("queue_url").computed().stable().describe("The queue's URL."),
            Attribute::string("queue_arn").computed().stable().describe("The queue's ARN."),
            Attribute::number("message_retention_seconds")
                .default_value(Value::number(Number::from_i64(DEFAULT_RETENTION)))
                .describe("How long the queue keeps a message, in seconds.")
                .validate(v::int_range(60, 1_209_600)),
            Attribute::bool("sqs_managed_sse_enabled")
                .optional_computed()
                .describe("Server-side encryption with SQS-owned keys. Defaults to true unless `kms_master_key_id` is set."),
            Attribute::string("kms_master_key_id")
                .optional()
                .describe("KMS key (ID, alias or ARN) for server-side encryption instead of SQS-managed keys.")
                .validate(v::non_empty()),
            Attribute::number("kms_data_key_reuse_period_seconds")
                .optional_computed()
                .describe("How long SQS reuses a KMS data key, in seconds (AWS default 300). Only with `kms_master_key_id`.")
                .validate(v::int_range(60, 86_400)),
            Attribute::list_of_objects(
                "policy_statements",
                vec![
                    Attribute::string("sid").optional().describe("Statement ID.").validate(v::matches(r"^[A-Za-z0-9]+$", "letters and digits")),
                    Attribute::string("effect")
                        .default_value(Value::string("Allow"))
                        .describe("`Allow` or `Deny`.")
                        .validate(v::one_of(&["Allow", "Deny"])),
                    Attribute::list_of("actions", Type::String)
                        .required()
                        .describe("SQS actions, e.g. `sqs:SendMessage`.")
                        .validate(v::count(1, 100))
                        .validate(v::each(v::matches(r"^sqs:[A-Za-z*]+$", "an SQS action such as `sqs:SendMessage` or `sqs:*`"))),
                    Attribute::list_of_objects(
                        "principals",
                        vec![
                            Attribute::string("type")
                                .required()
                                .describe("`AWS`, `Service`, `Federated` or `*`.")
                                .validate(v::one_of(&["AWS", "Service", "Federated", "*"])),
                            Attribute::list_of("identifiers", Type::String)
                                .required()
                                .describe("Principals of that type, e.g. `sns.amazonaws.com`."),
                        ],
                    )
                    .optional()
                    .describe("Who the statement applies to; none means everyone (`*`)."),
                    Attribute::list_of_objects(
                        "conditions",
                        vec![
                            Attribute::string("test").required().describe("Condition operator, e.g. `ArnEquals`."),
                            Attribute::string("variable").required().describe("Condition key, e.g. `aws:SourceArn`."),
                            Attribute::list_of("values", Type::String).required().describe("Values to match."),
                        ],
                    )
                    .optional()
                    .describe("Conditions."),
                ],
            )
            .optional()
            .describe("Statements added to the queue policy after the two upstream ones; their resource is the queue."),
            Attribute::string("policy_json").computed().describe("The queue policy as applied (JSON)."),
            Attribute::set_of("enabled_rules", Type::String)
                .default_value(Value::Set(KIND_KEYS.iter().map(|k| Value::string(*k)).collect()))
                .describe(format!(
                    "The event kinds to create rules for; all by default. Leave out e.g. `spot_interruption` on an \
                     on-demand-only cluster. Values: {}.",
                    KIND_KEYS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ))
                .validate(v::each(v::one_of(KIND_KEYS))),
            Attribute::string("rule_name_prefix")
                .optional_computed()
                .describe(format!(
                    "Prefix of the rule names (the kind's name is appended, e.g. `SpotInterruption`). Defaults to \
                     `Karpenter-<cluster_name>-`, shortened with a hash to fit EventBridge's 64-character limit. At \
                     most {} characters.",
                    max_prefix_len()
                ))
                .validate(v::length(1, max_prefix_len()))
                .validate(v::matches(r"^[.\-_A-Za-z0-9]+$", "letters, digits, `.`, `-` and `_`")),
            Attribute::map_of("rule_names", Type::String)
                .optional()
                .describe(
                    "Names of rules that keep a name given elsewhere, by kind (`spot_interruption = \"…\"`): a kind \
                     named here uses this name instead of `<rule_name_prefix><Kind>`. Import sets it for the rules of a \
                     CloudFormation stack or of terraform-aws-eks's Karpenter module, which name their rules otherwise; \
                     keep it to adopt those rules as they are, or leave it out to have the next apply replace them with \
                     rules of the prefix's names (the new rules are created and wired before the old ones are deleted).",
                )
                .validate(v::check(
                    "Must be an EventBridge rule name: 1–64 letters, digits, `.`, `-` and `_`.",
                    |value| {
                        let s = value.as_str()?;
                        let ok = (1..=RULE_NAME_MAX).contains(&s.len())
                            && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
                        (!ok).then(|| format!("{s:?} is not an EventBridge rule name: 1–{RULE_NAME_MAX} letters, digits, `.`, `-` and `_`."))
                    },
                )),
            Attribute::map_of_objects("rules", rule_object)
                .computed()
                .describe("The rules, by kind (`spot_interruption`, ...): name, ARN, pattern, state and target."),
            Attribute::map_of("tags", Type::String)
                .optional()
                .describe(format!(
                    "Tags for the queue and every rule, merged with the provider's `aws {{ default_tags }}` (a key here \
                     wins; see `tags_all`); at most {MAX_USER_TAGS} together. Every part this resource creates \
                     also carries `{}` = `{TYPE_NAME}` (written in the call that creates it; the queue also \
                     `{CLUSTER_TAG_KEY}` = the cluster name): the provider's bookkeeping, by which it tells its \
                     own parts from someone else's. Those keys are reserved, never shown here and never drift.",
                    ownership::OWNER_TAG_KEY
                ))
                .validate(v::count(0, MAX_USER_TAGS)),
            tags_all::attribute("the queue and every rule"),
        ],
    )
    .with_blocks(vec![timeouts::block(&[("create", "5m"), ("update", "5m"), ("delete", "5m")])])
});

// ----------------------------------------------------------------------------------------
// Reading the plan

/// What the plan asks for.
#[derive(Debug, Clone)]
struct Desired {
    queue_name: String,
    retention: i64,
    sse: bool,
    kms: Option<String>,
    kms_reuse: Option<i64>,
    statements: Vec<ExtraStatement>,
    kinds: Vec<&'static RuleKind>,
    prefix: String,
    /// `rule_names`: kinds whose rule keeps a name given elsewhere.
    names: BTreeMap<String, String>,
    tags: BTreeMap<String, String>,
    /// The prior state had a KMS key (so switching away must clear it).
    prior_kms: bool,
    /// The configured attribute the queue name comes from (`name` or `cluster_name`).
    name_attribute: &'static str,
    cluster: String,
}

fn int(v: &Value, name: &str) -> Option<i64> {
    v.get(name).and_then(Value::as_number).and_then(Number::as_i64)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_elements)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect()
}

/// A list of strings, or null for None.
fn string_list(v: Option<&[String]>) -> Value {
    v.map_or(Value::Null, |l| {
        Value::List(l.iter().map(Value::string).collect())
    })
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_entries)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect()
}

fn statements(v: &Value) -> Vec<ExtraStatement> {
    v.get("policy_statements")
        .and_then(Value::as_elements)
        .unwrap_or_default()
        .iter()
        .map(|s| ExtraStatement {
            sid: get_str(s, "sid").map(str::to_string),
            effect: get_str(s, "effect").unwrap_or("Allow").to_string(),
            actions: strings(s.get("actions")),
            principals: s
                .get("principals")
                .and_then(Value::as_elements)
                .unwrap_or_default()
                .iter()
                .map(|p| {
                    (
                        get_str(p, "type").unwrap_or("*").to_string(),
                        strings(p.get("identifiers")),
                    )
                })
                .collect(),
            conditions: s
                .get("conditions")
                .and_then(Value::as_elements)
                .unwrap_or_default()
                .iter()
                .map(|c| {
                    (
                        get_str(c, "test").unwrap_or_default().to_string(),
                        get_str(c, "variable").unwrap_or_default().to_string(),
                        strings(c.get("values")),
                    )
                })
                .collect(),
        })
        .collect()
}

fn enabled_kinds(v: &Value) -> Vec<&'static RuleKind> {
    let keys = strings(v.get("enabled_rules"));
    RULE_KINDS
        .iter()
        .filter(|k| keys.iter().any(|e| e == k.key))
        .collect()
}

impl Desired {
    fn from_plan(planned: &Value) -> Result<Self, Diagnostics> {
        let missing = |what: &str| {
            Diagnostics::from_error(
                "Planned value missing",
                format!("`{what}` is not known at apply time; this is a provider bug, please report it."),
            )
        };
        let cluster = get_str(planned, "cluster_name").ok_or_else(|| missing("cluster_name"))?;
        Ok(Desired {
            queue_name: get_str(planned, "queue_name").unwrap_or(cluster).to_string(),
            retention: int(planned, "message_retention_seconds").unwrap_or(DEFAULT_RETENTION),
            sse: planned
                .get("sqs_managed_sse_enabled")
                .and_then(Value::as_bool)
                .unwrap_or(get_str(planned, "kms_master_key_id").is_none()),
            kms: get_str(planned, "kms_master_key_id").map(str::to_string),
            kms_reuse: int(planned, "kms_data_key_reuse_period_seconds"),
            statements: statements(planned),
            kinds: enabled_kinds(planned),
            prefix: get_str(planned, "rule_name_prefix")
                .map(str::to_string)
                .unwrap_or_else(|| default_rule_prefix(cluster)),
            names: string_map(planned.get("rule_names")),
            tags: string_map(planned.get("tags")),
            prior_kms: false,
            name_attribute: if get_str(planned, "name").is_some() {
                "name"
            } else {
                "cluster_name"
            },
            cluster: cluster.to_string(),
        })
    }

    /// The name of the rule of kind `k`: its `rule_names` entry, else `<prefix><Kind>`.
    fn rule_name(&self, k: &RuleKind) -> String {
        rule_name_in(&self.names, &self.prefix, k)
    }

    /// The queue's tags in AWS: `tags_all` plus the ownership and cluster tags.
    fn queue_tags(&self) -> BTreeMap<String, String> {
        let mut tags = ownership::with_owner_tag(&self.tags, TYPE_NAME);
        tags.insert(CLUSTER_TAG_KEY.to_string(), self.cluster.clone());
        tags
    }

    /// A rule's tags in AWS: `tags_all` plus the ownership tag.
    fn rule_tags(&self) -> BTreeMap<String, String> {
        ownership::with_owner_tag(&self.tags, TYPE_NAME)
    }

    /// The queue attributes to set (encryption and retention; the policy separately).
    fn queue_attributes(&self) -> BTreeMap<String, String> {
        let mut a = BTreeMap::new();
        a.insert("MessageRetentionPeriod".into(), self.retention.to_string());
        match &self.kms {
            Some(key) => {
                a.insert("KmsMasterKeyId".into(), key.clone());
                a.insert(
                    "KmsDataKeyReusePeriodSeconds".into(),
                    self.kms_reuse.unwrap_or(DEFAULT_KMS_REUSE).to_string(),
                );
                a.insert("SqsManagedSseEnabled".into(), "false".into());
            }
            None => {
                a.insert("SqsManagedSseEnabled".into(), self.sse.to_string());
            }
        }
        a
    }
}

// ----------------------------------------------------------------------------------------
// What exists

/// One rule as it exists.
#[derive(Debug, Clone, PartialEq)]
struct RuleState {
    name: String,
    arn: Option<String>,
    event_pattern: Option<String>,
    enabled: Option<bool>,
    target_arn: Option<String>,
    tags: Option<BTreeMap<String, String>>,
    /// Targets of others seen at the last refresh (None: none).
    other_targets: Option<Vec<String>>,
}

impl RuleState {
    /// A rule known only by its name (import: the refresh that follows reads the rest).
    fn named(name: String) -> Self {
        RuleState {
            name,
            arn: None,
            event_pattern: None,
            enabled: None,
            target_arn: None,
            tags: None,
            other_targets: None,
        }
    }

    fn to_value(&self) -> Value {
        object([
            ("name", Value::string(self.name.clone())),
            ("arn", opt_string(self.arn.clone())),
            ("event_pattern", opt_string(self.event_pattern.clone())),
            ("enabled", self.enabled.map_or(Value::Null, Value::Bool)),
            ("target_arn", opt_string(self.target_arn.clone())),
            ("other_target_ids", string_list(self.other_targets.as_deref())),
            (
                "tags",
                self.tags.as_ref().map_or(Value::Null, |t| {
                    crate::terraform::framework::values::string_map(t.clone())
                }),
            ),
        ])
    }

    fn from_value(v: &Value) -> Option<Self> {
        Some(RuleState {
            name: get_str(v, "name")?.to_string(),
            arn: get_str(v, "arn").map(str::to_string),
            event_pattern: get_str(v, "event_pattern").map(str::to_string),
            enabled: v.get("enabled").and_then(Value::as_bool),
            target_arn: get_str(v, "target_arn").map(str::to_string),
            other_targets: v
                .get("other_target_ids")
                .filter(|t| !t.is_null())
                .map(|t| strings(Some(t))),
            tags: v
                .get("tags")
                .filter(|t| !t.is_null())
                .map(|t| string_map(Some(t))),
        })
    }
}

/// The parts recorded so far.
#[derive(Debug, Clone, Default)]
struct Current {
    queue_url: Option<String>,
    queue_arn: Option<String>,
    policy_json: Option<String>,
    rules: BTreeMap<String, RuleState>,
}

impl Current {
    /// The ARN of the queue this state records (None while none is recorded).
    fn recorded_queue_arn(&self) -> Option<&str> {
        self.queue_url.as_ref().and(self.queue_arn.as_deref())
    }

    fn from_state(state: &Value) -> Self {
        Current {
            queue_url: get_str(state, "queue_url").map(str::to_string),
            queue_arn: get_str(state, "queue_arn").map(str::to_string),
            policy_json: get_str(state, "policy_json").map(str::to_string),
            rules: state
                .get("rules")
                .and_then(Value::as_entries)
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| RuleState::from_value(v).map(|r| (k.clone(), r)))
                .collect(),
        }
    }

    /// `base` (the plan or prior state) with the recorded parts; no unknowns left.
    fn to_state(&self, base: &Value, queue_name: &str) -> Value {
        let mut out = without_unknowns(base);
        if let Value::Object(m) = &mut out {
            m.insert("queue_name".into(), Value::string(queue_name));
            m.insert("queue_url".into(), opt_string(self.queue_url.clone()));
            m.insert("queue_arn".into(), opt_string(self.queue_arn.clone()));
            m.insert("policy_json".into(), opt_string(self.policy_json.clone()));
            m.insert(
                "rules".into(),
                Value::Map(
                    self.rules
                        .iter()
                        .map(|(k, r)| (k.clone(), r.to_value()))
                        .collect(),
                ),
            );
        }
        out
    }
}

/// `v` with every unknown replaced by null (state never holds unknowns).
fn without_unknowns(v: &Value) -> Value {
    match v {
        Value::Unknown(_) => Value::Null,
        Value::List(e) => Value::List(e.iter().map(without_unknowns).collect()),
        Value::Set(e) => Value::Set(e.iter().map(without_unknowns).collect()),
        Value::Tuple(e) => Value::Tuple(e.iter().map(without_unknowns).collect()),
        Value::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.clone(), without_unknowns(v))).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), without_unknowns(v))).collect()),
        other => other.clone(),
    }
}

fn set_attr(v: &mut Value, name: &str, value: Value) {
    if let Value::Object(m) = v {
        m.insert(name.to_string(), value);
    }
}

// ----------------------------------------------------------------------------------------
// AWS operations

struct Clients {
    sqs: Sqs,
    events: EventBridge,
    /// The region the clients talk to, when the SDK configuration names one.
    region: Option<String>,
}

async fn clients(ctx: &KarpenterContext) -> Result<Clients, Diagnostics> {
    clients_of(ctx.aws().await?)
}

/// [`clients`] for create, update and delete: the account guards are checked first.
async fn clients_to_change(ctx: &KarpenterContext) -> Result<Clients, Diagnostics> {
    clients_of(ctx.aws_to_change().await?)
}

fn clients_of(aws: &crate::aws::AwsClients) -> Result<Clients, Diagnostics> {
    Ok(Clients {
        sqs: Sqs::new(aws.sqs(), aws.endpoint_for("sqs")),
        events: EventBridge::new(aws.events(), aws.endpoint_for("events")),
        region: aws.region().map(str::to_string),
    })
}

/// The ARN of the queue at `url` (`…/<account>/<name>`) in `region`, for the partitions whose
/// region names are certain (aws, aws-cn, aws-us-gov); None otherwise.
pub(crate) fn queue_arn_from_url(url: &str, region: &str) -> Option<String> {
    if region.is_empty() || region.contains("iso") {
        return None;
    }
    let mut parts = url.trim_end_matches('/').rsplit('/');
    let name = parts.next().filter(|n| !n.is_empty())?;
    let account = parts
        .next()
        .filter(|a| a.len() == 12 && a.bytes().all(|b| b.is_ascii_digit()))?;
    let partition = crate::policy::arn::partition_of_region(region);
    Some(format!("arn:{partition}:sqs:{region}:{account}:{name}"))
}

/// How long to wait between CreateQueue attempts while SQS refuses a recently deleted name.
const RECREATE_RETRY: Duration = Duration::from_secs(2);

async fn create_queue(c: &Clients, d: &Desired, deadline: Instant) -> Result<String, AwsError> {
    loop {
        match c
            .sqs
            .create_queue(&d.queue_name, &d.queue_attributes(), &d.queue_tags())
            .await
        {
            // AWS refuses a name for 60 s after its queue was deleted (e.g. during a replace).
            Err(e)
                if e.code.as_deref() == Some(QUEUE_DELETED_RECENTLY)
                    && Instant::now() + RECREATE_RETRY < deadline =>
            {
                tracing::info!(queue = %d.queue_name, "queue name deleted recently; retrying CreateQueue");
                tokio::time::sleep(RECREATE_RETRY).await;
            }
            other => return other,
        }
    }
}

fn fail(e: AwsError, path: Option<AttributePath>) -> Diagnostics {
    match path {
        Some(p) => e.at(p).to_diagnostics(),
        None => e.to_diagnostics(),
    }
}

/// The rules found in AWS under our names but not recorded in state that an interrupted update
/// of this resource left ([`is_remnant_of_ours`]); a create adopts nothing.
#[derive(Debug, Default)]
struct Adopted {
    rules: Vec<String>,
}

/// The name of the rule of kind `k` given `rule_names` and the prefix.
fn rule_name_in(names: &BTreeMap<String, String>, prefix: &str, k: &RuleKind) -> String {
    names.get(k.key).cloned().unwrap_or_else(|| k.rule_name(prefix))
}

/// The key under which a recorded rule that is no longer wanted (renamed prefix, kind switched
/// off) stays in `rules` until it is deleted, so a failure in between keeps it recorded.
fn retired_key(name: &str) -> String {
    format!("retired:{name}")
}

/// Whether an unrecorded rule under one of our names is what an interrupted update of this very
/// resource left: it carries our ownership tag and points at nothing but the queue this state
/// records (or at nothing yet, when the interruption came between PutRule and PutTargets). A
/// rule of another state carries the same tag but targets that state's queue, so it never
/// qualifies; without a recorded queue nothing does.
async fn is_remnant_of_ours(
    c: &Clients,
    name: &str,
    tags: &BTreeMap<String, String>,
    recorded_queue_arn: Option<&str>,
) -> Result<bool, AwsError> {
    let Some(queue_arn) = recorded_queue_arn else {
        return Ok(false);
    };
    if !ownership::is_owned_by(tags, TYPE_NAME) {
        return Ok(false);
    }
    let targets = c.events.list_targets(name).await?.unwrap_or_default();
    Ok(targets.iter().all(|t| t.id == TARGET_ID && t.arn == queue_arn))
}

/// Before anything is created: looks up the queue and each wanted rule this resource has not
/// recorded. Create never adopts: a queue that is not recorded and exists refuses the apply,
/// whoever made it (another state carries our ownership tag as well), and so does a rule,
/// except on an update where it is the remnant of an interrupted update of this resource
/// ([`is_remnant_of_ours`]). Refusals name the attribute the name comes from and come before
/// anything is created or changed. Costs GetQueueUrl when the queue is not recorded and one
/// ListRules when some wanted rule is not; tags (and targets) only for each part that exists.
async fn check_ownership(c: &Clients, d: &Desired, cur: &Current) -> Result<Adopted, Diagnostics> {
    let root = AttributePath::root();
    let mut adopted = Adopted::default();
    let mut refusals = Diagnostics::new();
    if cur.queue_url.is_none() {
        let name_path = root.attr(d.name_attribute);
        match c.sqs.get_queue_url(&d.queue_name).await {
            Ok(url) => {
                let tags = c
                    .sqs
                    .list_tags(&url)
                    .await
                    .map_err(|e| fail(e, Some(name_path.clone())))?;
                let marks = Marks::of_tags(&tags, TYPE_NAME);
                Taken {
                    resource_type: TYPE_NAME,
                    what: "SQS queue",
                    name: &d.queue_name,
                    id_detail: Some(&url),
                    place: "in this account and region",
                    our_mark: owner_tag_mark(TYPE_NAME),
                    marks,
                    import_id: Some(&d.queue_name),
                    otherwise: "choose another queue name; its messages, policy and tags were left as they are",
                }
                .refuse(&name_path, &mut refusals);
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(fail(e, Some(name_path))),
        }
    }
    let unrecorded: Vec<String> = d
        .kinds
        .iter()
        .map(|k| d.rule_name(k))
        .filter(|n| !cur.rules.values().any(|r| &r.name == n))
        .collect();
    if !unrecorded.is_empty() {
        let prefix_path = root.attr("rule_name_prefix");
        let existing = c
            .events
            .rules_with_prefix(&d.prefix)
            .await
            .map_err(|e| fail(e, Some(prefix_path.clone())))?;
        for (name, arn) in existing.into_iter().filter(|(n, _)| unrecorded.contains(n)) {
            let tags = c
                .events
                .list_tags(&arn)
                .await
                .map_err(|e| fail(e, Some(prefix_path.clone())))?;
            let remnant = is_remnant_of_ours(c, &name, &tags, cur.recorded_queue_arn())
                .await
                .map_err(|e| fail(e, Some(prefix_path.clone())))?;
            if remnant {
                tracing::info!(rule = %name, "rule left by an interrupted update of this queue; converging onto it");
                adopted.rules.push(name);
                continue;
            }
            let marks = Marks::of_tags(&tags, TYPE_NAME);
            Taken {
                resource_type: TYPE_NAME,
                what: "EventBridge rule",
                name: &name,
                id_detail: Some(&arn),
                place: "on the default event bus",
                our_mark: owner_tag_mark(TYPE_NAME),
                marks,
                // Importing the queue the rule targets adopts the rule with it.
                import_id: None,
                otherwise: "set another `rule_name_prefix`; or, if the rule is a leftover that targets the queue \
                            you mean to manage, import that queue (its import adopts the rules that target it), or \
                            delete the rule",
            }
            .refuse(&prefix_path, &mut refusals);
        }
    }
    if refusals.has_errors() {
        Err(refusals)
    } else {
        Ok(adopted)
    }
}

/// The warning for a rule of ours that keeps targets of others (so it is not deleted).
fn kept_rule_warning(notes: &mut Diagnostics, name: &str, other_targets: &[String]) {
    notes.warning(
        "EventBridge rule kept: it has targets of others",
        format!(
            "The rule {name:?} was created by this resource, but someone added targets to it ({}). The provider \
             removed only its own target ({TARGET_ID}) and left the rule with those targets in place; it is no \
             longer managed by Terraform. Delete it yourself once its other targets are not needed.",
            other_targets.join(", ")
        ),
    );
}

/// Builds or repairs every part towards `d`, recording each in `cur` as it is done. Warnings
/// (a rule kept for someone else's targets) go to `notes`.
async fn converge(
    c: &Clients,
    d: &Desired,
    cur: &mut Current,
    deadline: Instant,
    notes: &mut Diagnostics,
) -> Result<(), Diagnostics> {
    let root = AttributePath::root();
    let adopted = check_ownership(c, d, cur).await?;
    // 1. the queue: the recorded one is made exact; a missing one (first create, or deleted
    // out of band) is created with its tags.
    let url = match &cur.queue_url {
        Some(url) => {
            let mut attributes = d.queue_attributes();
            if d.kms.is_none() && d.prior_kms {
                // Switching from a KMS key back to SQS-managed keys: an empty key ID removes it.
                attributes.insert("KmsMasterKeyId".into(), String::new());
            }
            c.sqs
                .set_attributes(url, &attributes)
                .await
                .map_err(|e| fail(e, Some(root.attr("message_retention_seconds"))))?;
            // Also adds the bookkeeping tags to a queue recorded by an older provider version.
            c.sqs
                .sync_tags(url, &d.queue_tags())
                .await
                .map_err(|e| fail(e, Some(root.attr("tags"))))?;
            url.clone()
        }
        None => {
            let url = create_queue(c, d, deadline)
                .await
                .map_err(|e| fail(e, Some(root.attr(d.name_attribute))))?;
            cur.queue_url = Some(url.clone());
            cur.queue_arn = None;
            url
        }
    };
    if cur.queue_arn.is_none() {
        // A queue URL names its account and queue, so the ARN of a queue just created is known
        // without asking (one call fewer); otherwise, or where the partition is not certain,
        // SQS says.
        cur.queue_arn = match c.region.as_deref().and_then(|r| queue_arn_from_url(&url, r)) {
            Some(arn) => Some(arn),
            None => {
                let attrs = c.sqs.get_attributes(&url).await.map_err(|e| fail(e, None))?;
                attrs.get("QueueArn").cloned()
            }
        };
    }
    let Some(queue_arn) = cur.queue_arn.clone() else {
        return Err(AwsError::new(
            "sqs:GetQueueAttributes",
            AwsErrorKind::Other,
            "no QueueArn attribute",
        )
        .to_diagnostics());
    };

    // 2. the policy
    let policy = policy_document(&queue_arn, &d.statements);
    let mut attrs = BTreeMap::new();
    attrs.insert("Policy".to_string(), policy.clone());
    c.sqs
        .set_attributes(&url, &attrs)
        .await
        .map_err(|e| fail(e, Some(root.attr("policy_statements"))))?;
    cur.policy_json = Some(policy);

    // 3. recorded rules no longer wanted (kind switched off, or renamed by a new prefix) are set
    // aside under a key of their own, so they stay recorded while the wanted rules are built:
    // new rules first, old ones deleted after, and a failure in between leaves both sets (never
    // none) with every rule in state.
    let stale: Vec<(String, RuleState)> = cur
        .rules
        .iter()
        .filter(|(key, r)| {
            !d.kinds
                .iter()
                .any(|k| k.key == key.as_str() && d.rule_name(k) == r.name)
        })
        .map(|(k, r)| (k.clone(), r.clone()))
        .collect();
    for (key, rule) in &stale {
        cur.rules.remove(key);
        cur.rules.insert(retired_key(&rule.name), rule.clone());
    }

    // 4. the wanted rules and their targets
    for k in &d.kinds {
        let name = d.rule_name(k);
        let arn = c
            .events
            .put_rule(&name, &k.event_pattern(), &k.description(), &d.rule_tags())
            .await
            .map_err(|e| fail(e, Some(root.attr("rule_name_prefix"))))?;
        let prior = cur.rules.get(k.key).filter(|r| r.name == name);
        // PutRule applies tags only when it creates the rule. A rule checked absent a moment
        // ago is new, so its tags are exact; a rule that existed (recorded, or a remnant found by
        // its tag) gets its tags made exact.
        let existed = prior.is_some() || adopted.rules.contains(&name);
        let target_arn = prior.and_then(|r| r.target_arn.clone());
        let tags = prior.and_then(|r| r.tags.clone());
        let other_targets = prior.and_then(|r| r.other_targets.clone());
        cur.rules.insert(
            k.key.to_string(),
            RuleState {
                name: name.clone(),
                arn: Some(arn.clone()),
                event_pattern: Some(k.event_pattern()),
                enabled: Some(true),
                target_arn,
                tags,
                other_targets,
            },
        );
        if existed {
            c.events
                .sync_tags(&arn, &d.rule_tags())
                .await
                .map_err(|e| fail(e, Some(root.attr("tags"))))?;
        }
        if let Some(r) = cur.rules.get_mut(k.key) {
            r.tags = Some(d.tags.clone());
        }
        c.events
            .put_target(&name, TARGET_ID, &queue_arn)
            .await
            .map_err(|e| fail(e, Some(root.attr("rules").key(k.key))))?;
        if let Some(r) = cur.rules.get_mut(k.key) {
            r.target_arn = Some(queue_arn.clone());
        }
    }

    // 5. the set-aside rules: ours (recorded), so our target goes and the rule with it, unless
    // someone else's targets are on it.
    for (_, rule) in stale {
        let removal = c
            .events
            .remove_target_and_delete_if_empty(&rule.name, TARGET_ID)
            .await
            .map_err(|e| fail(e, Some(root.attr("rule_name_prefix"))))?;
        if let RuleRemoval::Kept { other_targets } = removal {
            kept_rule_warning(notes, &rule.name, &other_targets);
        }
        cur.rules.remove(&retired_key(&rule.name));
    }

    Ok(())
}

/// Writes what SQS says of the queue into `out`.
fn read_queue(
    out: &mut Value,
    state: &Value,
    url: String,
    attrs: &BTreeMap<String, String>,
    tags: BTreeMap<String, String>,
    default_tags: &BTreeMap<String, String>,
) {
    let num = |k: &str| {
        attrs
            .get(k)
            .and_then(|s| s.parse::<i64>().ok())
            .map_or(Value::Null, |n| Value::number(Number::from_i64(n)))
    };
    let kms = attrs.get("KmsMasterKeyId").filter(|k| !k.is_empty()).cloned();
    set_attr(out, "queue_url", Value::string(url));
    set_attr(out, "queue_arn", opt_string(attrs.get("QueueArn").cloned()));
    set_attr(out, "message_retention_seconds", num("MessageRetentionPeriod"));
    set_attr(
        out,
        "sqs_managed_sse_enabled",
        Value::Bool(attrs.get("SqsManagedSseEnabled").is_some_and(|s| s == "true")),
    );
    set_attr(
        out,
        "kms_data_key_reuse_period_seconds",
        if kms.is_some() {
            num("KmsDataKeyReusePeriodSeconds")
        } else {
            Value::Null
        },
    );
    set_attr(out, "kms_master_key_id", opt_string(kms));
    // AWS may return the document reformatted (moto does: it re-serializes with spaces), or
    // hold one that grants the same in another spelling (Karpenter's CloudFormation reference
    // writes it without Version or the first Sid): that is the document this resource writes.
    let ours = attrs
        .get("QueueArn")
        .map(|arn| policy_document(arn, &statements(state)));
    let policy = attrs
        .get("Policy")
        .filter(|p| !p.is_empty())
        .map(|p| match &ours {
            Some(ours) if crate::resources::aws::queue_policy::equivalent(p, ours) => ours.clone(),
            _ => canonical_json(p),
        });
    set_attr(out, "policy_json", opt_string(policy));
    let (own, all) = tags_all::read(&visible_tags(tags), default_tags, state.get("tags"));
    set_attr(out, "tags", own);
    set_attr(out, tags_all::TAGS_ALL, all);
}

/// Re-reads the queue and every recorded rule into `state`. A queue gone out of band leaves
/// its attributes null (the plan recreates it and keeps the rules); None only when neither the
/// queue nor any recorded rule exists.
async fn refresh(
    c: &Clients,
    state: &Value,
    default_tags: &BTreeMap<String, String>,
) -> Result<Option<Value>, AwsError> {
    let queue_name = get_str(state, "queue_name")
        .or_else(|| get_str(state, "name"))
        .or_else(|| get_str(state, "cluster_name"))
        .unwrap_or_default()
        .to_string();
    // Only the recorded queue is read: a queue not recorded (gone out of band) is not looked
    // up by name, since whatever holds that name now may be another state's (the ownership tag
    // does not tell); the plan creates the queue again, and that create refuses a taken name.
    let url = get_str(state, "queue_url").map(str::to_string);
    let mut queue = None;
    if let Some(url) = url {
        match c.sqs.get_attributes(&url).await {
            Ok(attrs) => {
                let tags = c.sqs.list_tags(&url).await?;
                queue = Some((url, attrs, tags));
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    let mut out = state.clone();
    set_attr(&mut out, "queue_name", Value::string(queue_name));
    let queue_found = queue.is_some();
    if let Some((url, attrs, tags)) = queue {
        read_queue(&mut out, state, url, &attrs, tags, default_tags);
    } else {
        tracing::info!("the interruption queue is gone; the rules that remain are kept");
        for name in ["queue_url", "queue_arn", "policy_json"] {
            set_attr(&mut out, name, Value::Null);
        }
    }

    let mut rules = BTreeMap::new();
    for (key, r) in Current::from_state(state).rules {
        let Some(info) = c.events.describe_rule(&r.name).await? else {
            continue; // deleted out of band: the plan recreates it
        };
        let pattern = info.event_pattern.as_deref().map(canonical_json);
        let targets = c.events.list_targets(&r.name).await?.unwrap_or_default();
        let others: Vec<String> = targets
            .iter()
            .filter(|t| t.id != TARGET_ID)
            .map(|t| t.id.clone())
            .collect();
        if !others.is_empty() {
            tracing::warn!(rule = %r.name, targets = ?others, "targets of others on our rule: left alone, and destroy keeps the rule for them");
        }
        let target_arn = targets.into_iter().find(|t| t.id == TARGET_ID).map(|t| t.arn);
        let tags = visible_tags(c.events.list_tags(&info.arn).await?);
        rules.insert(
            key,
            RuleState {
                name: r.name,
                arn: Some(info.arn),
                event_pattern: pattern,
                enabled: Some(info.enabled),
                target_arn,
                tags: Some(tags),
                other_targets: (!others.is_empty()).then_some(others),
            }
            .to_value(),
        );
    }
    if !queue_found && rules.is_empty() {
        return Ok(None);
    }
    set_attr(&mut out, "rules", Value::Map(rules));
    Ok(Some(out))
}

/// Deletes every part of ours that still exists, each on its own (a part already gone does
/// not stop the others): recorded rules lose our target and are deleted unless others' targets
/// remain; rules under our names that are not recorded are deleted only when an interrupted
/// update of this resource left them ([`is_remnant_of_ours`]); the recorded queue is deleted.
/// A queue that is not recorded (deleted out of band, perhaps made again by someone else) is
/// never deleted: the ownership tag alone does not say it is this state's.
async fn delete_parts(c: &Clients, prior: &Value, notes: &mut Diagnostics) -> Result<(), AwsError> {
    let cur = Current::from_state(prior);
    let recorded: Vec<String> = cur.rules.values().map(|r| r.name.clone()).collect();
    for name in &recorded {
        if let RuleRemoval::Kept { other_targets } = c
            .events
            .remove_target_and_delete_if_empty(name, TARGET_ID)
            .await?
        {
            kept_rule_warning(notes, name, &other_targets);
        }
    }
    // Names this resource could have made without recording them (a crash after PutRule):
    // one DescribeRule each, which finds most of them absent.
    let recorded_queue = cur.recorded_queue_arn();
    if let Some(prefix) = get_str(prior, "rule_name_prefix")
        && recorded_queue.is_some()
    {
        let names = string_map(prior.get("rule_names"));
        for k in RULE_KINDS {
            let name = rule_name_in(&names, prefix, k);
            if recorded.contains(&name) {
                continue;
            }
            let Some(info) = c.events.describe_rule(&name).await? else {
                continue;
            };
            let tags = c.events.list_tags(&info.arn).await?;
            if !is_remnant_of_ours(c, &name, &tags, recorded_queue).await? {
                tracing::info!(rule = %name, "rule under our name is not this resource's; left alone");
                continue;
            }
            if let RuleRemoval::Kept { other_targets } = c
                .events
                .remove_target_and_delete_if_empty(&name, TARGET_ID)
                .await?
            {
                kept_rule_warning(notes, &name, &other_targets);
            }
        }
    }
    match cur.queue_url {
        Some(url) => c.sqs.delete_queue(&url).await,
        None => {
            tracing::info!("no queue recorded; nothing under its name is deleted");
            Ok(())
        }
    }
}

/// The tag terraform-aws-eks's Karpenter module puts on its rules: the cluster's name.
const MODULE_CLUSTER_TAG: &str = "ClusterName";

/// The kind of rule an event pattern is: the one whose source and detail type it names (rules
/// made by others spell the same pattern with other whitespace or key order).
pub(crate) fn kind_of_pattern(pattern: &str) -> Option<&'static RuleKind> {
    let p: serde_json::Value = serde_json::from_str(pattern).ok()?;
    let first = |key: &str| match &p[key] {
        serde_json::Value::Array(a) if a.len() == 1 => a[0].as_str().map(str::to_string),
        serde_json::Value::String(s) => Some(s.clone()),
        _ => None,
    };
    let (source, detail_type) = (first("source")?, first("detail-type")?);
    RULE_KINDS
        .iter()
        .find(|k| k.source == source && k.detail_type == detail_type)
}

/// The queue name an import id names: a queue name, or a queue URL (its last path segment).
pub fn queue_name_from_import_id(id: &str) -> Option<String> {
    let id = id.trim();
    let name = if id.starts_with("https://") || id.starts_with("http://") {
        id.trim_end_matches('/').rsplit('/').next()?
    } else {
        id
    };
    let ok = !name.is_empty()
        && name.len() <= QUEUE_NAME_MAX
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ok.then(|| name.to_string())
}

/// Splits a rule name into (prefix, kind) when it ends with a known kind's suffix.
pub fn split_rule_name(name: &str) -> Option<(&str, &'static RuleKind)> {
    RULE_KINDS
        .iter()
        .filter_map(|k| name.strip_suffix(k.suffix).map(|p| (p, k)))
        .find(|(p, _)| !p.is_empty())
}

/// The rule-name prefix that import reads from the names of the rules targeting a queue: that
/// of the first name ending with a kind's suffix.
pub(crate) fn rule_prefix_of<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names.into_iter().find_map(|n| split_rule_name(n).map(|(p, _)| p))
}

// ----------------------------------------------------------------------------------------

#[async_trait]
impl Resource<KarpenterContext> for InterruptionQueue {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        let root = AttributePath::root();
        if config.get("name").is_some_and(Value::is_null)
            && let Some(cluster) = get_str(config, "cluster_name")
            && cluster.len() > QUEUE_NAME_MAX
        {
            diags.error_at(
                &root.attr("cluster_name"),
                "Cluster name too long for a queue name",
                format!(
                    "The queue is named after the cluster, but SQS queue names have at most {QUEUE_NAME_MAX} characters and this one has {}. Set `name`.",
                    cluster.len()
                ),
            );
        }
        // `rule_names` names kinds this resource enables.
        let enabled = config
            .get("enabled_rules")
            .filter(|e| e.is_wholly_known() && !e.is_null());
        for key in config
            .get("rule_names")
            .and_then(Value::as_entries)
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            let path = root.attr("rule_names").key(key.clone());
            if kind(key).is_none() {
                diags.error_at(
                    &path,
                    "Unknown rule kind",
                    format!(
                        "{key:?} is not a rule kind; the kinds are {}.",
                        KIND_KEYS.join(", ")
                    ),
                );
            } else if let Some(enabled) = enabled
                && !strings(Some(enabled)).iter().any(|k| k == key)
            {
                diags.error_at(
                    &path,
                    "Rule kind not enabled",
                    format!("{key:?} is not in enabled_rules, so there is no such rule to name; add it there or remove this entry."),
                );
            }
        }
        for key in config
            .get("tags")
            .and_then(Value::as_entries)
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .filter(|k| is_bookkeeping_tag(k))
        {
            diags.error_at(
                &root.attr("tags").key(key.clone()),
                "Reserved tag key",
                format!(
                    "The tag key {key:?} is the provider's own bookkeeping (it marks the parts this resource created); remove it from `tags`."
                ),
            );
        }
        let kms = config.get("kms_master_key_id").filter(|v| !v.is_null());
        if kms.is_none()
            && config
                .get("kms_data_key_reuse_period_seconds")
                .is_some_and(|v| !v.is_null())
        {
            diags.error_at(
                &root.attr("kms_data_key_reuse_period_seconds"),
                "Data key reuse without a KMS key",
                "`kms_data_key_reuse_period_seconds` applies only to KMS encryption: set `kms_master_key_id` too, or remove it.",
            );
        }
        if kms.is_some() && config.get("sqs_managed_sse_enabled").and_then(Value::as_bool) == Some(true) {
            diags.error_at(
                &root.attr("sqs_managed_sse_enabled"),
                "Two kinds of encryption",
                "A queue is encrypted either with SQS-managed keys or with a KMS key: remove `sqs_managed_sse_enabled = true` or `kms_master_key_id`.",
            );
        }
        if let Some(statements) = config.get("policy_statements").and_then(Value::as_elements) {
            for (i, s) in statements.iter().enumerate() {
                for (j, p) in s
                    .get("principals")
                    .and_then(Value::as_elements)
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                {
                    if get_str(p, "type").is_some_and(|t| t != "*")
                        && p.get("identifiers")
                            .and_then(Value::as_elements)
                            .is_some_and(<[Value]>::is_empty)
                    {
                        diags.error_at(
                            &root
                                .attr("policy_statements")
                                .index(i)
                                .attr("principals")
                                .index(j)
                                .attr("identifiers"),
                            "No principal identifiers",
                            "Name at least one principal of this type, or use type `*`.",
                        );
                    }
                }
            }
        }
    }

    /// `tags_all` needs the provider's default tags; with them, the parts may carry at most
    /// [`MAX_USER_TAGS`] tags of the user's.
    fn modify_plan_in(
        &self,
        ctx: Option<&KarpenterContext>,
        config: &Value,
        prior: &Value,
        planned: &mut Value,
        diags: &mut Diagnostics,
    ) {
        if planned.is_null() {
            return;
        }
        if let Some(ctx) = ctx {
            ctx.require_region("The interruption queue", diags);
        }
        tags_all::plan_into(ctx, planned);
        if let Some(n) = planned
            .get(tags_all::TAGS_ALL)
            .and_then(Value::as_entries)
            .map(BTreeMap::len)
            .filter(|n| *n > MAX_USER_TAGS)
        {
            diags.error_at(
                &AttributePath::root().attr("tags"),
                "Too many tags",
                format!(
                    "`tags` merged with the provider's aws {{ default_tags }} make {n} tags, but SQS and EventBridge \
                     allow 50 per resource and the provider keeps 2 for itself: use at most {MAX_USER_TAGS} \
                     together (a key in `tags` that is also a default tag counts once)."
                ),
            );
        }
        self.modify_plan(config, prior, planned, diags);
    }

    fn modify_plan(&self, config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
        if planned.is_null() {
            return;
        }
        let cluster = planned.get("cluster_name").cloned().unwrap_or(Value::Null);
        let queue_name = match config.get("name") {
            Some(n) if !n.is_null() => n.clone(),
            _ => cluster.clone(),
        };
        set_attr(planned, "queue_name", queue_name.clone());
        let prefix = match config.get("rule_name_prefix") {
            Some(p) if !p.is_null() => p.clone(),
            _ => cluster
                .as_str()
                .map_or_else(Value::unknown, |c| Value::string(default_rule_prefix(c))),
        };
        set_attr(planned, "rule_name_prefix", prefix.clone());
        let kms = config.get("kms_master_key_id").cloned().unwrap_or(Value::Null);
        if config.get("sqs_managed_sse_enabled").is_none_or(Value::is_null) {
            let sse = if kms.is_unknown() {
                Value::unknown()
            } else {
                Value::Bool(kms.is_null())
            };
            set_attr(planned, "sqs_managed_sse_enabled", sse);
        }
        if config
            .get("kms_data_key_reuse_period_seconds")
            .is_none_or(Value::is_null)
        {
            let reuse = if kms.is_unknown() {
                Value::unknown()
            } else if kms.is_null() {
                Value::Null
            } else {
                Value::number(Number::from_i64(DEFAULT_KMS_REUSE))
            };
            set_attr(planned, "kms_data_key_reuse_period_seconds", reuse);
        }

        // Identity: kept while the queue name stays; unknown for a new queue.
        let same_queue = !prior.is_null() && prior.get("queue_name") == Some(&queue_name);
        let keep = |name: &str| {
            if same_queue {
                prior
                    .get(name)
                    .filter(|v| !v.is_null())
                    .cloned()
                    .unwrap_or_else(Value::unknown)
            } else {
                Value::unknown()
            }
        };
        let queue_arn = keep("queue_arn");
        set_attr(planned, "queue_url", keep("queue_url"));
        set_attr(planned, "queue_arn", queue_arn.clone());

        let statements_known = planned
            .get("policy_statements")
            .is_none_or(Value::is_wholly_known);
        let policy = match queue_arn.as_str() {
            Some(arn) if statements_known => Value::string(policy_document(arn, &statements(planned))),
            _ => Value::unknown(),
        };
        set_attr(planned, "policy_json", policy);

        // Someone else's targets on our rules: reported, never touched.
        for (key, r) in Current::from_state(prior).rules {
            if let Some(others) = r.other_targets.filter(|o| !o.is_empty()) {
                diags.warning_at(
                    &AttributePath::root().attr("rules").key(key),
                    "EventBridge rule has targets of others",
                    format!(
                        "The rule {:?} has targets this resource did not add ({}). The provider leaves them as they \
                         are; on destroy it removes only its own target and keeps the rule for them.",
                        r.name,
                        others.join(", ")
                    ),
                );
            }
        }

        let enabled_known = planned.get("enabled_rules").is_none_or(Value::is_wholly_known);
        // Every rule carries `tags_all`.
        let rule_tags = match planned.get(tags_all::TAGS_ALL) {
            Some(t) if !t.is_wholly_known() => Value::unknown(),
            Some(t) if !t.is_null() => t.clone(),
            _ => Value::Map(BTreeMap::new()),
        };
        let rules = match prefix.as_str() {
            Some(prefix) if enabled_known => {
                let prior_rules = if same_queue {
                    Current::from_state(prior).rules
                } else {
                    BTreeMap::new()
                };
                let names = string_map(planned.get("rule_names"));
                Value::Map(
                    enabled_kinds(planned)
                        .into_iter()
                        .map(|k| {
                            let name = rule_name_in(&names, prefix, k);
                            let same = prior_rules.get(k.key).filter(|r| r.name == name);
                            let arn = same
                                .and_then(|r| r.arn.clone())
                                .map_or_else(Value::unknown, Value::string);
                            let others = string_list(same.and_then(|r| r.other_targets.as_deref()));
                            let v = object([
                                ("name", Value::string(name)),
                                ("arn", arn),
                                ("event_pattern", Value::string(k.event_pattern())),
                                ("enabled", Value::Bool(true)),
                                ("target_arn", queue_arn.clone()),
                                ("other_target_ids", others),
                                ("tags", rule_tags.clone()),
                            ]);
                            (k.key.to_string(), v)
                        })
                        .collect(),
                )
            }
            _ => Value::unknown(),
        };
        set_attr(planned, "rules", rules);
    }

    /// A new queue name (from `name` or `cluster_name`) replaces the whole resource.
    fn extra_replacements(&self, prior: &Value, planned: &Value) -> Vec<AttributePath> {
        match (prior.get("queue_name"), planned.get("queue_name")) {
            (Some(p), Some(n)) if !p.is_null() && p != n => vec![AttributePath::root().attr("queue_name")],
            _ => vec![],
        }
    }

    /// `queue_name`, `region` and `account_id` (see [`super::listing`]).
    fn identity_schema(&self) -> Option<&IdentitySchema> {
        Some(&listing::QUEUE_IDENTITY)
    }

    fn identity(&self, state: &Value) -> Value {
        listing::queue_identity(state)
    }

    async fn import_by_identity(
        &self,
        ctx: &KarpenterContext,
        identity: &Value,
    ) -> Result<Value, Diagnostics> {
        listing::import_queue_by_identity(ctx, identity).await
    }

    fn list_schema(&self) -> Option<&Schema> {
        Some(&listing::QUEUE_LIST)
    }

    async fn list(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        listing::list_queues(ctx, request, sink).await;
    }

    async fn create(&self, ctx: &KarpenterContext, planned: &Value) -> ApplyOutcome {
        self.apply(ctx, &Value::Null, planned, "create").await
    }

    async fn read(&self, ctx: &KarpenterContext, current: &Value) -> Result<ReadOutcome, Diagnostics> {
        // With the aws {} block still unknown (plan of a stack being built), keep what we have.
        if ctx
            .settings
            .unknown
            .iter()
            .any(|p| p.to_string().starts_with("aws"))
        {
            return Ok(ReadOutcome::Found(current.clone()));
        }
        let c = clients(ctx).await?;
        match refresh(&c, current, &tags_all::defaults(ctx)).await {
            Ok(Some(v)) => Ok(ReadOutcome::Found(v)),
            Ok(None) => Ok(ReadOutcome::Gone),
            Err(e) => Err(e.to_diagnostics()),
        }
    }

    async fn update(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
        self.apply(ctx, prior, planned, "update").await
    }

    async fn delete(&self, ctx: &KarpenterContext, prior: &Value) -> Diagnostics {
        let c = match clients_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return d,
        };
        let mut notes = Diagnostics::new();
        if let Err(e) = delete_parts(&c, prior, &mut notes).await {
            notes.extend(e.to_diagnostics());
        }
        notes
    }

    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
        let Some(name) = queue_name_from_import_id(id) else {
            return Err(Diagnostics::from_error(
                "Invalid import ID",
                format!(
                    "{id:?} is neither an SQS queue name nor a queue URL. Use e.g. `terraform import karpenter_interruption_queue.this my-cluster`."
                ),
            ));
        };
        let c = clients(ctx).await?;
        let url = c.sqs.get_queue_url(&name).await.map_err(|e| {
            if e.is_not_found() {
                Diagnostics::from_error(
                    "Queue not found",
                    format!("No SQS queue named {name:?} in this account and region."),
                )
            } else {
                e.to_diagnostics()
            }
        })?;
        let attrs = c.sqs.get_attributes(&url).await.map_err(|e| e.to_diagnostics())?;
        let arn = attrs.get("QueueArn").cloned().unwrap_or_default();
        // The rules are found by their target; their common prefix is the rule_name_prefix.
        // Rules named otherwise (a CloudFormation stack, terraform-aws-eks's Karpenter module)
        // that carry one of our event patterns are adopted under their own names, in
        // `rule_names`; the module's `ClusterName` tag on them names the cluster.
        let mut rules = BTreeMap::new();
        let mut prefix = None;
        let mut names = BTreeMap::new();
        let mut cluster_hint = None;
        for rule in c
            .events
            .rule_names_by_target(&arn)
            .await
            .map_err(|e| e.to_diagnostics())?
        {
            match split_rule_name(&rule) {
                None => {
                    let Some(info) = c
                        .events
                        .describe_rule(&rule)
                        .await
                        .map_err(|e| e.to_diagnostics())?
                    else {
                        continue;
                    };
                    let Some(kind) = info.event_pattern.as_deref().and_then(kind_of_pattern) else {
                        continue;
                    };
                    if rules.contains_key(kind.key) {
                        continue;
                    }
                    let tags = c
                        .events
                        .list_tags(&info.arn)
                        .await
                        .map_err(|e| e.to_diagnostics())?;
                    if cluster_hint.is_none() {
                        cluster_hint = tags.get(MODULE_CLUSTER_TAG).cloned();
                    }
                    names.insert(kind.key.to_string(), Value::string(rule.clone()));
                    rules.insert(kind.key.to_string(), RuleState::named(rule).to_value());
                }
                Some((p, k)) if prefix.as_deref().is_none_or(|q| q == p) => {
                    prefix = Some(p.to_string());
                    names.remove(k.key);
                    rules.insert(k.key.to_string(), RuleState::named(rule.clone()).to_value());
                }
                Some(_) => {}
            }
        }
        // The cluster name: the queue's cluster tag (queues this provider created), else read
        // from the rules' prefix or the queue's name (see `cluster_for_import`). A queue named
        // otherwise gets `name`, so a config with `name = ...` plans empty after import.
        let tags = c.sqs.list_tags(&url).await.map_err(|e| e.to_diagnostics())?;
        let cluster = cluster_for_import(
            &name,
            tags.get(CLUSTER_TAG_KEY)
                .or(cluster_hint.as_ref())
                .map(String::as_str),
            prefix.as_deref(),
        );
        let prefix = prefix.unwrap_or_else(|| default_rule_prefix(&cluster));
        let enabled: Vec<Value> = RULE_KINDS
            .iter()
            .filter(|k| rules.contains_key(k.key))
            .map(|k| Value::string(k.key))
            .collect();
        let mut state = crate::terraform::framework::schema::null_object(&SCHEMA.value_type());
        if cluster != name {
            set_attr(&mut state, "name", Value::string(name.clone()));
        }
        set_attr(&mut state, "cluster_name", Value::string(cluster));
        set_attr(&mut state, "queue_name", Value::string(name));
        set_attr(&mut state, "queue_url", Value::string(url));
        set_attr(&mut state, "queue_arn", Value::string(arn));
        set_attr(&mut state, "rule_name_prefix", Value::string(prefix));
        set_attr(&mut state, "enabled_rules", Value::Set(enabled));
        if !names.is_empty() {
            set_attr(&mut state, "rule_names", Value::Map(names));
        }
        set_attr(&mut state, "rules", Value::Map(rules));
        Ok(state)
    }
}

impl InterruptionQueue {
    async fn apply(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value, op: &str) -> ApplyOutcome {
        let desired = match Desired::from_plan(planned) {
            Ok(d) => Desired {
                prior_kms: get_str(prior, "kms_master_key_id").is_some(),
                tags: tags_all::wanted(ctx, planned),
                ..d
            },
            Err(diags) => return ApplyOutcome::failed(None, diags),
        };
        let c = match clients_to_change(ctx).await {
            Ok(c) => c,
            Err(diags) => return ApplyOutcome::failed(None, diags),
        };
        let timeout = timeouts::get(planned, op, Duration::from_secs(300));
        let deadline = Instant::now() + timeout;
        let mut cur = Current::from_state(prior);
        let creating = prior.is_null();
        let mut notes = Diagnostics::new();
        let result =
            tokio::time::timeout(timeout, converge(&c, &desired, &mut cur, deadline, &mut notes)).await;
        let mut diags = match result {
            Ok(Ok(())) => Diagnostics::new(),
            Ok(Err(d)) => d,
            Err(_) => Diagnostics::from_error(
                format!("Timed out during {op}"),
                format!(
                    "The interruption queue was not finished within {timeout:?}; what exists is recorded, apply again to finish."
                ),
            ),
        };
        diags.extend(notes);
        if creating && cur.queue_url.is_none() {
            // Nothing was created.
            return ApplyOutcome::failed(None, diags);
        }
        let mut state = cur.to_state(planned, &desired.queue_name);
        set_attr(
            &mut state,
            tags_all::TAGS_ALL,
            crate::terraform::framework::values::string_map(desired.tags.iter()),
        );
        ApplyOutcome {
            state: Some(state),
            diagnostics: diags,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_spelled_by_others_are_classified_by_source_and_detail_type() {
        let module = "{\n  \"source\": [\"aws.ec2\"],\n  \"detail-type\": [\"EC2 Spot Instance Interruption Warning\"]\n}";
        assert_eq!(kind_of_pattern(module).map(|k| k.key), Some("spot_interruption"));
        for k in RULE_KINDS {
            assert_eq!(kind_of_pattern(&k.event_pattern()).map(|x| x.key), Some(k.key));
        }
        assert!(kind_of_pattern(r#"{"source":["aws.ec2"],"detail-type":["Something else"]}"#).is_none());
        assert!(
            kind_of_pattern(r#"{"source":["aws.ec2","aws.health"],"detail-type":["AWS Health Event"]}"#)
                .is_none()
        );
        assert!(kind_of_pattern("not json").is_none());
    }

    #[test]
    fn event_patterns_match_upstream() {
        let spot = kind("spot_interruption").unwrap();
        let p: serde_json::Value = serde_json::from_str(&spot.event_pattern()).unwrap();
        assert_eq!(
            p,
            serde_json::json!({"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]})
        );
        let health = kind("scheduled_change").unwrap();
        let p: serde_json::Value = serde_json::from_str(&health.event_pattern()).unwrap();
        assert_eq!(p["source"][0], "aws.health");
        assert_eq!(p["detail-type"][0], "AWS Health Event");
        assert_eq!(RULE_KINDS.len(), 5);
        assert_eq!(
            KIND_KEYS,
            RULE_KINDS.iter().map(|k| k.key).collect::<Vec<_>>().as_slice()
        );
    }

    #[test]
    fn policy_has_upstream_statements_and_extras() {
        let arn = "arn:aws:sqs:us-east-1:123456789012:demo";
        let extra = ExtraStatement {
            sid: Some("AllowSns".into()),
            effect: "Allow".into(),
            actions: vec!["sqs:SendMessage".into()],
            principals: vec![("Service".into(), vec!["sns.amazonaws.com".into()])],
            conditions: vec![(
                "ArnEquals".into(),
                "aws:SourceArn".into(),
                vec!["arn:aws:sns:us-east-1:123456789012:t".into()],
            )],
        };
        let doc: serde_json::Value = serde_json::from_str(&policy_document(arn, &[extra])).unwrap();
        assert_eq!(doc["Id"], "EC2InterruptionPolicy");
        let s = doc["Statement"].as_array().unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(
            s[0]["Principal"]["Service"],
            serde_json::json!(["events.amazonaws.com", "sqs.amazonaws.com"])
        );
        assert_eq!(s[0]["Action"], "sqs:SendMessage");
        assert_eq!(s[0]["Resource"], arn);
        assert_eq!(s[1]["Sid"], "DenyHTTP");
        assert_eq!(s[1]["Effect"], "Deny");
        assert_eq!(s[1]["Principal"], "*");
        assert_eq!(s[1]["Condition"]["Bool"]["aws:SecureTransport"], "false");
        assert_eq!(s[2]["Principal"]["Service"][0], "sns.amazonaws.com");
        assert_eq!(
            s[2]["Condition"]["ArnEquals"]["aws:SourceArn"][0],
            "arn:aws:sns:us-east-1:123456789012:t"
        );
        assert_eq!(s[2]["Resource"], arn);
    }

    #[test]
    fn rule_names_fit_the_limit() {
        assert_eq!(default_rule_prefix("demo"), "Karpenter-demo-");
        let long = "a".repeat(100);
        let other = format!("{}b", "a".repeat(99));
        let p = default_rule_prefix(&long);
        assert!(p.len() <= max_prefix_len(), "{p}");
        assert_ne!(p, default_rule_prefix(&other), "long names stay apart");
        for k in RULE_KINDS {
            assert!(k.rule_name(&p).len() <= RULE_NAME_MAX);
        }
        // the exact boundary: a 22-character cluster name still fits unshortened
        let c22 = "c".repeat(22);
        assert_eq!(default_rule_prefix(&c22), format!("Karpenter-{c22}-"));
        assert!(default_rule_prefix(&"c".repeat(23)).len() <= max_prefix_len());
    }

    #[test]
    fn import_ids_and_rule_names() {
        assert_eq!(queue_name_from_import_id("demo").as_deref(), Some("demo"));
        assert_eq!(
            queue_name_from_import_id("https://sqs.us-east-1.amazonaws.com/123456789012/demo").as_deref(),
            Some("demo")
        );
        assert_eq!(queue_name_from_import_id("bad name"), None);
        let (p, k) = split_rule_name("Karpenter-demo-SpotInterruption").unwrap();
        assert_eq!((p, k.key), ("Karpenter-demo-", "spot_interruption"));
        assert!(split_rule_name("Something").is_none());
        assert_eq!(
            cluster_for_import("prod-karpenter", None, Some("Karpenter-prod-")),
            "prod"
        );
        assert_eq!(cluster_for_import("demo", None, Some("Karpenter-demo-")), "demo");
        assert_eq!(cluster_for_import("demo", None, Some("custom-")), "demo");
        assert_eq!(cluster_for_import("demo", None, None), "demo");
        assert_eq!(
            canonical_json("{\"b\": [1, 2], \"a\": \"x\"}"),
            r#"{"a":"x","b":[1,2]}"#
        );
    }

    /// A long cluster name's rule prefix is shortened with a hash; read back as a cluster name
    /// it gave `Karpenter-<head>-<hash>-`'s middle (issue #15). The queue's name, or its
    /// cluster tag, is the answer.
    #[test]
    fn import_never_reads_a_cluster_name_out_of_a_hashed_prefix() {
        let long = format!("c{}", "23456789-".repeat(9));
        let long = &long[..80];
        let prefix = default_rule_prefix(long);
        assert!(is_shortened_prefix(&prefix), "{prefix}");
        assert_eq!(cluster_for_import(long, None, Some(&prefix)), long);
        let hundred = "d".repeat(100);
        let prefix = default_rule_prefix(&hundred);
        assert_eq!(
            cluster_for_import("events", Some(&hundred), Some(&prefix)),
            hundred
        );
        assert_eq!(cluster_for_import("events", None, Some(&prefix)), "events");
        assert!(!is_shortened_prefix("Karpenter-demo-"));
    }

    #[test]
    fn bookkeeping_tags_are_reserved_and_hidden() {
        let config = object([
            ("cluster_name", Value::string("demo")),
            (
                "tags",
                crate::terraform::framework::values::string_map([
                    (ownership::OWNER_TAG_KEY, "x"),
                    ("team", "a"),
                ]),
            ),
        ]);
        let mut d = Diagnostics::new();
        InterruptionQueue.validate(&config, &mut d);
        let paths: Vec<String> = d
            .iter()
            .filter_map(|d| d.path.as_ref().map(ToString::to_string))
            .collect();
        assert_eq!(paths.len(), 1, "{paths:?}");
        assert!(paths[0].starts_with("tags"), "{paths:?}");
        let aws: BTreeMap<String, String> = [
            (ownership::OWNER_TAG_KEY, TYPE_NAME),
            (CLUSTER_TAG_KEY, "demo"),
            ("team", "a"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(visible_tags(aws).into_keys().collect::<Vec<_>>(), vec!["team"]);
    }

    #[test]
    fn queue_arns_come_from_the_url_where_the_partition_is_certain() {
        assert_eq!(
            queue_arn_from_url(
                "https://sqs.us-east-1.amazonaws.com/123456789012/demo",
                "us-east-1"
            )
            .as_deref(),
            Some("arn:aws:sqs:us-east-1:123456789012:demo")
        );
        assert_eq!(
            queue_arn_from_url(
                "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/demo",
                "cn-north-1"
            )
            .as_deref(),
            Some("arn:aws-cn:sqs:cn-north-1:123456789012:demo")
        );
        assert_eq!(
            queue_arn_from_url("http://127.0.0.1:4566/123456789012/demo", "us-gov-west-1").as_deref(),
            Some("arn:aws-us-gov:sqs:us-gov-west-1:123456789012:demo")
        );
        assert_eq!(
            queue_arn_from_url(
                "https://sqs.us-iso-east-1.c2s.ic.gov/123456789012/q",
                "us-iso-east-1"
            ),
            None
        );
        assert_eq!(
            queue_arn_from_url("https://example.com/not-an-account/q", "us-east-1"),
            None
        );
        assert_eq!(
            queue_arn_from_url("https://example.com/123456789012/", "us-east-1"),
            None
        );
    }

    #[test]
    fn plan_derives_names_and_rules() {
        let config = object([("cluster_name", Value::string("demo"))]);
        let mut planned = crate::terraform::framework::plan::plan(
            &SCHEMA.attributes,
            &SCHEMA.blocks,
            &config,
            &Value::Null,
        )
        .planned;
        InterruptionQueue.modify_plan(&config, &Value::Null, &mut planned, &mut Diagnostics::new());
        assert_eq!(get_str(&planned, "queue_name"), Some("demo"));
        assert_eq!(get_str(&planned, "rule_name_prefix"), Some("Karpenter-demo-"));
        assert_eq!(planned.get("sqs_managed_sse_enabled"), Some(&Value::Bool(true)));
        assert!(planned.get("queue_arn").is_some_and(Value::is_unknown));
        let rules = planned.get("rules").and_then(Value::as_entries).unwrap();
        assert_eq!(rules.len(), 5);
        assert_eq!(
            get_str(&rules["rebalance"], "name"),
            Some("Karpenter-demo-Rebalance")
        );
    }

    #[test]
    fn validation_catches_cross_attribute_errors() {
        let config = object([
            ("cluster_name", Value::string("x".repeat(90))),
            ("name", Value::Null),
            ("kms_master_key_id", Value::Null),
            (
                "kms_data_key_reuse_period_seconds",
                Value::number(Number::from_i64(300)),
            ),
        ]);
        let mut d = Diagnostics::new();
        InterruptionQueue.validate(&config, &mut d);
        let paths: Vec<String> = d
            .iter()
            .filter_map(|d| d.path.as_ref().map(ToString::to_string))
            .collect();
        assert_eq!(paths, vec!["cluster_name", "kms_data_key_reuse_period_seconds"]);
    }

    #[test]
    fn rule_names_name_enabled_kinds() {
        let config = object([
            ("cluster_name", Value::string("demo")),
            (
                "enabled_rules",
                Value::Set(vec![Value::string("spot_interruption")]),
            ),
            (
                "rule_names",
                crate::terraform::framework::values::string_map([
                    ("spot_interruption", "cfn-SpotInterruptionRule-1"),
                    ("rebalance", "cfn-RebalanceRule-1"),
                    ("spot", "x"),
                ]),
            ),
        ]);
        let mut d = Diagnostics::new();
        InterruptionQueue.validate(&config, &mut d);
        let paths: Vec<String> = d
            .iter()
            .filter_map(|d| d.path.as_ref().map(ToString::to_string))
            .collect();
        assert_eq!(paths, vec![r#"rule_names["rebalance"]"#, r#"rule_names["spot"]"#]);
        let names = BTreeMap::from([("rebalance".to_string(), "cfn-RebalanceRule-1".to_string())]);
        let rebalance = kind("rebalance").unwrap();
        assert_eq!(
            rule_name_in(&names, "Karpenter-demo-", rebalance),
            "cfn-RebalanceRule-1"
        );
        let spot = kind("spot_interruption").unwrap();
        assert_eq!(
            rule_name_in(&names, "Karpenter-demo-", spot),
            "Karpenter-demo-SpotInterruption"
        );
    }
}
