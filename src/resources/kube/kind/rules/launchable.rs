//! Can this pool launch anything? Checked at plan against the offline instance-type data
//! ([`crate::instance_types`]), with Karpenter's requirement semantics, for `karpenter_node_pool`
//! (self-managed and EKS Auto Mode) and the legacy `karpenter_provisioner`:
//!
//! - requirements that together match no instance type: an error naming the requirement whose
//!   addition removed the last candidates, and what the ones before it left;
//! - a `min_values` the matching types cannot meet: an error on it;
//! - `limits` under which no matching type fits (Karpenter never launches a node that would
//!   take the pool over them): a warning.
//!
//! Keys the data does not describe (capacity type, zone, os, custom labels) are left alone. A
//! value still unknown at plan (a requirement computed from another resource) skips the check.
//! A malformed requirement is left to the attribute validators.
//!
//! The data is a snapshot (Karpenter's reference of one version), and EC2 keeps adding types:
//! an `In` requirement (or a node label) naming a value no type of the data has for its key (a
//! family or type released since, or a typo) cannot be checked offline. It gets a warning
//! saying so and is left out of the checks, its `min_values` with it, so stale data never
//! blocks a valid pool; a requirement over values the data knows that empties the selection
//! stays an error.

use crate::instance_types::requirements::{Operator, Requirement};
use crate::instance_types::selection::{self, LimitMiss};
use crate::instance_types::{Flavor, InstanceType, catalog, described, quantity};
use crate::resources::kube::kind::rules::numbers::quantity_text;
use crate::terraform::framework::{Diagnostics, Severity};
use crate::terraform::tfvalue::{AttributePath, Value};

/// Where a requirement the pool applies comes from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// An element of the requirements list.
    Requirement(usize),
    /// A node label of the template: Karpenter requires it of every node it launches.
    Label(String),
    /// A requirement added by Karpenter itself (the legacy webhook's defaults), and why.
    Default(String),
}

