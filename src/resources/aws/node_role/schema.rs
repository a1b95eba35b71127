//! The schema of `karpenter_node_role` and what its settings mean: the node policies for the
//! Karpenter shape and for the EKS Auto Mode shape (`mode`), the EC2 trust policy, and the EKS
//! access entry type and access policy each shape needs.

use std::sync::LazyLock;

use serde_json::{Value as Json, json};

use crate::aws_names;
use crate::aws_names::PARTITIONS;
use crate::resources::aws::{iam_role, tags_all};
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{Attribute, Diagnostics, Schema, validate as v};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

pub(super) const DEFAULT_PREFIX: &str = "karpenter-node-";
pub(super) const TYPE_NAME: &str = "karpenter_node_role";
pub(super) const ECR_POLICIES: &[&str] = &[
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonEC2ContainerRegistryReadOnly",
];
/// `mode`: the role of self-managed Karpenter's nodes, or of EKS Auto Mode's.
pub(super) const KARPENTER: &str = "karpenter";
pub(super) const EKS_AUTO_MODE: &str = "eks_auto_mode";
/// The managed policies the EKS guide names for the nodes of a custom Auto Mode NodeClass.
pub(super) const AUTO_MODE_POLICIES: &[&str] = &[
    "AmazonEKSWorkerNodeMinimalPolicy",
    "AmazonEC2ContainerRegistryPullOnly",
];
/// The EKS access policy an Auto Mode node's access entry (type `EC2`) is associated with.
pub(super) const AUTO_NODE_ACCESS_POLICY: &str = "AmazonEKSAutoNodePolicy";
/// Settings of the Karpenter shape that mean nothing for an Auto Mode role.
const KARPENTER_ONLY: &[&str] = &[
    "ip_family",
    "attach_cni_policy",
    "ecr_policy",
    "create_instance_profile",
];

pub(super) static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let mut attributes = iam_role::common_attributes(DEFAULT_PREFIX, "its instance profile");
    attributes.extend([
        Attribute::string("partition")
            .optional_computed()
            .stable()
            .replace_on_change()
            .describe("AWS partition the policy ARNs and the EC2 principal are built for. When unset, derived from the provider's region (`cn-*` → `aws-cn`, `us-gov-*` → `aws-us-gov`, `us-iso-*` → `aws-iso`, `us-isob-*` → `aws-iso-b`, `eu-isoe-*` → `aws-iso-e`, `us-isof-*` → `aws-iso-f`, `eusc-*` → `aws-eusc`, else `aws`).")
            .validate(v::one_of(PARTITIONS)),
        Attribute::string("mode")
            .default_value(Value::string(KARPENTER))
            .describe(
                "Which nodes the role is for. `karpenter` (the default): self-managed Karpenter's, with \
                 AmazonEKSWorkerNodePolicy, the CNI policy, the ECR policy and AmazonSSMManagedInstanceCore. \
                 `eks_auto_mode`: the nodes of a custom EKS Auto Mode NodeClass (`karpenter_eks_node_class.role`), \
                 with the two policies the EKS guide names for them, AmazonEKSWorkerNodeMinimalPolicy and \
                 AmazonEC2ContainerRegistryPullOnly, and no instance profile (EKS makes it); `ip_family`, \
                 `attach_cni_policy`, `ecr_policy` and `create_instance_profile` do not apply there. Changing it \
                 swaps the policies in place (and recreates the access entry, whose type follows it).",
            )
            .validate(v::one_of(&[KARPENTER, EKS_AUTO_MODE])),
        Attribute::object(
            "eks_access_entry",
            vec![Attribute::string("cluster_name")
                .required()
                .describe("Name of the EKS cluster whose nodes use the role.")
                .validate(aws_names::eks_cluster_name_validator())],
        )
        .describe(
            "Give the role's nodes access to the cluster with an EKS access entry, made and kept by this \
             resource. Its type follows `mode`: `EC2_LINUX` for Karpenter's nodes; `EC2` with the \
             `AmazonEKSAutoNodePolicy` access policy (cluster scope) for Auto Mode's, which Auto Mode requires \
             for a custom node role. The cluster must use the `API` or `API_AND_CONFIG_MAP` authentication mode. \
             Create never takes over an entry someone else made for the role: it fails and says how to import \
             it (`<role name>:<cluster name>`). A change of cluster deletes the entry in the old one.",
        ),
        Attribute::string("access_entry_type")
            .computed()
            .describe("Type of the access entry (`EC2_LINUX` or `EC2`), when `eks_access_entry` is set."),
        Attribute::string("access_entry_arn")
            .computed()
            .describe("ARN of the access entry, when `eks_access_entry` is set."),
        Attribute::list_of("access_policy_arns", Type::String)
            .computed()
            .describe(
                "Access policies associated with the access entry: `AmazonEKSAutoNodePolicy` for Auto Mode, none \
                 for `EC2_LINUX`. A policy removed or added outside Terraform shows here and the next apply puts \
                 it back.",
            ),
        Attribute::string("ip_family")
            .default_value(Value::string("ipv4"))
            .describe("IP family of the cluster: `ipv4` attaches AmazonEKS_CNI_Policy; `ipv6` attaches the account's `AmazonEKS_CNI_IPv6_Policy` (create it first, as the EKS IPv6 guide says).")
            .validate(v::one_of(&["ipv4", "ipv6"])),
        Attribute::bool("attach_cni_policy")
            .default_value(Value::Bool(true))
            .describe("Attach the CNI policy. Set false when the VPC CNI uses its own IRSA or Pod Identity role."),
        Attribute::string("ecr_policy")
            .default_value(Value::string(ECR_POLICIES[0]))
            .describe("The ECR policy nodes get: the pull-only policy Karpenter's reference uses, or the older read-only one.")
            .validate(v::one_of(ECR_POLICIES)),
        Attribute::bool("create_instance_profile")
            .default_value(Value::Bool(false))
            .describe("Create an instance profile of the role's name holding the role. Karpenter v1 creates its own profiles from the role name; this is for v1alpha5 / AWSNodeTemplate setups that name a profile."),
        Attribute::string("instance_profile_name").computed().describe("Name of the instance profile, when created."),
        Attribute::string("instance_profile_arn").computed().describe("ARN of the instance profile, when created."),
        Attribute::map_of("instance_profile_tags", Type::String)
            .computed()
            .describe("The instance profile's tags, which follow `tags_all`: a change made to them outside Terraform shows here and the next apply puts them back."),
        tags_all::attribute("the role and its instance profile"),
        Attribute::list_of("managed_policy_arns", Type::String)
            .computed()
            .describe("The node policies this resource attaches (besides `additional_policy_arns`)."),
    ]);
    Schema::new(
        "The IAM role for Karpenter's nodes, or for the nodes of a custom EKS Auto Mode NodeClass \
         (`mode = \"eks_auto_mode\"`): trusted by EC2, with the node policies of Karpenter's reference (or \
         the two the EKS guide names for Auto Mode) attached, optionally with an instance profile and \
         with the cluster's EKS access entry for the role (`eks_access_entry`). Drift in the trust policy, the \
         attached policies, inline policies added outside Terraform, the tags and the instance \
         profile is detected and repaired. Create never takes over an existing role or instance \
         profile of the same name, whoever made it — another Terraform state, a module, or an apply \
         of this configuration interrupted before Terraform recorded the role: it fails on `name`, \
         changes nothing, and gives the `import {}` block that takes the role over on purpose. The \
         parts the resource creates carry the tag `terraform-provider-karpenter/resource-type`; the \
         error says when an existing role has it. Import by role name, or by `<role name>:<cluster \
         name>` to take over its access entry too (the next apply may add that tag).",
        attributes,
    )
});

