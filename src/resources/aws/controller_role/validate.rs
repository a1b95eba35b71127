//! `karpenter_controller_role`'s checks of a configuration on its own: the names, a way to
//! assume the role, and that the node role, the queue, the OIDC provider and `region` agree on
//! partition, account and region ([`check_region`], which the plan also runs on the provider's
//! region).

use super::schema::parse_oidc_provider;
use crate::aws_names;
use crate::policy::arn::Arn;
use crate::resources::aws::iam_role;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

pub(super) fn validate(config: &Value, diags: &mut Diagnostics) {
    iam_role::validate_names(config, diags);
    let root = AttributePath::root();
    let irsa_null = config.get("irsa").is_none_or(Value::is_null);
    // An unknown pod_identity may turn out true: only a known false (or unset) is an error.
    let pod_may_be_true = config
        .get("pod_identity")
        .is_some_and(|p| p.is_unknown() || p.as_bool() == Some(true));
    if irsa_null && !pod_may_be_true {
        diags.error_at(
            &root.attr("irsa"),
            "No way to assume the role",
            "Set irsa = { oidc_provider_arn = ... } (IRSA; works on Fargate), pod_identity = true (EKS Pod Identity), or both.",
        );
    }
    let Some(Ok(role)) = get_str(config, "node_role_arn").map(Arn::parse_role) else {
        return;
    };
    let account = get_str(config, "account_id").unwrap_or(&role.account).to_string();
    let region = get_str(config, "region");
    if account != role.account {
        diags.error_at(&root.attr("node_role_arn"), "Node role in another account", format!("The node role is in account {} but account_id is {account}; EC2 can only be passed a role of the cluster's own account.", role.account));
    }
    if let Some(Ok(q)) = get_str(config, "interruption_queue_arn").map(Arn::parse_queue) {
        let path = root.attr("interruption_queue_arn");
        if q.partition != role.partition || q.account != account {
            diags.error_at(
                &path,
                "Queue in another partition or account",
                format!(
                    "The queue is in {}/{} but the node role is in {}/{account}.",
                    q.partition, q.account, role.partition
                ),
            );
        }
    }
    if let Some(r) = region {
        check_region(config, r, &role, "", diags);
    }
    if let Some(provider) = config.get("irsa").and_then(|i| get_str(i, "oidc_provider_arn"))
        && let Ok((oidc, _)) = parse_oidc_provider(provider)
        && (oidc.partition != role.partition || oidc.account != account)
    {
        diags.error_at(
            &root.attr("irsa").attr("oidc_provider_arn"),
            "OIDC provider in another partition or account",
            format!(
                "The OIDC provider is in {}/{} but the node role is in {}/{account}.",
                oidc.partition, oidc.account, role.partition
            ),
        );
    }
}

/// The checks that need the region `r`: the queue must be in it, and it must be in the node
/// role's partition. `origin` says where `r` came from when it is not `region` itself (the
/// provider's default), for the messages.
pub(super) fn check_region(value: &Value, r: &str, role: &Arn, origin: &str, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    if let Some(Ok(q)) = get_str(value, "interruption_queue_arn").map(Arn::parse_queue)
        && q.region != r
    {
        diags.error_at(
            &root.attr("interruption_queue_arn"),
            "Queue in another region",
            format!(
                "The queue is in {} but the cluster is in {r}{origin}; Karpenter reads its interruption queue in its own region.",
                q.region
            ),
        );
    }
    if aws_names::aws_region(r).is_ok() && aws_names::partition_of_region(r) != role.partition {
        diags.error_at(
            &root.attr("region"),
            "Region not in the node role's partition",
            format!(
                "Region {r}{origin} is in partition {:?}, the node role in {:?}.",
                aws_names::partition_of_region(r),
                role.partition
            ),
        );
    }
}
