//! Schema and offline validation of `karpenter_eks_node_class` (EKS Auto Mode's NodeClass,
//! `eks.amazonaws.com/v1`): the AWS settings of the nodes Auto Mode launches for the pools that
//! name the class — node IAM role, subnets and security groups (for nodes and, optionally, for
//! pods), capacity reservations, SNAT and network-policy settings, the node's ephemeral storage,
//! advanced networking (public IPs, an HTTPS proxy), advanced security (FIPS AMIs, kernel
//! lockdown), extra CA bundles, and EC2 tags.
//!
//! AWS publishes no CRD for this kind. The fields and rules follow the NodeClass reference of the
//! EKS user guide, restated in the test CRD `acceptance-tests/crds/eks-auto-mode/`; the test at the
//! end of this file keeps the two in step. Every rule the guide states is checked at plan:
//! per attribute (patterns, enums, ranges, counts, restricted tag keys) and, in
//! [`validate_eks_node_class`], across attributes (`role` xor `instance_profile`, pod subnets need
//! pod security groups, a custom class is not named `default`).

use std::sync::LazyLock;

use crate::resources::kube::object::STATUS_IN_PLANS;
use crate::resources::kube::v1::ec2_node_class::{
    exclusive_terms, security_group_selector_terms, subnet_selector_terms, tag_selector,
};
use crate::resources::kube::v1::rules::{self, has};
use crate::resources::kube::v1::{conditions_attribute, metadata_attribute, name_attribute, timeouts_block};
use crate::terraform::framework::validate::{self as v};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

/// The name of the node class EKS itself manages on an Auto Mode cluster.
pub const BUILT_IN_NODE_CLASS: &str = "default";

/// Tag keys EKS sets on what it launches, which a NodeClass may not set (the guide's list).
pub const RESTRICTED_TAG_KEYS: &[&str] = &[
    "eks:eks-cluster-name",
    "karpenter.sh/provisioner-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.sh/managed-by",
    "eks.amazonaws.com/nodeclass",
];

/// The node's ephemeral storage size: 1–59000Gi, 1–64000G, 1–58Ti or 1–64T, as the guide states
/// the ranges (see the module comment of the test CRD for where the live CRD's pattern differs).
pub const EPHEMERAL_SIZE: &str = r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|5[0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-3][0-9]{3}|64000)G|(?:[1-9]|[1-4][0-9]|5[0-8])Ti|(?:[1-9]|[1-5][0-9]|6[0-4])T)$";

/// A KMS key in one of the four forms the guide accepts: key ID, key ARN, alias name, alias ARN.
const KMS_KEY: &str = r"^((mrk-)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|(mrk-)?[0-9a-f]{32}|alias/[a-zA-Z0-9/_-]+|arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key/[a-z0-9-]+|alias/[a-zA-Z0-9/_-]+))$";

