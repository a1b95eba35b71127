//! Schema and offline validation of `karpenter_node_overlay` (karpenter.sh/v1alpha1 NodeOverlay,
//! CRD of Karpenter v1.14.1): an overlay changes the price or adds extended resources that
//! Karpenter assumes for the instance types its requirements match, when it simulates
//! scheduling. Every `spec` field is typed; every rule of the CRD is checked at plan:
//! requirement keys (restricted domains), operators and value counts, the quantity pattern and
//! the reserved resource names of `capacity`, the `price` and `price_adjustment` patterns, the
//! `weight` range, and (in [`validate_node_overlay`]) "not both price and price_adjustment".

use crate::context::plan_memory::PlanMemory;
use crate::resources::kube::object::STATUS_IN_PLANS;
use std::sync::LazyLock;

use crate::resources::kube::kind::attributes::{
    conditions_attribute, metadata_attribute, name_attribute, timeouts_block,
};
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::names::QUALIFIED_NAME;
use crate::resources::kube::kind::rules::values::{elements, has};
use crate::resources::kube::kind::upgrades::capacity_to_dynamic;
use crate::terraform::framework::validate::{self as v};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

/// `price`: a non-negative decimal (the CRD's pattern).
pub const PRICE: &str = r"^\d+(\.\d+)?$";
/// `priceAdjustment`: a signed amount, an increase in percent, or a decrease of at most 100%
/// (the CRD's pattern, unchanged).
pub const PRICE_ADJUSTMENT: &str =
    r"^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$";
/// Resources `capacity` may not set: it only adds extended resources.
pub const RESERVED_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage", "pods"];
/// Keys of the `karpenter.sh` domain an overlay may match on.
const KARPENTER_SH_KEYS: &[&str] = &["karpenter.sh/capacity-type", "karpenter.sh/nodepool"];
/// Keys of the `karpenter.k8s.aws` domain an overlay may match on (the NodeOverlay CRD's list;
/// it differs from the NodePool's: `ec2nodeclass` is allowed here).
const AWS_KEYS: &[&str] = &[
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/nitro-sandbox",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-capability-flex",
];

/// The schema of `karpenter_node_overlay`.
pub static NODE_OVERLAY: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        format!("A Karpenter NodeOverlay (`karpenter.sh/v1alpha1`): changes the price Karpenter assumes for the instance \
         types its requirements match, or adds extended resources to them, when Karpenter simulates scheduling. \
         Needs Karpenter v1.7 or later with the `NodeOverlay` feature gate enabled (Helm value \
         `settings.featureGates.nodeOverlay=true`); when the cluster does not have the NodeOverlay CRD, apply \
         says so instead of waiting. The attributes follow the NodeOverlay `spec` field by field. Plan validates \
         everything the CRD checks. {} {}", crate::resources::kube::kind::describe::PLAN_READS_CRD, crate::resources::kube::kind::describe::PLAN_READS_HEALTH),
        vec![
            name_attribute("NodeOverlay"),
            metadata_attribute("NodeOverlay"),
            requirements(),
            rules::numbers::quantity_map("capacity")
                .describe(
                    "Extended resources added to the matching instance types, by resource name (e.g. \
                     `smarter-devices/fuse = 1`) as Kubernetes quantities: a whole number or a string, each kept \
                     as written. Only adds resources: `cpu`, `memory`, `ephemeral-storage` and `pods` cannot be set \
                     here.",
                )
                .validate(reserved_resources()),
            Attribute::string("price")
                .describe(
                    "The price Karpenter assumes for the matching instance types, as a non-negative decimal \
                     string (e.g. `\"0.25\"`). Not together with `price_adjustment`.",
                )
                .validate(v::matches(PRICE, "a non-negative decimal number such as `0.25` or `3`")),
            Attribute::string("price_adjustment")
                .describe(
                    "A change to the price of the matching instance types: a signed amount (`-0.5`, `+1.2`), \
                     an increase in percent (`+10%`) or a decrease in percent of at most 100% (`-15%`). Not \
                     together with `price`.",
                )
                .validate(v::matches(
                    PRICE_ADJUSTMENT,
                    "a signed amount such as `-0.5` or `+1.2`, or a percentage such as `+10%` or `-15%` (a decrease of at most `-100%`)",
                )),
            Attribute::number("weight")
                .describe(
                    "Priority of this overlay over others that match the same instance types: higher wins \
                     (1–10000; unset counts as 0). Overlays of equal weight are merged in name order.",
                )
                .validate(v::int_range(1, 10000)),
            status(),
        ],
    )
    .with_blocks(vec![timeouts_block()])
    .with_upgrade_steps(&[capacity_to_dynamic])
});

