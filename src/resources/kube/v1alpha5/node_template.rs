//! Schema and offline validation of `karpenter_node_template` (karpenter.k8s.aws/v1alpha1
//! AWSNodeTemplate, CRD v0.32.10): every `spec` field as a typed attribute (no server defaults:
//! the CRD has none), and the checks Karpenter's v0.32 admission webhook made.
//!
//! Per-attribute rules are validators on the attributes; [`validate_node_template`] adds the
//! ones that span attributes: what `launch_template` excludes, which selectors are required,
//! and `ami_family = "Custom"` needing `ami_selector`.

use crate::context::plan_memory::PlanMemory;
use crate::instance_types::quantity;
use crate::resources::kube::object::STATUS_IN_PLANS;
use std::sync::LazyLock;

use crate::resources::kube::kind::attributes::{
    force_destroy_attribute, metadata_attribute, name_attribute, timeouts_block,
};
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::has;
use crate::resources::kube::v1::ec2_node_class::instance::VOLUME_TYPES;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::framework::{Attribute, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

/// AMI families Karpenter v0.32 supported.
pub const AMI_FAMILIES: &[&str] = &[
    "AL2",
    "Bottlerocket",
    "Ubuntu",
    "Windows2019",
    "Windows2022",
    "Custom",
];
const ENABLED_DISABLED: &[&str] = &["enabled", "disabled"];
/// Fields a custom launch template replaces, so they cannot be set beside `launch_template`
/// (Karpenter v0.32 rejected each of these combinations). `instance_profile`, `ami_family`,
/// `tags` and `subnet_selector` stay allowed: Karpenter still used them with a launch template.
const REPLACED_BY_LAUNCH_TEMPLATE: &[(&str, &str)] = &[
    ("security_group_selector", "the launch template's security groups"),
    ("metadata_options", "the launch template's metadata options"),
    ("block_device_mappings", "the launch template's block devices"),
    ("user_data", "the launch template's user data"),
    ("ami_selector", "the launch template's AMI"),
];
/// Selector keys that select by ID and cannot be combined with other keys.
const ID_KEYS: &[&str] = &["aws-ids", "aws::ids"];
/// The EBS volume size bounds Karpenter v0.32 enforced: 1Gi to 64Ti.
const MIN_VOLUME_BYTES: f64 = (1u64 << 30) as f64;
const MAX_VOLUME_BYTES: f64 = (1u64 << 46) as f64;

/// What `force_destroy` does for this kind (its docs, and the error that suggests it).
pub const NODE_TEMPLATE_CLEANUP: &str = "Karpenter's v1alpha5 releases tag nothing in EC2 with a node template's name (instances are cleaned up through their Provisioner's `force_destroy`), so this only removes the finalizers that only Karpenter would remove.";

/// The schema of `karpenter_node_template`.
pub static NODE_TEMPLATE: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        format!("A legacy Karpenter AWSNodeTemplate (`karpenter.k8s.aws/v1alpha1`, Karpenter ≤ 0.32): the AWS settings \
         of the nodes a Provisioner launches — subnets, security groups, AMIs, instance profile, launch template, \
         block devices, user data, metadata options, tags. The attributes follow the AWSNodeTemplate `spec` field \
         by field (`subnetSelector` → `subnet_selector`). Plan checks what Karpenter's admission webhook checked. \
         {} {}", crate::resources::kube::kind::describe::PLAN_READS_CRD, crate::resources::kube::kind::describe::PLAN_READS_HEALTH),
        vec![
            name_attribute("AWSNodeTemplate"),
            metadata_attribute("AWSNodeTemplate"),
            selector(
                "subnet_selector",
                "Tags (or `aws-ids = \"subnet-…,subnet-…\"`) selecting the subnets nodes are launched in, e.g. \
                 `{ \"karpenter.sh/discovery\" = \"my-cluster\" }`; a value of `\"\"` matches any value. Required.",
            ),
            selector(
                "security_group_selector",
                "Tags (or `aws-ids = \"sg-…\"`) selecting the nodes' security groups. Required unless \
                 `launch_template` is set, which it cannot be combined with.",
            ),
            selector(
                "ami_selector",
                "Tags (or `aws-ids = \"ami-…\"`, `aws::name`, `aws::owners`) selecting the AMIs; unset uses the \
                 `ami_family`'s EKS-optimized AMIs. Required with `ami_family = \"Custom\"`; not with `launch_template`.",
            ),
            Attribute::string("ami_family")
                .describe("AMI family of the nodes: `AL2`, `Bottlerocket`, `Ubuntu`, `Windows2019`, `Windows2022` or `Custom`.")
                .validate(v::one_of(AMI_FAMILIES)),
            Attribute::string("instance_profile")
                .describe("Name of the IAM instance profile of the nodes; unset uses the controller's default.")
                .validate(v::non_empty()),
            Attribute::string("launch_template")
                .describe(
                    "Name of an existing EC2 launch template to launch nodes with, instead of one Karpenter \
                     generates. Cannot be combined with the fields it replaces: `security_group_selector`, \
                     `metadata_options`, `block_device_mappings`, `user_data`, `ami_selector`.",
                )
                .validate(v::non_empty()),
            Attribute::string("user_data")
                .describe(
                    "User data for the nodes, in the format of the `ami_family` (MIME multi-part for AL2, TOML for \
                     Bottlerocket); Karpenter merges its own settings in. Not with `launch_template`.",
                ),
            Attribute::map_of("tags", Type::String)
                .describe("Tags put on the EC2 resources Karpenter creates (instances, volumes, launch templates).")
                .validate(restricted_tags()),
            Attribute::bool("detailed_monitoring")
                .describe("Whether EC2 detailed (1-minute) monitoring is enabled on the instances."),
            Attribute::string("context")
                .describe("The EC2 Fleet `Context` value (reserved for AWS-specific arrangements)."),
            metadata_options(),
            block_device_mappings(),
            status(),
            force_destroy_attribute("AWSNodeTemplate", NODE_TEMPLATE_CLEANUP),
        ],
    )
    .with_blocks(vec![timeouts_block()])
});