/// The ARN of the AWS managed policy `name` in `partition`.
pub(super) fn aws_managed_policy(partition: &str, name: &str) -> String {
    format!("arn:{partition}:iam::aws:policy/{name}")
}

/// The node policies for these settings, in a fixed order.
pub(super) fn node_policies(partition: &str, account: &str, ipv6: bool, cni: bool, ecr: &str) -> Vec<String> {
    let aws = |name: &str| aws_managed_policy(partition, name);
    let mut out = vec![aws("AmazonEKSWorkerNodePolicy")];
    if cni {
        out.push(if ipv6 {
            format!("arn:{partition}:iam::{account}:policy/AmazonEKS_CNI_IPv6_Policy")
        } else {
            aws("AmazonEKS_CNI_Policy")
        });
    }
    out.push(aws(ecr));
    out.push(aws("AmazonSSMManagedInstanceCore"));
    out
}

pub(super) fn policies_for(value: &Value, partition: &str, account: &str) -> Option<Vec<String>> {
    if is_auto_mode(value) {
        return Some(
            AUTO_MODE_POLICIES
                .iter()
                .map(|p| aws_managed_policy(partition, p))
                .collect(),
        );
    }
    let ipv6 = get_str(value, "ip_family")? == "ipv6";
    let cni = value.get("attach_cni_policy")?.as_bool()?;
    let ecr = get_str(value, "ecr_policy")?;
    Some(node_policies(partition, account, ipv6, cni, ecr))
}

pub(super) fn trust_policy(partition: &str) -> Json {
    json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": format!("ec2.{}", aws_names::dns_suffix(partition))},
            "Action": "sts:AssumeRole",
        }],
    })
}

pub(super) fn bool_of(value: &Value, name: &str) -> bool {
    value.get(name).and_then(Value::as_bool).unwrap_or(false)
}

/// Whether `value` (config, plan or state) is of the Auto Mode shape.
pub(super) fn is_auto_mode(value: &Value) -> bool {
    get_str(value, "mode") == Some(EKS_AUTO_MODE)
}

/// The access entry type for a shape.
pub(super) fn access_entry_type(value: &Value) -> &'static str {
    if is_auto_mode(value) { "EC2" } else { "EC2_LINUX" }
}

/// The access policies an entry of this shape has, in `partition`.
pub(super) fn access_policies(value: &Value, partition: &str) -> Vec<String> {
    if is_auto_mode(value) {
        vec![format!(
            "arn:{partition}:eks::aws:cluster-access-policy/{AUTO_NODE_ACCESS_POLICY}"
        )]
    } else {
        Vec::new()
    }
}

/// The cluster of `eks_access_entry`, when set and known.
pub(super) fn access_entry_cluster(value: &Value) -> Option<&str> {
    value
        .get("eks_access_entry")
        .and_then(|e| e.get("cluster_name"))
        .and_then(Value::as_str)
}

/// The Auto Mode shape has no use for the Karpenter shape's settings: setting one there is an
/// error on it, so nobody expects a CNI policy or an instance profile Auto Mode does not want.
pub(super) fn validate_mode(config: &Value, diags: &mut Diagnostics) {
    if !is_auto_mode(config) {
        return;
    }
    for name in KARPENTER_ONLY {
        if config.get(name).is_some_and(|v| !v.is_null()) {
            diags.error_at(
                &AttributePath::root().attr(*name),
                "Not used by an EKS Auto Mode node role",
                format!(
                    "{name} is a setting of Karpenter's node role; with mode = \"eks_auto_mode\" the role gets \
                     AmazonEKSWorkerNodeMinimalPolicy and AmazonEC2ContainerRegistryPullOnly, and EKS makes the \
                     instance profile from the NodeClass's role. Remove {name}."
                ),
            );
        }
    }
}
