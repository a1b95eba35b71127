//! The schema of `karpenter_interruption_queue`: the one description that drives its validation,
//! its plan and its docs.

use std::sync::LazyLock;

use super::kinds::{KIND_KEYS, max_prefix_len};
use crate::aws::ownership;
use crate::aws_names;
use crate::resources::aws::tags_all;
use crate::terraform::framework::{Attribute, Schema, timeouts, validate as v};
use crate::terraform::tfvalue::{Number, Type, Value};

/// The resource type, also the value of the ownership tag on every part it creates.
pub const TYPE_NAME: &str = "karpenter_interruption_queue";
/// A second bookkeeping tag, on the queue only: the cluster it was made for, so that import
/// recovers `cluster_name` even when the rule prefix is a shortened hash and the queue is
/// named apart from the cluster. Hidden from `tags` like the ownership tag.
pub const CLUSTER_TAG_KEY: &str = "terraform-provider-karpenter/cluster-name";
/// SQS and EventBridge allow 50 tags per resource; the provider keeps two for itself.
pub const MAX_USER_TAGS: usize = 48;
/// Default message retention (seconds), as upstream.
pub const DEFAULT_RETENTION: i64 = 300;
/// AWS's default data key reuse period when a KMS key is used.
pub const DEFAULT_KMS_REUSE: i64 = 300;

pub(super) static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
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
                .validate(aws_names::eks_cluster_name_validator()),
            Attribute::string("name")
                .optional()
                .describe("Queue name; defaults to `cluster_name`. Changing it replaces the queue.")
                .validate(aws_names::validator(
                    "Must be an SQS queue name: 1 to 80 letters, digits, hyphens and underscores (a standard queue: \
                     FIFO queues, named `….fifo`, are not used).",
                    standard_queue_name,
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
                .validate(aws_names::validator(
                    format!("Must be 1 to {} letters, digits, `.`, `-` and `_`.", max_prefix_len()),
                    |s| aws_names::eventbridge_rule_name_prefix(s, max_prefix_len()),
                )),
            Attribute::map_of("rule_names", Type::String)
                .optional()
                .describe(
                    "Names of rules that keep a name given elsewhere, by kind (`spot_interruption = \"…\"`): a kind \
                     named here uses this name instead of `<rule_name_prefix><Kind>`. Import sets it for the rules of a \
                     CloudFormation stack or of terraform-aws-eks's Karpenter module, which name their rules otherwise; \
                     keep it to adopt those rules as they are, or leave it out to have the next apply replace them with \
                     rules of the prefix's names (the new rules are created and wired before the old ones are deleted).",
                )
                .validate(v::each(aws_names::eventbridge_rule_name_validator())),
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
            Attribute::map_of("rule_tags", Type::String)
                .optional()
                .describe(
                    "Tags only the rules carry, on top of `tags_all` (a key here wins). Import sets it to the tags \
                     every adopted rule has and the queue has not — `ClusterName` on the rules of terraform-aws-eks's \
                     Karpenter module — so a configuration generated from the import keeps them.",
                )
                .validate(v::count(0, MAX_USER_TAGS)),
            tags_all::attribute("the queue and every rule"),
        ],
    )
    .with_blocks(vec![timeouts::block(&[("create", "5m"), ("update", "5m"), ("delete", "5m")])])
});

/// The queue's own name: an SQS queue name, of a standard queue (EventBridge sends Karpenter's
/// events to a standard queue; a FIFO queue would need message groups).
fn standard_queue_name(name: &str) -> Result<(), aws_names::NameError> {
    match aws_names::sqs_queue_name(name)? {
        aws_names::QueueKind::Standard => Ok(()),
        aws_names::QueueKind::Fifo => Err(aws_names::NameError::Character {
            what: "the interruption queue's name (a standard queue)",
            value: name.to_string(),
            found: '.',
            position: name.len() - ".fifo".len() + 1,
            allowed: "letters, digits, hyphens and underscores",
        }),
    }
}
