//! Which attributes a plan changes, and what each change does to the running nodes under
//! Karpenter's drift rules ([`DriftRules`]). Pure: prior and planned values in, a list
//! of [`Change`]s out. Values are compared as Karpenter hashes them: on their API form, lists as
//! sets (the hash treats every slice as a set), durations by their length (`1h` is `60m`),
//! requirements without `minValues` (which never drifts a node).

use serde_json::Value as Json;

use super::rules::{DriftRules, Scope};
use crate::resources::kube::v1::ec2_node_class::ami_family::{self, AmiFamily};
use crate::terraform::framework::convert::to_wire;
use crate::terraform::framework::schema::{Attribute, Schema};
use crate::terraform::framework::validate::parse_go_duration;
use crate::terraform::tfvalue::{AttributePath, Value};

/// What a changed attribute does to the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// A hashed field: Karpenter drifts every NodeClaim that carries the object's current hash.
    Static,
    /// The pool's requirements: Karpenter drifts the NodeClaims whose labels no longer meet them.
    Requirements,
    /// A selector the node class resolves (subnets, security groups, AMIs, capacity
    /// reservations): Karpenter drifts the nodes whose resolved values no longer match, which
    /// the plan cannot tell.
    Dynamic,
}

/// One changed attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: AttributePath,
    pub effect: Effect,
    /// False when the planned value is not known until apply: it may or may not change.
    pub known: bool,
}

/// NodePool template fields Karpenter hashes as durations (their length, not their spelling).
const DURATIONS: &[&str] = &["expireAfter", "terminationGracePeriod"];

/// The changes of `planned` over `prior` that can drift nodes (behavioural ones are left out).
pub fn changes(rules: &DriftRules, schema: &Schema, prior: &Value, planned: &Value) -> Vec<Change> {
    match &rules.scope {
        Scope::Pool => pool_changes(schema, prior, planned),
        Scope::Class(class) => {
            let mut out = Vec::new();
            for a in schema.attributes.iter().filter(|a| a.is_settable()) {
                let Some(field) = a.wire_field() else { continue };
                if class.ignored.contains(&field.as_str()) {
                    continue;
                }
                let effect = if field.ends_with("SelectorTerms") {
                    Effect::Dynamic
                } else {
                    Effect::Static
                };
                let path = AttributePath::root().attr(a.name);
                if let Some(known) = differs(a, prior.get(a.name), planned.get(a.name), false) {
                    out.push(Change { path, effect, known });
                }
            }
            if class.resolved_ami_family
                && let Some(change) = ami_family_change(prior, planned)
            {
                // The family a selector change resolves to is hashed: the change is static.
                out.retain(|c| c.path != change.path);
                out.push(change);
            }
            out
        }
    }
}

/// A NodePool: everything under `template` is hashed but `template.spec.requirements`, which
/// drifts by the labels of each node; nothing outside `template` drifts (`disruption`,
/// `limits`, `weight`, `replicas`).
fn pool_changes(schema: &Schema, prior: &Value, planned: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    let Some(template) = schema.attribute("template") else {
        return out;
    };
    let root = AttributePath::root().attr("template");
    if planned.get("template").is_some_and(Value::is_unknown) {
        out.push(Change {
            path: root,
            effect: Effect::Static,
            known: false,
        });
        return out;
    }
    for part in template.nested().map(|(_, a)| a).unwrap_or_default() {
        let children = part.nested().map(|(_, a)| a).unwrap_or_default();
        let at = |v: &Value| v.get("template").and_then(|t| t.get(part.name)).cloned();
        let (prior_part, planned_part) = (at(prior), at(planned));
        if planned_part.as_ref().is_some_and(Value::is_unknown) {
            out.push(Change {
                path: root.attr(part.name),
                effect: Effect::Static,
                known: false,
            });
            continue;
        }
        for a in children.iter().filter(|a| a.is_settable()) {
            let requirements = part.name == "spec" && a.name == "requirements";
            let effect = if requirements {
                Effect::Requirements
            } else {
                Effect::Static
            };
            let field = a.wire_field().unwrap_or_default();
            let old = prior_part.as_ref().and_then(|p| p.get(a.name));
            let new = planned_part.as_ref().and_then(|p| p.get(a.name));
            if let Some(known) = differs(a, old, new, DURATIONS.contains(&field.as_str())) {
                out.push(Change {
                    path: root.attr(part.name).attr(a.name),
                    effect,
                    known,
                });
            }
        }
    }
    out
}

