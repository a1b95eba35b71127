//! Which kubelet settings each AMI family applies (Karpenter v1.15). Only `AL2023` bootstraps
//! with a whole kubelet configuration document; `AL2`, `Bottlerocket` and the Windows families
//! pass the 12 settings Karpenter reads as bootstrap parameters, and Karpenter v1.15 refuses any
//! other field for them (`ValidationSucceeded = False`, reason `UnsupportedKubeletConfiguration`:
//! the NodeClass never becomes Ready). `Custom` is exempt: its user data applies what it wants.
//!
//! Two of the 12 are narrower on those families: `pods_per_core` is not applied by
//! `Bottlerocket`, and `cluster_dns` takes one address. Karpenter v1.15 refuses both; older
//! versions drop them silently, so a configuration that worked there only gets a warning.

use crate::resources::kube::v1::ec2_node_class::ami_family;
use crate::resources::kube::v1::ec2_node_class::kubelet::upstream::{FieldType, fields};
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

/// The kubelet fields set in `kubelet` that the node class's AMI family does not apply (nothing
/// while the family is unknown or not named).
pub(crate) fn check(config: &Value, diags: &mut Diagnostics) {
    let Some(kubelet) = config.get("kubelet") else {
        return;
    };
    if kubelet.is_null() || kubelet.is_unknown() {
        return;
    }
    let family = ami_family::resolve(config);
    let Some(family) = family.name() else { return };
    if family == "AL2023" || family == "Custom" {
        return;
    }
    let at = AttributePath::root().attr("kubelet");
    for field in fields().iter().filter(|f| !f.path.contains('.')) {
        if matches!(
            field.ty,
            FieldType::Karpenter | FieldType::TypeMeta | FieldType::Refused
        ) {
            continue;
        }
        if kubelet.get(field.name).is_some_and(|v| !v.is_null()) {
            diags.error_at(
                &at.attr(field.name),
                "Not applied by this AMI family",
                format!(
                    "The {family} AMI family passes only the 12 kubelet settings Karpenter reads (max_pods, \
                     pods_per_core, system_reserved, kube_reserved, the eviction settings, the image garbage \
                     collection thresholds, cluster_dns, cpu_cfs_quota) to its bootstrap; Karpenter v1.15 refuses \
                     {} for it (the NodeClass would never become Ready) and older versions do not have it. Use the \
                     AL2023 family, or the Custom family with user data that applies it, or remove it.",
                    field.name
                ),
            );
        }
    }
    if family == "Bottlerocket" && kubelet.get("pods_per_core").is_some_and(|v| !v.is_null()) {
        diags.warning_at(
            &at.attr("pods_per_core"),
            "Not applied by the Bottlerocket AMI family",
            "Bottlerocket does not apply pods_per_core: Karpenter v1.14 and older drop it silently, and Karpenter v1.15 \
             refuses the NodeClass (ValidationSucceeded = False, UnsupportedKubeletConfiguration), so no node launches. \
             Remove it, or use max_pods.",
        );
    }
    let dns = kubelet
        .get("cluster_dns")
        .and_then(Value::as_elements)
        .map_or(0, <[Value]>::len);
    if dns > 1 {
        diags.warning_at(
            &at.attr("cluster_dns"),
            "Only one cluster DNS address for this AMI family",
            format!(
                "The {family} AMI family passes one cluster DNS address to its bootstrap ({dns} are set): Karpenter \
                 v1.14 and older use the first one, and Karpenter v1.15 refuses the NodeClass (ValidationSucceeded = \
                 False, UnsupportedKubeletConfiguration), so no node launches. Keep one address, or use the AL2023 \
                 family."
            ),
        );
    }
}
