//! The NodePool rules of EKS Auto Mode, checked at plan. A pool is an Auto Mode pool when its
//! `node_class_ref` names the `eks.amazonaws.com` group (EKS's `NodeClass`, not Karpenter's
//! `EC2NodeClass`). Such a pool:
//! - names kind `NodeClass` (and a `NodeClass` reference names `eks.amazonaws.com`);
//! - is not one of the pools EKS manages itself (`general-purpose`, `system`);
//! - selects instances by Auto Mode's labels: `eks.amazonaws.com/instance-…` where self-managed
//!   Karpenter has `karpenter.k8s.aws/instance-…`, with the values and the numeric operators the
//!   EKS user guide's label table allows.
//!
//! The opposite mistake, Auto Mode's labels on a pool of an EC2NodeClass, matches no instance
//! type (self-managed Karpenter does not set them); it gets a warning.

use super::rules::elements;
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

/// The API group of Auto Mode's node class.
pub const EKS_GROUP: &str = "eks.amazonaws.com";
/// The pools EKS creates and manages on an Auto Mode cluster.
pub const BUILT_IN_POOLS: &[&str] = &["general-purpose", "system"];

/// Auto Mode's instance labels (`eks.amazonaws.com/<name>`), and whether each is a number (so
/// `Gt`, `Lt`, `Gte`, `Lte` apply).
const AUTO_MODE_LABELS: &[(&str, bool)] = &[
    ("instance-category", false),
    ("instance-family", false),
    ("instance-generation", true),
    ("instance-size", false),
    ("instance-cpu", true),
    ("instance-cpu-manufacturer", false),
    ("instance-cpu-sustained-clock-speed-mhz", true),
    ("instance-memory", true),
    ("instance-ebs-bandwidth", true),
    ("instance-network-bandwidth", true),
    ("instance-gpu-name", false),
    ("instance-gpu-manufacturer", false),
    ("instance-gpu-count", true),
    ("instance-gpu-memory", true),
    ("instance-local-nvme", true),
    ("instance-hypervisor", false),
    ("instance-encryption-in-transit-supported", false),
    ("compute-type", false),
];

/// Well-known keys whose values Auto Mode limits: Linux only, two architectures, three capacity
/// types, three CPU makers, Nitro only.
const ALLOWED_VALUES: &[(&str, &[&str])] = &[
    ("kubernetes.io/os", &["linux"]),
    ("kubernetes.io/arch", &["amd64", "arm64"]),
    ("karpenter.sh/capacity-type", &["on-demand", "spot", "reserved"]),
    (
        "eks.amazonaws.com/instance-cpu-manufacturer",
        &["aws", "intel", "amd"],
    ),
    ("eks.amazonaws.com/instance-hypervisor", &["nitro"]),
];

const NUMERIC_OPERATORS: &[&str] = &["Gt", "Lt", "Gte", "Lte"];

fn node_class_ref(config: &Value) -> Option<&Value> {
    config.get("template")?.get("spec")?.get("node_class_ref")
}

fn ref_path() -> AttributePath {
    AttributePath::root()
        .attr("template")
        .attr("spec")
        .attr("node_class_ref")
}

/// Whether the pool is an Auto Mode pool: `Some(true)` when its node class is in
/// `eks.amazonaws.com`, `None` while the group is unknown.
pub fn is_auto_mode(config: &Value) -> Option<bool> {
    let reference = node_class_ref(config)?;
    if reference.is_unknown() {
        return None;
    }
    match reference.get("group") {
        Some(g) if g.is_unknown() => None,
        Some(g) => Some(g.as_str() == Some(EKS_GROUP)),
        None => Some(false),
    }
}

/// The Auto Mode rules (see the module comment) for a pool's configuration.
pub fn validate(config: &Value, diags: &mut Diagnostics) {
    check_group_and_kind(config, diags);
    let auto_mode = is_auto_mode(config);
    if auto_mode == Some(true)
        && let Some(name) = config.get("name").and_then(Value::as_str)
        && BUILT_IN_POOLS.contains(&name)
    {
        diags.error_at(
            &AttributePath::root().attr("name"),
            "Invalid attribute value",
            format!(
                "{name:?} is one of the node pools EKS Auto Mode creates and manages itself (general-purpose, system): \
                 EKS would overwrite or remove a pool of that name. Give the pool another name; to change or turn \
                 off the built-in pools, use compute_config.node_pools on the cluster."
            ),
        );
    }
    let Some(auto_mode) = auto_mode else { return };
    let requirements = config
        .get("template")
        .and_then(|t| t.get("spec"))
        .and_then(|s| s.get("requirements"))
        .unwrap_or(&Value::Null);
    let path = AttributePath::root()
        .attr("template")
        .attr("spec")
        .attr("requirements");
    for (i, requirement) in elements(requirements).iter().enumerate() {
        let Some(key) = requirement.get("key").and_then(Value::as_str) else {
            continue;
        };
        let here = path.index(i);
        if auto_mode {
            check_auto_mode_requirement(key, requirement, &here, diags);
        } else if key.starts_with("eks.amazonaws.com/") {
            diags.warning_at(
                &here.attr("key"),
                "An EKS Auto Mode label on a self-managed Karpenter pool",
                format!(
                    "{key:?} is set on nodes by EKS Auto Mode, not by the Karpenter this pool's EC2NodeClass belongs \
                     to, so no instance type matches it. Use {:?} here, or point node_class_ref at an \
                     eks.amazonaws.com NodeClass.",
                    key.replacen("eks.amazonaws.com/", "karpenter.k8s.aws/", 1)
                ),
            );
        }
    }
}

