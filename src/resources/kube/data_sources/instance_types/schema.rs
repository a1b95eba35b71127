//! The schema of `data "karpenter_instance_types"`: the NodePool's own `requirements`
//! attribute as the filter, where the answer comes from (the offline table or EC2), and the
//! matching types with Karpenter's labels, allocatable resources and on-demand price.

use std::sync::LazyLock;

use crate::instance_types::catalog;
use crate::resources::kube::v1::node_pool;
use crate::terraform::framework::validate::{self as v};
use crate::terraform::framework::{Attribute, Mode, Schema};
use crate::terraform::tfvalue::Type;

/// `source`: the table compiled into the provider.
pub const OFFLINE: &str = "offline";
/// `source`: ask EC2.
pub const EC2: &str = "ec2";

fn string(name: &'static str, description: &str) -> Attribute {
    Attribute::string(name)
        .computed()
        .describe(description.to_string())
}

fn number(name: &'static str, description: &str) -> Attribute {
    Attribute::number(name)
        .computed()
        .describe(description.to_string())
}

fn instance_type_attributes() -> Vec<Attribute> {
    vec![
        string("name", "Instance type, e.g. `m7g.large` (`node.kubernetes.io/instance-type`)."),
        string("category", "`karpenter.k8s.aws/instance-category`, e.g. `m`."),
        string("family", "`karpenter.k8s.aws/instance-family`, e.g. `m7g`."),
        number("generation", "`karpenter.k8s.aws/instance-generation`, e.g. `7`."),
        string("size", "`karpenter.k8s.aws/instance-size`, e.g. `large`."),
        string("arch", "`kubernetes.io/arch`: `amd64` or `arm64`."),
        number("cpu", "`karpenter.k8s.aws/instance-cpu`: vCPUs."),
        number("memory_mib", "`karpenter.k8s.aws/instance-memory`: memory in MiB."),
        string("cpu_manufacturer", "`karpenter.k8s.aws/instance-cpu-manufacturer`: `intel`, `amd` or `aws`."),
        string(
            "hypervisor",
            "`karpenter.k8s.aws/instance-hypervisor`: `nitro`, `xen`, or empty on bare metal.",
        ),
        number("gpu_count", "`karpenter.k8s.aws/instance-gpu-count`; null without GPUs."),
        string("gpu_name", "`karpenter.k8s.aws/instance-gpu-name`, e.g. `l4`; null without GPUs."),
        string(
            "gpu_manufacturer",
            "`karpenter.k8s.aws/instance-gpu-manufacturer`, e.g. `nvidia`; null without GPUs.",
        ),
        number("gpu_memory_mib", "`karpenter.k8s.aws/instance-gpu-memory` (MiB per GPU); null without GPUs."),
        number("accelerator_count", "`karpenter.k8s.aws/instance-accelerator-count`; null without accelerators."),
        string(
            "accelerator_name",
            "`karpenter.k8s.aws/instance-accelerator-name`, e.g. `inferentia2`; null without accelerators.",
        ),
        number(
            "network_bandwidth_mbps",
            "`karpenter.k8s.aws/instance-network-bandwidth` (baseline, Mbit/s); null where Karpenter has no figure.",
        ),
        number(
            "ebs_bandwidth_mbps",
            "`karpenter.k8s.aws/instance-ebs-bandwidth` (Mbit/s); null where EBS optimisation is not the default.",
        ),
        number("local_nvme_gib", "`karpenter.k8s.aws/instance-local-nvme` (GiB of NVMe instance store); null without."),
        Attribute::map_of("labels", Type::String).computed().describe(
            "Every label Karpenter gives the type, by key (`karpenter.k8s.aws/…`, `kubernetes.io/arch`, \
             `node.kubernetes.io/instance-type`). On EKS Auto Mode the instance labels are named \
             `eks.amazonaws.com/…` instead, with the same values.",
        ),
        Attribute::map_of("allocatable", Type::String).computed().describe(
            "What Karpenter computes a node of this type offers pods after its overhead, by resource (`cpu`, \
             `memory`, `pods`, `ephemeral-storage`, and extended resources such as `nvidia.com/gpu`), as \
             quantities: with an `AL2023` node class, no block device mappings and Karpenter's default \
             kube-reserved and eviction settings.",
        ),
        number(
            "on_demand_price",
            "On-demand price in USD per hour from Karpenter's built-in price table (see `price_region`); null where \
             the table has none.",
        ),
        Attribute::list_of("zones", Type::String)
            .computed()
            .describe("With `source = \"ec2\"` and `zones` set: the zones of those that offer the type. Otherwise empty."),
    ]
}

