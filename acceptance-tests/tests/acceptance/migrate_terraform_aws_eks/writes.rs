//! "An apply writes nothing the plan did not show": every AWS write of an apply, as the fault
//! proxy recorded it, is traced to the part of a resource it changes (a role's trust policy,
//! tags, attached or inline policies; the queue's attributes, policy, tags; a rule, its target,
//! its tags), and that part must be planned to change in `terraform show -json` of the saved
//! plan the apply ran. A write that no planned change explains, or that is not classified at
//! all, fails the test with the call and its resource.

use std::collections::BTreeMap;

use acceptance_tests::moto::ProxyCall;
use serde_json::Value as Json;

/// The parts of one planned resource change, by address.
struct Change<'a> {
    address: String,
    before: &'a Json,
    after: &'a Json,
    after_unknown: &'a Json,
    actions: Vec<String>,
}

impl Change<'_> {
    /// Whether the attribute at `path` (object keys) is planned to change.
    fn changes(&self, path: &[&str]) -> bool {
        if self.actions.iter().any(|a| a == "create" || a == "delete") {
            return true;
        }
        let at = |v: &Json| path.iter().try_fold(v, |v, k| v.get(*k)).cloned();
        if at(self.after_unknown).is_some_and(|u| u != Json::Bool(false) && !is_all_false(&u)) {
            return true;
        }
        at(self.before) != at(self.after)
    }
}

fn is_all_false(v: &Json) -> bool {
    match v {
        Json::Bool(b) => !b,
        Json::Object(m) => m.values().all(is_all_false),
        Json::Array(a) => a.iter().all(is_all_false),
        _ => true,
    }
}

