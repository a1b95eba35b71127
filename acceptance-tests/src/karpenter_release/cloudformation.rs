//! The controller policy of a Karpenter release, from its getting-started `cloudformation.yaml`:
//! every `AWS::IAM::ManagedPolicy` resource of the template is one of the controller's managed
//! policies; their statements (Sid, effect, actions, resource ARN patterns, conditions) are
//! written as `data/karpenter/controller-policy/<minor>.tsv`, one fact a line, with the
//! template's placeholders (`${AWS::Partition}`, `${ClusterName}`, `${KarpenterNodeRole.Arn}`,
//! …) left in. Also [`derive`]: a release whose template is not at hand, written as an earlier
//! release's data with the changes its documentation describes.

use std::fmt::Write as _;

use serde_json::Value as Json;

use super::error::ReleaseError;

fn fail(message: impl Into<String>) -> ReleaseError {
    ReleaseError::Input(message.into())
}

/// One managed policy of the template.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Our name for it: the template's logical ID without `Policy` (`NodeLifecycle`), and
    /// `Controller` for the one policy of v1.0–v1.8 (`KarpenterControllerPolicy`).
    pub group: String,
    pub logical_id: String,
    /// `ManagedPolicyName`, placeholders in.
    pub policy_name: String,
    pub statements: Vec<Statement>,
}

/// One statement, values as the template writes them.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub sid: String,
    pub effect: String,
    pub actions: Vec<String>,
    pub resources: Vec<String>,
    /// (operator, key, value), sorted by operator and key, values in the template's order.
    pub conditions: Vec<(String, String, String)>,
}

/// A value that is one string or a list of them.
fn strings(v: &Json, what: &str) -> Result<Vec<String>, ReleaseError> {
    match v {
        Json::String(s) => Ok(vec![s.clone()]),
        Json::Array(items) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| fail(format!("{what}: {i} is not a string")))
            })
            .collect(),
        Json::Bool(b) => Ok(vec![b.to_string()]),
        other => Err(fail(format!(
            "{what}: {other} is neither a string nor a list of strings"
        ))),
    }
}

fn statement(v: &Json, policy: &str) -> Result<Statement, ReleaseError> {
    let Json::Object(fields) = v else {
        return Err(fail(format!("{policy}: a statement is not an object")));
    };
    let sid = fields
        .get("Sid")
        .and_then(Json::as_str)
        .ok_or_else(|| fail(format!("{policy}: a statement has no Sid")))?
        .to_string();
    let here = format!("{policy}/{sid}");
    if let Some(other) = fields
        .keys()
        .find(|k| !["Sid", "Effect", "Action", "Resource", "Condition"].contains(&k.as_str()))
    {
        return Err(fail(format!(
            "{here}: {other} is not carried by the data format (Sid, Effect, Action, Resource, Condition)"
        )));
    }
    let effect = fields
        .get("Effect")
        .and_then(Json::as_str)
        .ok_or_else(|| fail(format!("{here}: no Effect")))?
        .to_string();
    let actions = strings(
        fields.get("Action").unwrap_or(&Json::Null),
        &format!("{here} Action"),
    )?;
    let resources = strings(
        fields.get("Resource").unwrap_or(&Json::Null),
        &format!("{here} Resource"),
    )?;
    let mut conditions = Vec::new();
    if let Some(c) = fields.get("Condition") {
        let Json::Object(by_test) = c else {
            return Err(fail(format!("{here}: Condition is not an object")));
        };
        for (test, keys) in by_test {
            let Json::Object(keys) = keys else {
                return Err(fail(format!("{here}: Condition {test} is not an object")));
            };
            for (key, values) in keys {
                for value in strings(values, &format!("{here} Condition {test} {key}"))? {
                    conditions.push((test.clone(), key.clone(), value));
                }
            }
        }
    }
    Ok(Statement {
        sid,
        effect,
        actions,
        resources,
        conditions,
    })
}

/// Our group name for a template's logical ID.
pub fn group_name(logical_id: &str) -> String {
    match logical_id.strip_suffix("Policy") {
        Some("KarpenterController") | None => "Controller".to_string(),
        Some(group) => group.to_string(),
    }
}