/// The schema.
pub static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let mut requirements = node_pool::requirements();
    requirements.mode = Mode::Optional;
    requirements.description = "The filter: the same attribute as a `karpenter_node_pool`'s \
        `template.spec.requirements`, with the same rules (`key`, `operator` `In`/`NotIn`/`Exists`/`DoesNotExist`/\
        `Gt`/`Lt`/`Gte`/`Lte`, `values`, `min_values`) and Karpenter's meaning. EKS Auto Mode's \
        `eks.amazonaws.com/instance-…` keys work as well as `karpenter.k8s.aws/instance-…`. Keys the data does not \
        describe (`karpenter.sh/capacity-type`, zones, `kubernetes.io/os`, custom labels) select everything. Unset: \
        every instance type."
        .to_string();
    Schema::new(
        format!(
            "Which EC2 instance types a set of NodePool requirements lets Karpenter launch, and what they offer and \
             cost, before anything is applied. Offline by default, from Karpenter {version}'s generated instance-type \
             reference ({count} types, compiled into the provider) and its built-in {region} on-demand prices; with \
             `source = \"ec2\"` the provider asks EC2 (`DescribeInstanceTypes` and `DescribeInstanceTypeOfferings`, \
             with the provider's `aws {{}}` settings) which types your region or zones offer. The answer follows \
             Karpenter's requirement semantics, so it is what a pool with these requirements may launch; pods' own \
             constraints, capacity type and zone narrow it further at run time.",
            version = catalog::KARPENTER_VERSION,
            count = catalog::all().len(),
            region = catalog::PRICE_REGION,
        ),
        vec![
            requirements,
            Attribute::string("source")
                .optional()
                .describe(
                    "Where the answer comes from: `offline` (the default; no network, the data compiled into the \
                     provider) or `ec2` (the region's own instance types, through the provider's `aws {}` block; \
                     needs `ec2:DescribeInstanceTypes` and `ec2:DescribeInstanceTypeOfferings`).",
                )
                .validate(v::one_of(&[OFFLINE, EC2])),
            Attribute::string("region")
                .optional()
                .describe("With `source = \"ec2\"`: the region to ask. Defaults to the provider's `aws { region }`."),
            Attribute::list_of("zones", Type::String)
                .optional()
                .describe(
                    "With `source = \"ec2\"`: only types offered in at least one of these availability zones \
                     (e.g. `[\"us-east-1a\", \"us-east-1b\"]`).",
                )
                .validate(v::each(v::non_empty())),
            Attribute::list_of_objects("instance_types", instance_type_attributes())
                .computed()
                .describe("The matching instance types, cheapest first (types without a price last, then by name)."),
            Attribute::list_of("names", Type::String)
                .computed()
                .describe("The names of `instance_types`, in the same order."),
            number(
                "match_count",
                "How many instance types match (`count` is a name Terraform reserves).",
            ),
            string("cheapest", "The matching type with the lowest on-demand price; null when none has a price."),
            string(
                "largest_by_cpu",
                "The matching type with the most vCPUs (ties: more memory, then the lower price); null when none matches.",
            ),
            string(
                "largest_by_memory",
                "The matching type with the most memory (ties: more vCPUs, then the lower price); null when none matches.",
            ),
            Attribute::map_of("min_values_unmet", Type::Number).computed().describe(
                "For each requirement key whose `min_values` the matching types cannot meet: how many distinct values \
                 they have. Empty when every `min_values` is met; a NodePool with these requirements would launch \
                 nothing otherwise (Karpenter's default `minValuesPolicy: Strict`).",
            ),
            string("karpenter_version", "The Karpenter version whose instance-type reference the offline data is."),
            string("price_region", "The region of the on-demand prices (Karpenter's built-in table is for one region)."),
        ],
    )
});
