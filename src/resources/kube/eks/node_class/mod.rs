//! Schema and offline validation of `karpenter_eks_node_class` (EKS Auto Mode's NodeClass,
//! `eks.amazonaws.com/v1`): the AWS settings of the nodes Auto Mode launches for the pools that
//! name the class — node IAM role or instance profile, subnets and security groups (for nodes
//! and, optionally, for pods), capacity reservations, a placement group, SNAT and network-policy
//! settings, the node's ephemeral storage, advanced networking ([`networking`]: public IPs, an
//! HTTPS proxy, the pod IP mode, IPv4 egress, static network interfaces), advanced security
//! (FIPS AMIs, kernel lockdown), extra CA bundles, and EC2 tags.
//!
//! AWS publishes no CRD for this kind. Two sources, restated in the test CRD
//! `acceptance-tests/crds/eks-auto-mode/` (which marks what comes from where): the JSON Schema
//! generated from the live CRD of an EKS 1.31 cluster (imroc/kubeschemas, Dec 2024) for the
//! fields it has, with their server defaults, patterns, ranges and rules; and the NodeClass
//! reference of the EKS user guide for every field added since. The test in `tests.rs` keeps the
//! schema and that CRD in step, defaults included. Every rule is checked at plan: per attribute
//! (patterns, enums, ranges, counts, restricted tag keys) and, in [`validate_eks_node_class`],
//! across attributes (not both `role` and `instance_profile`, pod subnets need pod security
//! groups, a custom class is not named `default`).
//!
//! A class with neither `role` nor `instance_profile` is valid, as in the guide's basic example
//! and most of AWS's published Auto Mode manifests: its nodes run as the node role of the
//! cluster's Auto Mode compute configuration (`computeConfig.nodeRoleArn`), the role of the
//! built-in `default` class.

use std::sync::LazyLock;

use crate::aws_names;
use crate::context::plan_memory::PlanMemory;
use crate::resources::kube::kind::attributes::{
    conditions_attribute, metadata_attribute, name_attribute, object_with, timeouts_block,
};
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::has;
use crate::resources::kube::object::STATUS_IN_PLANS;
use crate::resources::kube::v1::ec2_node_class::selectors::{
    exclusive_terms, placement_group_selector, security_group_selector_terms, subnet_selector_terms,
    tag_selector,
};
use crate::resources::kube::v1::ec2_node_class::status::{status_security_groups, status_subnets};
use crate::terraform::framework::validate::{self as v};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Number, Type, Value};

mod networking;
pub use networking::IPV4_PREFIX_SIZES;

/// The name of the node class EKS itself manages on an Auto Mode cluster.
pub const BUILT_IN_NODE_CLASS: &str = "default";

/// Tag keys EKS sets on what it launches, which a NodeClass may not set: the live CRD's rules
/// and the guide's list agree on these, plus every key that starts with
/// [`RESTRICTED_TAG_PREFIX`].
pub const RESTRICTED_TAG_KEYS: &[&str] = &[
    "karpenter.sh/provisioner-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.sh/managed-by",
    "eks.amazonaws.com/nodeclass",
];

/// The live CRD refuses every tag key that starts with this (no `/` after it: a key such as
/// `kubernetes.io/clusterx` is refused too).
pub const RESTRICTED_TAG_PREFIX: &str = "kubernetes.io/cluster";

/// The longest `role` the live CRD accepts (an IAM role name is at most 64 characters).
pub const ROLE_MAX_LENGTH: usize = 64;

/// The node's ephemeral storage size: 1–59000Gi, 1–64000G, 1–58Ti or 1–64T, as the guide states
/// the ranges (see the module comment of the test CRD for where the live CRD's pattern differs).
pub const EPHEMERAL_SIZE: &str = r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|5[0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-3][0-9]{3}|64000)G|(?:[1-9]|[1-4][0-9]|5[0-8])Ti|(?:[1-9]|[1-5][0-9]|6[0-4])T)$";

/// A KMS key in one of the four forms the guide accepts: key ID, key ARN, alias name, alias ARN.
const KMS_KEY: &str = r"^((mrk-)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|(mrk-)?[0-9a-f]{32}|alias/[a-zA-Z0-9/_-]+|arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key/[a-z0-9-]+|alias/[a-zA-Z0-9/_-]+))$";