/// A form field (`RoleName=...`) of a query-protocol body, decoded.
fn form(body: &str, key: &str) -> Option<String> {
    body.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == key).then(|| {
            percent_encoding::percent_decode_str(&v.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

fn json_field(body: &str, key: &str) -> Option<String> {
    serde_json::from_str::<Json>(body)
        .ok()?
        .get(key)?
        .as_str()
        .map(str::to_string)
}

const READS: &[&str] = &["Get", "List", "Describe"];

/// The writes among `calls` that the plan `plan` (`terraform show -json` of a saved plan) does
/// not explain, each with why; empty when every write is planned.
pub fn unplanned_writes(plan: &Json, calls: &[ProxyCall]) -> Vec<String> {
    let changes: Vec<Change> = plan["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|rc| Change {
            address: rc["address"].as_str().unwrap_or_default().to_string(),
            before: &rc["change"]["before"],
            after: &rc["change"]["after"],
            after_unknown: &rc["change"]["after_unknown"],
            actions: rc["change"]["actions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect(),
        })
        .collect();
    let by_field = |field: &str, value: &str| find(&changes, field, value);
    // Rule names (before or after) → (queue change, rule key).
    let mut rules: BTreeMap<String, (&Change, String)> = BTreeMap::new();
    let mut rule_arns: BTreeMap<String, String> = BTreeMap::new();
    for c in &changes {
        for side in [c.before, c.after] {
            for (key, rule) in side.get("rules").and_then(Json::as_object).into_iter().flatten() {
                if let Some(name) = rule.get("name").and_then(Json::as_str) {
                    rules.entry(name.to_string()).or_insert((c, key.clone()));
                    if let Some(arn) = rule.get("arn").and_then(Json::as_str) {
                        rule_arns.insert(arn.to_string(), name.to_string());
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for call in calls.iter().filter(|c| !c.failed) {
        let op = call.operation.trim_start_matches("Action=");
        let name = op.rsplit('.').next().unwrap_or(op);
        if READS.iter().any(|r| name.starts_with(r)) || name == "GetCallerIdentity" {
            continue;
        }
        let body = call.body.as_str();
        // (the change, the attributes one of which must change) for this write.
        let explained: Option<(Option<&Change>, Vec<Vec<&str>>)> = match op {
            "UpdateAssumeRolePolicy" => Some((role(&changes, body), vec![vec!["assume_role_policy"]])),
            "TagRole" | "UntagRole" => Some((role(&changes, body), vec![vec!["tags_all"]])),
            "AttachRolePolicy" | "DetachRolePolicy" => Some((
                role(&changes, body),
                vec![vec!["managed_policy_arns"], vec!["additional_policy_arns"]],
            )),
            "PutRolePolicy" | "DeleteRolePolicy" => Some((
                role(&changes, body),
                vec![
                    vec!["policy"],
                    vec!["policy_attachment"],
                    vec!["additional_inline_policies"],
                    vec!["unmanaged_inline_policies"],
                ],
            )),
            "PutRolePermissionsBoundary" | "DeleteRolePermissionsBoundary" => {
                Some((role(&changes, body), vec![vec!["permissions_boundary"]]))
            }
            "CreateRole" | "DeleteRole" => Some((role(&changes, body), vec![])),
            "CreateInstanceProfile"
            | "DeleteInstanceProfile"
            | "AddRoleToInstanceProfile"
            | "RemoveRoleFromInstanceProfile"
            | "TagInstanceProfile"
            | "UntagInstanceProfile" => Some((
                form(body, "RoleName")
                    .and_then(|r| by_field("name", &r))
                    .or_else(|| {
                        form(body, "InstanceProfileName").and_then(|p| by_field("instance_profile_name", &p))
                    }),
                vec![
                    vec!["instance_profile_name"],
                    vec!["create_instance_profile"],
                    vec!["instance_profile_tags"],
                ],
            )),
            "CreatePolicy"
            | "CreatePolicyVersion"
            | "DeletePolicyVersion"
            | "DeletePolicy"
            | "TagPolicy"
            | "UntagPolicy" => {
                let arn = form(body, "PolicyArn");
                let by_arn = arn.as_deref().and_then(|a| {
                    changes.iter().find(|c| {
                        [c.before, c.after].iter().any(|s| {
                            s.get("managed_policy_arns")
                                .and_then(Json::as_array)
                                .is_some_and(|l| l.iter().any(|x| x.as_str() == Some(a)))
                        })
                    })
                });
                Some((
                    by_arn,
                    vec![vec!["managed_policy_arns"], vec!["policy"], vec!["tags_all"]],
                ))
            }
            "AmazonSQS.SetQueueAttributes" => {
                let queue = json_field(body, "QueueUrl").and_then(|u| by_field("queue_url", &u));
                let attrs = serde_json::from_str::<Json>(body).ok();
                let policy_only = attrs
                    .as_ref()
                    .and_then(|b| b.get("Attributes")?.as_object().cloned())
                    .is_some_and(|a| a.keys().all(|k| k == "Policy"));
                let parts = if policy_only {
                    vec![vec!["policy_json"]]
                } else {
                    vec![
                        vec!["message_retention_seconds"],
                        vec!["sqs_managed_sse_enabled"],
                        vec!["kms_master_key_id"],
                        vec!["kms_data_key_reuse_period_seconds"],
                    ]
                };
                Some((queue, parts))
            }
            "AmazonSQS.TagQueue" | "AmazonSQS.UntagQueue" => Some((
                json_field(body, "QueueUrl").and_then(|u| by_field("queue_url", &u)),
                vec![vec!["tags_all"]],
            )),
            "AmazonSQS.CreateQueue" | "AmazonSQS.DeleteQueue" => Some((
                json_field(body, "QueueName")
                    .and_then(|n| by_field("queue_name", &n))
                    .or_else(|| json_field(body, "QueueUrl").and_then(|u| by_field("queue_url", &u))),
                vec![],
            )),
            "AWSEvents.PutRule"
            | "AWSEvents.PutTargets"
            | "AWSEvents.RemoveTargets"
            | "AWSEvents.DeleteRule"
            | "AWSEvents.TagResource"
            | "AWSEvents.UntagResource" => {
                let rule = json_field(body, "Name")
                    .or_else(|| json_field(body, "Rule"))
                    .or_else(|| json_field(body, "ResourceARN").and_then(|a| rule_arns.get(&a).cloned()));
                match rule.as_deref().and_then(|r| rules.get(r)) {
                    Some((change, key)) => {
                        let what = match name {
                            "PutRule" => vec!["name", "event_pattern", "enabled"],
                            "PutTargets" => vec!["target_arn"],
                            "TagResource" | "UntagResource" => vec!["tags"],
                            _ => vec!["name"],
                        };
                        let key = key.clone();
                        let explained = change.changes(&["rules", &key]) && {
                            // A rule that takes the key's place under another name is new.
                            let gone_or_new = change.before.pointer(&format!("/rules/{key}")).is_none()
                                || change.after.pointer(&format!("/rules/{key}")).is_none()
                                || change.changes(&["rules", &key, "name"]);
                            gone_or_new || what.iter().any(|w| change.changes(&["rules", &key, w]))
                        };
                        if !explained {
                            out.push(format!(
                                "{op} on rule {:?} of {}: rules[{key}] is planned unchanged",
                                rule, change.address
                            ));
                        }
                        None
                    }
                    None => Some((None, vec![])),
                }
            }
            _ => {
                out.push(format!("unclassified write {op}: {body}"));
                None
            }
        };
        let Some((change, parts)) = explained else {
            continue;
        };
        let Some(change) = change else {
            out.push(format!("{op} on a part no planned change names: {body}"));
            continue;
        };
        let planned = if parts.is_empty() {
            change.actions.iter().any(|a| a == "create" || a == "delete")
        } else {
            parts.iter().any(|p| change.changes(p))
        };
        if !planned {
            out.push(format!(
                "{op} on {} although {} is planned unchanged ({body})",
                change.address,
                parts.iter().map(|p| p.join(".")).collect::<Vec<_>>().join(" / ")
            ));
        }
    }
    out
}

/// The change whose `field` is `value` before or after.
fn find<'a, 'b>(changes: &'a [Change<'b>], field: &str, value: &str) -> Option<&'a Change<'b>> {
    changes.iter().find(|c| {
        c.before.get(field).and_then(Json::as_str) == Some(value)
            || c.after.get(field).and_then(Json::as_str) == Some(value)
    })
}

/// The change of the role a query-protocol body names (`RoleName`).
fn role<'a, 'b>(changes: &'a [Change<'b>], body: &str) -> Option<&'a Change<'b>> {
    form(body, "RoleName").and_then(|r| find(changes, "name", &r))
}