/// `eks.amazonaws.com` has one node class kind, `NodeClass`, and `NodeClass` is not in
/// `karpenter.k8s.aws`. (Other kinds in `karpenter.k8s.aws` are left alone: the API server
/// accepts any kind there, and Karpenter reports a kind it does not serve in NodeClassReady.)
fn check_group_and_kind(config: &Value, diags: &mut Diagnostics) {
    let Some(reference) = node_class_ref(config) else {
        return;
    };
    let (Some(group), Some(kind)) = (
        reference.get("group").and_then(Value::as_str),
        reference.get("kind").and_then(Value::as_str),
    ) else {
        return;
    };
    let expected = match (group, kind) {
        (EKS_GROUP, _) => "NodeClass",
        ("karpenter.k8s.aws", "NodeClass") => "EC2NodeClass",
        _ => return,
    };
    if kind != expected {
        diags.error_at(
            &ref_path().attr("kind"),
            "Invalid attribute value",
            format!(
                "The node class group {group:?} has the kind {expected:?}, not {kind:?}: EKS Auto Mode's node class \
                 is group = \"eks.amazonaws.com\", kind = \"NodeClass\"; self-managed Karpenter's is group = \
                 \"karpenter.k8s.aws\", kind = \"EC2NodeClass\"."
            ),
        );
    }
}