/// The schema of `karpenter_eks_node_class`.
pub static EKS_NODE_CLASS: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        format!("An EKS Auto Mode NodeClass (`eks.amazonaws.com/v1`): the AWS settings of the nodes Auto Mode launches \
         for the node pools that name it — node IAM role, subnets and security groups for nodes and pods, \
         capacity reservations, SNAT and network policy, ephemeral storage, public IPs and an HTTPS proxy, FIPS \
         AMIs, extra CA bundles and tags; a placement group and static network interfaces (EFA) for training \
         nodes. Only on clusters with EKS Auto Mode enabled: EKS installs the kind and \
         runs its controller (on a cluster without it, apply says so instead of waiting). The attributes follow the \
         NodeClass reference of the EKS user guide field by field (`subnetSelectorTerms` → \
         `subnet_selector_terms`), and declare the server's defaults, so an imported class plans empty. A \
         custom node role needs an EKS access entry of type `EC2` with the `AmazonEKSAutoNodePolicy` access \
         policy: `karpenter_node_role` with `mode = \"eks_auto_mode\"` and `eks_access_entry` makes both. Plan \
         validates every rule the guide and the live CRD state. {} {} {}", crate::resources::kube::kind::describe::PLAN_READS_CRD, crate::resources::kube::kind::describe::PLAN_READS_NODE_CLAIMS, crate::resources::kube::kind::describe::PLAN_READS_HEALTH),
        vec![
            name_attribute("NodeClass"),
            metadata_attribute("NodeClass"),
            Attribute::string("role")
                .replace_on_change()
                .describe(
                    "Name of the IAM role the nodes use (at most 64 characters); EKS makes the instance profile for \
                     it. The role needs an EKS access entry of type `EC2` with the `AmazonEKSAutoNodePolicy` policy. \
                     Not together with `instance_profile`; with neither, the nodes use the node role of the \
                     cluster's Auto Mode compute configuration (`compute_config.node_role_arn`), as the built-in \
                     `default` class does. It cannot change in place (the API refuses it), so a change replaces the \
                     class.",
                )
                .validate(v::length(1, ROLE_MAX_LENGTH)),
            Attribute::string("instance_profile")
                .describe(
                    "Name of an existing IAM instance profile for the nodes (you manage it, e.g. with \
                     hashicorp/aws `aws_iam_instance_profile`); the name must start with `eks`. Not together with \
                     `role`.",
                )
                .validate(v::matches("^eks", "an instance profile name that starts with `eks`")),
            subnet_selector_terms(),
            security_group_selector_terms(),
            pod_selector_terms(
                "pod_subnet_selector_terms",
                "subnet",
                "subnet-[0-9a-z]+",
                "a subnet ID such as `subnet-0123456789abcdef0`",
                "Subnets for pod IP addresses, apart from the nodes' subnets (1 to 30 terms; each sets `id` or \
                 `tags`, not both). Needs `pod_security_group_selector_terms`.",
            ),
            pod_selector_terms(
                "pod_security_group_selector_terms",
                "security group",
                "sg-[0-9a-z]+",
                "a security group ID such as `sg-0123456789abcdef0`",
                "Security groups for the pods in `pod_subnet_selector_terms` (1 to 30 terms; each sets `id` or \
                 `tags`, not both).",
            ),
            capacity_reservation_selector_terms(),
            placement_group_selector().describe(
                "An EC2 placement group (made beforehand) to launch the nodes in, by `name` or by `id` (exactly one). \
                 A cluster placement group keeps the nodes in the zone of the first one: pin the zone in the pools' \
                 requirements.",
            ),
            Attribute::string("snat_policy")
                .default_value(Value::string("Random"))
                .describe(
                    "Source NAT of pod traffic leaving the VPC: `Random` (the default) translates to the node's \
                     address; `Disabled` sends pod addresses as they are (for private networks with their own NAT).",
                )
                .validate(v::one_of(&["Random", "Disabled"])),
            Attribute::string("network_policy")
                .default_value(Value::string("DefaultAllow"))
                .describe(
                    "What Kubernetes network policies start from on these nodes: `DefaultAllow` (the default) or \
                     `DefaultDeny`.",
                )
                .validate(v::one_of(&["DefaultAllow", "DefaultDeny"])),
            Attribute::string("network_policy_event_logs")
                .default_value(Value::string("Disabled"))
                .describe("Whether network policy decisions are logged: `Enabled` or `Disabled` (the default).")
                .validate(v::one_of(&["Enabled", "Disabled"])),
            ephemeral_storage(),
            networking::advanced_networking(),
            advanced_security(),
            Attribute::list_of_objects(
                "certificate_bundles",
                vec![
                    Attribute::string("name")
                        .required()
                        .describe("Name of the bundle.")
                        .validate(v::non_empty()),
                    Attribute::string("data")
                        .required()
                        .describe("The certificates, base64-encoded.")
                        .validate(v::non_empty()),
                ],
            )
            .describe("Extra certificate authorities the nodes trust (e.g. for an HTTPS proxy that inspects traffic)."),
            Attribute::map_of("tags", Type::String)
                .describe(
                    "Tags put on the EC2 resources Auto Mode creates for the class. Keys EKS sets itself are not \
                     allowed: any key starting with `kubernetes.io/cluster`, `karpenter.sh/provisioner-name`, \
                     `karpenter.sh/nodepool`, `karpenter.sh/nodeclaim`, `karpenter.sh/managed-by`, \
                     `eks.amazonaws.com/nodeclass`.",
                )
                .validate(restricted_tags()),
            status(),
            Attribute::bool("wait_for_ready")
                .default_value(Value::Bool(false))
                .not_on_wire()
                .describe(
                    "When true, create and update return only once EKS reports the class `Ready` (subnets, \
                     security groups and instance profile resolved), and fail with the condition messages if that \
                     does not happen within the timeout.",
                ),
        ],
    )
    .with_blocks(vec![timeouts_block()])
});

