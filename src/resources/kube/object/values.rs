//! From stored objects to Terraform values and back: the managed metadata, the defaults the
//! cluster lacks, status kept unless the spec changes, merging what is known, and the path of
//! a wire field in the schema.

use std::collections::BTreeMap;

use kube::api::DynamicObject;
use serde_json::{Map, Value as Json};

use crate::terraform::framework::schema::{Attribute, Nesting};
use crate::terraform::framework::values::object;
use crate::terraform::tfvalue::{AttributePath, PathStep, Value};

/// Annotation prefixes written by tools and controllers, never imported as user intent.
const FOREIGN_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/",
    "karpenter.sh/",
    "karpenter.k8s.aws/",
    // Karpenter 1.0's conversion webhook (`compatibility.karpenter.sh/v1beta1-...`).
    "compatibility.karpenter.sh/",
    // This provider's own marks (the create token, `k8s::ownership::CREATE_TOKEN_ANNOTATION`).
    "terraform-provider-karpenter/",
];

/// Labels and annotations of the object that Terraform manages: the keys in `prior` (the
/// prior state or the plan). Keys it never set are someone else's (another tool's label,
/// Karpenter's annotations) and never show as drift; with no `metadata` in `prior` none are.
pub(super) fn managed_metadata(obj: &DynamicObject, prior: &Value) -> Value {
    if prior.is_null() {
        return Value::Null;
    }
    let pick = |part: &str, actual: &Option<BTreeMap<String, String>>| -> Value {
        let actual = actual.clone().unwrap_or_default();
        match prior.get(part) {
            Some(Value::Map(managed)) => Value::Map(
                actual
                    .into_iter()
                    .filter(|(k, _)| managed.contains_key(k))
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            ),
            _ => Value::Null,
        }
    };
    object([
        ("labels", pick("labels", &obj.metadata.labels)),
        ("annotations", pick("annotations", &obj.metadata.annotations)),
    ])
}

/// On import or move: the labels and annotations a user would have written (everything but
/// what tools and controllers write), `null` when there are none.
pub(super) fn adopted_metadata(obj: &DynamicObject) -> Value {
    let pick = |actual: &Option<BTreeMap<String, String>>| -> Value {
        let kept: BTreeMap<String, Value> = actual
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| !FOREIGN_ANNOTATIONS.iter().any(|p| k.starts_with(p)))
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        if kept.is_empty() {
            Value::Null
        } else {
            Value::Map(kept)
        }
    };
    let labels = pick(&obj.metadata.labels);
    let annotations = pick(&obj.metadata.annotations);
    if labels.is_null() && annotations.is_null() {
        return Value::Null;
    }
    object([("labels", labels), ("annotations", annotations)])
}

/// A defaulted attribute whose field the stored object does not have keeps the default the
/// base (prior state) holds. Every default of our schemas is a CRD server default or belongs
/// to a required field, so a cluster whose CRD has the field always returns it; its absence
/// means the installed Karpenter is older than the field, the apply left the default out
/// ([`KubeObjectType::fit_to_cluster`]), and showing `default → null` on every plan would be
/// a perpetual diff. Walks nested single objects; the legacy kinds declare no defaults.
pub(super) fn keep_defaults_the_cluster_lacks(
    attributes: &[Attribute],
    wire: &Map<String, Json>,
    state: &mut Value,
    base: &Value,
) {
    let Value::Object(fields) = state else { return };
    for a in attributes {
        let Some(field) = a.wire_field() else { continue };
        let prior = base.get(a.name);
        match (wire.get(&field), a.nested()) {
            (None, _) => {
                if let Some(default) = a.default.as_ref()
                    && prior == Some(default)
                    && fields.get(a.name).is_none_or(Value::is_null)
                {
                    fields.insert(a.name.to_string(), default.clone());
                }
            }
            (Some(Json::Object(inner)), Some((Nesting::Single, nested))) => {
                if let (Some(here), Some(prior)) = (fields.get_mut(a.name), prior) {
                    keep_defaults_the_cluster_lacks(nested, inner, here, prior);
                }
            }
            _ => {}
        }
    }
}

/// See [`KubeObjectType`]'s `modify_plan`: on an update, the prior `status` where the planner
/// made it unknown, so a one-value change reads as one line instead of the whole status
/// rendered as removed. The apply returns it as planned; the next refresh reads what
/// Karpenter wrote since. The status fields of `follows` (`(status field, spec attributes)`)
/// whose spec attributes change are planned unknown, as the apply reads them anew.
pub(super) fn keep_prior_status(prior: &Value, planned: &mut Value, follows: &[(&str, &[&str])]) {
    if prior.is_null() {
        return;
    }
    let Value::Object(fields) = planned else { return };
    let Some(Value::Object(status)) = prior.get("status") else {
        return;
    };
    if !fields.get("status").is_some_and(Value::is_unknown) {
        return;
    }
    let mut status = status.clone();
    for (field, sources) in follows {
        if sources.iter().any(|a| fields.get(*a) != prior.get(a))
            && let Some(slot) = status.get_mut(*field)
        {
            *slot = Value::unknown();
        }
    }
    fields.insert("status".into(), Value::Object(status));
}