/// The schema of `karpenter_eks_node_class`.
pub static EKS_NODE_CLASS: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "An EKS Auto Mode NodeClass (`eks.amazonaws.com/v1`): the AWS settings of the nodes Auto Mode launches \
         for the node pools that name it — node IAM role, subnets and security groups for nodes and pods, \
         capacity reservations, SNAT and network policy, ephemeral storage, public IPs and an HTTPS proxy, FIPS \
         AMIs, extra CA bundles and tags. Only on clusters with EKS Auto Mode enabled: EKS installs the kind and \
         runs its controller (on a cluster without it, apply says so instead of waiting). The attributes follow the \
         NodeClass reference of the EKS user guide field by field (`subnetSelectorTerms` → \
         `subnet_selector_terms`). Plan validates every rule the guide states; nothing contacts the cluster or AWS \
         until apply. The node role needs an EKS access entry of type `EC2` with the `AmazonEKSAutoNodePolicy` \
         access policy: `karpenter_node_role` with `mode = \"eks_auto_mode\"` and `eks_access_entry` makes both.",
        vec![
            name_attribute("NodeClass"),
            metadata_attribute("NodeClass"),
            Attribute::string("role")
                .replace_on_change()
                .describe(
                    "Name of the IAM role the nodes use; EKS makes the instance profile for it. The role needs an \
                     EKS access entry of type `EC2` with the `AmazonEKSAutoNodePolicy` policy. Set exactly one of \
                     `role` and `instance_profile`. It cannot change in place (the API refuses it), so a change \
                     replaces the class.",
                )
                .validate(v::non_empty()),
            Attribute::string("instance_profile")
                .describe(
                    "Name of an existing IAM instance profile for the nodes (you manage it); the name must start \
                     with `eks`. Set exactly one of `role` and `instance_profile`.",
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
            advanced_networking(),
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
                     allowed: `eks:eks-cluster-name`, `kubernetes.io/cluster/*`, `karpenter.sh/provisioner-name`, \
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
                .validate(v::matches("^[0-9]{12}$", "a 12-digit AWS account ID")),
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
    Attribute::object(
        "ephemeral_storage",
        vec![
            Attribute::string("size")
                .default_value(Value::string("80Gi"))
                .describe("Size of the node's volume: 1–59000Gi, 1–64000G, 1–58Ti or 1–64T (default `80Gi`).")
                .validate(v::matches(EPHEMERAL_SIZE, "a size of 1–59000Gi, 1–64000G, 1–58Ti or 1–64T, e.g. `100Gi`")),
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
                .validate(v::matches(KMS_KEY, "a KMS key ID, key ARN, alias name (`alias/…`) or alias ARN")),
        ],
    )
    .describe("The node's root volume, which holds images, logs and pods' ephemeral storage.")
}

fn advanced_networking() -> Attribute {
    Attribute::object(
        "advanced_networking",
        vec![
            Attribute::bool("associate_public_ip_address")
                .wire_name("associatePublicIPAddress")
                .describe("Whether nodes get a public IPv4 address. Unset: the subnet's setting decides."),
            Attribute::string("https_proxy")
                .describe(
                    "An HTTPS proxy the node's software (kubelet, container runtime, agents) uses, e.g. \
                     `http://192.0.2.4:3128` (at most 255 characters). Often needs `certificate_bundles`.",
                )
                .validate(v::length(1, 255))
                .validate(v::matches(r"^https?://", "a URL starting with `http://` or `https://`")),
            Attribute::list_of("no_proxy", Type::String)
                .describe(
                    "Addresses and domains reached without the proxy (at most 50, each at most 255 characters), e.g. \
                     `localhost`, `169.254.169.254`, `.internal`, `.eks.amazonaws.com` and your VPC endpoints.",
                )
                .validate(v::count(0, 50))
                .validate(v::each(v::length(1, 255))),
        ],
    )
    .describe("Networking settings of the nodes beyond subnets and security groups.")
}

fn advanced_security() -> Attribute {
    Attribute::object(
        "advanced_security",
        vec![
            Attribute::bool("fips")
                .describe("Run FIPS-validated AMIs on the nodes (in the AWS Regions that offer them)."),
            Attribute::string("kernel_lockdown")
                .describe("Kernel lockdown mode of the nodes: `Integrity` or `None`.")
                .validate(v::one_of(&["Integrity", "None"])),
        ],
    )
    .describe("Security settings of the nodes' operating system.")
}

fn restricted_tags() -> impl v::Validator {
    v::each_key(v::check(
        "Keys must not be empty and must not be keys EKS sets itself (`kubernetes.io/cluster/*` and the listed ones).",
        |value| {
            let key = value.as_str()?;
            if key.is_empty() {
                return Some("Tag keys must not be empty.".to_string());
            }
            (key.starts_with("kubernetes.io/cluster/") || RESTRICTED_TAG_KEYS.contains(&key)).then(|| {
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
            Attribute::list_of_objects(
                "subnets",
                vec![
                    Attribute::string("id").computed().describe("Subnet ID."),
                    Attribute::string("zone")
                        .computed()
                        .describe("Availability zone, e.g. `us-east-1a`."),
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
                    Attribute::string("name")
                        .computed()
                        .describe("Security group name."),
                ],
            )
            .computed()
            .describe("Security groups the selector terms resolved to."),
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

/// The guide's rules across attributes: exactly one of `role` and `instance_profile`; pod
/// subnets need pod security groups; `default` is the built-in class's name. Unknown values
/// decide nothing.
pub fn validate_eks_node_class(config: &Value, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    rules::annotations_total_size(
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
    match (has(config, "role"), has(config, "instance_profile")) {
        (Some(true), Some(true)) => invalid(
            diags,
            &root.attr("instance_profile"),
            "Set exactly one of role and instance_profile: with role, EKS makes the instance profile for that role; \
             with instance_profile, you provide it.",
        ),
        (Some(false), Some(false)) => invalid(
            diags,
            &root.attr("role"),
            "Set exactly one of role (an IAM role name; EKS makes the instance profile) and instance_profile (an \
             existing instance profile whose name starts with eks).",
        ),
        _ => {}
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
mod tests {
    use serde_json::{Value as Json, json};

    use super::*;
    use crate::resources::kube::v1::testing::{config, diagnose, error_paths};

    fn check(json: &Json) -> Vec<String> {
        error_paths(&diagnose(
            &EKS_NODE_CLASS,
            validate_eks_node_class,
            &config(&EKS_NODE_CLASS, json),
        ))
    }

    fn base() -> Json {
        json!({
            "name": "private",
            "role": "eks-auto-nodes",
            "subnet_selector_terms": [{"tags": {"kubernetes.io/role/internal-elb": "1"}}],
            "security_group_selector_terms": [{"id": "sg-0123456789abcdef0"}],
        })
    }

    fn with(patch: Json) -> Json {
        let mut j = base();
        for (k, val) in patch.as_object().into_iter().flatten() {
            if val.is_null() {
                j.as_object_mut().map(|o| o.remove(k));
            } else {
                j[k] = val.clone();
            }
        }
        j
    }

    #[test]
    fn the_guides_examples_are_valid() {
        for ok in [
            base(),
            with(json!({
                "pod_subnet_selector_terms": [{"tags": {"kubernetes.io/role/pod": "1"}}],
                "pod_security_group_selector_terms": [{"id": "sg-0987654321fedcba0"}],
                "capacity_reservation_selector_terms": [{"id": "cr-56fac701cc1951b03"}, {"tags": {"app": "my-app"}, "owner": "012345678901"}],
                "snat_policy": "Disabled",
                "network_policy": "DefaultDeny",
                "network_policy_event_logs": "Enabled",
                "ephemeral_storage": {"size": "160Gi", "iops": 6000, "throughput": 250, "kms_key_id": "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"},
                "advanced_networking": {"associate_public_ip_address": false, "https_proxy": "http://192.0.2.4:3128", "no_proxy": ["localhost", "169.254.169.254", ".internal"]},
                "advanced_security": {"fips": true, "kernel_lockdown": "Integrity"},
                "certificate_bundles": [{"name": "corp", "data": "LS0tLS1CRUdJTg=="}],
                "tags": {"team": "platform"},
            })),
            with(json!({"role": null, "instance_profile": "eks-us-west-2-demo-nodes"})),
            with(json!({"ephemeral_storage": {"size": "18Ti"}})),
            with(json!({"ephemeral_storage": {"kms_key_id": "alias/ebs"}})),
        ] {
            assert!(check(&ok).is_empty(), "{ok}: {:?}", check(&ok));
        }
    }

    #[test]
    fn each_rule_of_the_guide_fails_on_its_attribute() {
        let cases: Vec<(Json, &str)> = vec![
            (json!({"instance_profile": "eks-x"}), "instance_profile"),
            (json!({"role": null}), "role"),
            (
                json!({"role": null, "instance_profile": "KarpenterNodes"}),
                "instance_profile",
            ),
            (json!({"name": "default"}), "name"),
            (
                json!({"pod_subnet_selector_terms": [{"id": "subnet-1"}]}),
                "pod_subnet_selector_terms",
            ),
            (json!({"snat_policy": "random"}), "snat_policy"),
            (json!({"network_policy": "Deny"}), "network_policy"),
            (
                json!({"network_policy_event_logs": "On"}),
                "network_policy_event_logs",
            ),
            (
                json!({"ephemeral_storage": {"iops": 2999}}),
                "ephemeral_storage.iops",
            ),
            (
                json!({"ephemeral_storage": {"iops": 16001}}),
                "ephemeral_storage.iops",
            ),
            (
                json!({"ephemeral_storage": {"throughput": 1001}}),
                "ephemeral_storage.throughput",
            ),
            (
                json!({"ephemeral_storage": {"size": "59Ti"}}),
                "ephemeral_storage.size",
            ),
            (
                json!({"ephemeral_storage": {"size": "Ti"}}),
                "ephemeral_storage.size",
            ),
            (
                json!({"ephemeral_storage": {"kms_key_id": "my key"}}),
                "ephemeral_storage.kms_key_id",
            ),
            (json!({"subnet_selector_terms": []}), "subnet_selector_terms"),
            (
                json!({"subnet_selector_terms": [{"id": "sn-1"}]}),
                "subnet_selector_terms[0].id",
            ),
            (
                json!({"subnet_selector_terms": [{"id": "subnet-1", "tags": {"a": "b"}}]}),
                "subnet_selector_terms[0].id",
            ),
            (
                json!({"security_group_selector_terms": [{"name": "n", "tags": {"a": "b"}}]}),
                "security_group_selector_terms[0].name",
            ),
            (
                json!({"capacity_reservation_selector_terms": [{"id": "cr-1", "owner": "012345678901"}]}),
                "capacity_reservation_selector_terms[0].id",
            ),
            (
                json!({"capacity_reservation_selector_terms": [{"tags": {"a": "b"}, "owner": "1234"}]}),
                "capacity_reservation_selector_terms[0].owner",
            ),
            (
                json!({"advanced_networking": {"https_proxy": "192.0.2.4:3128"}}),
                "advanced_networking.https_proxy",
            ),
            (
                json!({"advanced_networking": {"no_proxy": vec!["x"; 51]}}),
                "advanced_networking.no_proxy",
            ),
            (
                json!({"advanced_security": {"kernel_lockdown": "integrity"}}),
                "advanced_security.kernel_lockdown",
            ),
            (
                json!({"tags": {"eks.amazonaws.com/nodeclass": "x"}}),
                "tags[\"eks.amazonaws.com/nodeclass\"]",
            ),
            (
                json!({"tags": {"kubernetes.io/cluster/demo": "owned"}}),
                "tags[\"kubernetes.io/cluster/demo\"]",
            ),
        ];
        for (patch, path) in cases {
            let j = with(patch);
            assert_eq!(check(&j), vec![path.to_string()], "{j}");
        }
    }

    #[test]
    fn unknown_values_decide_nothing() {
        let j = with(json!({"role": "<unknown>", "pod_subnet_selector_terms": "<unknown>"}));
        assert!(check(&j).is_empty(), "{:?}", check(&j));
    }

    /// The schema and the test CRD written from the guide agree field by field, defaults and
    /// required fields included, in both directions.
    #[test]
    fn the_schema_covers_the_test_crd() {
        use crate::resources::kube::v1::crd_coverage::{compare_root, openapi_schema};
        let path = format!(
            "{}/acceptance-tests/crds/eks-auto-mode/eks.amazonaws.com_nodeclasses.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let root = openapi_schema(&path, "v1");
        let problems = compare_root(&EKS_NODE_CLASS, &root, "NodeClass", &[]);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
