//! Schema and offline validation of `karpenter_ec2_node_class` (karpenter.k8s.aws/v1
//! EC2NodeClass, CRD v1.14.1, with its typed `kubelet`): every `spec` field as a typed attribute,
//! the `metadataOptions` server defaults declared with the same values, and every rule the CRD
//! enforces that can be checked without a cluster or AWS.
//!
//! Per-attribute and per-list rules are validators on the attributes; [`validate_ec2_node_class`]
//! adds the rules that span attributes (E1–E8).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use super::rules::{self, elements, has, int_of};
use super::{
    conditions_attribute, force_destroy_attribute, metadata_attribute, name_attribute, object_with,
    timeouts_block,
};
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Number, Type, Value};

const AMI_FAMILIES: &[&str] = &[
    "AL2",
    "AL2023",
    "Bottlerocket",
    "Custom",
    "Windows2019",
    "Windows2022",
    "Windows2025",
];
/// Alias family → the `ami_family` it implies (rules E2–E7).
const ALIAS_FAMILIES: &[(&str, &str)] = &[
    ("al2", "AL2"),
    ("al2023", "AL2023"),
    ("bottlerocket", "Bottlerocket"),
    ("windows2019", "Windows2019"),
    ("windows2022", "Windows2022"),
    ("windows2025", "Windows2025"),
];
pub(crate) const VOLUME_TYPES: &[&str] = &["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"];
const RESERVED_KEYS: &[&str] = &["cpu", "memory", "ephemeral-storage", "pid"];
const EVICTION_SIGNALS: &[&str] = &[
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
];
/// EBS volume size: 1–59000Gi, 1–64000G, 1–58Ti or 1–64T (the CRD's pattern, kept as written,
/// including its empty alternatives).
const VOLUME_SIZE: &str = r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$";
/// An eviction threshold: a percentage (up to two decimals, at most 100%) or a quantity (or empty).
const EVICTION_THRESHOLD: &str = r"^(([0-9]{1,2}(\.[0-9]{1,2})?|100(\.0{1,2})?)%||(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$";

/// The schema of `karpenter_ec2_node_class`.
pub static EC2_NODE_CLASS: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "A Karpenter EC2NodeClass (`karpenter.k8s.aws/v1`): the AWS settings of the nodes that node pools \
         launch — AMIs, subnets, security groups, IAM role or instance profile, block devices, user data, \
         instance metadata options, kubelet settings. The attributes follow the EC2NodeClass `spec` field by \
         field (`amiSelectorTerms` → `ami_selector_terms`). Plan validates everything the CRD checks; nothing \
         contacts the cluster or AWS until apply.",
        vec![
            name_attribute("EC2NodeClass"),
            metadata_attribute("EC2NodeClass"),
            Attribute::string("role")
                .describe(
                    "Name of the IAM role the nodes use; Karpenter creates and manages an instance profile for \
                     it. Set exactly one of `role` and `instance_profile`.",
                )
                .validate(v::non_empty()),
            Attribute::string("instance_profile")
                .describe(
                    "Name of an existing IAM instance profile for the nodes (you manage it). Set exactly one of \
                     `role` and `instance_profile`.",
                )
                .validate(v::non_empty()),
            Attribute::string("ami_family")
                .describe(
                    "Which bootstrap format the user data uses: `AL2`, `AL2023`, `Bottlerocket`, `Windows2019`, \
                     `Windows2022`, `Windows2025`, or `Custom` (your user data only). Required unless an AMI \
                     selector term uses `alias`; with an alias it must match the alias family or be `Custom`.",
                )
                .validate(v::one_of(AMI_FAMILIES)),
            ami_selector_terms(),
            subnet_selector_terms(),
            security_group_selector_terms(),
            capacity_reservation_selector_terms(),
            placement_group_selector(),
            Attribute::bool("associate_public_ip_address")
                .wire_name("associatePublicIPAddress")
                .describe(
                    "Whether instances get a public IPv4 address. Unset: the subnet's setting decides.",
                ),
            Attribute::map_of("tags", Type::String)
                .describe(
                    "Tags put on the EC2 resources Karpenter creates (instances, volumes, launch templates, …). \
                     Keys Karpenter sets itself are not allowed: `eks:eks-cluster-name`, `kubernetes.io/cluster/*`, \
                     `karpenter.sh/nodepool`, `karpenter.sh/nodeclaim`, `karpenter.k8s.aws/ec2nodeclass`.",
                )
                .validate(restricted_tags()),
            kubelet(),
            block_device_mappings(),
            Attribute::string("instance_store_policy")
                .describe(
                    "How to use instance-store (local NVMe) volumes: `RAID0` combines them into one array used \
                     for the kubelet and container storage. Unset: they are left alone.",
                )
                .validate(v::one_of(&["RAID0"])),
            Attribute::string("user_data")
                .describe(
                    "User data for the instances, merged with what Karpenter generates for the AMI family (for \
                     `Custom`, used as is).",
                ),
            Attribute::bool("detailed_monitoring")
                .describe("Whether EC2 detailed (1-minute) CloudWatch monitoring is enabled on the instances."),
            metadata_options(),
            network_interfaces(),
            Attribute::number("ip_prefix_count")
                .describe("Number of IPv4 or IPv6 prefixes assigned to the primary network interface (0 or more).")
                .validate(rules::whole_number(Some(0), true)),
            connection_tracking(),
            Attribute::object(
                "cpu_options",
                vec![
                    Attribute::string("nested_virtualization")
                        .describe("Whether nested virtualization is `enabled` or `disabled` on supported instance types.")
                        .validate(v::one_of(&["enabled", "disabled"])),
                ],
            )
            .describe("CPU options of the instances."),
            Attribute::string("context")
                .describe("The EC2 launch `context` value, reserved for internal use by AWS."),
            status(),
            Attribute::bool("wait_for_ready")
                .default_value(Value::Bool(false))
                .not_on_wire()
                .describe(
                    "When true, create and update return only once Karpenter reports the node class `Ready` \
                     (AMIs, subnets, security groups and instance profile resolved), and fail with the condition \
                     messages if that does not happen within the timeout.",
                ),
            force_destroy_attribute(
                "EC2NodeClass",
                "it terminates the EC2 instances tagged `karpenter.k8s.aws/ec2nodeclass` = this class's name and \
                 `kubernetes.io/cluster/<cluster name>` = `owned`, deletes the launch templates tagged with this \
                 class's name and the cluster's (`eks:eks-cluster-name`, or `karpenter.k8s.aws/cluster` as older \
                 v1 releases tag them), and the instance profile Karpenter created for the class (the one in \
                 `status.instance_profile` when `role` is set, and only if it is tagged with the class's and the \
                 cluster's name), then removes the finalizers of the class and of its NodeClaims.",
            ),
        ],
    )
    .with_blocks(vec![timeouts_block()])
});

fn tag_selector(what: &str) -> Attribute {
    Attribute::map_of("tags", Type::String)
        .describe(format!(
            "Select {what} that have all these tags (at most 20; `*` as a value matches any value)."
        ))
        .validate(rules::selector_tags())
}

