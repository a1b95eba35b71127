//! The queue as the plan asks for it ([`Desired`]) and as AWS holds it ([`Current`], one
//! [`RuleState`] per rule), and the conversions between those and Terraform values.

use std::collections::BTreeMap;

use super::document::ExtraStatement;
use super::kinds::{RULE_KINDS, RuleKind, default_rule_prefix, rule_name_in};
use super::schema::{CLUSTER_TAG_KEY, DEFAULT_KMS_REUSE, DEFAULT_RETENTION, TYPE_NAME};
use crate::aws::ownership;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::{get_str, object, opt_string};
use crate::terraform::tfvalue::{Number, Value};

pub(super) fn is_bookkeeping_tag(key: &str) -> bool {
    ownership::is_reserved_key(key) || key == CLUSTER_TAG_KEY
}

/// The tags a user sees and manages (`tags`, `rules[*].tags`): the bookkeeping ones left out.
pub(super) fn visible_tags(tags: BTreeMap<String, String>) -> BTreeMap<String, String> {
    ownership::user_tags(&tags)
        .into_iter()
        .filter(|(k, _)| !is_bookkeeping_tag(k))
        .collect()
}

// ----------------------------------------------------------------------------------------
// Reading the plan

/// What the plan asks for.
#[derive(Debug, Clone)]
pub(super) struct Desired {
    pub(super) queue_name: String,
    pub(super) retention: i64,
    pub(super) sse: bool,
    pub(super) kms: Option<String>,
    pub(super) kms_reuse: Option<i64>,
    pub(super) statements: Vec<ExtraStatement>,
    pub(super) kinds: Vec<&'static RuleKind>,
    pub(super) prefix: String,
    /// `rule_names`: kinds whose rule keeps a name given elsewhere.
    pub(super) names: BTreeMap<String, String>,
    pub(super) tags: BTreeMap<String, String>,
    /// `rule_tags`: tags the rules carry on top of `tags`.
    pub(super) rule_tags: BTreeMap<String, String>,
    /// The prior state had a KMS key (so switching away must clear it).
    pub(super) prior_kms: bool,
    /// The configured attribute the queue name comes from (`name` or `cluster_name`).
    pub(super) name_attribute: &'static str,
    pub(super) cluster: String,
}

pub(super) fn int(v: &Value, name: &str) -> Option<i64> {
    v.get(name).and_then(Value::as_number).and_then(Number::as_i64)
}

pub(super) fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_elements)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect()
}

/// A list of strings, or null for None.
pub(super) fn string_list(v: Option<&[String]>) -> Value {
    v.map_or(Value::Null, |l| {
        Value::List(l.iter().map(Value::string).collect())
    })
}

pub(super) fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_entries)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect()
}

pub(super) fn statements(v: &Value) -> Vec<ExtraStatement> {
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

pub(super) fn enabled_kinds(v: &Value) -> Vec<&'static RuleKind> {
    let keys = strings(v.get("enabled_rules"));
    RULE_KINDS
        .iter()
        .filter(|k| keys.iter().any(|e| e == k.key))
        .collect()
}

impl Desired {
    pub(super) fn from_plan(planned: &Value) -> Result<Self, Diagnostics> {
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
            rule_tags: string_map(planned.get("rule_tags")),
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
    pub(super) fn rule_name(&self, k: &RuleKind) -> String {
        rule_name_in(&self.names, &self.prefix, k)
    }

    /// The queue's tags in AWS: `tags_all` plus the ownership and cluster tags.
    pub(super) fn queue_tags(&self) -> BTreeMap<String, String> {
        let mut tags = ownership::with_owner_tag(&self.tags, TYPE_NAME);
        tags.insert(CLUSTER_TAG_KEY.to_string(), self.cluster.clone());
        tags
    }

    /// A rule's tags as the user sees them: `tags_all` with `rule_tags` on top.
    pub(super) fn visible_rule_tags(&self) -> BTreeMap<String, String> {
        let mut tags = self.tags.clone();
        tags.extend(self.rule_tags.clone());
        tags
    }

    /// A rule's tags in AWS: [`Desired::visible_rule_tags`] plus the ownership tag.
    pub(super) fn rule_tags(&self) -> BTreeMap<String, String> {
        ownership::with_owner_tag(&self.visible_rule_tags(), TYPE_NAME)
    }

    /// The queue attributes a state records (the policy aside), to tell whether they change;
    /// None when it records none.
    pub(super) fn recorded_attributes(state: &Value) -> Option<BTreeMap<String, String>> {
        int(state, "message_retention_seconds")?;
        Desired::from_plan(state).ok().map(|d| d.queue_attributes())
    }

    /// The queue attributes to set (encryption and retention; the policy separately).
    pub(super) fn queue_attributes(&self) -> BTreeMap<String, String> {
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
pub(super) struct RuleState {
    pub(super) name: String,
    pub(super) arn: Option<String>,
    pub(super) event_pattern: Option<String>,
    pub(super) enabled: Option<bool>,
    pub(super) target_arn: Option<String>,
    pub(super) tags: Option<BTreeMap<String, String>>,
    /// Targets of others seen at the last refresh (None: none).
    pub(super) other_targets: Option<Vec<String>>,
}

impl RuleState {
    /// A rule known only by its name (import: the refresh that follows reads the rest).
    pub(super) fn named(name: String) -> Self {
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

    pub(super) fn to_value(&self) -> Value {
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

    pub(super) fn from_value(v: &Value) -> Option<Self> {
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
pub(super) struct Current {
    pub(super) queue_url: Option<String>,
    pub(super) queue_arn: Option<String>,
    pub(super) policy_json: Option<String>,
    pub(super) rules: BTreeMap<String, RuleState>,
}

impl Current {
    /// The ARN of the queue this state records (None while none is recorded).
    pub(super) fn recorded_queue_arn(&self) -> Option<&str> {
        self.queue_url.as_ref().and(self.queue_arn.as_deref())
    }

    pub(super) fn from_state(state: &Value) -> Self {
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
    pub(super) fn to_state(&self, base: &Value, queue_name: &str) -> Value {
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
pub(super) fn without_unknowns(v: &Value) -> Value {
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

pub(super) fn set_attr(v: &mut Value, name: &str, value: Value) {
    if let Value::Object(m) = v {
        m.insert(name.to_string(), value);
    }
}