/// A tag-style selector: keys must not be empty; an ID key excludes the others.
fn selector(name: &'static str, description: &'static str) -> Attribute {
    Attribute::map_of(name, Type::String).describe(description).validate(v::rule(
        "Keys must not be empty; `aws-ids` (or `aws::ids`) cannot be combined with other keys.",
        |value, path, diags| {
            let Some(entries) = value.as_entries() else { return };
            for key in entries.keys() {
                if key.is_empty() {
                    invalid(diags, &path.key(key.clone()), "Selector keys must not be empty: name the tag to match.");
                }
                // Values may be empty: the CRD documents "" as a wildcard (for subnets), and it is
                // not certain v0.32 rejected it elsewhere, so we stay lenient.
            }
            if entries.len() > 1
                && let Some(id) = entries.keys().find(|k| ID_KEYS.contains(&k.as_str()))
            {
                invalid(
                    diags,
                    &path.key(id.clone()),
                    format!("{id:?} selects by ID and cannot be combined with other keys in the same selector; remove the others."),
                );
            }
        },
    ))
}

/// Tag keys Karpenter sets itself (or that EKS uses) and users cannot.
fn restricted_tags() -> impl Validator {
    v::rule(
        "Keys must not be empty; `karpenter.sh/provisioner-name`, `karpenter.sh/managed-by` and `kubernetes.io/cluster/*` are set by Karpenter or EKS.",
        |value, path, diags| {
            for key in value.as_entries().into_iter().flatten().map(|(k, _)| k) {
                let problem = if key.is_empty() {
                    Some("Tag keys must not be empty.".to_string())
                } else if key == super::labels::PROVISIONER_NAME_LABEL
                    || key == "karpenter.sh/managed-by"
                    || key.starts_with("kubernetes.io/cluster/")
                {
                    Some(format!(
                        "The tag {key:?} is set by Karpenter or EKS and cannot be set here; remove it."
                    ))
                } else {
                    None
                };
                if let Some(p) = problem {
                    invalid(diags, &path.key(key.clone()), p);
                }
            }
        },
    )
}