fn ami_selector_terms() -> Attribute {
    Attribute::list_of_objects(
        "ami_selector_terms",
        vec![
            Attribute::string("alias")
                .describe(
                    "An EKS-optimized AMI by family and version, `family@version`: `al2023@latest`, \
                     `al2023@v20240807`, `bottlerocket@latest`, … (families `al2`, `al2023`, `bottlerocket`, \
                     `windows2019`, `windows2022`, `windows2025`; Windows only `@latest`). Must be the only term.",
                )
                .validate(v::length(0, 30))
                .validate(alias_format()),
            Attribute::string("id")
                .describe("An AMI ID, e.g. `ami-0123456789abcdef0`; cannot be combined with other fields.")
                .validate(v::matches("ami-[0-9a-z]+", "an AMI ID such as `ami-0123456789abcdef0`")),
            Attribute::string("name")
                .describe("AMI name to match (wildcards `*` allowed)."),
            Attribute::string("owner")
                .describe("AMI owner: an account ID or alias such as `self` or `amazon`."),
            Attribute::string("ssm_parameter")
                .describe("An SSM parameter whose value is the AMI ID to use."),
            tag_selector("AMIs"),
        ],
    )
    .required()
    .describe(
        "How to find the AMIs for the nodes (1 to 30 terms, any term may match). Each term sets at least one of \
         `alias`, `id`, `name`, `ssm_parameter`, `tags`; `id` and `alias` stand alone, and an `alias` term must \
         be the only term.",
    )
    .validate(v::count(1, 30))
    .validate(v::rule(
        "Each term sets at least one of `tags`, `id`, `name`, `alias`, `ssm_parameter`; `id` and `alias` cannot be combined with `tags`, `name`, `owner` or each other; an `alias` term must be the only term.",
        |value, path, diags| {
            let terms = elements(value);
            for (i, t) in terms.iter().enumerate() {
                let here = path.index(i);
                let set = |f: &str| has(t, f);
                let any = ["tags", "id", "name", "alias", "ssm_parameter"].map(set);
                if any.iter().all(|x| *x == Some(false)) {
                    invalid(
                        diags,
                        &here,
                        "An AMI selector term must set at least one of tags, id, name, alias or ssm_parameter.",
                    );
                }
                // A2 and A3; `id` with `alias` breaks both and is reported once, at `id`.
                for (lead, others) in [("id", &["alias", "tags", "name", "owner"][..]), ("alias", &["tags", "name", "owner"][..])] {
                    if set(lead) != Some(true) {
                        continue;
                    }
                    let clash: Vec<&str> = others.iter().copied().filter(|o| set(o) == Some(true)).collect();
                    if !clash.is_empty() {
                        invalid(
                            diags,
                            &here.attr(lead),
                            format!(
                                "{lead} cannot be combined with {} in the same AMI selector term: use {lead} alone, or another term without it.",
                                clash.join(", ")
                            ),
                        );
                    }
                }
                if set("alias") == Some(true) && terms.len() != 1 {
                    invalid(
                        diags,
                        &here.attr("alias"),
                        format!(
                            "A term with alias must be the only AMI selector term; {} terms are given.",
                            terms.len()
                        ),
                    );
                }
            }
        },
    ))
}

fn alias_format() -> impl Validator {
    v::check(
        "Must be `family@version` with family `al2`, `al2023`, `bottlerocket`, `windows2019`, `windows2022` or `windows2025`; Windows families only take `latest`.",
        |value| {
            let s = value.as_str()?;
            let Some((family, version)) = s.split_once('@') else {
                return Some(format!(
                    "{s:?} is not of the form family@version, e.g. \"al2023@latest\"."
                ));
            };
            if family.is_empty() || !family.chars().all(|c| c.is_ascii_alphanumeric()) || version.is_empty() {
                return Some(format!(
                    "{s:?} is not of the form family@version, e.g. \"al2023@latest\"."
                ));
            }
            if !ALIAS_FAMILIES.iter().any(|(f, _)| *f == family) {
                return Some(format!(
                    "The alias family {family:?} is not supported: use al2, al2023, bottlerocket, windows2019, windows2022 or windows2025."
                ));
            }
            if family.starts_with("windows") && version != "latest" {
                return Some(format!(
                    "Windows aliases only support the version \"latest\": use \"{family}@latest\"."
                ));
            }
            None
        },
    )
}

fn subnet_selector_terms() -> Attribute {
    Attribute::list_of_objects(
        "subnet_selector_terms",
        vec![
            Attribute::string("id")
                .describe("A subnet ID, e.g. `subnet-0123456789abcdef0`; cannot be combined with `tags`.")
                .validate(v::matches(
                    "subnet-[0-9a-z]+",
                    "a subnet ID such as `subnet-0123456789abcdef0`",
                )),
            tag_selector("subnets"),
        ],
    )
    .required()
    .describe("How to find the subnets for the nodes (1 to 30 terms; each sets `id` or `tags`, not both).")
    .validate(v::count(1, 30))
    .validate(exclusive_terms("subnet", &["tags", "id"], &[("id", &["tags"])]))
}

fn security_group_selector_terms() -> Attribute {
    Attribute::list_of_objects(
        "security_group_selector_terms",
        vec![
            Attribute::string("id")
                .describe("A security group ID, e.g. `sg-0123456789abcdef0`; stands alone.")
                .validate(v::matches("sg-[0-9a-z]+", "a security group ID such as `sg-0123456789abcdef0`")),
            Attribute::string("name")
                .describe("A security group name (the group's `GroupName`); stands alone."),
            tag_selector("security groups"),
        ],
    )
    .required()
    .describe(
        "How to find the security groups for the nodes (1 to 30 terms; each sets exactly one of `id`, `name` or `tags`).",
    )
    .validate(v::count(1, 30))
    .validate(exclusive_terms(
        "security group",
        &["tags", "id", "name"],
        &[("id", &["tags", "name"]), ("name", &["tags", "id"])],
    ))
}

fn capacity_reservation_selector_terms() -> Attribute {
    Attribute::list_of_objects(
        "capacity_reservation_selector_terms",
        vec![
            Attribute::string("id")
                .describe("A capacity reservation ID, e.g. `cr-0123456789abcdef0`; stands alone.")
                .validate(v::matches("^cr-[0-9a-z]+$", "a capacity reservation ID such as `cr-0123456789abcdef0`")),
            Attribute::string("owner_id")
                .wire_name("ownerID")
                .describe("Account ID (12 digits) that owns the reservations to select.")
                .validate(v::matches("^[0-9]{12}$", "a 12-digit AWS account ID")),
            Attribute::string("instance_match_criteria")
                .describe("Select reservations by how they match instances: `open` or `targeted`.")
                .validate(v::one_of(&["open", "targeted"])),
            tag_selector("capacity reservations"),
        ],
    )
    .describe(
        "Which On-Demand Capacity Reservations or Capacity Blocks the nodes may use (at most 30 terms; each sets \
         `id` alone, or some of `tags`, `owner_id`, `instance_match_criteria`).",
    )
    .validate(v::count(0, 30))
    .validate(not_empty_when_set(
        "The CRD's rule that `id` stands alone is written as \"not all terms combine id with another field\", which is false for an empty list, so the API server refuses `[]`.",
    ))
    .validate(exclusive_terms(
        "capacity reservation",
        &["tags", "id", "instance_match_criteria"],
        &[("id", &["tags", "owner_id", "instance_match_criteria"])],
    ))
}

