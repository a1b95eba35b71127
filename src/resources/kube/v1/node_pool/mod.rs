//! Schema and offline validation of `karpenter_node_pool` (karpenter.sh/v1 NodePool, CRD
//! v1.14.1): every `spec` field as a typed attribute, the CRD's server defaults declared with the
//! same values, and every rule the CRD enforces that can be checked without a cluster.
//!
//! Per-attribute rules are validators on the attributes (they run automatically);
//! [`validate_node_pool`] adds the cross-attribute ones (S2, S3) and [`node_pool_replacements`]
//! the transition rule S1 (a pool cannot switch between static and dynamic). A pool of EKS Auto
//! Mode (node class in `eks.amazonaws.com`) also meets the rules of [`auto_mode`].

use crate::context::plan_memory::PlanMemory;
use crate::resources::kube::object::STATUS_IN_PLANS;
use std::sync::LazyLock;

use crate::instance_types::Flavor;
use crate::resources::kube::kind::attributes::{
    conditions_attribute, force_destroy_attribute, metadata_attribute, name_attribute, object_with,
    timeouts_block,
};
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::has;
use crate::resources::kube::kind::upgrades::limits_to_dynamic;
use crate::terraform::framework::validate::{self as v};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

const CONSOLIDATION_POLICIES: &[&str] = &["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"];
const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];
const BUDGET_REASONS: &[&str] = &["Underutilized", "Empty", "Drifted"];

/// What `force_destroy` does for this kind (its docs, and the error that suggests it).
pub const NODE_POOL_CLEANUP: &str = "it terminates the EC2 instances tagged `karpenter.sh/nodepool` = this pool's name and `kubernetes.io/cluster/<cluster name>` = `owned`, waits until they are shutting down or terminated, then removes the Kubernetes Nodes and NodeClaims of the pool and the finalizers that only Karpenter would remove.";

/// The schema of `karpenter_node_pool`.
pub static NODE_POOL: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        format!("A Karpenter NodePool (`karpenter.sh/v1`): which nodes Karpenter may launch (requirements, taints, \
         the EC2NodeClass they use), when it may disrupt them, and how much capacity the pool may hold. \
         The attributes follow the NodePool `spec` field by field (`nodeClassRef` → `node_class_ref`). \
         Plan validates everything the CRD checks. {} {} {} {}", crate::resources::kube::kind::describe::PLAN_READS_CRD, crate::resources::kube::kind::describe::PLAN_READS_NODE_CLAIMS, crate::resources::kube::kind::describe::PLAN_READS_HEALTH, crate::resources::kube::kind::describe::PLAN_READS_POOL_HEALTH),
        vec![
            name_attribute("NodePool"),
            metadata_attribute("NodePool"),
            template(),
            disruption(),
            rules::numbers::quantity_map("limits").describe(
                "Upper bounds on the resources all nodes of the pool may hold together, by resource name \
                 (`cpu`, `memory`, `nodes`, `nvidia.com/gpu`, …) as Kubernetes quantities: a whole number \
                 (`cpu = 1000`) or a string (`memory = \"1000Gi\"`), each kept as written. Karpenter launches no \
                 node that would exceed them.",
            ),
            Attribute::number("weight")
                .describe(
                    "Priority of this pool over others when several could launch a node: higher first (1–100). \
                     Not allowed on a static pool (with `replicas`).",
                )
                .validate(v::int_range(1, 100)),
            Attribute::number("replicas")
                .describe(
                    "Makes the pool static: Karpenter keeps exactly this many nodes, regardless of pending pods \
                     (alpha in Karpenter). A pool cannot switch between static and dynamic: adding or removing \
                     `replicas` replaces it. A static pool allows only `nodes` in `limits` and no `weight`.",
                )
                .validate(rules::numbers::whole_number(Some(0), false)),
            status(),
            force_destroy_attribute("NodePool", NODE_POOL_CLEANUP),
        ],
    )
    .with_blocks(vec![timeouts_block()])
    .with_upgrade_steps(&[limits_to_dynamic])
});

/// The pool's defaults beyond the schema's: Auto Mode's `expire_after`.
pub fn plan_defaults(config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
    auto_mode::plan_defaults(config, prior, planned, diags);
}

