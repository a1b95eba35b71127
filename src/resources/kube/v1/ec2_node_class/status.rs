//! The computed `status` of an EC2NodeClass, as Karpenter writes it.

use crate::resources::kube::kind::attributes::conditions_attribute;
use crate::resources::kube::object::STATUS_IN_PLANS;
use crate::terraform::framework::Attribute;
use crate::terraform::tfvalue::Type;

pub(super) fn status() -> Attribute {
    Attribute::object(
        "status",
        vec![
            conditions_attribute(),
            status_subnets(),
            status_security_groups(),
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
    .describe(format!(
        "What Karpenter reports about the node class (read only). {STATUS_IN_PLANS} An update that changes `role` \
         or `instance_profile` plans `instance_profile` known after apply."
    ))
}

/// `status.subnets`: what the subnet selector terms resolved to (Karpenter's and EKS Auto
/// Mode's node classes report the same shape).
pub(crate) fn status_subnets() -> Attribute {
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
    .describe("Subnets the selector terms resolved to.")
}

/// `status.securityGroups`: what the security group selector terms resolved to (same shape in
/// both node classes).
pub(crate) fn status_security_groups() -> Attribute {
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
    .describe("Security groups the selector terms resolved to.")
}