/// Selector-term rules (X1): each term sets at least one of `at_least_one`, and a field named in
/// `exclusive` cannot be combined with the fields listed with it.
///
/// Stricter than the CRD: its exclusivity rules are written as `!self.all(...)`, so the API server
/// only rejects a list in which *every* term combines the fields. Karpenter's documentation says a
/// term may not combine them at all, so we reject each offending term (as the CRD does for AMI
/// terms with `!self.exists(...)`).
fn exclusive_terms(
    what: &'static str,
    at_least_one: &'static [&'static str],
    exclusive: &'static [(&'static str, &'static [&'static str])],
) -> impl Validator {
    v::rule(
        format!(
            "Each term sets at least one of {}; {}.",
            at_least_one
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
            exclusive
                .iter()
                .map(|(f, o)| format!("`{f}` cannot be combined with {}", o.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
                + " (as in the CRD, a list is refused for this only when every term combines them)"
        ),
        move |value, path, diags| {
            let terms = elements(value);
            for (i, t) in terms.iter().enumerate() {
                if at_least_one.iter().all(|f| has(t, f) == Some(false)) {
                    invalid(
                        diags,
                        &path.index(i),
                        format!(
                            "A {what} selector term must set at least one of {}.",
                            at_least_one.join(", ")
                        ),
                    );
                }
            }
            // The CRD states each exclusion as "not every term combines `lead` with another
            // field": one clean term makes the whole list acceptable to the API server (and
            // Karpenter then matches the combined term on all its fields), so only a list in
            // which every term clashes is refused, as the server refuses it.
            for (lead, others) in exclusive {
                let clashes: Vec<Vec<&str>> = terms
                    .iter()
                    .map(|t| {
                        if has(t, lead) != Some(true) {
                            return Vec::new();
                        }
                        others
                            .iter()
                            .copied()
                            .filter(|o| has(t, o) == Some(true))
                            .collect()
                    })
                    .collect();
                if clashes.is_empty() || clashes.iter().any(Vec::is_empty) {
                    continue;
                }
                for (i, clash) in clashes.iter().enumerate() {
                    invalid(
                        diags,
                        &path.index(i).attr(*lead),
                        format!(
                            "{lead} cannot be combined with {} in the same {what} selector term (the API server refuses a list in which every term does so): put {lead} in a term of its own.",
                            clash.join(", ")
                        ),
                    );
                }
            }
        },
    )
}

fn placement_group_selector() -> Attribute {
    Attribute::object(
        "placement_group_selector",
        vec![
            Attribute::string("name")
                .describe("Name of the placement group.")
                .validate(v::non_empty()),
            Attribute::string("id")
                .describe("ID of the placement group, e.g. `pg-0123456789abcdef0`.")
                .validate(v::matches(
                    "^pg-[0-9a-z]+$",
                    "a placement group ID such as `pg-0123456789abcdef0`",
                )),
        ],
    )
    .describe("The placement group to launch the nodes in, by `name` or by `id` (exactly one).")
    .validate(v::rule(
        "Set exactly one of `name` and `id`.",
        |value, path, diags| match (has(value, "name"), has(value, "id")) {
            (Some(true), Some(true)) => invalid(
                diags,
                &path.attr("id"),
                "Set either name or id of the placement group, not both.",
            ),
            (Some(false), Some(false)) => invalid(
                diags,
                path,
                "Select the placement group by name or by id (exactly one of them).",
            ),
            _ => {}
        },
    ))
}

fn restricted_tags() -> impl Validator {
    v::each_key(v::check(
        "Keys must not be empty, and must not be `eks:eks-cluster-name`, start with `kubernetes.io/cluster`, or be `karpenter.sh/nodepool`, `karpenter.sh/nodeclaim` or `karpenter.k8s.aws/ec2nodeclass`.",
        |value| {
            let key = value.as_str()?;
            if key.is_empty() {
                return Some("Tag keys must not be empty.".to_string());
            }
            let restricted = key == "eks:eks-cluster-name"
                || key.starts_with("kubernetes.io/cluster")
                || [
                    "karpenter.sh/nodepool",
                    "karpenter.sh/nodeclaim",
                    "karpenter.k8s.aws/ec2nodeclass",
                ]
                .contains(&key);
            restricted.then(|| {
                format!("The tag {key:?} is set by Karpenter or EKS and cannot be set here; remove it.")
            })
        },
    ))
}

fn kubelet() -> Attribute {
    Attribute::object("kubelet", kubelet_attributes())
        .describe("Kubelet settings for the nodes (Karpenter passes them to the node's bootstrap).")
        .validate(kubelet_rule())
}

/// The kubelet settings shared with the legacy Provisioner's `kubelet_configuration` (same
/// fields, same rules in Karpenter's v0.32 webhook and the v1 CRD).
pub(crate) fn kubelet_attributes() -> Vec<Attribute> {
    let reserved = |name: &'static str, text: &'static str| {
        Attribute::map_of(name, Type::String)
            .describe(text)
            .validate(keys_in(RESERVED_KEYS))
            .validate(v::each(rules::quantity()))
            .validate(v::each(v::check("Must not be negative.", |value| {
                let s = value.as_str()?;
                s.starts_with('-')
                    .then(|| format!("{s:?} is negative: reserved resources must not be negative."))
            })))
    };
    let eviction = |name: &'static str, text: &'static str| {
        Attribute::map_of(name, Type::String)
            .describe(text)
            .validate(keys_in(EVICTION_SIGNALS))
            .validate(v::each(v::matches(
                EVICTION_THRESHOLD,
                "a percentage such as `10%` or a quantity such as `500Mi`",
            )))
    };
    vec![
            Attribute::list_of("cluster_dns", Type::String)
                .wire_name("clusterDNS")
                .describe("DNS server IP addresses the kubelet gives pods, instead of the cluster default."),
            Attribute::number("max_pods")
                .describe("Maximum number of pods per node (0 or more).")
                .validate(rules::whole_number(Some(0), true)),
            Attribute::number("pods_per_core")
                .describe("Maximum number of pods per CPU core; the lower of this and `max_pods` applies (0 or more).")
                .validate(rules::whole_number(Some(0), true)),
            reserved(
                "system_reserved",
                "Resources reserved for the operating system (`cpu`, `memory`, `ephemeral-storage`, `pid`), as quantities.",
            ),
            reserved(
                "kube_reserved",
                "Resources reserved for Kubernetes daemons (`cpu`, `memory`, `ephemeral-storage`, `pid`), as quantities.",
            ),
            eviction(
                "eviction_hard",
                "Hard eviction thresholds by signal (`memory.available`, `nodefs.available`, `nodefs.inodesFree`, \
                 `imagefs.available`, `imagefs.inodesFree`, `pid.available`), as percentages or quantities.",
            ),
            eviction(
                "eviction_soft",
                "Soft eviction thresholds by signal (same signals as `eviction_hard`); each needs a grace period in \
                 `eviction_soft_grace_period`.",
            ),
            Attribute::map_of("eviction_soft_grace_period", Type::String)
                .describe(
                    "How long each soft eviction threshold must be exceeded before pods are evicted, by signal, as \
                     durations such as `1m30s`; each needs a threshold in `eviction_soft`.",
                )
                .validate(keys_in(EVICTION_SIGNALS))
                .validate(v::each(eviction_grace_period())),
            Attribute::number("eviction_max_pod_grace_period")
                .describe("Maximum grace period, in seconds, for pods terminated by a soft eviction.")
                .validate(rules::whole_number(None, true)),
            Attribute::number("image_gc_high_threshold_percent")
                .wire_name("imageGCHighThresholdPercent")
                .describe("Disk usage percentage (0–100) above which image garbage collection always runs; must be greater than the low threshold.")
                .validate(v::int_range(0, 100)),
            Attribute::number("image_gc_low_threshold_percent")
                .wire_name("imageGCLowThresholdPercent")
                .describe("Disk usage percentage (0–100) below which image garbage collection never runs.")
                .validate(v::int_range(0, 100)),
            Attribute::bool("cpu_cfs_quota")
                .wire_name("cpuCFSQuota")
                .describe("Whether CPU CFS quota is enforced for containers that set CPU limits."),
        ]
}

/// Kubelet cross-field rules: image GC high > low; soft eviction thresholds and grace periods pair up.
pub(crate) fn kubelet_rule() -> impl Validator {
    v::rule(
        "`image_gc_high_threshold_percent` must be greater than `image_gc_low_threshold_percent`; every `eviction_soft` signal needs an `eviction_soft_grace_period` entry and the reverse.",
        |value, path, diags| {
            if let (Some(high), Some(low)) = (
                int_of(value, "image_gc_high_threshold_percent"),
                int_of(value, "image_gc_low_threshold_percent"),
            ) && high <= low
            {
                invalid(
                    diags,
                    &path.attr("image_gc_high_threshold_percent"),
                    format!("The high threshold ({high}) must be greater than the low threshold ({low})."),
                );
            }
            let soft = value.get("eviction_soft").unwrap_or(&Value::Null);
            let grace = value.get("eviction_soft_grace_period").unwrap_or(&Value::Null);
            if soft.is_unknown() || grace.is_unknown() {
                return;
            }
            let empty = BTreeMap::new();
            let soft = soft.as_entries().unwrap_or(&empty);
            let grace = grace.as_entries().unwrap_or(&empty);
            for key in soft.keys().filter(|k| !grace.contains_key(*k)) {
                invalid(
                    diags,
                    &path.attr("eviction_soft").key(key.clone()),
                    format!(
                        "The soft eviction threshold {key:?} needs a grace period: add {key:?} to eviction_soft_grace_period."
                    ),
                );
            }
            for key in grace.keys().filter(|k| !soft.contains_key(*k)) {
                invalid(
                    diags,
                    &path.attr("eviction_soft_grace_period").key(key.clone()),
                    format!(
                        "The grace period {key:?} has no soft eviction threshold: add {key:?} to eviction_soft or remove it here."
                    ),
                );
            }
        },
    )
}

/// Map keys must be in a fixed set.
fn keys_in(allowed: &'static [&'static str]) -> impl Validator {
    v::each_key(v::one_of(allowed))
}

fn block_device_mappings() -> Attribute {
    Attribute::list_of_objects(
        "block_device_mappings",
        vec![
            Attribute::string("device_name")
                .describe("Device name of the volume, e.g. `/dev/xvda`."),
            Attribute::object(
                "ebs",
                vec![
                    Attribute::bool("delete_on_termination")
                        .describe("Whether the volume is deleted when the instance terminates."),
                    Attribute::bool("encrypted").describe("Whether the volume is encrypted."),
                    Attribute::number("iops")
                        .describe("Provisioned IOPS (for `io1`, `io2`, `gp3`).")
                        .validate(rules::whole_number(None, false)),
                    Attribute::string("kms_key_id")
                        .wire_name("kmsKeyID")
                        .describe("KMS key (ARN or ID) that encrypts the volume."),
                    Attribute::string("snapshot_id")
                        .wire_name("snapshotID")
                        .describe("Snapshot the volume is created from."),
                    Attribute::number("throughput")
                        .describe("Throughput in MiB/s (for `gp3`).")
                        .validate(rules::whole_number(None, false)),
                    Attribute::number("volume_initialization_rate")
                        .describe("Rate (100–300 MiB/s) at which the snapshot's blocks are loaded; needs `snapshot_id`.")
                        .validate(v::int_range(100, 300)),
                    Attribute::string("volume_size")
                        .describe("Size of the volume, e.g. `20Gi` (1–59000Gi, 1–64000G, 1–58Ti or 1–64T).")
                        .validate(v::matches(
                            VOLUME_SIZE,
                            "a size of 1–59000Gi, 1–64000G, 1–58Ti or 1–64T, such as `100Gi`",
                        )),
                    Attribute::string("volume_type")
                        .describe("EBS volume type: `standard`, `io1`, `io2`, `gp2`, `sc1`, `st1` or `gp3`.")
                        .validate(v::one_of(VOLUME_TYPES)),
                ],
            )
            .describe("The EBS volume; sets `snapshot_id` or `volume_size` (or both).")
            .validate(v::rule(
                "Sets `snapshot_id` or `volume_size`; `volume_initialization_rate` needs a non-empty `snapshot_id`.",
                |value, path, diags| {
                    if has(value, "snapshot_id") == Some(false) && has(value, "volume_size") == Some(false) {
                        invalid(
                            diags,
                            path,
                            "An EBS volume needs snapshot_id or volume_size (or both).",
                        );
                    }
                    if has(value, "volume_initialization_rate") == Some(true) {
                        let snapshot = value.get("snapshot_id").unwrap_or(&Value::Null);
                        if snapshot.is_null() || snapshot.as_str() == Some("") {
                            invalid(
                                diags,
                                &path.attr("volume_initialization_rate"),
                                "volume_initialization_rate applies to volumes created from a snapshot: set snapshot_id as well, or remove it.",
                            );
                        }
                    }
                },
            )),
            Attribute::bool("root_volume")
                .describe("Whether this is the root volume (at most one mapping may be). Unset: Karpenter picks by AMI family."),
        ],
    )
    .describe("Volumes attached to the instances (at most 50; at most one with `root_volume = true`).")
    .validate(v::count(0, 50))
    .validate(v::rule(
        "At most one mapping sets `root_volume = true`.",
        |value, path, diags| {
            let roots: Vec<usize> = elements(value)
                .iter()
                .enumerate()
                .filter(|(_, m)| m.get("root_volume").and_then(Value::as_bool) == Some(true))
                .map(|(i, _)| i)
                .collect();
            for i in roots.iter().skip(1) {
                invalid(
                    diags,
                    &path.index(*i).attr("root_volume"),
                    format!(
                        "Only one block device mapping may be the root volume; mapping {} already is.",
                        roots[0]
                    ),
                );
            }
        },
    ))
}

fn metadata_options() -> Attribute {
    let attributes = vec![
        Attribute::string("http_endpoint")
            .default_value(Value::string("enabled"))
            .describe("Whether the instance metadata service is `enabled` (the default) or `disabled`.")
            .validate(v::one_of(&["enabled", "disabled"])),
        Attribute::string("http_protocol_ipv6")
            .wire_name("httpProtocolIPv6")
            .default_value(Value::string("disabled"))
            .describe("Whether the metadata service's IPv6 endpoint is `enabled` or `disabled` (the default).")
            .validate(v::one_of(&["enabled", "disabled"])),
        Attribute::number("http_put_response_hop_limit")
            .default_value(Value::Number(Number::from_i64(1)))
            .describe(
                "How many network hops a metadata response may travel (1–64). The default 1 keeps pods that are not \
                 on the host network from reaching the node's credentials.",
            )
            .validate(v::int_range(1, 64)),
        Attribute::string("http_tokens")
            .default_value(Value::string("required"))
            .describe("Whether metadata requests need a session token (IMDSv2): `required` (the default) or `optional`.")
            .validate(v::one_of(&["required", "optional"])),
    ];
    let default = object_with(
        &attributes,
        &[
            ("http_endpoint", Value::string("enabled")),
            ("http_protocol_ipv6", Value::string("disabled")),
            ("http_put_response_hop_limit", Value::Number(Number::from_i64(1))),
            ("http_tokens", Value::string("required")),
        ],
    );
    Attribute::object("metadata_options", attributes)
        .default_value(default)
        .describe(
            "Instance metadata service options of the instances. Default: enabled, IMDSv2 required, hop limit 1, \
             IPv6 endpoint disabled.",
        )
}

fn network_interfaces() -> Attribute {
    Attribute::list_of_objects(
        "network_interfaces",
        vec![
            Attribute::number("network_card_index")
                .required()
                .describe("Index of the network card (0 or more).")
                .validate(rules::whole_number(Some(0), true)),
            Attribute::number("device_index")
                .required()
                .describe("Device index of the interface on its card (0 or more).")
                .validate(rules::whole_number(Some(0), true)),
            Attribute::string("interface_type")
                .required()
                .describe("`interface` (an ENA interface) or `efa-only` (EFA without IP).")
                .validate(v::one_of(&["interface", "efa-only"])),
        ],
    )
    .describe(
        "Network interfaces of the instances (at most 150). When set, one must be the primary interface \
         (card 0, device 0, type `interface`); each card/device pair appears once, and each card has at most one \
         `efa-only` interface.",
    )
    .validate(v::count(0, 150))
    .validate(v::rule(
        "Empty, or contains the primary interface (card 0, device 0, `interface`); card/device pairs are unique; at most one `efa-only` interface per card.",
        |value, path, diags| {
            let nics = elements(value);
            let known = |n: &Value| {
                Some((
                    int_of(n, "network_card_index")?,
                    int_of(n, "device_index")?,
                    n.get("interface_type").and_then(Value::as_str)?.to_string(),
                ))
            };
            let all: Vec<Option<(i64, i64, String)>> = nics.iter().map(known).collect();
            if !nics.is_empty()
                && all.iter().all(Option::is_some)
                && !all.iter().flatten().any(|(c, d, t)| *c == 0 && *d == 0 && t == "interface")
            {
                invalid(
                    diags,
                    path,
                    "The network interfaces must include the primary one: network_card_index = 0, device_index = 0, interface_type = \"interface\".",
                );
            }
            let mut pairs = BTreeSet::new();
            let mut efa_cards = BTreeSet::new();
            for (i, nic) in all.iter().enumerate() {
                let Some((card, device, kind)) = nic else { continue };
                if !pairs.insert((*card, *device)) {
                    invalid(
                        diags,
                        &path.index(i).attr("device_index"),
                        format!("Network card {card} already has an interface with device index {device}; each card/device pair may appear once."),
                    );
                }
                if kind == "efa-only" && !efa_cards.insert(*card) {
                    invalid(
                        diags,
                        &path.index(i).attr("interface_type"),
                        format!("Network card {card} already has an efa-only interface; each card may have at most one."),
                    );
                }
            }
        },
    ))
}

fn connection_tracking() -> Attribute {
    Attribute::object(
        "connection_tracking",
        vec![
            Attribute::number("tcp_established_timeout")
                .describe("Idle timeout, in seconds, for established TCP connections (60–432000).")
                .validate(v::int_range(60, 432_000)),
            Attribute::number("udp_stream_timeout")
                .describe("Idle timeout, in seconds, for UDP flows seen in both directions repeatedly (60–180).")
                .validate(v::int_range(60, 180)),
            Attribute::number("udp_timeout")
                .describe("Idle timeout, in seconds, for UDP flows seen in one direction or once (30–60).")
                .validate(v::int_range(30, 60)),
        ],
    )
    .describe("Connection-tracking timeouts of the primary network interface; set at least one.")
    .validate(v::rule("Set at least one timeout.", |value, path, diags| {
        if ["tcp_established_timeout", "udp_stream_timeout", "udp_timeout"]
            .iter()
            .all(|f| has(value, f) == Some(false))
        {
            invalid(
                diags,
                path,
                "Set at least one of tcp_established_timeout, udp_stream_timeout or udp_timeout (or leave connection_tracking unset).",
            );
        }
    }))
}

fn status() -> Attribute {
    Attribute::object(
        "status",
        vec![
            conditions_attribute(),
            Attribute::list_of_objects(
                "subnets",
                vec![
                    Attribute::string("id").computed().describe("Subnet ID."),
                    Attribute::string("zone").computed().describe("Availability zone, e.g. `us-east-1a`."),
                    Attribute::string("zone_id")
                        .wire_name("zoneID")
                        .computed()
                        .describe("Availability zone ID, e.g. `use1-az1`."),
                ],
            )
            .computed()
            .describe("Subnets the selector terms resolved to."),
            Attribute::list_of_objects(
                "security_groups",
                vec![
                    Attribute::string("id").computed().describe("Security group ID."),
                    Attribute::string("name").computed().describe("Security group name."),
                ],
            )
            .computed()
            .describe("Security groups the selector terms resolved to."),
            Attribute::list_of_objects(
                "amis",
                vec![
                    Attribute::string("id").computed().describe("AMI ID."),
                    Attribute::string("name").computed().describe("AMI name."),
                    Attribute::bool("deprecated").computed().describe("Whether the AMI is deprecated."),
                    Attribute::list_of_objects(
                        "requirements",
                        vec![
                            Attribute::string("key").computed().describe("Label key."),
                            Attribute::string("operator").computed().describe("Operator."),
                            Attribute::list_of("values", Type::String).computed().describe("Values."),
                        ],
                    )
                    .computed()
                    .describe("Node requirements the AMI is compatible with (e.g. architecture)."),
                ],
            )
            .computed()
            .describe("AMIs the selector terms resolved to."),
            Attribute::string("instance_profile")
                .computed()
                .describe("Instance profile the nodes use (the one Karpenter manages for `role`, or `instance_profile`)."),
            Attribute::list_of_objects(
                "capacity_reservations",
                vec![
                    Attribute::string("id").computed().describe("Capacity reservation ID."),
                    Attribute::string("owner_id")
                        .wire_name("ownerID")
                        .computed()
                        .describe("Account that owns the reservation."),
                    Attribute::string("availability_zone").computed().describe("Availability zone."),
                    Attribute::string("instance_type").computed().describe("Instance type reserved."),
                    Attribute::string("instance_match_criteria")
                        .computed()
                        .describe("`open` or `targeted`."),
                    Attribute::string("reservation_type")
                        .computed()
                        .describe("`default` or `capacity-block`."),
                    Attribute::string("state").computed().describe("`active` or `expiring`."),
                    Attribute::string("end_time").computed().describe("When the reservation ends (RFC 3339), if it does."),
                    Attribute::bool("interruptible").computed().describe("Whether the reservation is interruptible."),
                ],
            )
            .computed()
            .describe("Capacity reservations the selector terms resolved to."),
        ],
    )
    .computed()
    .not_on_wire()
    .describe("What Karpenter reports about the node class (read only).")
}

/// A soft-eviction grace period: a Go duration. Deliberately stricter than the CRD (which only
/// types it as a string): kubelet cannot parse anything else and fails to start, so the nodes
/// would never join.
fn eviction_grace_period() -> impl Validator {
    v::check(
        "Must be a duration such as `30s`, `10m` or `1h30m` (stricter than the CRD: kubelet cannot start with anything else).",
        |value| {
            let s = value.as_str()?;
            v::parse_go_duration(s).is_none().then(|| {
                format!(
                    "{s:?} is not a duration: use a number with a unit, such as \"30s\", \"10m\" or \"1h30m\". (Stricter than the CRD on purpose: kubelet cannot parse it and would not start, so the nodes would never join.)"
                )
            })
        },
    )
}

/// A list that may be unset but not empty, because a CRD rule is false on an empty list
/// (`why` says which).
fn not_empty_when_set(why: &'static str) -> impl Validator {
    v::rule(
        "Omit it rather than setting an empty list: the API server refuses an empty list here.",
        move |value, path, diags| {
            if value.as_elements().is_some_and(<[Value]>::is_empty) {
                invalid(
                    diags,
                    path,
                    format!(
                        "An empty list is not accepted here: remove the attribute or give at least one term. {why}"
                    ),
                );
            }
        },
    )
}

fn invalid(diags: &mut Diagnostics, path: &AttributePath, detail: impl Into<String>) {
    diags.error_at(path, "Invalid attribute value", detail);
}

/// Cross-attribute rules of the EC2NodeClass CRD: E1 (exactly one of `role` and
/// `instance_profile`), E2–E7 (an alias family fixes `ami_family` to its own family or `Custom`)
/// and E8 (`ami_family` is required when no AMI term uses an alias); and the API server's
/// 256 KiB limit on the object's annotations together.
pub fn validate_ec2_node_class(config: &Value, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    rules::annotations_total_size(
        config.get("metadata").and_then(|m| m.get("annotations")),
        &root.attr("metadata").attr("annotations"),
        diags,
    );
    match (has(config, "role"), has(config, "instance_profile")) {
        (Some(true), Some(true)) => invalid(
            diags,
            &root.attr("instance_profile"),
            "Set exactly one of role and instance_profile: with role, Karpenter manages an instance profile for that role; with instance_profile, you provide it.",
        ),
        (Some(false), Some(false)) => invalid(
            diags,
            &root.attr("role"),
            "Set exactly one of role (an IAM role name; Karpenter manages the instance profile) and instance_profile (an existing instance profile).",
        ),
        _ => {}
    }

    let terms = config.get("ami_selector_terms").unwrap_or(&Value::Null);
    if terms.is_unknown() || terms.is_null() {
        return;
    }
    let family = config.get("ami_family").unwrap_or(&Value::Null);
    let mut any_alias = Some(false);
    for t in elements(terms) {
        match has(t, "alias") {
            None => any_alias = None,
            Some(true) => {
                if any_alias == Some(false) {
                    any_alias = Some(true);
                }
            }
            Some(false) => {}
        }
        let Some(alias) = t.get("alias").and_then(Value::as_str) else {
            continue;
        };
        let alias_family = alias.split('@').next().unwrap_or_default();
        let Some((_, implied)) = ALIAS_FAMILIES.iter().find(|(f, _)| *f == alias_family) else {
            continue;
        };
        if let Some(set) = family.as_str()
            && set != *implied
            && set != "Custom"
        {
            invalid(
                diags,
                &root.attr("ami_family"),
                format!(
                    "The AMI alias {alias:?} is of family {implied}: ami_family must be {implied:?} or \"Custom\" (or unset), not {set:?}."
                ),
            );
        }
    }
    if any_alias == Some(false) && family.is_null() {
        invalid(
            diags,
            &root.attr("ami_family"),
            "ami_family is required when no AMI selector term uses alias: set it to AL2, AL2023, Bottlerocket, Windows2019, Windows2022, Windows2025 or Custom.",
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::*;
    use crate::resources::kube::v1::testing::{UNKNOWN, config, diagnose, error_paths, plan_create, put};
    use crate::terraform::framework::plan::plan;

    /// A node class with the AL2023 alias, discovery tags and a role.
    fn with_alias() -> Json {
        json!({
            "name": "default",
            "role": "KarpenterNodeRole-demo",
            "ami_selector_terms": [{"alias": "al2023@latest"}],
            "subnet_selector_terms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "security_group_selector_terms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "tags": {"team": "platform"}
        })
    }

    /// A node class with ID and tag selectors, block devices and most optional settings.
    fn detailed() -> Json {
        json!({
            "name": "gpu",
            "metadata": {"labels": {"team": "ml"}},
            "instance_profile": "KarpenterNodeInstanceProfile-demo",
            "ami_family": "AL2023",
            "ami_selector_terms": [
                {"id": "ami-0123456789abcdef0"},
                {"name": "my-ami-*", "owner": "self"},
                {"tags": {"team": "ml", "Name": "*"}},
                {"ssm_parameter": "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id"}
            ],
            "subnet_selector_terms": [{"id": "subnet-0123456789abcdef0"}, {"tags": {"Name": "private-*"}}],
            "security_group_selector_terms": [{"id": "sg-0123456789abcdef0"}, {"name": "eks-cluster-sg"}],
            "capacity_reservation_selector_terms": [
                {"id": "cr-0123456789abcdef0"},
                {"tags": {"purpose": "ml"}, "owner_id": "123456789012", "instance_match_criteria": "targeted"}
            ],
            "placement_group_selector": {"name": "ml-cluster"},
            "associate_public_ip_address": false,
            "tags": {"team": "ml", "cost-center": "42"},
            "kubelet": {
                "cluster_dns": ["10.100.0.10"],
                "max_pods": 110,
                "pods_per_core": 0,
                "system_reserved": {"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "1Gi"},
                "kube_reserved": {"cpu": "200m", "memory": "500Mi", "pid": "1000"},
                "eviction_hard": {"memory.available": "5%", "nodefs.available": "10%"},
                "eviction_soft": {"memory.available": "500Mi"},
                "eviction_soft_grace_period": {"memory.available": "1m30s"},
                "eviction_max_pod_grace_period": 60,
                "image_gc_high_threshold_percent": 85,
                "image_gc_low_threshold_percent": 80,
                "cpu_cfs_quota": true
            },
            "block_device_mappings": [
                {"device_name": "/dev/xvda", "root_volume": true,
                 "ebs": {"volume_size": "100Gi", "volume_type": "gp3", "iops": 3000, "throughput": 125,
                         "encrypted": true, "kms_key_id": "arn:aws:kms:us-east-1:123456789012:key/abcd",
                         "delete_on_termination": true}},
                {"device_name": "/dev/xvdb",
                 "ebs": {"snapshot_id": "snap-0123456789abcdef0", "volume_initialization_rate": 200}}
            ],
            "instance_store_policy": "RAID0",
            "user_data": "#!/bin/bash\necho hello\n",
            "detailed_monitoring": true,
            "metadata_options": {"http_endpoint": "enabled", "http_protocol_ipv6": "disabled",
                                 "http_put_response_hop_limit": 2, "http_tokens": "required"},
            "network_interfaces": [
                {"network_card_index": 0, "device_index": 0, "interface_type": "interface"},
                {"network_card_index": 1, "device_index": 0, "interface_type": "efa-only"}
            ],
            "ip_prefix_count": 1,
            "connection_tracking": {"tcp_established_timeout": 3600},
            "cpu_options": {"nested_virtualization": "disabled"},
            "wait_for_ready": true
        })
    }

    fn check(json: &Json) -> Diagnostics {
        diagnose(
            &EC2_NODE_CLASS,
            validate_ec2_node_class,
            &config(&EC2_NODE_CLASS, json),
        )
    }

    /// Parity with the API server (issue #16): an empty capacity reservation list and annotations
    /// over 256 KiB are refused by the server, so plan must refuse them.
    #[test]
    fn plan_refuses_what_the_server_refuses() {
        let mut nc = detailed();
        put(&mut nc, "/capacity_reservation_selector_terms", json!([]));
        assert_eq!(
            error_paths(&check(&nc)),
            vec!["capacity_reservation_selector_terms"]
        );
        let mut nc = with_alias();
        put(&mut nc, "/metadata/annotations/a", json!("x".repeat(200 * 1024)));
        put(&mut nc, "/metadata/annotations/b", json!("x".repeat(57 * 1024)));
        assert_eq!(error_paths(&check(&nc)), vec!["metadata.annotations"]);
    }

    #[test]
    fn realistic_node_classes_are_valid() {
        for class in [with_alias(), detailed()] {
            let d = check(&class);
            assert!(d.is_empty(), "{d}");
        }
    }

    /// (base, what is changed, value, where the error must be). Base `true` is [`with_alias`],
    /// `false` is [`detailed`].
    fn invalid_cases() -> Vec<(bool, &'static str, Json, &'static str)> {
        vec![
            (true, "/name", json!("Default"), "name"),
            (
                true,
                "/metadata/annotations/bad key!",
                json!("x"),
                "metadata.annotations[\"bad key!\"]",
            ),
            (true, "/instance_profile", json!("profile"), "instance_profile"),
            (false, "/instance_profile", Json::Null, "role"),
            (true, "/role", json!(""), "role"),
            (true, "/ami_family", json!("Ubuntu"), "ami_family"),
            (true, "/ami_family", json!("Bottlerocket"), "ami_family"),
            (false, "/ami_family", Json::Null, "ami_family"),
            (
                true,
                "/ami_selector_terms/0/alias",
                json!("ubuntu@latest"),
                "ami_selector_terms[0].alias",
            ),
            (
                true,
                "/ami_selector_terms/0/alias",
                json!("windows2022@v1"),
                "ami_selector_terms[0].alias",
            ),
            (
                true,
                "/ami_selector_terms/0/alias",
                json!("al2023"),
                "ami_selector_terms[0].alias",
            ),
            (
                true,
                "/ami_selector_terms/0/alias",
                json!("al2023@v20240807-and-a-much-longer-tail"),
                "ami_selector_terms[0].alias",
            ),
            (
                true,
                "/ami_selector_terms/1",
                json!({"id": "ami-0123"}),
                "ami_selector_terms[0].alias",
            ),
            (
                true,
                "/ami_selector_terms/0/tags",
                json!({"a": "b"}),
                "ami_selector_terms[0].alias",
            ),
            (
                false,
                "/ami_selector_terms/0/name",
                json!("x"),
                "ami_selector_terms[0].id",
            ),
            (
                false,
                "/ami_selector_terms/0/alias",
                json!("al2023@latest"),
                "ami_selector_terms[0].id",
            ),
            (
                false,
                "/ami_selector_terms/1/name",
                Json::Null,
                "ami_selector_terms[1]",
            ),
            (
                false,
                "/ami_selector_terms/0/id",
                json!("img-123"),
                "ami_selector_terms[0].id",
            ),
            (true, "/ami_selector_terms", json!([]), "ami_selector_terms"),
            (
                false,
                "/ami_selector_terms/2/tags/",
                json!("x"),
                "ami_selector_terms[2].tags[\"\"]",
            ),
            (
                false,
                "/subnet_selector_terms",
                json!([{"id": "subnet-0123456789abcdef0", "tags": {"Name": "x"}}]),
                "subnet_selector_terms[0].id",
            ),
            (
                false,
                "/subnet_selector_terms/0",
                json!({}),
                "subnet_selector_terms[0]",
            ),
            (
                false,
                "/subnet_selector_terms/0/id",
                json!("sn-123"),
                "subnet_selector_terms[0].id",
            ),
            (
                true,
                "/subnet_selector_terms/0/tags/Name",
                json!(""),
                "subnet_selector_terms[0].tags[\"Name\"]",
            ),
            (true, "/subnet_selector_terms", json!([]), "subnet_selector_terms"),
            (
                false,
                "/security_group_selector_terms",
                json!([{"name": "eks-cluster-sg", "tags": {"a": "b"}}]),
                "security_group_selector_terms[0].name",
            ),
            (
                false,
                "/security_group_selector_terms",
                json!([{"id": "sg-0123456789abcdef0", "name": "x"}]),
                "security_group_selector_terms[0].id",
            ),
            (
                true,
                "/security_group_selector_terms",
                json!([]),
                "security_group_selector_terms",
            ),
            (
                false,
                "/capacity_reservation_selector_terms",
                json!([{"id": "cr-0123456789abcdef0", "owner_id": "123456789012"}]),
                "capacity_reservation_selector_terms[0].id",
            ),
            (
                false,
                "/capacity_reservation_selector_terms/1/owner_id",
                json!("12345"),
                "capacity_reservation_selector_terms[1].owner_id",
            ),
            (
                false,
                "/capacity_reservation_selector_terms/1/instance_match_criteria",
                json!("closed"),
                "capacity_reservation_selector_terms[1].instance_match_criteria",
            ),
            (
                false,
                "/capacity_reservation_selector_terms/0/id",
                json!("cr-ABC"),
                "capacity_reservation_selector_terms[0].id",
            ),
            (
                false,
                "/capacity_reservation_selector_terms/2",
                json!({"owner_id": "123456789012"}),
                "capacity_reservation_selector_terms[2]",
            ),
            (
                false,
                "/placement_group_selector/id",
                json!("pg-0123"),
                "placement_group_selector.id",
            ),
            (
                false,
                "/placement_group_selector/name",
                Json::Null,
                "placement_group_selector",
            ),
            (
                false,
                "/placement_group_selector/name",
                json!(""),
                "placement_group_selector.name",
            ),
            (
                true,
                "/tags/kubernetes.io~cluster~demo",
                json!("owned"),
                "tags[\"kubernetes.io/cluster/demo\"]",
            ),
            (
                true,
                "/tags/karpenter.sh~nodepool",
                json!("x"),
                "tags[\"karpenter.sh/nodepool\"]",
            ),
            (
                true,
                "/tags/eks:eks-cluster-name",
                json!("demo"),
                "tags[\"eks:eks-cluster-name\"]",
            ),
            (
                false,
                "/block_device_mappings/1/root_volume",
                json!(true),
                "block_device_mappings[1].root_volume",
            ),
            (
                false,
                "/block_device_mappings/0/ebs/volume_size",
                Json::Null,
                "block_device_mappings[0].ebs",
            ),
            (
                false,
                "/block_device_mappings/0/ebs/volume_size",
                json!("100GB"),
                "block_device_mappings[0].ebs.volume_size",
            ),
            (
                false,
                "/block_device_mappings/0/ebs/volume_size",
                json!("59001Gi"),
                "block_device_mappings[0].ebs.volume_size",
            ),
            (
                false,
                "/block_device_mappings/0/ebs/volume_type",
                json!("gp4"),
                "block_device_mappings[0].ebs.volume_type",
            ),
            (
                false,
                "/block_device_mappings/0/ebs/volume_initialization_rate",
                json!(150),
                "block_device_mappings[0].ebs.volume_initialization_rate",
            ),
            (
                false,
                "/block_device_mappings/1/ebs/volume_initialization_rate",
                json!(50),
                "block_device_mappings[1].ebs.volume_initialization_rate",
            ),
            (
                false,
                "/block_device_mappings/0/ebs/iops",
                json!(1.5),
                "block_device_mappings[0].ebs.iops",
            ),
            (
                false,
                "/metadata_options/http_tokens",
                json!("sometimes"),
                "metadata_options.http_tokens",
            ),
            (
                false,
                "/metadata_options/http_put_response_hop_limit",
                json!(65),
                "metadata_options.http_put_response_hop_limit",
            ),
            (
                false,
                "/metadata_options/http_endpoint",
                json!("on"),
                "metadata_options.http_endpoint",
            ),
            (
                false,
                "/network_interfaces/0/interface_type",
                json!("efa-only"),
                "network_interfaces",
            ),
            (
                false,
                "/network_interfaces/2",
                json!({"network_card_index": 1, "device_index": 0, "interface_type": "interface"}),
                "network_interfaces[2].device_index",
            ),
            (
                false,
                "/network_interfaces/2",
                json!({"network_card_index": 1, "device_index": 1, "interface_type": "efa-only"}),
                "network_interfaces[2].interface_type",
            ),
            (
                false,
                "/network_interfaces/1/device_index",
                json!(-1),
                "network_interfaces[1].device_index",
            ),
            (false, "/connection_tracking", json!({}), "connection_tracking"),
            (
                false,
                "/connection_tracking/udp_timeout",
                json!(10),
                "connection_tracking.udp_timeout",
            ),
            (
                false,
                "/connection_tracking/tcp_established_timeout",
                json!(432001),
                "connection_tracking.tcp_established_timeout",
            ),
            (
                false,
                "/kubelet/image_gc_low_threshold_percent",
                json!(90),
                "kubelet.image_gc_high_threshold_percent",
            ),
            (
                false,
                "/kubelet/image_gc_high_threshold_percent",
                json!(101),
                "kubelet.image_gc_high_threshold_percent",
            ),
            (
                false,
                "/kubelet/eviction_soft_grace_period",
                Json::Null,
                "kubelet.eviction_soft[\"memory.available\"]",
            ),
            (
                false,
                "/kubelet/eviction_soft_grace_period/nodefs.available",
                json!("1m"),
                "kubelet.eviction_soft_grace_period[\"nodefs.available\"]",
            ),
            (
                false,
                "/kubelet/eviction_soft_grace_period/memory.available",
                json!("90 seconds"),
                "kubelet.eviction_soft_grace_period[\"memory.available\"]",
            ),
            (
                false,
                "/kubelet/system_reserved/gpu",
                json!("1"),
                "kubelet.system_reserved[\"gpu\"]",
            ),
            (
                false,
                "/kubelet/kube_reserved/cpu",
                json!("-1"),
                "kubelet.kube_reserved[\"cpu\"]",
            ),
            (
                false,
                "/kubelet/kube_reserved/memory",
                json!("lots"),
                "kubelet.kube_reserved[\"memory\"]",
            ),
            (
                false,
                "/kubelet/eviction_hard/memory.available",
                json!("101%"),
                "kubelet.eviction_hard[\"memory.available\"]",
            ),
            (
                false,
                "/kubelet/eviction_hard/disk.available",
                json!("10%"),
                "kubelet.eviction_hard[\"disk.available\"]",
            ),
            (false, "/kubelet/max_pods", json!(-1), "kubelet.max_pods"),
            (
                false,
                "/kubelet/max_pods",
                json!(3_000_000_000_i64),
                "kubelet.max_pods",
            ),
            (false, "/ip_prefix_count", json!(1.5), "ip_prefix_count"),
            (
                false,
                "/instance_store_policy",
                json!("RAID1"),
                "instance_store_policy",
            ),
            (
                false,
                "/cpu_options/nested_virtualization",
                json!("on"),
                "cpu_options.nested_virtualization",
            ),
        ]
    }

    #[test]
    fn invalid_inputs_fail_at_their_attribute() {
        let cases = invalid_cases();
        assert!(cases.len() >= 45, "{} cases", cases.len());
        for (alias_base, pointer, value, expected) in cases {
            let mut class = if alias_base { with_alias() } else { detailed() };
            put(&mut class, pointer, value.clone());
            let d = check(&class);
            let paths = error_paths(&d);
            assert!(
                paths.iter().any(|p| p == expected),
                "{pointer} = {value}: expected an error at {expected}, got {paths:?}"
            );
        }
    }

    #[test]
    fn alias_families_and_ami_family() {
        for (alias, family, ok) in [
            ("al2@latest", "AL2", true),
            ("al2@latest", "Custom", true),
            ("bottlerocket@v1.20.0", "Bottlerocket", true),
            ("windows2025@latest", "Windows2025", true),
            ("windows2019@latest", "Windows2022", false),
            ("al2023@latest", "AL2", false),
        ] {
            let mut class = with_alias();
            put(&mut class, "/ami_selector_terms/0/alias", json!(alias));
            put(&mut class, "/ami_family", json!(family));
            let d = check(&class);
            assert_eq!(d.is_empty(), ok, "{alias} with {family}: {d}");
        }
    }

    /// X1 is stricter than the CRD: one offending term is enough (the CRD's `!self.all` form
    /// only rejects a list where every term offends).
    #[test]
    fn selector_exclusivity_follows_the_crd() {
        // The CRD refuses `id` combined with another field only when every term does so
        // (`!self.all(...)`); one clean term makes the list acceptable to the API server.
        let mut class = detailed();
        put(&mut class, "/subnet_selector_terms/0/tags", json!({"Name": "x"}));
        let d = check(&class);
        assert!(d.is_empty(), "{d}");
        put(
            &mut class,
            "/subnet_selector_terms/1/id",
            json!("subnet-0123456789abcdef1"),
        );
        assert_eq!(
            error_paths(&check(&class)),
            vec!["subnet_selector_terms[0].id", "subnet_selector_terms[1].id"]
        );
    }

    #[test]
    fn unknown_values_are_not_judged() {
        let mut class = detailed();
        put(&mut class, "/role", json!(UNKNOWN));
        put(&mut class, "/ami_family", json!(UNKNOWN));
        put(&mut class, "/ami_selector_terms/0", json!(UNKNOWN));
        put(&mut class, "/subnet_selector_terms/0/id", json!(UNKNOWN));
        put(
            &mut class,
            "/block_device_mappings/1/ebs/snapshot_id",
            json!(UNKNOWN),
        );
        put(&mut class, "/network_interfaces/0/device_index", json!(UNKNOWN));
        put(&mut class, "/kubelet/eviction_soft_grace_period", json!(UNKNOWN));
        put(
            &mut class,
            "/connection_tracking/tcp_established_timeout",
            json!(UNKNOWN),
        );
        put(&mut class, "/placement_group_selector/name", json!(UNKNOWN));
        let d = check(&class);
        assert!(d.is_empty(), "{d}");

        // No alias known yet: ami_family cannot be demanded.
        let mut class = with_alias();
        put(&mut class, "/ami_selector_terms/0/alias", json!(UNKNOWN));
        assert!(check(&class).is_empty());
        let mut class = with_alias();
        put(&mut class, "/ami_selector_terms", json!(UNKNOWN));
        put(&mut class, "/role", json!(UNKNOWN));
        assert!(check(&class).is_empty());
    }

    #[test]
    fn create_plans_the_server_defaults() {
        let planned = plan_create(&EC2_NODE_CLASS, &config(&EC2_NODE_CLASS, &with_alias()));
        let m = planned.get("metadata_options").expect("metadata_options");
        assert_eq!(m.get("http_endpoint"), Some(&Value::string("enabled")));
        assert_eq!(m.get("http_protocol_ipv6"), Some(&Value::string("disabled")));
        assert_eq!(
            m.get("http_put_response_hop_limit"),
            Some(&Value::Number(Number::from_i64(1)))
        );
        assert_eq!(m.get("http_tokens"), Some(&Value::string("required")));
        assert_eq!(planned.get("wait_for_ready"), Some(&Value::Bool(false)));
        assert!(planned.get("status").is_some_and(Value::is_unknown));
        assert_eq!(planned.get("kubelet"), Some(&Value::Null));
        assert!(planned.conforms_to(&EC2_NODE_CLASS.value_type()).is_ok());

        // A partial metadata_options gets the other fields' defaults, as the API server does.
        let mut class = with_alias();
        class["metadata_options"] = json!({"http_put_response_hop_limit": 2});
        let planned = plan_create(&EC2_NODE_CLASS, &config(&EC2_NODE_CLASS, &class));
        let m = planned.get("metadata_options").expect("metadata_options");
        assert_eq!(
            m.get("http_put_response_hop_limit"),
            Some(&Value::Number(Number::from_i64(2)))
        );
        assert_eq!(m.get("http_tokens"), Some(&Value::string("required")));
        assert_eq!(m.get("http_endpoint"), Some(&Value::string("enabled")));
    }

    #[test]
    fn second_plan_is_empty_and_name_replaces() {
        let cfg = config(&EC2_NODE_CLASS, &detailed());
        let mut state = plan_create(&EC2_NODE_CLASS, &cfg);
        if let Value::Object(fields) = &mut state {
            let status = crate::resources::kube::v1::testing::typed(
                EC2_NODE_CLASS
                    .attribute("status")
                    .and_then(|a| a.nested())
                    .map(|(_, n)| n)
                    .expect("status"),
                &json!({"instance_profile": "KarpenterNodeInstanceProfile-demo",
                        "subnets": [{"id": "subnet-0123456789abcdef0", "zone": "us-east-1a", "zone_id": "use1-az1"}]}),
            );
            fields.insert("status".into(), status);
        }
        let again = plan(&EC2_NODE_CLASS.attributes, &EC2_NODE_CLASS.blocks, &cfg, &state);
        assert_eq!(again.planned, state);

        let mut renamed = detailed();
        renamed["name"] = json!("gpu-2");
        let p = plan(
            &EC2_NODE_CLASS.attributes,
            &EC2_NODE_CLASS.blocks,
            &config(&EC2_NODE_CLASS, &renamed),
            &state,
        );
        assert_eq!(p.requires_replace, vec![AttributePath::root().attr("name")]);
    }
}