fn metadata_options() -> Attribute {
    Attribute::object(
        "metadata_options",
        vec![
            Attribute::string("http_endpoint")
                .describe("Whether the instance metadata service is `enabled` or `disabled`.")
                .validate(v::one_of(ENABLED_DISABLED)),
            Attribute::string("http_protocol_ipv6")
                .wire_name("httpProtocolIPv6")
                .describe("Whether the metadata service's IPv6 endpoint is `enabled` or `disabled`.")
                .validate(v::one_of(ENABLED_DISABLED)),
            Attribute::number("http_put_response_hop_limit")
                .describe("How many network hops a metadata response may travel (1–64).")
                .validate(v::int_range(1, 64)),
            Attribute::string("http_tokens")
                .describe("Whether metadata requests need a session token (IMDSv2): `required` or `optional`.")
                .validate(v::one_of(&["required", "optional"])),
        ],
    )
    .describe(
        "Instance metadata service options of the generated launch template (unset fields are left to Karpenter \
         and EC2). Not with `launch_template`.",
    )
}

fn block_device_mappings() -> Attribute {
    Attribute::list_of_objects(
        "block_device_mappings",
        vec![
            Attribute::string("device_name")
                .describe("Device name of the volume, e.g. `/dev/xvda` (required by Karpenter).")
                .validate(v::non_empty()),
            Attribute::object(
                "ebs",
                vec![
                    Attribute::bool("delete_on_termination")
                        .describe("Whether the volume is deleted when the instance terminates."),
                    Attribute::bool("encrypted").describe("Whether the volume is encrypted."),
                    Attribute::number("iops")
                        .describe("Provisioned IOPS (for `io1`, `io2`, `gp3`).")
                        .validate(rules::numbers::whole_number(Some(0), false)),
                    Attribute::string("kms_key_id")
                        .wire_name("kmsKeyID")
                        .describe("KMS key (ARN) that encrypts the volume."),
                    Attribute::string("snapshot_id")
                        .wire_name("snapshotID")
                        .describe("Snapshot the volume is created from."),
                    Attribute::number("throughput")
                        .describe("Throughput in MiB/s (for `gp3`, 125–1000).")
                        .validate(rules::numbers::whole_number(Some(0), false)),
                    Attribute::string("volume_size")
                        .describe("Size of the volume as a quantity, e.g. `100Gi` (1Gi to 64Ti).")
                        .validate(rules::numbers::quantity())
                        .validate(volume_size_range()),
                    Attribute::string("volume_type")
                        .describe("EBS volume type: `standard`, `io1`, `io2`, `gp2`, `sc1`, `st1` or `gp3`.")
                        .validate(v::one_of(VOLUME_TYPES)),
                ],
            )
            .describe("The EBS volume (required by Karpenter); sets `volume_size`, or `snapshot_id` alone.")
            .validate(v::rule(
                "Sets `volume_size` unless `snapshot_id` is set.",
                |value, path, diags| {
                    if has(value, "volume_size") == Some(false) && has(value, "snapshot_id") == Some(false) {
                        invalid(
                            diags,
                            &path.attr("volume_size"),
                            "An EBS volume needs volume_size (or a snapshot_id to take the size from).",
                        );
                    }
                },
            )),
        ],
    )
    .describe("Volumes attached to the instances. Not with `launch_template`.")
    .validate(v::rule(
        "Each mapping sets `device_name` and `ebs`.",
        |value, path, diags| {
            for (i, m) in rules::values::elements(value).iter().enumerate() {
                for (field, what) in [
                    ("device_name", "a device name such as \"/dev/xvda\""),
                    ("ebs", "the EBS volume"),
                ] {
                    if has(m, field) == Some(false) {
                        invalid(
                            diags,
                            &path.index(i).attr(field),
                            format!("A block device mapping needs {field}: set it to {what}."),
                        );
                    }
                }
            }
        },
    ))
}