fn template() -> Attribute {
    Attribute::object(
        "template",
        vec![
            Attribute::object(
                "metadata",
                vec![
                    Attribute::map_of("labels", Type::String)
                        .describe(
                            "Labels put on every node of the pool (at most 100). Keys of the `karpenter.sh` and \
                             `karpenter.k8s.aws` domains are reserved except Karpenter's well-known labels; \
                             `kubernetes.io/hostname` is not allowed.",
                        )
                        .validate(v::count(0, 100))
                        .validate(rules::labels::node_label_keys())
                        .validate(v::each(rules::labels::label_value())),
                    Attribute::map_of("annotations", Type::String)
                        .describe("Annotations put on every node of the pool.")
                        .validate(rules::labels::node_annotation_keys()),
                ],
            )
            .describe("Labels and annotations for the nodes the pool launches."),
            Attribute::object(
                "spec",
                vec![
                    node_class_ref(),
                    requirements(),
                    taints("taints", "Taints put on every node of the pool; pods must tolerate them to run there."),
                    taints(
                        "startup_taints",
                        "Taints put on nodes when they start, which some other system is expected to remove once \
                         the node is ready (e.g. a CNI or device plugin). Karpenter does not wait for pods to tolerate them.",
                    ),
                    Attribute::string("expire_after")
                        .default_value(Value::string("720h"))
                        .describe(
                            "How long a node may live before Karpenter replaces it, e.g. `720h` (the default, 30 \
                             days), or `Never`. On an EKS Auto Mode pool the default is `336h` (14 days), Auto Mode's \
                             own, and Auto Mode replaces nodes after 21 days at most whatever this says.",
                        )
                        .validate(rules::time::duration_or_never()),
                    Attribute::string("termination_grace_period")
                        .describe(
                            "How long Karpenter waits for a node to drain before it is forcibly terminated, e.g. \
                             `48h`. Unset: Karpenter waits as long as pods need.",
                        )
                        .validate(rules::time::duration()),
                ],
            )
            .required()
            .describe("What the nodes of the pool look like: node class, requirements, taints, lifetime."),
        ],
    )
    .required()
    .describe("Template for the nodes (NodeClaims) the pool creates.")
}

fn node_class_ref() -> Attribute {
    Attribute::object(
        "node_class_ref",
        vec![
            Attribute::string("group")
                .default_value(Value::string("karpenter.k8s.aws"))
                .replace_on_change()
                .describe(
                    "API group of the node class. Defaults to `karpenter.k8s.aws` (EC2NodeClass); \
                     `eks.amazonaws.com` (kind `NodeClass`) on EKS Auto Mode, which makes this an Auto Mode pool, \
                     checked at plan against Auto Mode's rules (its labels and values, not a built-in pool's \
                     name). Cannot be changed in place (changing it replaces the pool).",
                )
                .validate(v::non_empty())
                .validate(v::matches(r"^[^/]*$", "an API group without `/` (no version), e.g. `karpenter.k8s.aws`")),
            Attribute::string("kind")
                .default_value(Value::string("EC2NodeClass"))
                .replace_on_change()
                .describe(
                    "Kind of the node class. Defaults to `EC2NodeClass`; `NodeClass` with group `eks.amazonaws.com`. Cannot be changed in place (changing it \
                     replaces the pool).",
                )
                .validate(v::non_empty()),
            Attribute::string("name")
                .required()
                .describe(
                    "Name of the node class, e.g. `karpenter_ec2_node_class.default.name` or \
                     `karpenter_eks_node_class.private.name` (`default` is Auto Mode's built-in class).",
                )
                .validate(v::non_empty()),
        ],
    )
    .required()
    .describe("The node class (cloud-provider settings) the nodes are launched with.")
}

/// The `requirements` attribute of a pool's template: also the filter of
/// `data "karpenter_instance_types"`, so both spell and check requirements alike.
pub fn requirements() -> Attribute {
    Attribute::list_of_objects(
        "requirements",
        vec![
            Attribute::string("key")
                .required()
                .describe(
                    "Label key the requirement is about, e.g. `karpenter.sh/capacity-type`, \
                     `node.kubernetes.io/instance-type`, `karpenter.k8s.aws/instance-family`.",
                )
                .validate(rules::requirements::requirement_key()),
            Attribute::string("operator")
                .required()
                .describe(
                    "How the values apply: `In`, `NotIn`, `Exists`, `DoesNotExist`, or the numeric `Gt`, `Lt`, \
                     `Gte`, `Lte`.",
                )
                .validate(v::one_of(rules::requirements::OPERATORS)),
            Attribute::list_of("values", Type::String)
                .describe(
                    "Values for the operator: at least one for `In`, exactly one whole number for `Gt`/`Lt`/\
                     `Gte`/`Lte` (an optional sign is allowed: `+5`). With `In` and `NotIn` each is a label value \
                     (at most 63 characters).",
                ),
            Attribute::number("min_values")
                .describe(
                    "Minimum number of distinct values of this key the launch decision must keep open (1–50; alpha \
                     in Karpenter). With `In`, at least this many values must be listed.",
                )
                .validate(v::int_range(1, 50)),
        ],
    )
    .required()
    .describe(
        "Constraints on the nodes the pool may launch, as label requirements (at most 100). Pods' own \
         scheduling constraints narrow them further.",
    )
    .validate(v::count(0, 100))
    .validate(rules::requirements::requirements())
}