fn requirements() -> Attribute {
    Attribute::list_of_objects(
        "requirements",
        vec![
            Attribute::string("key")
                .required()
                .describe(
                    "Label key the requirement is about, e.g. `node.kubernetes.io/instance-type`, \
                     `karpenter.sh/nodepool`, `karpenter.k8s.aws/instance-family`, or a label of a NodePool \
                     template.",
                )
                .validate(overlay_key()),
            Attribute::string("operator")
                .required()
                .describe(
                    "How the values apply: `In`, `NotIn`, `Exists`, `DoesNotExist`, or the numeric `Gt`, `Lt`, \
                     `Gte`, `Lte`.",
                )
                .validate(v::one_of(rules::requirements::OPERATORS)),
            Attribute::list_of("values", Type::String)
                .describe(
                    "Values for the operator: at least one for `In` and `NotIn`, exactly one non-negative whole \
                     number for `Gt`/`Lt`/`Gte`/`Lte`. Each is a label value (at most 63 characters).",
                )
                .validate(v::each(rules::labels::label_value())),
        ],
    )
    .required()
    .describe(
        "Which instance types the overlay applies to, as label requirements (at most 100); an empty list \
         matches every instance type.",
    )
    .validate(v::count(0, 100))
    .validate(v::rule(
        "Operators `In` and `NotIn` need at least one value; `Gt`, `Lt`, `Gte` and `Lte` need exactly one value, a non-negative whole number.",
        |value, path, diags| {
            for (i, r) in elements(value).iter().enumerate() {
                if r.is_unknown() || r.is_null() {
                    continue;
                }
                let here = path.index(i);
                rules::requirements::check_requirement(r, &here, diags, rules::labels::well_known_values);
                let values = r.get("values").unwrap_or(&Value::Null);
                if r.get("operator").and_then(Value::as_str) == Some("NotIn")
                    && !values.is_unknown()
                    && elements(values).is_empty()
                {
                    diags.error_at(
                        &here.attr("values"),
                        "Invalid attribute value",
                        "Operator \"NotIn\" needs at least one value in `values`.",
                    );
                }
            }
            rules::contradictions::warn_contradictions(value, path, rules::contradictions::NO_INSTANCE_TYPE, diags);
        },
    ))
}

/// A requirement key of an overlay: the qualified-name pattern, at most 316 characters, and the
/// CRD's restricted domains (which allow `karpenter.sh/nodepool`, unlike a NodePool's).
fn overlay_key() -> impl v::Validator {
    let qualified = regex::Regex::new(QUALIFIED_NAME);
    v::check(
        "Must be a label key (at most 316 characters); not `kubernetes.io/hostname`; in the `karpenter.sh` domain only `karpenter.sh/capacity-type` and `karpenter.sh/nodepool`; in the `karpenter.k8s.aws` domain only Karpenter's well-known labels.",
        move |value| {
            let key = value.as_str()?;
            let well_formed = qualified.as_ref().is_ok_and(|re| re.is_match(key));
            if key.len() > 316 || !well_formed {
                return Some(format!(
                    "{key:?} is not a label key: use at most 316 characters, an optional DNS prefix and '/', then letters, digits, '-', '_' or '.' (e.g. \"node.kubernetes.io/instance-type\")."
                ));
            }
            overlay_key_problem(key).map(|p| format!("Requirement key not allowed: {p}."))
        },
    )
}