/// The bytes of a volume size the range check judges: the quantity's value ([`quantity::parse`]),
/// but not for fractions of a byte (`500m`) nor a negative number with a multiplier (`-5Gi`),
/// which this check has never judged: they are left to Karpenter, as before.
fn volume_bytes(s: &str) -> Option<f64> {
    let (number, suffix) = quantity::split(s)?;
    let exponent = suffix.len() > 1 && suffix.starts_with(['e', 'E']);
    let multiplier = !suffix.is_empty() && !exponent;
    if matches!(suffix, "m" | "u" | "n") || (number.starts_with('-') && multiplier) {
        return None;
    }
    quantity::parse(s)
}

fn volume_size_range() -> impl Validator {
    v::check("Must be between 1Gi and 64Ti.", |value| {
        let s = value.as_str()?;
        let bytes = volume_bytes(s)?;
        (!(MIN_VOLUME_BYTES..=MAX_VOLUME_BYTES).contains(&bytes)).then(|| {
            format!(
                "{s:?} is outside the EBS volume sizes Karpenter accepts: use 1Gi to 64Ti (e.g. \"100Gi\")."
            )
        })
    })
}

fn status() -> Attribute {
    Attribute::object(
        "status",
        vec![
            Attribute::list_of_objects(
                "subnets",
                vec![
                    Attribute::string("id").computed().describe("Subnet ID."),
                    Attribute::string("zone")
                        .computed()
                        .describe("Availability zone of the subnet."),
                ],
            )
            .computed()
            .describe("Subnets the subnet selector currently resolves to."),
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
            .describe("Security groups the security group selector currently resolves to."),
            Attribute::list_of_objects(
                "amis",
                vec![
                    Attribute::string("id").computed().describe("AMI ID."),
                    Attribute::string("name").computed().describe("AMI name."),
                    Attribute::list_of_objects(
                        "requirements",
                        vec![
                            Attribute::string("key").computed().describe("Label key."),
                            Attribute::string("operator")
                                .computed()
                                .describe("Requirement operator."),
                            Attribute::list_of("values", Type::String)
                                .computed()
                                .describe("Values for the operator."),
                        ],
                    )
                    .computed()
                    .describe("Instance-type requirements under which this AMI is used."),
                ],
            )
            .computed()
            .describe("AMIs the AMI selector (or family) currently resolves to."),
        ],
    )
    .computed()
    .not_on_wire()
    .describe(format!(
        "What Karpenter reports about the node template (read only). {STATUS_IN_PLANS}"
    ))
}

fn invalid(diags: &mut Diagnostics, path: &AttributePath, detail: impl Into<String>) {
    diags.error_at(path, "Invalid attribute value", detail);
}

