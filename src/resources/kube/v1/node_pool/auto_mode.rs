//! The NodePool rules of EKS Auto Mode, checked at plan. A pool is an Auto Mode pool when its
//! `node_class_ref` names the `eks.amazonaws.com` group (EKS's `NodeClass`, not Karpenter's
//! `EC2NodeClass`). Such a pool:
//! - names kind `NodeClass` (and a `NodeClass` reference names `eks.amazonaws.com`);
//! - is not one of the pools EKS manages itself (`general-purpose`, `system`);
//! - selects instances by Auto Mode's labels: `eks.amazonaws.com/instance-…` where self-managed
//!   Karpenter has `karpenter.k8s.aws/instance-…`, with the values and the numeric operators the
//!   EKS user guide's label table allows (the list also has the keys the live NodePool CRD of an
//!   EKS 1.31 Auto Mode cluster allows in the `eks.amazonaws.com` domain; it is
//!   [`crate::instance_types::AUTO_MODE_LABELS`], shared with the instance-type preview);
//! - runs Linux only: the guide lists `kubernetes.io/os` and `node.kubernetes.io/windows-build`
//!   as labels Auto Mode does not support. A requirement no Linux node meets is an error; one
//!   every Auto Mode node meets (`kubernetes.io/os In [linux]`, as AWS's own examples write)
//!   gets a warning that it can go;
//! - expires nodes after 336h unless told otherwise: that is the default of `expireAfter` in
//!   Auto Mode's NodePool CRD (Karpenter's is 720h), so [`plan_defaults`] plans it for a pool
//!   that does not set `expire_after` (and plans it unknown while the group is unknown).
//!
//! The opposite mistake, Auto Mode's labels on a pool of an EC2NodeClass, matches no instance
//! type (self-managed Karpenter does not set them); it gets a warning.

use crate::instance_types::{AUTO_MODE_LABELS, auto_mode_label};
use crate::resources::kube::kind::rules::values::elements;
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

/// `expireAfter`'s default in Auto Mode's NodePool CRD (the guide: nodes are replaced after 336
/// hours by default); Karpenter's CRD has 720h.
pub const AUTO_MODE_EXPIRE_AFTER: &str = "336h";

/// The API group of Auto Mode's node class.
pub const EKS_GROUP: &str = "eks.amazonaws.com";
/// The pools EKS creates and manages on an Auto Mode cluster.
pub const BUILT_IN_POOLS: &[&str] = &["general-purpose", "system"];

/// Labels the guide lists as not supported, because Auto Mode runs Linux only.
const OS_LABEL: &str = "kubernetes.io/os";
const WINDOWS_BUILD_LABEL: &str = "node.kubernetes.io/windows-build";