fn taints(name: &'static str, description: &'static str) -> Attribute {
    Attribute::list_of_objects(
        name,
        vec![
            Attribute::string("key")
                .required()
                .describe("Taint key, e.g. `nvidia.com/gpu`.")
                .validate(v::non_empty())
                .validate(rules::names::qualified_name("a taint key")),
            Attribute::string("value")
                .describe("Taint value (optional).")
                .validate(rules::names::qualified_name("a taint value")),
            Attribute::string("effect")
                .required()
                .describe("`NoSchedule`, `PreferNoSchedule` or `NoExecute`.")
                .validate(v::one_of(TAINT_EFFECTS)),
            Attribute::string("time_added")
                .describe("When the taint was added (RFC 3339); only meaningful for `NoExecute`.")
                .validate(rules::time::date_time()),
        ],
    )
    .describe(description)
}

fn budget_attributes() -> Vec<Attribute> {
    vec![
        Attribute::string("nodes")
            .default_value(Value::string("10%"))
            .describe(
                "How many of the pool's nodes may be disrupted at once: a whole number or a percentage (`10%`, \
                 the default). `0` blocks disruption while the budget is active.",
            )
            .validate(v::matches(rules::budgets::BUDGET_NODES, "a whole number such as `5` or a percentage from `0%` to `100%`")),
        Attribute::string("schedule")
            .describe(
                "When the budget starts being active, as a cron schedule in UTC (`0 9 * * mon-fri`, `@daily`). \
                 Set together with `duration`; unset means always active.",
            )
            .validate(rules::budgets::cron_schedule()),
        Attribute::string("duration")
            .describe("How long the budget stays active after each `schedule` time, e.g. `8h` or `1h30m`.")
            .validate(rules::budgets::budget_duration()),
        Attribute::list_of("reasons", Type::String)
            .describe(
                "Disruption reasons the budget applies to (`Underutilized`, `Empty`, `Drifted`); unset means all.",
            )
            .validate(v::count(0, 50))
            .validate(v::each(v::one_of(BUDGET_REASONS)))
            .validate(rules::values::unique()),
    ]
}

fn disruption() -> Attribute {
    let budget = budget_attributes();
    let default_budgets = Value::List(vec![object_with(&budget, &[("nodes", Value::string("10%"))])]);
    let attributes = vec![
        Attribute::string("consolidate_after")
            .required()
            .describe(
                "How long a node must have had no pod added or removed before Karpenter may consolidate it, \
                 e.g. `30s`, `5m`, or `Never`. Required when `disruption` is set; `0s` when it is not.",
            )
            .validate(rules::time::duration_or_never()),
        Attribute::string("consolidation_policy")
            .default_value(Value::string("WhenEmptyOrUnderutilized"))
            .describe(
                "Which nodes Karpenter may consolidate: `WhenEmptyOrUnderutilized` (the default), `WhenEmpty` or \
                 `Balanced`.",
            )
            .validate(v::one_of(CONSOLIDATION_POLICIES)),
        Attribute::list_of_objects("budgets", budget)
            .default_value(default_budgets)
            .describe(
                "Limits on how many nodes may be disrupted at the same time (at most 50 budgets; the most \
                 restrictive active one wins). Default: one budget of `10%`.",
            )
            .validate(v::count(0, 50))
            .validate(v::rule(
                "Each budget sets `schedule` and `duration` together, or neither.",
                |value, path, diags| {
                    for (i, b) in rules::values::elements(value).iter().enumerate() {
                        if let (Some(s), Some(d)) = (has(b, "schedule"), has(b, "duration"))
                            && s != d
                        {
                            let (missing, set) = if s { ("duration", "schedule") } else { ("schedule", "duration") };
                            diags.error_at(
                                &path.index(i).attr(missing),
                                "Invalid attribute value",
                                format!(
                                    "This budget sets {set} but not {missing}: a budget sets schedule and duration together, or neither."
                                ),
                            );
                        }
                    }
                },
            )),
    ];
    let default = object_with(&attributes, &[("consolidate_after", Value::string("0s"))]);
    Attribute::object("disruption", attributes)
        .default_value(default)
        .describe(
            "When and how fast Karpenter may disrupt (consolidate, expire, replace) the pool's nodes. Default: \
             consolidate empty or underutilized nodes at once (`0s`), at most 10% of the nodes at a time.",
        )
}

