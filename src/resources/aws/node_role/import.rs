//! Import of `karpenter_node_role` by role name (the settings inferred from the policies
//! attached), or by `<role name>:<cluster name>` to take over the role's EKS access entry too.

use super::access_entry;
use super::calls::{iam, read_role};
use super::model::state;
use super::schema::{AUTO_MODE_POLICIES, ECR_POLICIES, EKS_AUTO_MODE, KARPENTER, SCHEMA, aws_managed_policy};
use crate::context::KarpenterContext;
use crate::resources::aws::iam_role;
use crate::resources::aws::tags_all;
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::Value;

/// Import by role name: the settings are inferred from what is attached.
/// Import by role name, or by `<role name>:<cluster name>` to take over the role's access
/// entry in that cluster too (IAM role names cannot contain `:`).
pub(super) async fn import(ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
    let (id, cluster) = match id.split_once(':') {
        Some((role, cluster)) => (role, Some(cluster)),
        None => (id, None),
    };
    let (iam, _) = iam(ctx).await?;
    let actual = read_role(&iam, id).await?.ok_or_else(|| {
        Diagnostics::from_error(
            "Cannot import karpenter_node_role",
            format!(
                "There is no IAM role named {id:?}. Import takes the role name, or <role name>:<cluster name> \
                 to take over the role's EKS access entry in that cluster too."
            ),
        )
    })?;
    let (partition, account) = iam_role::partition_and_account(&actual.role.arn).unwrap_or_default();
    let attached = |arn: &str| actual.attached.contains(arn);
    let p = |name: &str| aws_managed_policy(&partition, name);
    let ipv6_arn = format!("arn:{partition}:iam::{account}:policy/AmazonEKS_CNI_IPv6_Policy");
    let ipv6 = attached(&ipv6_arn);
    let cni = ipv6 || attached(&p("AmazonEKS_CNI_Policy"));
    let ecr = if attached(&p(ECR_POLICIES[1])) && !attached(&p(ECR_POLICIES[0])) {
        ECR_POLICIES[1]
    } else {
        ECR_POLICIES[0]
    };
    let mut base: std::collections::BTreeMap<String, Value> = SCHEMA
        .attributes
        .iter()
        .map(|a| (a.name.to_string(), Value::Null))
        .collect();
    base.insert(
        "ip_family".into(),
        Value::string(if ipv6 { "ipv6" } else { "ipv4" }),
    );
    base.insert("attach_cni_policy".into(), Value::Bool(cni));
    base.insert("ecr_policy".into(), Value::string(ecr));
    // The Auto Mode shape: the minimal worker policy instead of the full one.
    let auto_mode = attached(&p(AUTO_MODE_POLICIES[0])) && !attached(&p("AmazonEKSWorkerNodePolicy"));
    base.insert(
        "mode".into(),
        Value::string(if auto_mode { EKS_AUTO_MODE } else { KARPENTER }),
    );
    let mut imported = state(&Value::Object(base), &actual, &tags_all::defaults(ctx));
    if let Some(cluster) = cluster {
        let eks = ctx.aws().await?.eks_access();
        if let Some(refused) = access_entry::eks_managed(&eks, cluster, &actual.role.arn).await {
            return Err(refused);
        }
        let entry = eks
            .get(cluster, &actual.role.arn)
            .await
            .map_err(|e| e.to_diagnostics())?
            .ok_or_else(|| {
                Diagnostics::from_error(
                    "Cannot import karpenter_node_role",
                    format!(
                        "The role {id:?} has no EKS access entry in cluster {cluster:?}. Import it by its name \
                         alone; with eks_access_entry set, the next apply creates the entry."
                    ),
                )
            })?;
        if let Value::Object(fields) = &mut imported {
            fields.insert(
                "eks_access_entry".into(),
                Value::Object([("cluster_name".to_string(), Value::string(cluster))].into()),
            );
        }
        access_entry::into_state(&mut imported, Some(&entry));
    }
    Ok(imported)
}