/// Cross-attribute rules of Karpenter's v0.32 AWSNodeTemplate webhook: `launch_template`
/// excludes the fields it replaces; `subnet_selector` is required; `security_group_selector` is
/// required unless `launch_template` is set; `ami_family = "Custom"` needs `ami_selector`.
/// Unknown values decide nothing.
pub fn validate_node_template(config: &Value, _memory: Option<&PlanMemory>, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    let launch_template = has(config, "launch_template");
    if launch_template == Some(true) {
        for (field, replaced) in REPLACED_BY_LAUNCH_TEMPLATE {
            if has(config, field) == Some(true) {
                invalid(
                    diags,
                    &root.attr(*field),
                    format!(
                        "{field} cannot be combined with launch_template: the nodes use {replaced}. Remove {field}, or remove launch_template."
                    ),
                );
            }
        }
    }
    if has(config, "subnet_selector") == Some(false) {
        invalid(
            diags,
            &root.attr("subnet_selector"),
            "subnet_selector is required: give the tags of the subnets to launch nodes in, e.g. { \"karpenter.sh/discovery\" = \"my-cluster\" }.",
        );
    }
    if launch_template == Some(false) && has(config, "security_group_selector") == Some(false) {
        invalid(
            diags,
            &root.attr("security_group_selector"),
            "security_group_selector is required unless launch_template is set: give the tags of the nodes' security groups.",
        );
    }
    if config.get("ami_family").and_then(Value::as_str) == Some("Custom")
        && has(config, "ami_selector") == Some(false)
    {
        invalid(
            diags,
            &root.attr("ami_selector"),
            "ami_family \"Custom\" needs ami_selector: Karpenter cannot pick an AMI for a custom family.",
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::*;
    use crate::resources::kube::kind::testing::{UNKNOWN, config, diagnose, error_paths, plan_create, put};
    use crate::terraform::framework::plan::plan;

    /// By discovery tags, with tags, block devices, metadata options and user data.
    fn discovery() -> Json {
        json!({
            "name": "default",
            "metadata": {"labels": {"team": "platform"}},
            "subnet_selector": {"karpenter.sh/discovery": "demo"},
            "security_group_selector": {"karpenter.sh/discovery": "demo"},
            "ami_family": "AL2",
            "instance_profile": "KarpenterNodeInstanceProfile-demo",
            "tags": {"karpenter.sh/discovery": "demo", "team": "platform"},
            "user_data": "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B--\n",
            "detailed_monitoring": true,
            "metadata_options": {
                "http_endpoint": "enabled",
                "http_protocol_ipv6": "disabled",
                "http_put_response_hop_limit": 2,
                "http_tokens": "required"
            },
            "block_device_mappings": [
                {"device_name": "/dev/xvda", "ebs": {"volume_size": "100Gi", "volume_type": "gp3", "iops": 3000,
                  "throughput": 125, "encrypted": true, "delete_on_termination": true}},
                {"device_name": "/dev/xvdb", "ebs": {"snapshot_id": "snap-0123456789abcdef0"}}
            ]
        })
    }

    /// Pointing at a launch template and an instance profile.
    fn with_launch_template() -> Json {
        json!({
            "name": "lt",
            "subnet_selector": {"aws-ids": "subnet-0a1b2c3d,subnet-4e5f6a7b"},
            "launch_template": "my-launch-template",
            "instance_profile": "my-instance-profile",
            "tags": {"cost-center": "42"}
        })
    }

    /// A custom AMI family with an AMI selector, and a wildcard subnet selector value.
    fn custom_ami() -> Json {
        json!({
            "name": "custom",
            "subnet_selector": {"Name": "*private*", "kubernetes.io/role/internal-elb": ""},
            "security_group_selector": {"aws-ids": "sg-0123456789abcdef0"},
            "ami_family": "Custom",
            "ami_selector": {"aws::name": "my-ami-*", "aws::owners": "self"}
        })
    }

    fn check(json: &Json) -> Diagnostics {
        diagnose(
            &NODE_TEMPLATE,
            validate_node_template,
            &config(&NODE_TEMPLATE, json),
        )
    }

    #[test]
    fn realistic_node_templates_are_valid() {
        for t in [discovery(), with_launch_template(), custom_ami()] {
            let d = check(&t);
            assert!(d.is_empty(), "{t}: {d}");
        }
    }

    /// (base config, what is changed, value, where the error must be).
    type Case = (fn() -> Json, &'static str, Json, &'static str);

    fn invalid_cases() -> Vec<Case> {
        let lt: fn() -> Json = with_launch_template;
        let d: fn() -> Json = discovery;
        vec![
            (d, "/name", json!("Bad_Name"), "name"),
            (d, "/subnet_selector", Json::Null, "subnet_selector"),
            (
                d,
                "/security_group_selector",
                Json::Null,
                "security_group_selector",
            ),
            (d, "/subnet_selector/", json!("x"), "subnet_selector[\"\"]"),
            (
                d,
                "/security_group_selector/aws-ids",
                json!("sg-1"),
                "security_group_selector[\"aws-ids\"]",
            ),
            (d, "/ami_family", json!("AL2023"), "ami_family"),
            (d, "/ami_family", json!("Custom"), "ami_selector"),
            (d, "/instance_profile", json!(""), "instance_profile"),
            (
                d,
                "/tags/karpenter.sh~provisioner-name",
                json!("x"),
                "tags[\"karpenter.sh/provisioner-name\"]",
            ),
            (
                d,
                "/tags/kubernetes.io~cluster~demo",
                json!("owned"),
                "tags[\"kubernetes.io/cluster/demo\"]",
            ),
            (
                d,
                "/metadata_options/http_endpoint",
                json!("on"),
                "metadata_options.http_endpoint",
            ),
            (
                d,
                "/metadata_options/http_protocol_ipv6",
                json!("true"),
                "metadata_options.http_protocol_ipv6",
            ),
            (
                d,
                "/metadata_options/http_tokens",
                json!("always"),
                "metadata_options.http_tokens",
            ),
            (
                d,
                "/metadata_options/http_put_response_hop_limit",
                json!(0),
                "metadata_options.http_put_response_hop_limit",
            ),
            (
                d,
                "/metadata_options/http_put_response_hop_limit",
                json!(65),
                "metadata_options.http_put_response_hop_limit",
            ),
            (
                d,
                "/block_device_mappings/0/ebs/volume_type",
                json!("gp4"),
                "block_device_mappings[0].ebs.volume_type",
            ),
            (
                d,
                "/block_device_mappings/0/ebs/volume_size",
                json!("big"),
                "block_device_mappings[0].ebs.volume_size",
            ),
            (
                d,
                "/block_device_mappings/0/ebs/volume_size",
                json!("65Ti"),
                "block_device_mappings[0].ebs.volume_size",
            ),
            (
                d,
                "/block_device_mappings/0/ebs/volume_size",
                json!("512Mi"),
                "block_device_mappings[0].ebs.volume_size",
            ),
            (
                d,
                "/block_device_mappings/1/ebs/snapshot_id",
                Json::Null,
                "block_device_mappings[1].ebs.volume_size",
            ),
            (
                d,
                "/block_device_mappings/0/device_name",
                Json::Null,
                "block_device_mappings[0].device_name",
            ),
            (
                d,
                "/block_device_mappings/0/ebs",
                Json::Null,
                "block_device_mappings[0].ebs",
            ),
            (
                d,
                "/block_device_mappings/0/ebs/iops",
                json!(-1),
                "block_device_mappings[0].ebs.iops",
            ),
            (d, "/launch_template", json!("lt"), "security_group_selector"),
            (d, "/launch_template", json!("lt"), "metadata_options"),
            (d, "/launch_template", json!("lt"), "block_device_mappings"),
            (d, "/launch_template", json!("lt"), "user_data"),
            (lt, "/ami_selector", json!({"aws-ids": "ami-1"}), "ami_selector"),
            (lt, "/launch_template", json!(""), "launch_template"),
            (lt, "/subnet_selector", Json::Null, "subnet_selector"),
        ]
    }

    #[test]
    fn invalid_inputs_fail_at_their_attribute() {
        let cases = invalid_cases();
        assert!(cases.len() >= 25, "{} cases", cases.len());
        for (base, pointer, value, expected) in cases {
            let mut t = base();
            put(&mut t, pointer, value.clone());
            let paths = error_paths(&check(&t));
            assert!(
                paths.iter().any(|x| x == expected),
                "{pointer} = {value}: expected an error at {expected}, got {paths:?}"
            );
        }
    }

    #[test]
    fn volume_sizes() {
        for ok in ["1Gi", "100Gi", "64Ti", "20G", "1.5Ti", "16384Gi", "2e9"] {
            let mut t = discovery();
            put(&mut t, "/block_device_mappings/0/ebs/volume_size", json!(ok));
            assert!(check(&t).is_empty(), "{ok}");
        }
        assert_eq!(volume_bytes("2Gi"), Some(2.0 * 2f64.powi(30)));
        assert_eq!(volume_bytes("Gi"), None);
        // Judged as they always were: plain numbers and exponents, signed or not; left to
        // Karpenter: fractions of a byte, and a negative number with a multiplier.
        assert_eq!(volume_bytes("-5"), Some(-5.0));
        assert_eq!(volume_bytes("-1e10"), Some(-1e10));
        assert_eq!(volume_bytes("5E3"), Some(5000.0));
        assert_eq!(volume_bytes("5E"), Some(5e18));
        for left in ["500m", "5000000000000u", "-5Gi", "-5E"] {
            assert_eq!(volume_bytes(left), None, "{left}");
        }
    }

    #[test]
    fn launch_template_allows_what_it_does_not_replace() {
        let mut t = with_launch_template();
        put(&mut t, "/ami_family", json!("Bottlerocket"));
        put(&mut t, "/security_group_selector", Json::Null);
        put(&mut t, "/detailed_monitoring", json!(true));
        assert!(check(&t).is_empty());
    }

    #[test]
    fn unknown_values_are_not_judged() {
        let mut t = discovery();
        put(&mut t, "/security_group_selector", json!(UNKNOWN));
        put(&mut t, "/ami_family", json!(UNKNOWN));
        put(&mut t, "/block_device_mappings/0/ebs/volume_size", json!(UNKNOWN));
        put(&mut t, "/metadata_options/http_tokens", json!(UNKNOWN));
        put(&mut t, "/tags", json!(UNKNOWN));
        assert!(check(&t).is_empty());
        // An unknown launch template may turn out null or not: neither exclusion nor requirement fires.
        let mut t = discovery();
        put(&mut t, "/launch_template", json!(UNKNOWN));
        assert!(check(&t).is_empty());
        let mut t = with_launch_template();
        put(&mut t, "/launch_template", json!(UNKNOWN));
        put(&mut t, "/subnet_selector", json!(UNKNOWN));
        assert!(check(&t).is_empty());
    }

    #[test]
    fn create_plans_no_server_defaults() {
        let planned = plan_create(&NODE_TEMPLATE, &config(&NODE_TEMPLATE, &with_launch_template()));
        for f in [
            "metadata_options",
            "block_device_mappings",
            "ami_family",
            "detailed_monitoring",
            "user_data",
        ] {
            assert_eq!(planned.get(f), Some(&Value::Null), "{f}");
        }
        assert_eq!(
            planned.get("launch_template"),
            Some(&Value::string("my-launch-template"))
        );
        assert!(planned.get("status").is_some_and(Value::is_unknown));
        let partial = json!({"name": "x", "subnet_selector": {"a": "b"}, "security_group_selector": {"a": "b"},
                             "metadata_options": {"http_tokens": "required"}});
        let planned = plan_create(&NODE_TEMPLATE, &config(&NODE_TEMPLATE, &partial));
        let m = planned.get("metadata_options").expect("metadata_options");
        assert_eq!(m.get("http_endpoint"), Some(&Value::Null));
        assert_eq!(m.get("http_put_response_hop_limit"), Some(&Value::Null));
    }

    #[test]
    fn second_plan_is_empty_and_name_replaces() {
        let cfg = config(&NODE_TEMPLATE, &discovery());
        let mut state = plan_create(&NODE_TEMPLATE, &cfg);
        if let Value::Object(fields) = &mut state {
            let status = crate::resources::kube::kind::testing::typed(
                NODE_TEMPLATE
                    .attribute("status")
                    .and_then(|a| a.nested())
                    .map(|(_, n)| n)
                    .expect("status"),
                &json!({"subnets": [{"id": "subnet-1", "zone": "eu-west-1a"}],
                        "security_groups": [{"id": "sg-1", "name": "nodes"}],
                        "amis": [{"id": "ami-1", "name": "amazon-eks-node-1.28",
                                  "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}]}),
            );
            fields.insert("status".into(), status);
        }
        assert!(state.is_wholly_known());
        let again = plan(&NODE_TEMPLATE.attributes, &NODE_TEMPLATE.blocks, &cfg, &state);
        assert_eq!(again.planned, state);
        assert!(again.requires_replace.is_empty());
        let mut renamed = discovery();
        put(&mut renamed, "/name", json!("other"));
        let p = plan(
            &NODE_TEMPLATE.attributes,
            &NODE_TEMPLATE.blocks,
            &config(&NODE_TEMPLATE, &renamed),
            &state,
        );
        let paths: Vec<String> = p.requires_replace.iter().map(ToString::to_string).collect();
        assert_eq!(paths, vec!["name"]);
    }
}
