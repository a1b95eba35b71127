//! Thin wrappers over the EventBridge calls the interruption queue makes (rules on the
//! default event bus, their targets and tags). "Not found" is classified with the SDK's typed
//! check; removing targets or deleting a rule that is already gone succeeds. Nothing here
//! removes a target it was not given by Id: targets of others stay (see `RuleRemoval`).

use std::collections::BTreeMap;

use aws_sdk_eventbridge::Client;
use aws_sdk_eventbridge::types::{RuleState, Tag, Target};

use super::error::{AwsError, AwsErrorKind};

/// EventBridge calls for one client.
#[derive(Debug, Clone)]
pub struct EventBridge {
    client: Client,
    /// Where the calls go, for connection and TLS diagnostics.
    endpoint: String,
}

/// A rule as DescribeRule returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleInfo {
    pub name: String,
    pub arn: String,
    pub event_pattern: Option<String>,
    pub enabled: bool,
    pub description: Option<String>,
}

/// What [`EventBridge::remove_target_and_delete_if_empty`] did with the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleRemoval {
    /// The rule is gone (deleted now, or already absent).
    Deleted,
    /// Our target is removed, but the rule still has these targets of others, so it stays.
    Kept { other_targets: Vec<String> },
}

/// One target of a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetInfo {
    pub id: String,
    pub arn: String,
}

macro_rules! classify {
    ($this:expr, $action:expr) => {
        |e| {
            let gone = e
                .as_service_error()
                .is_some_and(|s| s.is_resource_not_found_exception());
            let err = AwsError::from_sdk($action, &e).via(&$this.endpoint);
            if gone {
                err.with_kind(AwsErrorKind::NotFound)
            } else {
                err
            }
        }
    };
}

impl EventBridge {
    pub fn new(client: Client, endpoint: String) -> Self {
        Self { client, endpoint }
    }