/// `None` when the values hash alike; `Some(true)` when they differ; `Some(false)` when the
/// planned value is not known yet.
fn differs(a: &Attribute, prior: Option<&Value>, planned: Option<&Value>, duration: bool) -> Option<bool> {
    let planned = planned.unwrap_or(&Value::Null);
    if !planned.is_wholly_known() {
        return Some(false);
    }
    let old = hashed_form(a, prior.unwrap_or(&Value::Null), duration);
    let new = hashed_form(a, planned, duration);
    (old != new).then_some(true)
}

/// The value as Karpenter hashes it: the API form, lists as sets, durations as seconds,
/// `minValues` left out.
fn hashed_form(a: &Attribute, v: &Value, duration: bool) -> Json {
    let holder = Value::Object([(a.name.to_string(), v.clone())].into_iter().collect());
    let wire = to_wire(std::slice::from_ref(a), &holder, &AttributePath::root())
        .ok()
        .and_then(|mut m| a.wire_field().and_then(|f| m.remove(&f)))
        .unwrap_or(Json::Null);
    if duration && let Some(text) = wire.as_str() {
        return duration_seconds(text).map_or(Json::Null, Json::from);
    }
    canonical(wire)
}

/// Lists sorted (Karpenter hashes them as sets), `minValues` dropped (never hashed nor
/// compared by the requirement check).
fn canonical(j: Json) -> Json {
    match j {
        Json::Array(items) => {
            let mut items: Vec<Json> = items.into_iter().map(canonical).collect();
            items.sort_by_cached_key(Json::to_string);
            Json::Array(items)
        }
        Json::Object(m) => Json::Object(
            m.into_iter()
                .filter(|(k, v)| k != "minValues" && !v.is_null())
                .map(|(k, v)| (k, canonical(v)))
                .collect(),
        ),
        other => other,
    }
}

/// The length of a Karpenter duration (`1h30m`, `45s`) in whole seconds, read as Go reads it
/// ([`parse_go_duration`]); `None` for `Never` (which Karpenter holds as no duration) or an
/// unreadable text.
pub fn duration_seconds(text: &str) -> Option<u64> {
    parse_go_duration(text).map(|d| d.as_secs())
}

/// The AMI family Karpenter hashes for an EC2NodeClass, lower-case ([`ami_family::resolve`]:
/// `ami_family`, else the first alias's family, else `custom`). `None` while unknown.
fn resolved_ami_family(v: &Value) -> Option<String> {
    match ami_family::resolve(v) {
        AmiFamily::Unset => Some("custom".to_string()),
        family => family.name().map(str::to_ascii_lowercase),
    }
}

/// A change of the resolved AMI family, on the attribute that makes it.
fn ami_family_change(prior: &Value, planned: &Value) -> Option<Change> {
    let old = resolved_ami_family(prior);
    let new = resolved_ami_family(planned);
    if old == new && new.is_some() {
        return None;
    }
    let family_set = |v: &Value| v.get("ami_family").is_some_and(|f| !f.is_null());
    let attribute = if family_set(prior) || family_set(planned) {
        "ami_family"
    } else {
        "ami_selector_terms"
    };
    Some(Change {
        path: AttributePath::root().attr(attribute),
        effect: Effect::Static,
        known: new.is_some(),
    })
}
