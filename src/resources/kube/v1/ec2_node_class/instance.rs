//! What the launched instances get: block device mappings, instance metadata options (with the
//! server defaults declared), network interfaces and connection tracking.

use std::collections::BTreeSet;

use crate::resources::kube::kind::attributes::object_with;
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::{elements, has, int_of, invalid};
use crate::terraform::framework::Attribute;
use crate::terraform::framework::validate as v;
use crate::terraform::tfvalue::{Number, Value};

pub(crate) const VOLUME_TYPES: &[&str] = &["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"];
/// EBS volume size: 1–59000Gi, 1–64000G, 1–58Ti or 1–64T (the CRD's pattern, kept as written,
/// including its empty alternatives).
const VOLUME_SIZE: &str = r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$";

pub(super) fn block_device_mappings() -> Attribute {
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
                        .validate(rules::numbers::whole_number(None, false)),
                    Attribute::string("kms_key_id")
                        .wire_name("kmsKeyID")
                        .describe("KMS key (ARN or ID) that encrypts the volume."),
                    Attribute::string("snapshot_id")
                        .wire_name("snapshotID")
                        .describe("Snapshot the volume is created from."),
                    Attribute::number("throughput")
                        .describe("Throughput in MiB/s (for `gp3`).")
                        .validate(rules::numbers::whole_number(None, false)),
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
pub(super) fn metadata_options() -> Attribute {
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
/// Where a network interface sits and what it is (card, device, type): the part of an interface
/// Karpenter's EC2NodeClass and EKS Auto Mode's NodeClass describe alike.
pub(crate) fn network_interface_slot() -> Vec<Attribute> {
    vec![
        Attribute::number("network_card_index")
            .required()
            .describe("Index of the network card (0 or more).")
            .validate(rules::numbers::whole_number(Some(0), true)),
        Attribute::number("device_index")
            .required()
            .describe("Device index of the interface on its card (0 or more).")
            .validate(rules::numbers::whole_number(Some(0), true)),
        Attribute::string("interface_type")
            .required()
            .describe(
                "`interface` (an ENA interface with IP addresses) or `efa-only` (an EFA interface for RDMA, \
                 without IP addresses).",
            )
            .validate(v::one_of(&["interface", "efa-only"])),
    ]
}

pub(super) fn network_interfaces() -> Attribute {
    Attribute::list_of_objects("network_interfaces", network_interface_slot())
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
pub(super) fn connection_tracking() -> Attribute {
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