    /// Creates or updates an enabled rule with this pattern; returns its ARN. Tags are applied
    /// only when the rule is created (EventBridge ignores them on update; see `sync_tags`).
    pub async fn put_rule(
        &self,
        name: &str,
        event_pattern: &str,
        description: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<String, AwsError> {
        let tags: Vec<Tag> = tags
            .iter()
            .filter_map(|(k, v)| Tag::builder().key(k).value(v).build().ok())
            .collect();
        let out = self
            .client
            .put_rule()
            .name(name)
            .event_pattern(event_pattern)
            .description(description)
            .state(RuleState::Enabled)
            .set_tags((!tags.is_empty()).then_some(tags))
            .send()
            .await
            .map_err(classify!(self, "events:PutRule"))?;
        out.rule_arn.ok_or_else(|| {
            AwsError::new(
                "events:PutRule",
                AwsErrorKind::Other,
                "no RuleArn in the response",
            )
        })
    }

    /// The rule `name`, or None when it does not exist.
    pub async fn describe_rule(&self, name: &str) -> Result<Option<RuleInfo>, AwsError> {
        match self
            .client
            .describe_rule()
            .name(name)
            .send()
            .await
            .map_err(classify!(self, "events:DescribeRule"))
        {
            Ok(out) => Ok(Some(RuleInfo {
                name: out.name.unwrap_or_else(|| name.to_string()),
                arn: out.arn.unwrap_or_default(),
                event_pattern: out.event_pattern,
                enabled: out.state.is_none_or(|s| s == RuleState::Enabled),
                description: out.description,
            })),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Adds or updates the target `id` of `rule`.
    pub async fn put_target(&self, rule: &str, id: &str, arn: &str) -> Result<(), AwsError> {
        let target = Target::builder()
            .id(id)
            .arn(arn)
            .build()
            .map_err(|e| AwsError::new("events:PutTargets", AwsErrorKind::Validation, e.to_string()))?;
        let out = self
            .client
            .put_targets()
            .rule(rule)
            .targets(target)
            .send()
            .await
            .map_err(classify!(self, "events:PutTargets"))?;
        if let Some(failed) = out.failed_entries.unwrap_or_default().first() {
            let code = failed.error_code.clone().unwrap_or_default();
            let kind = super::error::kind_of_code(&code);
            let mut err = AwsError::new(
                "events:PutTargets",
                kind,
                failed
                    .error_message
                    .clone()
                    .unwrap_or_else(|| "target was not added".into()),
            );
            err.code = Some(code);
            return Err(err);
        }
        Ok(())
    }

    /// The targets of `rule` (None when the rule does not exist).
    pub async fn list_targets(&self, rule: &str) -> Result<Option<Vec<TargetInfo>>, AwsError> {
        match self
            .client
            .list_targets_by_rule()
            .rule(rule)
            .send()
            .await
            .map_err(classify!(self, "events:ListTargetsByRule"))
        {
            Ok(out) => Ok(Some(
                out.targets
                    .unwrap_or_default()
                    .into_iter()
                    .map(|t| TargetInfo { id: t.id, arn: t.arn })
                    .collect(),
            )),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Removes targets; a missing rule counts as done.
    pub async fn remove_targets(&self, rule: &str, ids: &[String]) -> Result<(), AwsError> {
        if ids.is_empty() {
            return Ok(());
        }
        match self
            .client
            .remove_targets()
            .rule(rule)
            .set_ids(Some(ids.to_vec()))
            .send()
            .await
            .map_err(classify!(self, "events:RemoveTargets"))
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Deletes a rule (its targets must be removed first); a missing rule counts as deleted.
    pub async fn delete_rule(&self, name: &str) -> Result<(), AwsError> {
        match self
            .client
            .delete_rule()
            .name(name)
            .send()
            .await
            .map_err(classify!(self, "events:DeleteRule"))
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes our target `id` from `rule`, then deletes the rule if nothing else targets it:
    /// two calls when `id` was the only target. Targets of others are never removed: when
    /// DeleteRule refuses, the remaining targets are listed and the rule is kept if any are left.
    pub async fn remove_target_and_delete_if_empty(
        &self,
        rule: &str,
        id: &str,
    ) -> Result<RuleRemoval, AwsError> {
        self.remove_targets(rule, &[id.to_string()]).await?;
        let refused = match self.delete_rule(rule).await {
            Ok(()) => return Ok(RuleRemoval::Deleted),
            Err(e) => e,
        };
        match self.list_targets(rule).await? {
            None => Ok(RuleRemoval::Deleted),
            Some(left) if !left.is_empty() => Ok(RuleRemoval::Kept {
                other_targets: left.into_iter().map(|t| t.id).collect(),
            }),
            // Empty now (a target removed meanwhile): one more try, else the first refusal.
            Some(_) => self
                .delete_rule(rule)
                .await
                .map(|()| RuleRemoval::Deleted)
                .map_err(|_| refused),
        }
    }

    /// Every rule on the default bus whose name starts with `prefix`, as (name, ARN).
    pub async fn rules_with_prefix(&self, prefix: &str) -> Result<Vec<(String, String)>, AwsError> {
        Ok(self
            .list_rules(Some(prefix))
            .await?
            .into_iter()
            .map(|r| (r.name, r.arn))
            .collect())
    }

    /// Every rule on the default bus (whose name starts with `prefix`, when given), with its
    /// event pattern and state (ListRules, all pages).
    pub async fn list_rules(&self, prefix: Option<&str>) -> Result<Vec<RuleInfo>, AwsError> {
        let mut rules = Vec::new();
        let mut token = None;
        loop {
            let out = self
                .client
                .list_rules()
                .set_name_prefix(prefix.map(str::to_string))
                .set_next_token(token)
                .send()
                .await
                .map_err(classify!(self, "events:ListRules"))?;
            rules.extend(out.rules.unwrap_or_default().into_iter().filter_map(|r| {
                Some(RuleInfo {
                    name: r.name?,
                    arn: r.arn.unwrap_or_default(),
                    event_pattern: r.event_pattern,
                    enabled: r.state.is_none_or(|s| s == RuleState::Enabled),
                    description: r.description,
                })
            }));
            token = out.next_token;
            if token.is_none() {
                return Ok(rules);
            }
        }
    }

    pub async fn list_tags(&self, arn: &str) -> Result<BTreeMap<String, String>, AwsError> {
        let out = self
            .client
            .list_tags_for_resource()
            .resource_arn(arn)
            .send()
            .await
            .map_err(classify!(self, "events:ListTagsForResource"))?;
        Ok(out
            .tags
            .unwrap_or_default()
            .into_iter()
            .map(|t| (t.key, t.value))
            .collect())
    }

    /// Makes the resource's tags exactly `tags`.
    pub async fn sync_tags(&self, arn: &str, tags: &BTreeMap<String, String>) -> Result<(), AwsError> {
        let current = self.list_tags(arn).await?;
        let changes = super::tags::diff(&current, tags);
        if !changes.remove.is_empty() {
            self.client
                .untag_resource()
                .resource_arn(arn)
                .set_tag_keys(Some(changes.remove))
                .send()
                .await
                .map_err(classify!(self, "events:UntagResource"))?;
        }
        if !changes.set.is_empty() {
            let list: Vec<Tag> = changes
                .set
                .iter()
                .filter_map(|(k, v)| Tag::builder().key(k).value(v).build().ok())
                .collect();
            self.client
                .tag_resource()
                .resource_arn(arn)
                .set_tags(Some(list))
                .send()
                .await
                .map_err(classify!(self, "events:TagResource"))?;
        }
        Ok(())
    }

    /// Names of the rules on the default bus that target `arn`.
    pub async fn rule_names_by_target(&self, arn: &str) -> Result<Vec<String>, AwsError> {
        let mut names = Vec::new();
        let mut token = None;
        loop {
            let out = self
                .client
                .list_rule_names_by_target()
                .target_arn(arn)
                .set_next_token(token)
                .send()
                .await
                .map_err(classify!(self, "events:ListRuleNamesByTarget"))?;
            names.extend(out.rule_names.unwrap_or_default());
            token = out.next_token;
            if token.is_none() {
                break;
            }
        }
        Ok(names)
    }
}