/// Whether a stored object has a non-empty `status`.
pub(super) fn has_status(obj: &DynamicObject) -> bool {
    obj.data
        .get("status")
        .and_then(Json::as_object)
        .is_some_and(|s| !s.is_empty())
}

/// The value at an attribute path (attributes, map keys and list indexes).
pub(super) fn value_at<'a>(value: &'a Value, path: &AttributePath) -> Option<&'a Value> {
    path.steps
        .iter()
        .try_fold(value, |here, step| match (step, here) {
            (PathStep::Attribute(n) | PathStep::ElementKeyString(n), v) => v.get(n),
            (PathStep::ElementKeyInt(i), Value::List(items) | Value::Set(items)) => {
                items.get(usize::try_from(*i).ok()?)
            }
            _ => None,
        })
}

/// The schema attribute an attribute path ends on.
pub(super) fn attribute_at<'a>(attributes: &'a [Attribute], path: &AttributePath) -> Option<&'a Attribute> {
    let mut attrs = attributes;
    let mut found = None;
    for step in &path.steps {
        if let PathStep::Attribute(name) = step {
            let a = attrs.iter().find(|a| a.name == name)?;
            attrs = a.nested().map(|(_, n)| n).unwrap_or_default();
            found = Some(a);
        }
    }
    found
}

/// The planned value wherever it is known; the actual value where the plan had an unknown.
pub fn merge_known(planned: &Value, actual: &Value) -> Value {
    match (planned, actual) {
        (Value::Unknown(_), a) => a.clone(),
        (Value::Object(p), Value::Object(a)) => Value::Object(
            p.iter()
                .map(|(k, pv)| (k.clone(), merge_known(pv, a.get(k).unwrap_or(&Value::Null))))
                .collect(),
        ),
        (Value::List(p), Value::List(a)) if p.len() == a.len() => {
            Value::List(p.iter().zip(a).map(|(x, y)| merge_known(x, y)).collect())
        }
        (Value::Set(p), Value::Set(a)) if p.len() == a.len() => {
            Value::Set(p.iter().zip(a).map(|(x, y)| merge_known(x, y)).collect())
        }
        (Value::Map(p), Value::Map(a)) => Value::Map(
            p.iter()
                .map(|(k, pv)| (k.clone(), merge_known(pv, a.get(k).unwrap_or(&Value::Null))))
                .collect(),
        ),
        (p, _) => unknowns_to_null(p),
    }
}

pub(super) fn unknowns_to_null(v: &Value) -> Value {
    match v {
        Value::Unknown(_) => Value::Null,
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), unknowns_to_null(x))).collect()),
        Value::Map(m) => Value::Map(m.iter().map(|(k, x)| (k.clone(), unknowns_to_null(x))).collect()),
        Value::List(l) => Value::List(l.iter().map(unknowns_to_null).collect()),
        Value::Set(l) => Value::Set(l.iter().map(unknowns_to_null).collect()),
        other => other.clone(),
    }
}

/// Maps an API field path (`spec.template.spec.requirements[0].operator`,
/// `metadata.labels`) to the Terraform attribute path, through the schema's wire names.
pub fn wire_path_to_attribute(attributes: &[Attribute], field: &str) -> Option<AttributePath> {
    let (mut rest, mut path) = if let Some(r) = field.strip_prefix("spec.") {
        (r, AttributePath::root())
    } else if let Some(r) = field.strip_prefix("metadata.") {
        let part = r.split(['.', '[']).next()?;
        return matches!(part, "labels" | "annotations")
            .then(|| AttributePath::root().attr("metadata").attr(part));
    } else {
        return None;
    };
    let mut attrs = attributes;
    loop {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let segment = &rest[..end];
        let attribute = attrs
            .iter()
            .find(|a| a.wire_field().as_deref() == Some(segment))?;
        path = path.attr(attribute.name);
        rest = &rest[end..];
        while let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']')?;
            let index = &r[..close];
            path = match index.parse::<usize>() {
                Ok(i) => path.index(i),
                Err(_) => path.key(index.trim_matches('"').to_string()),
            };
            rest = &r[close + 1..];
        }
        rest = match rest.strip_prefix('.') {
            Some(r) => r,
            None => return Some(path),
        };
        attrs = match attribute.nested() {
            Some((_, nested)) => nested,
            None => return Some(path),
        };
    }
}

/// A namespace name: a DNS-1123 label (at most 63 characters, no dots).
pub(super) fn valid_namespace(name: &str) -> bool {
    name.len() <= 63 && !name.contains('.') && valid_object_name(name)
}

pub(super) fn valid_object_name(name: &str) -> bool {
    (1..=253).contains(&name.len())
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
}