fn pod_selector_terms(
    name: &'static str,
    what: &'static str,
    id_pattern: &'static str,
    id_what: &'static str,
    description: &'static str,
) -> Attribute {
    Attribute::list_of_objects(
        name,
        vec![
            Attribute::string("id")
                .describe(format!("A {what} ID; cannot be combined with `tags`."))
                .validate(v::matches(id_pattern, id_what)),
            tag_selector(&format!("{what}s")),
        ],
    )
    .describe(description)
    .validate(v::count(1, 30))
    .validate(exclusive_terms(what, &["tags", "id"], &[("id", &["tags"])]))
}

fn capacity_reservation_selector_terms() -> Attribute {
    Attribute::list_of_objects(
        "capacity_reservation_selector_terms",
        vec![
            Attribute::string("id")
                .describe("A capacity reservation ID, e.g. `cr-0123456789abcdef0`; stands alone.")
                .validate(v::matches("^cr-[0-9a-z]+$", "a capacity reservation ID such as `cr-0123456789abcdef0`")),
            Attribute::string("owner")
                .describe("Account ID (12 digits) that owns the reservations a `tags` term selects.")
                .validate(aws_names::aws_account_id_validator()),
            tag_selector("capacity reservations"),
        ],
    )
    .describe(
        "On-Demand Capacity Reservations and Capacity Blocks the nodes use first (1 to 30 terms; each sets `id` \
         alone, or `tags` with an optional `owner`). Setting this on any NodeClass stops Auto Mode from using open \
         capacity reservations automatically, for the whole cluster.",
    )
    .validate(v::count(1, 30))
    .validate(exclusive_terms(
        "capacity reservation",
        &["tags", "id"],
        &[("id", &["tags", "owner"])],
    ))
}

fn ephemeral_storage() -> Attribute {
    let attributes = vec![
        Attribute::string("size")
            .default_value(Value::string("80Gi"))
            .describe("Size of the node's volume: 1–59000Gi, 1–64000G, 1–58Ti or 1–64T (default `80Gi`).")
            .validate(v::matches(
                EPHEMERAL_SIZE,
                "a size of 1–59000Gi, 1–64000G, 1–58Ti or 1–64T, e.g. `100Gi`",
            )),
        Attribute::number("iops")
            .default_value(Value::number(3000))
            .describe("Provisioned IOPS of the gp3 volume: 3000 (the default) to 16000.")
            .validate(v::int_range(3000, 16000)),
        Attribute::number("throughput")
            .default_value(Value::number(125))
            .describe("Throughput of the gp3 volume in MiB/s: 125 (the default) to 1000.")
            .validate(v::int_range(125, 1000)),
        Attribute::string("kms_key_id")
            .wire_name("kmsKeyID")
            .describe(
                "KMS key that encrypts the volume: a key ID, key ARN, alias name (`alias/…`) or alias ARN. \
                     Unset: the account's default EBS key.",
            )
            .validate(v::matches(
                KMS_KEY,
                "a KMS key ID, key ARN, alias name (`alias/…`) or alias ARN",
            )),
    ];
    // The live CRD defaults the whole object, not only its fields: a class without
    // `ephemeralStorage` is stored with all three values.
    let default = object_with(
        &attributes,
        &[
            ("size", Value::string("80Gi")),
            ("iops", Value::Number(Number::from_i64(3000))),
            ("throughput", Value::Number(Number::from_i64(125))),
        ],
    );
    Attribute::object("ephemeral_storage", attributes)
        .default_value(default)
        .describe(
            "The node's data volume, which holds images, logs and pods' ephemeral storage. Default: `80Gi`, 3000 \
             IOPS, 125 MiB/s, the account's default EBS key.",
        )
}

