//! `advanced_networking` of `karpenter_eks_node_class`: public IPs, an HTTPS proxy, the pod IP
//! mode (`ipv4_prefix_size`), IPv4 egress of IPv6 pods, and the static network interfaces of the
//! nodes (`network_interfaces`, e.g. EFA-only interfaces for training), with the rules the EKS
//! user guide states for them, checked at plan.
//!
//! The guide's rules for static interfaces: the primary interface (card 0, device 0) is of type
//! `interface`; an interface sets at most one of `secondary_ipv4_count` and
//! `secondary_ipv4_prefix_count`, only on card 0 and never on an `efa-only` interface; a node
//! with more than one interface cannot have a public IP. Each card/device pair names one
//! interface (EC2 attaches one interface per device index of a card).

use std::collections::BTreeSet;

use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::{elements, has, int_of};
use crate::resources::kube::v1::ec2_node_class::instance::network_interface_slot;
use crate::terraform::framework::validate::{self as v};
use crate::terraform::framework::{Attribute, Diagnostics};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

/// The pod IP modes: prefixes of 16 addresses with a fallback to single addresses (`Auto`, the
/// default), or single secondary addresses only (`"32"`).
pub const IPV4_PREFIX_SIZES: &[&str] = &["Auto", "32"];

fn invalid(diags: &mut Diagnostics, path: &AttributePath, detail: impl Into<String>) {
    diags.error_at(path, "Invalid attribute value", detail);
}

/// The `advanced_networking` attribute.
pub fn advanced_networking() -> Attribute {
    Attribute::object(
        "advanced_networking",
        vec![
            Attribute::bool("associate_public_ip_address")
                .wire_name("associatePublicIPAddress")
                .describe(
                    "Whether nodes get a public IPv4 address. Unset: the subnet's setting decides. Not with more \
                     than one entry in `network_interfaces`.",
                ),
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
            Attribute::string("ipv4_prefix_size")
                .default_value(Value::string("Auto"))
                .describe(
                    "How pods get IPv4 addresses: `Auto` (the default) assigns /28 prefixes to the node and falls back \
                     to single addresses when the subnet has no room for a prefix; `\"32\"` assigns single secondary \
                     addresses only and keeps one spare, which saves addresses for nodes with few pods.",
                )
                .validate(v::one_of(IPV4_PREFIX_SIZES)),
            Attribute::bool("enable_v4_egress")
                .describe(
                    "On an IPv6 cluster, whether pods may reach IPv4 destinations (their traffic leaves with the node's \
                     IPv4 address). Unset: allowed. `false` turns IPv4 egress of IPv6 pods off.",
                ),
            network_interfaces(),
        ],
    )
    .describe("Networking settings of the nodes beyond subnets and security groups.")
    .validate(v::rule(
        "A node with more than one network interface has no public IP: `associate_public_ip_address = true` \
         needs at most one entry in `network_interfaces`.",
        |value, path, diags| {
            if value.get("associate_public_ip_address").and_then(Value::as_bool) == Some(true)
                && elements(value.get("network_interfaces").unwrap_or(&Value::Null)).len() > 1
            {
                invalid(
                    diags,
                    &path.attr("associate_public_ip_address"),
                    "EKS Auto Mode cannot give a public IP to a node with more than one network interface: remove \
                     associate_public_ip_address (or set it to false), or define a single network interface.",
                );
            }
        },
    ))
}

fn network_interfaces() -> Attribute {
    Attribute::list_of_objects(
        "network_interfaces",
        network_interface_slot()
            .into_iter()
            .chain([
            Attribute::number("secondary_ipv4_count")
                .wire_name("secondaryIPv4Count")
                .describe(
                    "Secondary IPv4 addresses for pods on this interface, one per unit. Only on card 0, not on an \
                     `efa-only` interface, not with `secondary_ipv4_prefix_count`.",
                )
                .validate(rules::numbers::whole_number(Some(0), true)),
            Attribute::number("secondary_ipv4_prefix_count")
                .wire_name("secondaryIPv4PrefixCount")
                .describe(
                    "IPv4 /28 prefixes (16 addresses each) for pods on this interface. Only on card 0, not on an \
                     `efa-only` interface, not with `secondary_ipv4_count`.",
                )
                .validate(rules::numbers::whole_number(Some(0), true)),
            ])
            .collect(),
    )
    .describe(
        "The network interfaces each node gets at launch, e.g. one ENA interface and EFA-only interfaces for \
         distributed training. When set, Auto Mode adds no address, prefix or interface after launch: the addresses \
         for pods are the `secondary_ipv4_count` or `secondary_ipv4_prefix_count` of the interfaces on card 0. The \
         list includes the primary interface (card 0, device 0, type `interface`), and each card/device pair appears \
         once. Not supported on IPv6 clusters.",
    )
    .validate(v::rule(
        "Contains the primary interface (card 0, device 0, `interface`); card/device pairs are unique; secondary \
         addresses only on card 0, not on `efa-only`, and one kind per interface.",
        check_interfaces,
    ))
}

/// A known interface: (card, device, type).
fn known(nic: &Value) -> Option<(i64, i64, String)> {
    Some((
        int_of(nic, "network_card_index")?,
        int_of(nic, "device_index")?,
        nic.get("interface_type").and_then(Value::as_str)?.to_string(),
    ))
}

fn check_interfaces(value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
    let nics = elements(value);
    let all: Vec<Option<(i64, i64, String)>> = nics.iter().map(known).collect();
    if !nics.is_empty() && all.iter().all(Option::is_some) {
        match all.iter().flatten().position(|(c, d, _)| *c == 0 && *d == 0) {
            None => invalid(
                diags,
                path,
                "The network interfaces must include the primary one: network_card_index = 0, device_index = 0, \
                 interface_type = \"interface\".",
            ),
            Some(i) if all[i].as_ref().is_some_and(|(_, _, t)| t != "interface") => invalid(
                diags,
                &path.index(i).attr("interface_type"),
                "The primary network interface (card 0, device 0) must be of type \"interface\": it carries the \
                 node's own address.",
            ),
            Some(_) => {}
        }
    }
    let mut pairs = BTreeSet::new();
    for (i, (nic, parsed)) in nics.iter().zip(&all).enumerate() {
        let here = path.index(i);
        if let Some((card, device, _)) = parsed
            && !pairs.insert((*card, *device))
        {
            invalid(
                diags,
                &here.attr("device_index"),
                format!(
                    "Network card {card} already has an interface with device index {device}; each card/device pair \
                     may appear once."
                ),
            );
        }
        let count = has(nic, "secondary_ipv4_count");
        let prefixes = has(nic, "secondary_ipv4_prefix_count");
        if count == Some(true) && prefixes == Some(true) {
            invalid(
                diags,
                &here.attr("secondary_ipv4_prefix_count"),
                "Set secondary_ipv4_count or secondary_ipv4_prefix_count on an interface, not both.",
            );
            continue;
        }
        let Some(field) = (if count == Some(true) {
            Some("secondary_ipv4_count")
        } else if prefixes == Some(true) {
            Some("secondary_ipv4_prefix_count")
        } else {
            None
        }) else {
            continue;
        };
        if nic.get("interface_type").and_then(Value::as_str) == Some("efa-only") {
            invalid(
                diags,
                &here.attr(field),
                format!("An efa-only interface has no IP addresses: remove {field} from it."),
            );
        } else if int_of(nic, "network_card_index").is_some_and(|c| c != 0) {
            invalid(
                diags,
                &here.attr(field),
                format!("{field} is only supported on network card 0: move it to an interface of card 0."),
            );
        }
    }
}