fn status() -> Attribute {
    Attribute::object(
        "status",
        vec![
            conditions_attribute(),
            Attribute::map_of("resources", Type::String)
                .computed()
                .describe("Resources the pool's nodes hold together (quantities by resource name)."),
            Attribute::number("nodes")
                .computed()
                .describe("Number of nodes the pool currently has."),
            Attribute::number("node_class_observed_generation")
                .computed()
                .describe("Generation of the node class the pool last reconciled against."),
        ],
    )
    .computed()
    .not_on_wire()
    .describe(format!(
        "What Karpenter reports about the pool (read only). {STATUS_IN_PLANS}"
    ))
}

/// Cross-attribute rules of the NodePool CRD the per-attribute validators cannot express:
/// S2 (a static pool limits only `nodes`) and S3 (a static pool has no `weight`); and the API
/// server's 256 KiB limit on the object's annotations together.
pub fn validate_node_pool(config: &Value, memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    auto_mode::validate(config, diags);
    check_launchable(config, memory, diags);
    rules::labels::annotations_total_size(
        config.get("metadata").and_then(|m| m.get("annotations")),
        &root.attr("metadata").attr("annotations"),
        diags,
    );
    if has(config, "replicas") != Some(true) {
        return;
    }
    if let Some(limits) = config.get("limits").and_then(Value::as_entries) {
        for key in limits.keys().filter(|k| k.as_str() != "nodes") {
            diags.error_at(
                &root.attr("limits").key(key.clone()),
                "Invalid attribute value",
                format!(
                    "A static node pool (with replicas) may only limit \"nodes\"; remove the {key:?} limit or remove replicas."
                ),
            );
        }
    }
    if has(config, "weight") == Some(true) {
        diags.error_at(
            &root.attr("weight"),
            "Invalid attribute value",
            "weight is not supported on a static node pool (with replicas): remove weight or remove replicas.",
        );
    }
}

/// What the pool can launch, against the offline instance-type data ([`rules::launchable`]):
/// requirements (with the template's node labels) that match no instance type, `min_values`
/// they cannot meet, `limits` no matching type fits under. Skipped while the node class group
/// (self-managed or Auto Mode label names) is unknown. With the plan's memory, pools with the
/// same requirements, labels and limits are checked once.
fn check_launchable(config: &Value, memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    let flavor = match auto_mode::is_auto_mode(config) {
        Some(true) => Flavor::AutoMode,
        Some(false) => Flavor::SelfManaged,
        None => return,
    };
    let root = AttributePath::root();
    let template = config.get("template").unwrap_or(&Value::Null);
    let Some(requirements) = template.get("spec").and_then(|s| s.get("requirements")) else {
        return;
    };
    let labels = template
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .map(|l| (l, root.attr("template").attr("metadata").attr("labels")));
    let limits = config.get("limits");
    let pool = rules::launchable::Pool {
        requirements,
        requirements_path: root.attr("template").attr("spec").attr("requirements"),
        labels,
        defaults: Vec::new(),
        limits: limits.map(|l| (l, root.attr("limits"))),
        flavor,
    };
    match memory {
        Some(memory) if !rules::launchable::already_refused(&pool, diags) => {
            let key = format!(
                "{flavor:?} {requirements:?} {:?} {limits:?}",
                pool.labels.as_ref().map(|(l, _)| l)
            );
            let checked = memory.pool_checks.get_or_compute(key, || {
                let mut d = Diagnostics::new();
                rules::launchable::check(&pool, &mut d);
                d
            });
            diags.extend((*checked).clone());
        }
        _ => rules::launchable::check(&pool, diags),
    }
}

/// Replacement paths beyond the `replace_on_change` attributes: rule S1 — a pool cannot switch
/// between static (`replicas` set) and dynamic (`replicas` unset) in place, so adding or removing
/// `replicas` replaces it. An unknown planned `replicas` decides nothing (the apply-time plan,
/// with the value known, decides).
pub fn node_pool_replacements(prior: &Value, planned: &Value) -> Vec<AttributePath> {
    if prior.is_null() || planned.is_null() {
        return Vec::new();
    }
    match (has(prior, "replicas"), has(planned, "replicas")) {
        (Some(a), Some(b)) if a != b => vec![AttributePath::root().attr("replicas")],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;

pub mod auto_mode;