/// The kernel lockdown modes, in lower case as the guide gives them.
pub const KERNEL_LOCKDOWN_MODES: &[&str] = &["integrity", "none"];

fn advanced_security() -> Attribute {
    Attribute::object(
        "advanced_security",
        vec![
            Attribute::bool("fips").describe(
                "Run AMIs with FIPS-validated cryptographic modules on the nodes (in the AWS Regions that offer them). \
                 Unset: no.",
            ),
            Attribute::string("kernel_lockdown")
                .describe(
                    "Kernel lockdown mode of the nodes, in lower case as the guide writes it: `integrity` (no \
                     unsigned kernel modules, no writes to kernel memory) or `none`.",
                )
                .validate(v::one_of(KERNEL_LOCKDOWN_MODES)),
        ],
    )
    .describe("Security settings of the nodes' operating system.")
}

fn restricted_tags() -> impl v::Validator {
    v::each_key(v::check(
        "Keys must not be empty and must not be keys EKS sets itself (any key starting with `kubernetes.io/cluster`, \
         and the listed ones).",
        |value| {
            let key = value.as_str()?;
            if key.is_empty() {
                return Some("Tag keys must not be empty.".to_string());
            }
            (key.starts_with(RESTRICTED_TAG_PREFIX) || RESTRICTED_TAG_KEYS.contains(&key)).then(|| {
                format!("The tag {key:?} is set by EKS Auto Mode and cannot be set here; remove it.")
            })
        },
    ))
}

fn status() -> Attribute {
    Attribute::object(
        "status",
        vec![
            conditions_attribute(),
            status_subnets(),
            status_security_groups(),
            Attribute::string("instance_profile").computed().describe(
                "Instance profile the nodes use (the one EKS makes for `role`, or `instance_profile`).",
            ),
        ],
    )
    .computed()
    .not_on_wire()
    .describe(format!(
        "What EKS Auto Mode reports about the class (read only). {STATUS_IN_PLANS} An update that changes \
         `instance_profile` plans `instance_profile` known after apply."
    ))
}

fn invalid(diags: &mut Diagnostics, path: &AttributePath, detail: impl Into<String>) {
    diags.error_at(path, "Invalid attribute value", detail);
}

/// The rules across attributes: not both `role` and `instance_profile` (neither is fine: the
/// cluster's node role); pod subnets need pod security groups; `default` is the built-in
/// class's name. Unknown values decide nothing.
pub fn validate_eks_node_class(config: &Value, _memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    rules::labels::annotations_total_size(
        config.get("metadata").and_then(|m| m.get("annotations")),
        &root.attr("metadata").attr("annotations"),
        diags,
    );
    if config.get("name").and_then(Value::as_str) == Some(BUILT_IN_NODE_CLASS) {
        invalid(
            diags,
            &root.attr("name"),
            "\"default\" is the name of the NodeClass EKS Auto Mode manages itself (its built-in pools use it): give \
             a custom NodeClass another name. To use the built-in class, point a pool's node_class_ref at \
             \"default\" without declaring it here.",
        );
    }
    if (has(config, "role"), has(config, "instance_profile")) == (Some(true), Some(true)) {
        invalid(
            diags,
            &root.attr("instance_profile"),
            "Set role or instance_profile, not both: with role, EKS makes the instance profile for that role; with \
             instance_profile, you provide it; with neither, the nodes use the node role of the cluster's Auto Mode \
             compute configuration.",
        );
    }
    if has(config, "pod_subnet_selector_terms") == Some(true)
        && has(config, "pod_security_group_selector_terms") == Some(false)
    {
        invalid(
            diags,
            &root.attr("pod_subnet_selector_terms"),
            "Pods in separate subnets need security groups of their own: set pod_security_group_selector_terms \
             too, or remove pod_subnet_selector_terms.",
        );
    }
}

#[cfg(test)]
mod tests;