/// Well-known keys whose values Auto Mode limits: two architectures, three capacity types,
/// three CPU makers, Nitro only. (`kubernetes.io/os` is checked apart: see [`check_linux_only`].)
const ALLOWED_VALUES: &[(&str, &[&str])] = &[
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
    if key == OS_LABEL || key == WINDOWS_BUILD_LABEL {
        return check_linux_only(key, requirement, here, diags);
    }
    let key_path = here.attr("key");
    if let Some(rest) = key.strip_prefix("karpenter.k8s.aws/") {
        let instead = auto_mode_label(rest).map_or_else(
            || "Auto Mode has no label for it; remove the requirement".to_string(),
            |l| format!("use \"eks.amazonaws.com/{}\" instead", l.name),
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
        match auto_mode_label(rest) {
            None => diags.warning_at(
                &key_path,
                "Not an EKS Auto Mode label",
                format!(
                    "{key:?} is not among the instance labels the EKS user guide lists for Auto Mode (eks.amazonaws.com/{}); \
                     unless EKS added it since, no node has it.",
                    AUTO_MODE_LABELS.iter().map(|l| l.name).collect::<Vec<_>>().join(", eks.amazonaws.com/")
                ),
            ),
            Some(l) if !l.numeric && operator.is_some_and(|o| NUMERIC_OPERATORS.contains(&o)) => diags.error_at(
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

/// What a requirement on `kubernetes.io/os` or `node.kubernetes.io/windows-build` means on Auto
/// Mode, where every node is Linux and has no Windows build: `Some(true)` when every node meets
/// it, `Some(false)` when none does, `None` while the operator or values are unknown.
fn linux_meets(key: &str, requirement: &Value) -> Option<bool> {
    let operator = requirement.get("operator")?.as_str()?;
    let values = requirement.get("values").unwrap_or(&Value::Null);
    if !values.is_null() && !values.is_wholly_known() {
        return None;
    }
    let has_linux = elements(values).iter().any(|v| v.as_str() == Some("linux"));
    let is_os = key == OS_LABEL;
    Some(match operator {
        // Linux nodes have `kubernetes.io/os = linux` and no Windows build label.
        "In" => is_os && has_linux,
        "NotIn" => !(is_os && has_linux),
        "Exists" => is_os,
        "DoesNotExist" => !is_os,
        // A number comparison on a label that is not a number, or absent, matches no node.
        _ => false,
    })
}

/// Linux only (the guide lists both labels as not supported): a requirement no Linux node meets
/// is an error, and so is a value other than `linux` in `kubernetes.io/os In [...]`; one every
/// node meets is a warning that it can go.
fn check_linux_only(key: &str, requirement: &Value, here: &AttributePath, diags: &mut Diagnostics) {
    if key == OS_LABEL && requirement.get("operator").and_then(Value::as_str) == Some("In") {
        let mut other = false;
        for (j, value) in elements(requirement.get("values").unwrap_or(&Value::Null))
            .iter()
            .enumerate()
        {
            if let Some(v) = value.as_str().filter(|v| *v != "linux") {
                other = true;
                diags.error_at(
                    &here.attr("values").index(j),
                    "Invalid attribute value",
                    format!("EKS Auto Mode offers no {v:?} for {OS_LABEL:?}: it runs Linux nodes only."),
                );
            }
        }
        if other {
            return;
        }
    }
    match linux_meets(key, requirement) {
        Some(false) => diags.error_at(
            here,
            "Invalid attribute value",
            format!(
                "EKS Auto Mode runs Linux nodes only (the EKS user guide lists {OS_LABEL:?} and \
                 {WINDOWS_BUILD_LABEL:?} among the labels it does not support), so no node meets this {key:?} \
                 requirement and the pool would never launch one. Remove the requirement."
            ),
        ),
        Some(true) => diags.warning_at(
            here,
            "A label EKS Auto Mode does not support",
            format!(
                "The EKS user guide lists {key:?} among the labels EKS Auto Mode does not support: every Auto Mode \
                 node is Linux, so this requirement selects nothing more and can be removed."
            ),
        ),
        None => {}
    }
}

/// Auto Mode's defaults in the plan of a pool: `expire_after` is `336h` for an Auto Mode pool
/// that does not set it (the schema's default, Karpenter's `720h`, is for the others). While
/// the group is still unknown the default is planned unknown: a known `720h` here would become
/// `336h` in the apply-time plan once the group turns out to be `eks.amazonaws.com`, and
/// Terraform aborts an apply whose final plan differs from the one it showed.
///
/// An existing Auto Mode pool whose state holds another value that the configuration never set
/// (`720h`, which builds before this default planned, or a value removed from the
/// configuration) is planned `336h` like any pool that omits it, with a warning: the change is
/// in `spec.template`, which Karpenter hashes for drift, so every node of the pool is replaced.
pub fn plan_defaults(config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
    let default = match is_auto_mode(planned) {
        Some(true) => Value::string(AUTO_MODE_EXPIRE_AFTER),
        Some(false) => return,
        None => Value::unknown(),
    };
    if expire_after_of(config).is_some_and(|v| !v.is_null()) {
        return;
    }
    if is_auto_mode(prior) == Some(true)
        && let Some(before) = expire_after_of(prior).and_then(Value::as_str)
        && default.as_str().is_some_and(|d| d != before)
    {
        diags.warning_at(
            &AttributePath::root()
                .attr("template")
                .attr("spec")
                .attr("expire_after"),
            "expire_after changes to Auto Mode's default",
            format!(
                "This pool does not set expire_after, and an EKS Auto Mode pool that does not set it gets \
                 {AUTO_MODE_EXPIRE_AFTER}, the default of Auto Mode's NodePool CRD; its state has {before:?} \
                 (builds of this provider before 0.1.0 planned Karpenter's 720h for every pool). Karpenter \
                 counts expireAfter in the pool's drift hash, so this apply replaces every node of the pool. \
                 To keep the nodes, set expire_after = {before:?}."
            ),
        );
    }
    let Value::Object(fields) = planned else { return };
    let Some(Value::Object(template)) = fields.get_mut("template") else {
        return;
    };
    let Some(Value::Object(spec)) = template.get_mut("spec") else {
        return;
    };
    spec.insert("expire_after".to_string(), default);
}

fn expire_after_of(v: &Value) -> Option<&Value> {
    v.get("template")?.get("spec")?.get("expire_after")
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::plan_defaults;
    use crate::resources::kube::kind::testing::{config, diagnose, error_paths};
    use crate::resources::kube::v1::node_pool::{NODE_POOL, validate_node_pool};
    use crate::terraform::framework::Diagnostics;
    use crate::terraform::tfvalue::Value;

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
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]},
            {"key": "eks.amazonaws.com/instance-accelerator-count", "operator": "Gt", "values": ["0"]},
            {"key": "eks.amazonaws.com/placement-group-id", "operator": "Exists"},
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
                auto(req("kubernetes.io/os", "NotIn", json!(["linux"]))),
                "template.spec.requirements[0]",
            ),
            (
                auto(req("kubernetes.io/os", "DoesNotExist", json!([]))),
                "template.spec.requirements[0]",
            ),
            (
                auto(req(
                    "node.kubernetes.io/windows-build",
                    "In",
                    json!(["10.0.17763"]),
                )),
                "template.spec.requirements[0]",
            ),
            (
                auto(req("node.kubernetes.io/windows-build", "Exists", json!([]))),
                "template.spec.requirements[0]",
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

    /// What every Linux node meets is allowed, with a warning that the guide calls the label
    /// unsupported; on a self-managed pool the same requirements say nothing.
    #[test]
    fn linux_only_labels_warn_when_every_node_meets_them() {
        for (key, op, values) in [
            ("kubernetes.io/os", "In", json!(["linux"])),
            ("kubernetes.io/os", "Exists", json!([])),
            ("kubernetes.io/os", "NotIn", json!(["windows"])),
            ("node.kubernetes.io/windows-build", "DoesNotExist", json!([])),
            ("node.kubernetes.io/windows-build", "NotIn", json!(["10.0.17763"])),
        ] {
            let requirement = json!([{"key": key, "operator": op, "values": values}]);
            let d = check(&auto(requirement.clone()));
            assert!(error_paths(&d).is_empty(), "{key} {op}: {d:?}");
            assert_eq!(warnings(&d), 1, "{key} {op}: {d:?}");
            let d = check(&pool("p", "karpenter.k8s.aws", "EC2NodeClass", requirement));
            assert_eq!(warnings(&d), 0, "{key} {op}: {d:?}");
        }
    }

    fn planned(group: &str, expire_after: Option<&str>) -> (Value, Value) {
        let mut spec = json!({"node_class_ref": {"group": group, "kind": "NodeClass", "name": "c"}});
        if let Some(e) = expire_after {
            spec["expire_after"] = json!(e);
        }
        let config = config(&NODE_POOL, &json!({"name": "p", "template": {"spec": spec}}));
        let mut plan = config.clone();
        if let Value::Object(f) = &mut plan
            && let Some(Value::Object(t)) = f.get_mut("template")
            && let Some(Value::Object(s)) = t.get_mut("spec")
        {
            s.entry("expire_after".to_string())
                .and_modify(|v| {
                    if v.is_null() {
                        *v = Value::string("720h");
                    }
                })
                .or_insert(Value::string("720h"));
        }
        (config, plan)
    }

    fn expire_after(v: &Value) -> Option<&str> {
        v.get("template")?.get("spec")?.get("expire_after")?.as_str()
    }

    #[test]
    fn an_auto_mode_pool_that_does_not_set_expire_after_plans_336h() {
        let (config, mut plan) = planned("eks.amazonaws.com", None);
        plan_defaults(&config, &Value::Null, &mut plan, &mut Diagnostics::new());
        assert_eq!(expire_after(&plan), Some("336h"));
        // Set in the configuration: kept.
        let (config, mut plan) = planned("eks.amazonaws.com", Some("720h"));
        plan_defaults(&config, &Value::Null, &mut plan, &mut Diagnostics::new());
        assert_eq!(expire_after(&plan), Some("720h"));
        // A self-managed pool keeps Karpenter's default.
        let (config, mut plan) = planned("karpenter.k8s.aws", None);
        plan_defaults(&config, &Value::Null, &mut plan, &mut Diagnostics::new());
        assert_eq!(expire_after(&plan), Some("720h"));
    }

    /// A pool created before the default (state `720h`, configuration silent) plans `336h` with
    /// a warning on `expire_after` that names the value to keep; one already at `336h` plans it
    /// without a word, and a self-managed pool is left alone.
    #[test]
    fn an_auto_mode_pool_whose_state_has_another_expire_after_is_warned() {
        let (config, prior) = planned("eks.amazonaws.com", Some("720h"));
        let (config_silent, mut plan) = planned("eks.amazonaws.com", None);
        let mut d = Diagnostics::new();
        plan_defaults(&config_silent, &prior, &mut plan, &mut d);
        assert_eq!(expire_after(&plan), Some("336h"));
        assert_eq!(warnings(&d), 1, "{d:?}");
        let text = format!("{d:?}");
        assert!(
            text.contains("set expire_after = ") && text.contains("720h"),
            "{text}"
        );

        let mut unchanged = Diagnostics::new();
        let (_, prior_336) = planned("eks.amazonaws.com", Some("336h"));
        let (_, mut plan) = planned("eks.amazonaws.com", None);
        plan_defaults(&config_silent, &prior_336, &mut plan, &mut unchanged);
        assert_eq!(warnings(&unchanged), 0, "{unchanged:?}");

        // Set in the configuration: no default, no warning.
        let mut set = Diagnostics::new();
        let (_, mut plan) = planned("eks.amazonaws.com", Some("720h"));
        plan_defaults(&config, &prior, &mut plan, &mut set);
        assert_eq!((expire_after(&plan), warnings(&set)), (Some("720h"), 0));

        let mut managed = Diagnostics::new();
        let (_, prior_k) = planned("karpenter.k8s.aws", Some("24h"));
        let (config_k, mut plan) = planned("karpenter.k8s.aws", None);
        plan_defaults(&config_k, &prior_k, &mut plan, &mut managed);
        assert_eq!(warnings(&managed), 0, "{managed:?}");
    }

    /// An unknown group could still be Auto Mode's: the default is planned unknown, not a
    /// 720h the apply-time plan would contradict; a value set in the configuration stays.
    #[test]
    fn an_unknown_group_plans_expire_after_unknown() {
        let (config, mut plan) = planned("<unknown>", None);
        plan_defaults(&config, &Value::Null, &mut plan, &mut Diagnostics::new());
        let planned_value = plan
            .get("template")
            .and_then(|t| t.get("spec"))
            .and_then(|s| s.get("expire_after"));
        assert!(planned_value.is_some_and(Value::is_unknown), "{plan:?}");
        let (config, mut plan) = planned("<unknown>", Some("24h"));
        plan_defaults(&config, &Value::Null, &mut plan, &mut Diagnostics::new());
        assert_eq!(expire_after(&plan), Some("24h"));
    }
}