/// The controller's managed policies in `text` (a `cloudformation.yaml`), in the template's
/// order.
pub fn parse(text: &str) -> Result<Vec<Policy>, ReleaseError> {
    let template: Json = serde_saphyr::from_str(text).map_err(|e| fail(format!("not YAML: {e}")))?;
    let Some(Json::Object(resources)) = template.get("Resources") else {
        return Err(fail("the template has no Resources"));
    };
    let mut policies = Vec::new();
    for (logical_id, resource) in resources {
        if resource.get("Type").and_then(Json::as_str) != Some("AWS::IAM::ManagedPolicy") {
            continue;
        }
        let properties = &resource["Properties"];
        let policy_name = properties["ManagedPolicyName"]
            .as_str()
            .ok_or_else(|| fail(format!("{logical_id}: no ManagedPolicyName")))?
            .to_string();
        // `PolicyDocument: !Sub |` holds the document as JSON text (the tag is dropped); a
        // document written as YAML is used as it is.
        let document = match &properties["PolicyDocument"] {
            Json::String(s) => serde_json::from_str(s)
                .map_err(|e| fail(format!("{logical_id}: the PolicyDocument is not JSON: {e}")))?,
            other => other.clone(),
        };
        let statements = match &document["Statement"] {
            Json::Array(s) => s
                .iter()
                .map(|st| statement(st, logical_id))
                .collect::<Result<Vec<_>, _>>()?,
            single @ Json::Object(_) => vec![statement(single, logical_id)?],
            _ => return Err(fail(format!("{logical_id}: the PolicyDocument has no Statement"))),
        };
        // The map is sorted; the template's order is where each logical ID is written.
        let position = text
            .find(&format!("\n  {logical_id}:"))
            .ok_or_else(|| fail(format!("{logical_id}: not found as a top-level resource key")))?;
        policies.push((
            position,
            Policy {
                group: group_name(logical_id),
                logical_id: logical_id.clone(),
                policy_name,
                statements,
            },
        ));
    }
    policies.sort_by_key(|(p, _)| *p);
    let policies: Vec<Policy> = policies.into_iter().map(|(_, p)| p).collect();
    if policies.is_empty() {
        return Err(fail("the template has no AWS::IAM::ManagedPolicy resource"));
    }
    let mut sids: Vec<&str> = policies
        .iter()
        .flat_map(|p| p.statements.iter().map(|s| s.sid.as_str()))
        .collect();
    sids.sort_unstable();
    if let Some(w) = sids.windows(2).find(|w| w[0] == w[1]) {
        return Err(fail(format!(
            "the Sid {} is used twice: the data format names statements by Sid",
            w[0]
        )));
    }
    for value in policies.iter().flat_map(|p| {
        p.statements.iter().flat_map(|s| {
            s.actions
                .iter()
                .chain(&s.resources)
                .chain(s.conditions.iter().flat_map(|(t, k, v)| [t, k, v]))
        })
    }) {
        if value.contains('\t') || value.contains('\n') {
            return Err(fail(format!(
                "{value:?} holds a tab or a line break, which the table cannot"
            )));
        }
    }
    Ok(policies)
}

/// The explanation at the top of every policy table.
const FORMAT: &str = "# Rows: `policy <group> <template resource> <ManagedPolicyName>`, `statement <group> <Sid> <Effect>`,\n\
# `action <Sid> <action>`, `resource <Sid> <ARN pattern>`, `condition <Sid> <operator> <key> <value>`\n\
# (one row per value). Placeholders as in the template: ${AWS::Partition}, ${AWS::Region},\n\
# ${AWS::AccountId}, ${ClusterName}, ${KarpenterNodeRole.Arn}, ${KarpenterInterruptionQueue.Arn}.";

/// The text of `data/karpenter/controller-policy/<version>.tsv` for `policies`.
pub fn render(version: &str, policies: &[Policy]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Karpenter {version}'s controller policy: the statements of the AWS::IAM::ManagedPolicy resources\n\
         # of its getting-started cloudformation.yaml, grouped as the template groups them.\n\
         # Written by scripts/karpenter-release.sh; do not edit.\n{FORMAT}"
    );
    let _ = writeln!(out, "@karpenter_version\t{version}");
    rows(&mut out, policies);
    out
}

fn rows(out: &mut String, policies: &[Policy]) {
    for p in policies {
        let _ = writeln!(out, "policy\t{}\t{}\t{}", p.group, p.logical_id, p.policy_name);
        for s in &p.statements {
            let _ = writeln!(out, "statement\t{}\t{}\t{}", p.group, s.sid, s.effect);
            for a in &s.actions {
                let _ = writeln!(out, "action\t{}\t{a}", s.sid);
            }
            for r in &s.resources {
                let _ = writeln!(out, "resource\t{}\t{r}", s.sid);
            }
            for (test, key, value) in &s.conditions {
                let _ = writeln!(out, "condition\t{}\t{test}\t{key}\t{value}", s.sid);
            }
        }
    }
}

/// An action a release adds to a statement, after another of its actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedAction {
    pub sid: String,
    pub action: String,
    pub after: String,
}

/// The policy table of `version`, made from the table of an earlier release (`from_version`,
/// `from_text`) with `added` applied, for a release whose template is not at hand; `note` says
/// where the change is described. The header says so, and how to regenerate it.
pub fn derive(
    version: &str,
    from_version: &str,
    from_text: &str,
    added: &[AddedAction],
    note: &str,
) -> Result<String, ReleaseError> {
    let mut body: Vec<String> = from_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('@') && !l.is_empty())
        .map(str::to_string)
        .collect();
    for add in added {
        let anchor = format!("action\t{}\t{}", add.sid, add.after);
        let at = body.iter().position(|l| *l == anchor).ok_or_else(|| {
            fail(format!(
                "{from_version} has no action {} in {}",
                add.after, add.sid
            ))
        })?;
        let row = format!("action\t{}\t{}", add.sid, add.action);
        if body.contains(&row) {
            return Err(fail(format!("{} already has {}", add.sid, add.action)));
        }
        body.insert(at + 1, row);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Karpenter {version}'s controller policy, derived: its cloudformation.yaml was not at hand, so this is\n\
         # {from_version}'s table with the change {version}'s documentation describes: {note}\n\
         # Regenerate it from the template when it is available:\n\
         #   scripts/karpenter-release.sh --version {version} --cloudformation <its cloudformation.yaml>\n\
         # Written by scripts/karpenter-release.sh; do not edit.\n{FORMAT}"
    );
    let _ = writeln!(out, "@karpenter_version\t{version}");
    let _ = writeln!(out, "@derived_from\t{from_version}");
    for line in body {
        let _ = writeln!(out, "{line}");
    }
    Ok(out)
}