/// Why the CRD refuses `key` as an overlay requirement key, if it does.
pub fn overlay_key_problem(key: &str) -> Option<String> {
    if key == "kubernetes.io/hostname" {
        return Some("the label \"kubernetes.io/hostname\" is restricted".into());
    }
    let domain = key.split('/').next().unwrap_or_default();
    if domain.ends_with("karpenter.sh") && !KARPENTER_SH_KEYS.contains(&key) {
        return Some(format!(
            "the label domain \"karpenter.sh\" is restricted: of its keys only {} may be used, not {key:?}",
            KARPENTER_SH_KEYS.join(" and ")
        ));
    }
    if domain.ends_with("karpenter.k8s.aws") && !AWS_KEYS.contains(&key) {
        return Some(format!(
            "the label domain \"karpenter.k8s.aws\" is restricted to Karpenter's well-known keys ({}); {key:?} is not one of them",
            AWS_KEYS.join(", ")
        ));
    }
    None
}

/// `capacity` only adds extended resources.
fn reserved_resources() -> impl v::Validator {
    v::rule(
        "`cpu`, `memory`, `ephemeral-storage` and `pods` cannot be set (capacity only adds extended resources).",
        |value, path, diags| {
            for key in value.as_entries().into_iter().flatten().map(|(k, _)| k) {
                if RESERVED_RESOURCES.contains(&key.as_str()) {
                    diags.error_at(
                        &path.key(key.clone()),
                        "Invalid attribute value",
                        format!(
                            "{key:?} cannot be set in capacity: an overlay only adds extended resources (such as \"example.com/device\") and never changes cpu, memory, ephemeral-storage or pods. Remove {key:?}."
                        ),
                    );
                }
            }
        },
    )
}

fn status() -> Attribute {
    Attribute::object("status", vec![conditions_attribute()])
        .computed()
        .not_on_wire()
        .describe(format!(
            "What Karpenter reports about the overlay (read only): `Ready` once it validated it. {STATUS_IN_PLANS}"
        ))
}