/// What the check needs of a pool's configuration.
#[derive(Debug)]
pub struct Pool<'a> {
    pub requirements: &'a Value,
    pub requirements_path: AttributePath,
    /// The node labels (a map) and their path, where the kind has them.
    pub labels: Option<(&'a Value, AttributePath)>,
    /// Requirements Karpenter adds after the written ones, with why.
    pub defaults: Vec<(Requirement, String)>,
    /// The limits (a map of quantities) and their path.
    pub limits: Option<(&'a Value, AttributePath)>,
    pub flavor: Flavor,
}

/// The requirements as written, `None` while any part is unknown.
pub fn written_requirements(list: &Value) -> Option<Vec<Requirement>> {
    if list.is_null() {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    for r in list.as_elements()? {
        if r.is_null() {
            continue;
        }
        let key = r.get("key")?.as_str()?;
        let operator = Operator::parse(r.get("operator")?.as_str()?)?;
        let values = match r.get("values") {
            None => Vec::new(),
            Some(v) if v.is_null() => Vec::new(),
            Some(v) => v
                .as_elements()?
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()?,
        };
        let min_values = match r.get("min_values") {
            None => None,
            Some(m) if m.is_null() => None,
            Some(m) => Some(u32::try_from(m.as_number()?.as_i64()?).ok()?),
        };
        out.push(Requirement {
            key: key.to_string(),
            operator,
            values,
            min_values,
        });
    }
    Some(out)
}

/// The node labels as `In [value]` requirements (with their keys), `None` while unknown.
fn label_requirements(labels: &Value) -> Option<Vec<(Requirement, String)>> {
    if labels.is_null() {
        return Some(Vec::new());
    }
    labels
        .as_entries()?
        .iter()
        .map(|(k, v)| {
            Some((
                Requirement::new(k.clone(), Operator::In, &[v.as_str()?]),
                k.clone(),
            ))
        })
        .collect()
}

/// At most five names, then how many more.
fn some_names<T: InstanceType>(types: &[&T]) -> String {
    let mut names: Vec<String> = types.iter().take(5).map(|t| t.name().to_string()).collect();
    if types.len() > 5 {
        names.push(format!("and {} more", types.len() - 5));
    }
    names.join(", ")
}

/// Whether `diags` already hold an error on the requirements or the labels: a value Karpenter
/// refuses anyway (an unknown architecture, a key Auto Mode does not set) is said once, there,
/// not again as "matches nothing".
pub fn already_refused(pool: &Pool<'_>, diags: &Diagnostics) -> bool {
    let mut prefixes = vec![&pool.requirements_path];
    if let Some((_, path)) = &pool.labels {
        prefixes.push(path);
    }
    diags.iter().any(|d| {
        d.severity == Severity::Error
            && d.path
                .as_ref()
                .is_some_and(|p| prefixes.iter().any(|prefix| p.steps.starts_with(&prefix.steps)))
    })
}

/// Runs the three checks on `pool` (none when the requirements or labels already have an
/// error).
pub fn check(pool: &Pool<'_>, diags: &mut Diagnostics) {
    if already_refused(pool, diags) {
        return;
    }
    let Some(written) = written_requirements(pool.requirements) else {
        return;
    };
    let labels = match &pool.labels {
        Some((labels, _)) => match label_requirements(labels) {
            Some(l) => l,
            None => return,
        },
        None => Vec::new(),
    };
    let mut all: Vec<Requirement> = written.clone();
    let mut origins: Vec<Origin> = (0..written.len()).map(Origin::Requirement).collect();
    for (r, key) in labels {
        all.push(r);
        origins.push(Origin::Label(key));
    }
    for (r, why) in &pool.defaults {
        all.push(r.clone());
        origins.push(Origin::Default(why.clone()));
    }
    let (all, origins) = set_aside_unseen(pool, all, origins, diags);
    let types = catalog::all();
    let Some(selected) = selection::select(types, &all, pool.flavor) else {
        return;
    };
    if selected.is_empty() {
        no_match(pool, &all, &origins, diags);
        return;
    }
    for short in selection::min_values_short(&selected, &all, pool.flavor) {
        let found: Vec<&str> = short.found.iter().map(String::as_str).collect();
        let Some(Origin::Requirement(i)) = origins.get(short.index) else {
            continue;
        };
        diags.error_at(
            &pool.requirements_path.index(*i).attr("min_values"),
            "min_values cannot be met",
            format!(
                "min_values = {} asks for at least {} different values of {} among the instance types the pool can \
                 launch, but the {} instance types these requirements match have {}{}{}. With Karpenter's default \
                 minValuesPolicy (Strict) the pool launches no node. Lower min_values, or widen the requirements. \
                 {} {ON_PURPOSE}",
                short.wanted,
                short.wanted,
                short.key,
                selected.len(),
                match found.len() {
                    0 => "none".to_string(),
                    1 => "only 1".to_string(),
                    n => format!("only {n}"),
                },
                if found.is_empty() { "" } else { ": " },
                found.join(", "),
                checked(),
            ),
        );
    }
    if let Some((limits, path)) = &pool.limits {
        check_limits(&selected, limits, path, diags);
    }
}

/// The values of an `In` requirement on a described key that no type of the data has.
fn unseen_values(r: &Requirement, flavor: Flavor) -> Vec<&str> {
    if r.operator != Operator::In {
        return Vec::new();
    }
    let Some(index) = described(&r.key, flavor) else {
        return Vec::new();
    };
    r.values
        .iter()
        .map(String::as_str)
        .filter(|v| !catalog::has_value(index, v))
        .collect()
}

/// Leaves out of the checks every requirement (or node label) that names a value the data has
/// never seen for its key, with a warning on it that it cannot be checked (see the module
/// comment); returns the rest with their origins.
fn set_aside_unseen(
    pool: &Pool<'_>,
    all: Vec<Requirement>,
    origins: Vec<Origin>,
    diags: &mut Diagnostics,
) -> (Vec<Requirement>, Vec<Origin>) {
    let mut kept = (Vec::new(), Vec::new());
    for (r, origin) in all.into_iter().zip(origins) {
        let unseen = unseen_values(&r, pool.flavor);
        if unseen.is_empty() {
            kept.0.push(r);
            kept.1.push(origin);
            continue;
        }
        let (what, path) = match &origin {
            Origin::Requirement(i) => (
                format!("requirements[{i}] ({})", r.describe()),
                pool.requirements_path.index(*i),
            ),
            Origin::Label(key) => (
                format!("the node label {key}"),
                pool.labels
                    .as_ref()
                    .map_or_else(|| pool.requirements_path.clone(), |(_, p)| p.key(key.clone())),
            ),
            Origin::Default(_) => (r.describe(), pool.requirements_path.clone()),
        };
        let listed = unseen
            .iter()
            .map(|v| format!("{v:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        diags.warning_at(
            &path,
            "Not in the provider's instance-type data: not checked",
            format!(
                "{what} names {listed}, which no instance type in Karpenter {}'s reference has for {} (an instance                  type released since then, or a typo). The provider cannot check it offline, so this requirement{} is                  left out of the plan-time checks. If it is a typo, no instance type matches it and the pool launches                  nothing; data \"karpenter_instance_types\" with source = \"ec2\" shows what your region offers.",
                catalog::KARPENTER_VERSION,
                r.key,
                if r.min_values.is_some() { " and its min_values" } else { "" },
            ),
        );
    }
    kept
}

/// What the errors of this check add: the API server accepts such a pool (the CRD cannot know
/// the instance types), so the refusal is stricter than the CRD on purpose.
const ON_PURPOSE: &str = "(Stricter than the CRD on purpose: the API server accepts this pool, but Karpenter \
                          could launch no node for it.)";

/// What every diagnostic of this check says about where its knowledge comes from.
fn checked() -> String {
    format!(
        "(Checked offline against the {} instance types of Karpenter {}'s reference; keys it does not describe, such \
         as capacity type, zone and custom labels, are not part of the check.)",
        catalog::all().len(),
        catalog::KARPENTER_VERSION
    )
}

fn no_match(pool: &Pool<'_>, all: &[Requirement], origins: &[Origin], diags: &mut Diagnostics) {
    let Some(emptied) = selection::what_emptied(catalog::all(), all, pool.flavor) else {
        return;
    };
    let Some(culprit) = all.get(emptied.index) else {
        return;
    };
    let total = catalog::all().len();
    let (name, path, fix) = match origins.get(emptied.index) {
        Some(Origin::Requirement(i)) => (
            format!("requirements[{i}] ({})", culprit.describe()),
            pool.requirements_path.index(*i),
            format!("Change or remove requirements[{i}], or widen the requirements before it."),
        ),
        Some(Origin::Label(key)) => (
            format!(
                "the node label {key} = {:?} (Karpenter requires a pool's labels of every node it launches)",
                culprit.values.first().map(String::as_str).unwrap_or_default()
            ),
            pool.labels
                .as_ref()
                .map_or_else(|| pool.requirements_path.clone(), |(_, p)| p.key(key.clone())),
            format!("Change or remove the label {key}, or the requirements that exclude it."),
        ),
        Some(Origin::Default(why)) => (
            format!("{} ({why})", culprit.describe()),
            pool.requirements_path.clone(),
            format!(
                "Add a requirement on {} (or on another key that stops the default) so the default is not added.",
                culprit.key
            ),
        ),
        None => return,
    };
    let before = if emptied.before.len() == total {
        format!("every one of the {total} instance types")
    } else {
        format!(
            "the last {} instance types that the requirements before it left ({})",
            emptied.before.len(),
            some_names(&emptied.before)
        )
    };
    diags.error_at(
        &path,
        "No instance type matches these requirements",
        format!(
            "Together the pool's requirements match no instance type: {name} removed {before}. Karpenter would \
             launch no node for this pool, and pods that need it would stay Pending. {fix} {} {ON_PURPOSE}",
            checked()
        ),
    );
}

fn check_limits<T: InstanceType>(
    selected: &[&T],
    limits: &Value,
    path: &AttributePath,
    diags: &mut Diagnostics,
) {
    let Some(entries) = limits.as_entries() else {
        return;
    };
    let known: Vec<(String, f64)> = entries
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), quantity::parse(&quantity_text(v)?)?)))
        .collect();
    for miss in selection::limit_misses(selected, &known) {
        match miss {
            LimitMiss::One {
                resource,
                smallest,
                smallest_capacity,
                ..
            } => {
                let given = entries.get(&resource).and_then(quantity_text).unwrap_or_default();
                diags.warning_at(
                    &path.key(resource.clone()),
                    "This pool can never launch a node",
                    format!(
                        "The limit {resource} = {given:?} is smaller than every instance type the requirements match: \
                         the smallest, {smallest}, has {} {resource}{}. Karpenter launches no node that would take \
                         the pool over its limits, so this pool launches none. Raise the limit or allow smaller \
                         instance types (a pool paused on purpose with a zero limit can ignore this). {}",
                        quantity::text(&resource, smallest_capacity),
                        if resource == "memory" {
                            " (its capacity as Karpenter counts it, less the default 7.5 % VM overhead)"
                        } else {
                            ""
                        },
                        checked()
                    ),
                );
            }
            LimitMiss::Together { resources } => diags.warning_at(
                path,
                "This pool can never launch a node",
                format!(
                    "Each of the limits on {} lets some instance type through, but none of the types the requirements \
                     match fits under all of them at once. Karpenter launches no node that would take the pool over \
                     its limits, so this pool launches none. Raise one of the limits or allow other instance types. {}",
                    resources.join(" and "),
                    checked()
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use crate::resources::kube::kind::testing::{UNKNOWN, config, diagnose, error_paths};
    use crate::resources::kube::v1::{NODE_POOL, validate_node_pool};
    use crate::resources::kube::v1alpha5::{PROVISIONER, validate_provisioner};
    use crate::terraform::framework::{Diagnostics, Severity};

    fn pool(group: &str, requirements: Json, limits: Json, labels: Json) -> Diagnostics {
        let kind = if group == "eks.amazonaws.com" {
            "NodeClass"
        } else {
            "EC2NodeClass"
        };
        let j = json!({
            "name": "p",
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "node_class_ref": {"group": group, "kind": kind, "name": "c"},
                    "requirements": requirements,
                },
            },
            "limits": limits,
        });
        diagnose(&NODE_POOL, validate_node_pool, &config(&NODE_POOL, &j))
    }

    fn self_managed(requirements: Json) -> Diagnostics {
        pool("karpenter.k8s.aws", requirements, Json::Null, Json::Null)
    }

    fn req(key: &str, op: &str, values: &[&str]) -> Json {
        json!({"key": key, "operator": op, "values": values})
    }

    fn warnings(d: &Diagnostics) -> Vec<String> {
        d.iter()
            .filter(|x| x.severity == Severity::Warning)
            .map(|x| x.path.as_ref().map(ToString::to_string).unwrap_or_default())
            .collect()
    }

    fn detail(d: &Diagnostics) -> String {
        d.iter().map(|x| x.detail.clone()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn the_requirement_that_emptied_the_list_carries_the_error() {
        let d = self_managed(json!([
            req("karpenter.k8s.aws/instance-category", "In", &["p"]),
            req("karpenter.sh/capacity-type", "In", &["spot"]),
            req("kubernetes.io/arch", "In", &["arm64"]),
        ]));
        assert_eq!(error_paths(&d), ["template.spec.requirements[2]"], "{d:?}");
        assert!(detail(&d).contains("removed the last 9 instance types"), "{d:?}");
        // The first requirement alone can be the one.
        let d = self_managed(json!([req("karpenter.k8s.aws/instance-cpu", "Gt", &["1000"])]));
        assert_eq!(error_paths(&d), ["template.spec.requirements[0]"]);
        assert!(
            detail(&d).contains("removed every one of the 1363 instance types"),
            "{d:?}"
        );
        // Something matches: nothing said.
        let d = self_managed(json!([req("kubernetes.io/arch", "In", &["arm64"])]));
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn a_template_label_counts_as_a_requirement() {
        let d = pool(
            "karpenter.k8s.aws",
            json!([req("karpenter.k8s.aws/instance-category", "In", &["p"])]),
            Json::Null,
            json!({"kubernetes.io/arch": "arm64", "team": "ml"}),
        );
        assert_eq!(
            error_paths(&d),
            ["template.metadata.labels[\"kubernetes.io/arch\"]"],
            "{d:?}"
        );
    }

    #[test]
    fn unknown_values_and_values_refused_elsewhere_skip_the_check() {
        let d = self_managed(json!([
            req("karpenter.k8s.aws/instance-category", "In", &["p"]),
            {"key": "kubernetes.io/arch", "operator": "In", "values": [UNKNOWN]},
        ]));
        assert!(error_paths(&d).is_empty(), "{d:?}");
        let d = self_managed(json!([
            req("karpenter.k8s.aws/instance-category", "In", &["p"]),
            {"key": "kubernetes.io/arch", "operator": "In", "values": UNKNOWN},
        ]));
        assert!(error_paths(&d).is_empty(), "{d:?}");
        // An unknown node class group: which label names apply is not known yet.
        let mut unknown_group = pool(
            "karpenter.k8s.aws",
            json!([req("karpenter.k8s.aws/instance-cpu", "Gt", &["1000"])]),
            Json::Null,
            Json::Null,
        );
        assert!(!error_paths(&unknown_group).is_empty());
        let j = json!({
            "name": "p",
            "template": {"spec": {
                "node_class_ref": {"group": UNKNOWN, "kind": "EC2NodeClass", "name": "c"},
                "requirements": [req("karpenter.k8s.aws/instance-cpu", "Gt", &["1000"])],
            }},
        });
        unknown_group = diagnose(&NODE_POOL, validate_node_pool, &config(&NODE_POOL, &j));
        assert!(error_paths(&unknown_group).is_empty(), "{unknown_group:?}");
    }

    #[test]
    fn min_values_and_limits() {
        let d = self_managed(json!([
            req("karpenter.k8s.aws/instance-category", "In", &["c", "m"]),
            {
                "key": "karpenter.k8s.aws/instance-family", "operator": "In",
                "values": ["m5", "c5", "t3"], "min_values": 3,
            },
        ]));
        assert_eq!(
            error_paths(&d),
            ["template.spec.requirements[1].min_values"],
            "{d:?}"
        );
        let d = pool(
            "karpenter.k8s.aws",
            json!([req("karpenter.k8s.aws/instance-family", "In", &["m5"])]),
            json!({"cpu": "1", "memory": "1000Gi", "nodes": "0", "ephemeral-storage": "1Gi"}),
            Json::Null,
        );
        assert!(error_paths(&d).is_empty(), "{d:?}");
        assert_eq!(warnings(&d), ["limits[\"cpu\"]"], "{d:?}");
        assert!(detail(&d).contains("m5.large, has 2 cpu"), "{d:?}");
    }

    #[test]
    fn auto_mode_pools_use_auto_modes_names() {
        let d = pool(
            "eks.amazonaws.com",
            json!([
                req("eks.amazonaws.com/instance-category", "In", &["g"]),
                req("eks.amazonaws.com/instance-gpu-name", "In", &["h100"]),
            ]),
            Json::Null,
            Json::Null,
        );
        assert_eq!(error_paths(&d), ["template.spec.requirements[1]"], "{d:?}");
    }

    /// Values the data has never seen (a family released after the data, a new type name) cannot
    /// be checked: a warning on the requirement, which is left out (its min_values with it);
    /// values the data knows that empty the selection stay an error.
    #[test]
    fn values_the_data_has_never_seen_are_a_warning_not_an_error() {
        let d = self_managed(json!([
            req("kubernetes.io/arch", "In", &["arm64"]),
            req("karpenter.k8s.aws/instance-family", "In", &["m10g"]),
        ]));
        assert!(error_paths(&d).is_empty(), "{d:?}");
        assert_eq!(warnings(&d), ["template.spec.requirements[1]"], "{d:?}");
        assert!(
            detail(&d).contains("\"m10g\"") && detail(&d).contains("v1.14"),
            "{d:?}"
        );
        // Partly unseen, with min_values: still not checked.
        let d = self_managed(json!([{
            "key": "karpenter.k8s.aws/instance-family", "operator": "In",
            "values": ["m7g", "m10g"], "min_values": 2,
        }]));
        assert!(error_paths(&d).is_empty(), "{d:?}");
        assert!(detail(&d).contains("and its min_values"), "{d:?}");
        // A new instance type name, on an Auto Mode pool, and as a node label.
        let d = pool(
            "eks.amazonaws.com",
            json!([req("node.kubernetes.io/instance-type", "In", &["m10g.large"])]),
            Json::Null,
            Json::Null,
        );
        assert!(error_paths(&d).is_empty() && warnings(&d).len() == 1, "{d:?}");
        let d = pool(
            "karpenter.k8s.aws",
            json!([req("kubernetes.io/arch", "In", &["amd64"])]),
            Json::Null,
            json!({"karpenter.k8s.aws/instance-family": "m10g"}),
        );
        assert!(error_paths(&d).is_empty(), "{d:?}");
        assert_eq!(
            warnings(&d),
            ["template.metadata.labels[\"karpenter.k8s.aws/instance-family\"]"],
            "{d:?}"
        );
        // Known values that together match nothing: the error stays.
        let d = self_managed(json!([
            req("kubernetes.io/arch", "In", &["arm64"]),
            req("karpenter.k8s.aws/instance-family", "In", &["m5"]),
        ]));
        assert_eq!(error_paths(&d), ["template.spec.requirements[1]"], "{d:?}");
        assert!(warnings(&d).is_empty(), "{d:?}");
        // An unseen value beside a known-but-incompatible requirement: the error is on the latter.
        let d = self_managed(json!([
            req("karpenter.k8s.aws/instance-family", "In", &["m10g"]),
            req("kubernetes.io/arch", "In", &["arm64"]),
            req("karpenter.k8s.aws/instance-category", "In", &["p"]),
        ]));
        assert_eq!(error_paths(&d), ["template.spec.requirements[2]"], "{d:?}");
        // NotIn of an unseen value excludes nothing the data has: nothing to say.
        let d = self_managed(json!([req(
            "karpenter.k8s.aws/instance-family",
            "NotIn",
            &["m10g"]
        )]));
        assert!(d.is_empty(), "{d:?}");
    }

    /// Previous generations and types without a price are valid choices: no diagnostic.
    #[test]
    fn previous_generations_and_unpriced_types_say_nothing() {
        for requirements in [
            json!([req("karpenter.k8s.aws/instance-generation", "Lt", &["3"])]),
            json!([req(
                "karpenter.k8s.aws/instance-family",
                "In",
                &["hpc7a", "x8aedz"]
            )]),
        ] {
            let d = self_managed(requirements.clone());
            assert!(d.is_empty(), "{requirements}: {d:?}");
        }
    }

    #[test]
    fn a_provisioner_meets_its_webhooks_defaults() {
        let j = json!({
            "name": "gpu",
            "provider_ref": {"name": "default"},
            "requirements": [req("karpenter.k8s.aws/instance-gpu-count", "Gt", &["0"])],
        });
        let d = diagnose(&PROVISIONER, validate_provisioner, &config(&PROVISIONER, &j));
        assert_eq!(error_paths(&d), ["requirements"], "{d:?}");
        assert!(detail(&d).contains("webhook adds"), "{d:?}");
    }
}
