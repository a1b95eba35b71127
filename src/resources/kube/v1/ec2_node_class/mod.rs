//! Schema and offline validation of `karpenter_ec2_node_class` (karpenter.k8s.aws/v1
//! EC2NodeClass, CRD v1.14.1, with its typed `kubelet`): every `spec` field as a typed attribute,
//! the `metadataOptions` server defaults declared with the same values, and every rule the CRD
//! enforces that can be checked without a cluster or AWS.
//!
//! Per-attribute and per-list rules are validators on the attributes; [`validate_ec2_node_class`]
//! adds the rules that span attributes (E1–E8).

use std::sync::LazyLock;

use serde_json::{Map, Value as Json};

use crate::context::plan_memory::PlanMemory;
use crate::resources::kube::kind::attributes::{
    force_destroy_attribute, metadata_attribute, name_attribute, timeouts_block,
};
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::{elements, has, invalid};
use crate::terraform::framework::upgrade::{UpgradeError, to_dynamic};
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

pub(crate) mod ami_family;
pub(crate) mod instance;
pub(crate) mod kubelet;
pub(crate) mod selectors;
pub(crate) mod status;

use instance::{block_device_mappings, connection_tracking, metadata_options, network_interfaces};
use kubelet::kubelet;
use selectors::{
    alias_format, capacity_reservation_selector_terms, placement_group_selector,
    security_group_selector_terms, subnet_selector_terms, tag_selector,
};
use status::status;

const AMI_FAMILIES: &[&str] = &[
    "AL2",
    "AL2023",
    "Bottlerocket",
    "Custom",
    "Windows2019",
    "Windows2022",
    "Windows2025",
];

/// What `force_destroy` does for this kind (its docs, and the error that suggests it).
pub const EC2_NODE_CLASS_CLEANUP: &str = "it terminates the EC2 instances tagged `karpenter.k8s.aws/ec2nodeclass` = this class's name and \
                 `kubernetes.io/cluster/<cluster name>` = `owned`, deletes the launch templates tagged with this \
                 class's name and the cluster's (`eks:eks-cluster-name`, or `karpenter.k8s.aws/cluster` as older \
                 v1 releases tag them), and the instance profile Karpenter created for the class (the one in \
                 `status.instance_profile` when `role` is set, and only if it is tagged with the class's and the \
                 cluster's name), then removes the finalizers of the class, of its NodeClaims and of their Nodes, and deletes \
                 the NodeClaims and Nodes.";

/// The schema of `karpenter_ec2_node_class`.
pub static EC2_NODE_CLASS: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        format!("A Karpenter EC2NodeClass (`karpenter.k8s.aws/v1`): the AWS settings of the nodes that node pools \
         launch — AMIs, subnets, security groups, IAM role or instance profile, block devices, user data, \
         instance metadata options, kubelet settings. The attributes follow the EC2NodeClass `spec` field by \
         field (`amiSelectorTerms` → `ami_selector_terms`). Plan validates everything the CRD checks. \
         {} {} {}", crate::resources::kube::kind::describe::PLAN_READS_CRD, crate::resources::kube::kind::describe::PLAN_READS_NODE_CLAIMS, crate::resources::kube::kind::describe::PLAN_READS_HEALTH),
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
            Attribute::object(
                "enclave_options",
                vec![
                    Attribute::bool("enabled")
                        .required()
                        .describe("Whether the instances run with AWS Nitro Enclaves enabled."),
                ],
            )
            .describe(
                "AWS Nitro Enclaves on the instances (Karpenter v1.15 and later). With `enabled = true` Karpenter \
                 enables enclaves in the launch template and launches only instance types that support them; \
                 omitted or `false`, enclaves are off. Karpenter installs nothing on the node for enclaves (no \
                 enclave CLI, device plugin or allocator, no CPU or memory set aside): do that in `user_data`, and \
                 keep a NodeOverlay's capacity in line with what the device plugin advertises. Enclaves are not \
                 available in Local Zones, Wavelength Zones or Outposts: select subnets of regular Availability \
                 Zones. A change replaces the nodes of this class (drift).",
            ),
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
                .validate(rules::numbers::whole_number(Some(0), true)),
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
            force_destroy_attribute("EC2NodeClass", EC2_NODE_CLASS_CLEANUP),
        ],
    )
    .with_blocks(vec![timeouts_block()])
    .with_upgrade_steps(&[max_pods_to_dynamic])
});

/// Version 0 → 1: `kubelet.max_pods`, a number until 0.1.x, takes a number or (Karpenter v1.15)
/// a CEL expression: its stored value becomes a dynamic one.
fn max_pods_to_dynamic(mut state: Map<String, Json>) -> Result<Map<String, Json>, UpgradeError> {
    if let Some(Json::Object(kubelet)) = state.get_mut("kubelet")
        && let Some(max_pods) = kubelet.remove("max_pods")
    {
        kubelet.insert("max_pods".to_string(), to_dynamic(max_pods));
    }
    Ok(state)
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

/// Cross-attribute rules of the EC2NodeClass CRD: E1 (exactly one of `role` and
/// `instance_profile`), E2–E7 (an alias family fixes `ami_family` to its own family or `Custom`)
/// and E8 (`ami_family` is required when no AMI term uses an alias); and the API server's
/// 256 KiB limit on the object's annotations together.
pub fn validate_ec2_node_class(config: &Value, memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    rules::labels::annotations_total_size(
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

    kubelet::families::check(config, diags);
    kubelet::expressions::check_evaluation(config, memory, diags);
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
        let Some(implied) = ami_family::of_alias(alias) else {
            continue;
        };
        if let Some(set) = family.as_str()
            && set != implied
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
mod tests;