fn check_auto_mode_requirement(
    key: &str,
    requirement: &Value,
    here: &AttributePath,
    diags: &mut Diagnostics,
) {
    let key_path = here.attr("key");
    if let Some(rest) = key.strip_prefix("karpenter.k8s.aws/") {
        let instead = AUTO_MODE_LABELS
            .iter()
            .find(|(name, _)| *name == rest)
            .map_or_else(
                || "Auto Mode has no label for it; remove the requirement".to_string(),
                |(name, _)| format!("use \"eks.amazonaws.com/{name}\" instead"),
            );
        diags.error_at(
            &key_path,
            "Invalid attribute value",
            format!(
                "{key:?} is a label of self-managed Karpenter; EKS Auto Mode does not set it, so this pool would \
                 match no instance type: {instead}."
            ),
        );
        return;
    }
    let operator = requirement.get("operator").and_then(Value::as_str);
    if let Some(rest) = key.strip_prefix("eks.amazonaws.com/") {
        match AUTO_MODE_LABELS.iter().find(|(name, _)| *name == rest) {
            None => diags.warning_at(
                &key_path,
                "Not an EKS Auto Mode label",
                format!(
                    "{key:?} is not among the instance labels the EKS user guide lists for Auto Mode (eks.amazonaws.com/{}); \
                     unless EKS added it since, no node has it.",
                    AUTO_MODE_LABELS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", eks.amazonaws.com/")
                ),
            ),
            Some((_, false)) if operator.is_some_and(|o| NUMERIC_OPERATORS.contains(&o)) => diags.error_at(
                &here.attr("operator"),
                "Invalid attribute value",
                format!(
                    "{key:?} is not a number, so {} cannot compare it: use In or NotIn.",
                    operator.unwrap_or_default()
                ),
            ),
            Some(_) => {}
        }
    }
    let Some((_, allowed)) = ALLOWED_VALUES.iter().find(|(k, _)| *k == key) else {
        return;
    };
    if operator != Some("In") {
        return;
    }
    for (j, value) in elements(requirement.get("values").unwrap_or(&Value::Null))
        .iter()
        .enumerate()
    {
        if let Some(v) = value.as_str()
            && !allowed.contains(&v)
        {
            diags.error_at(
                &here.attr("values").index(j),
                "Invalid attribute value",
                format!(
                    "EKS Auto Mode offers no {v:?} for {key:?}; it offers {}.",
                    allowed
                        .iter()
                        .map(|a| format!("{a:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::super::{NODE_POOL, validate_node_pool};
    use crate::resources::kube::v1::testing::{config, diagnose, error_paths};
    use crate::terraform::framework::Diagnostics;

    fn pool(name: &str, group: &str, kind: &str, requirements: Json) -> Json {
        json!({
            "name": name,
            "template": {"spec": {
                "node_class_ref": {"group": group, "kind": kind, "name": "private"},
                "requirements": requirements,
            }},
        })
    }

    fn auto(requirements: Json) -> Json {
        pool("batch", "eks.amazonaws.com", "NodeClass", requirements)
    }

    fn check(json: &Json) -> Diagnostics {
        diagnose(&NODE_POOL, validate_node_pool, &config(&NODE_POOL, json))
    }

    fn warnings(d: &Diagnostics) -> usize {
        d.iter()
            .filter(|d| d.severity == crate::terraform::framework::diagnostics::Severity::Warning)
            .count()
    }

    #[test]
    fn the_guides_auto_mode_pool_is_valid() {
        let ok = auto(json!([
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
            {"key": "eks.amazonaws.com/instance-category", "operator": "In", "values": ["c", "m", "r"]},
            {"key": "eks.amazonaws.com/instance-generation", "operator": "Gt", "values": ["4"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
            {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]},
        ]));
        let d = check(&ok);
        assert!(error_paths(&d).is_empty() && warnings(&d) == 0, "{d:?}");
        // The built-in class by name is fine.
        let mut built_in = ok.clone();
        built_in["template"]["spec"]["node_class_ref"]["name"] = json!("default");
        assert!(error_paths(&check(&built_in)).is_empty());
    }

    #[test]
    fn each_auto_mode_rule_fails_on_its_attribute() {
        let req = |key: &str, op: &str, values: Json| json!([{"key": key, "operator": op, "values": values}]);
        let cases: Vec<(Json, &str)> = vec![
            (
                pool("system", "eks.amazonaws.com", "NodeClass", json!([])),
                "name",
            ),
            (
                pool("general-purpose", "eks.amazonaws.com", "NodeClass", json!([])),
                "name",
            ),
            (
                pool("p", "eks.amazonaws.com", "EC2NodeClass", json!([])),
                "template.spec.node_class_ref.kind",
            ),
            (
                pool("p", "karpenter.k8s.aws", "NodeClass", json!([])),
                "template.spec.node_class_ref.kind",
            ),
            (
                auto(req("karpenter.k8s.aws/instance-family", "In", json!(["m5"]))),
                "template.spec.requirements[0].key",
            ),
            (
                auto(req(
                    "karpenter.k8s.aws/instance-hypervisor",
                    "In",
                    json!(["nitro"]),
                )),
                "template.spec.requirements[0].key",
            ),
            (
                auto(req("kubernetes.io/os", "In", json!(["linux", "windows"]))),
                "template.spec.requirements[0].values[1]",
            ),
            (
                auto(req("kubernetes.io/arch", "In", json!(["arm"]))),
                "template.spec.requirements[0].values[0]",
            ),
            (
                auto(req("eks.amazonaws.com/instance-category", "Gt", json!(["4"]))),
                "template.spec.requirements[0].operator",
            ),
            (
                auto(req(
                    "eks.amazonaws.com/instance-cpu-manufacturer",
                    "In",
                    json!(["arm"]),
                )),
                "template.spec.requirements[0].values[0]",
            ),
        ];
        for (j, path) in cases {
            assert_eq!(error_paths(&check(&j)), vec![path.to_string()], "{j}");
        }
    }

    #[test]
    fn the_suggestion_names_the_auto_mode_label() {
        let d = check(&auto(
            json!([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}]),
        ));
        let text = format!("{d:?}");
        assert!(text.contains("eks.amazonaws.com/instance-family"), "{text}");
    }

    #[test]
    fn self_managed_pools_keep_their_names_and_get_a_warning_for_auto_mode_labels() {
        let p = pool(
            "system",
            "karpenter.k8s.aws",
            "EC2NodeClass",
            json!([{"key": "eks.amazonaws.com/instance-family", "operator": "In", "values": ["m5"]}]),
        );
        let d = check(&p);
        assert!(error_paths(&d).is_empty(), "{d:?}");
        assert_eq!(warnings(&d), 1, "{d:?}");
        // An unknown group decides nothing.
        let mut unknown =
            auto(json!([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}]));
        unknown["template"]["spec"]["node_class_ref"]["group"] = json!("<unknown>");
        assert!(error_paths(&check(&unknown)).is_empty());
    }
}