/// The CRD's cross-field rule: `price` and `price_adjustment` are exclusive.
pub fn validate_node_overlay(config: &Value, _memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    if has(config, "price") == Some(true) && has(config, "price_adjustment") == Some(true) {
        diags.error_at(
            &AttributePath::root().attr("price_adjustment"),
            "Conflicting attributes",
            "price and price_adjustment cannot both be set: price replaces the instance types' price, \
             price_adjustment changes it. Keep one of them.",
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::*;
    use crate::resources::kube::kind::testing::{config, diagnose, error_paths};

    fn realistic() -> Json {
        json!({
            "name": "spot-discount",
            "metadata": {"labels": {"team": "platform"}},
            "requirements": [
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                {"key": "karpenter.sh/nodepool", "operator": "NotIn", "values": ["batch"]},
                {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gte", "values": ["6"]},
                {"key": "karpenter.k8s.aws/ec2nodeclass", "operator": "Exists"}
            ],
            "price_adjustment": "-10%",
            "capacity": {"smarter-devices/fuse": "1"},
            "weight": 10
        })
    }

    fn check(json: &Json) -> Vec<String> {
        error_paths(&diagnose(
            &NODE_OVERLAY,
            validate_node_overlay,
            &config(&NODE_OVERLAY, json),
        ))
    }

    #[test]
    fn realistic_overlays_are_valid() {
        assert!(check(&realistic()).is_empty(), "{:?}", check(&realistic()));
        let price = json!({"name": "gpu", "requirements": [], "price": "1.5"});
        assert!(check(&price).is_empty(), "{:?}", check(&price));
    }

    #[test]
    fn each_crd_rule_fails_on_its_attribute() {
        let cases: Vec<(Json, &str)> = vec![
            (
                json!({"price": "0.1", "price_adjustment": "+1"}),
                "price_adjustment",
            ),
            (json!({"price": "-1"}), "price"),
            (json!({"price": "1."}), "price"),
            (json!({"price_adjustment": "10%"}), "price_adjustment"),
            (json!({"price_adjustment": "-101%"}), "price_adjustment"),
            (json!({"price_adjustment": "1.5"}), "price_adjustment"),
            (json!({"weight": 0}), "weight"),
            (json!({"weight": 10001}), "weight"),
            (json!({"capacity": {"cpu": "1"}}), "capacity[\"cpu\"]"),
            (
                json!({"capacity": {"example.com/dev": "x1"}}),
                "capacity[\"example.com/dev\"]",
            ),
            (
                json!({"requirements": [{"key": "karpenter.sh/nodepool", "operator": "NotIn", "values": []}]}),
                "requirements[0].values",
            ),
            (
                json!({"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In"}]}),
                "requirements[0].values",
            ),
            (
                json!({"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["1.5"]}]}),
                "requirements[0].values[0]",
            ),
            (
                json!({"requirements": [{"key": "karpenter.sh/other", "operator": "Exists"}]}),
                "requirements[0].key",
            ),
            (
                json!({"requirements": [{"key": "karpenter.k8s.aws/instance-tenancy-x", "operator": "Exists"}]}),
                "requirements[0].key",
            ),
            (
                json!({"requirements": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]}),
                "requirements[0].key",
            ),
            (
                json!({"requirements": [{"key": "a", "operator": "Near", "values": ["x"]}]}),
                "requirements[0].operator",
            ),
        ];
        for (patch, path) in cases {
            let mut j = json!({"name": "x", "requirements": []});
            for (k, val) in patch.as_object().into_iter().flatten() {
                j[k] = val.clone();
            }
            assert_eq!(check(&j), vec![path.to_string()], "{j}");
        }
    }

    #[test]
    fn accepted_price_adjustments() {
        for ok in ["+10%", "-15%", "-100%", "-0.5", "+1.2", "+.5", "-99.5%"] {
            let j = json!({"name": "x", "requirements": [], "price_adjustment": ok});
            assert!(check(&j).is_empty(), "{ok}: {:?}", check(&j));
        }
    }

    #[test]
    fn unknown_values_are_not_judged() {
        let j =
            json!({"name": "x", "requirements": "<unknown>", "price": "<unknown>", "price_adjustment": "+1"});
        assert!(check(&j).is_empty(), "{:?}", check(&j));
    }
}

/// Checks the schema against the NodeOverlay CRD of v1.14.1, with the comparison the v1 kinds use.
#[cfg(test)]
mod crd_coverage {
    use super::NODE_OVERLAY;
    use crate::resources::kube::kind::crd_coverage::{compare_root, load_version};

    #[test]
    fn node_overlay_covers_the_crd() {
        let root = load_version("v1-alpha", "v1alpha1", "karpenter.sh_nodeoverlays.yaml");
        let problems = compare_root(&NODE_OVERLAY, &root, "NodeOverlay", &[]);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        let mut dropped = NODE_OVERLAY.clone();
        dropped.attributes.retain(|a| a.name != "price_adjustment");
        let problems = compare_root(&dropped, &root, "NodeOverlay", &[]);
        assert!(
            problems.iter().any(|p| p.contains("spec.priceAdjustment")),
            "{problems:?}"
        );
    }

    /// The overlay CRD is the same in every release that ships it from v1.7 on, for the fields
    /// we type (so one schema serves every cluster that has the kind).
    #[test]
    fn node_overlay_matches_every_release_that_ships_it() {
        for version in ["v1.7.6", "v1.10.2", "v1.13.1", "v1.14.1"] {
            let root = load_version(
                &format!("versions/{version}"),
                "v1alpha1",
                "karpenter.sh_nodeoverlays.yaml",
            );
            let problems = compare_root(&NODE_OVERLAY, &root, "NodeOverlay", &[]);
            assert!(problems.is_empty(), "{version}: {}", problems.join("\n"));
        }
    }
}
