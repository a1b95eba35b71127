//! Identity and listing of the AWS resource types (`karpenter_interruption_queue`,
//! `karpenter_node_role`, `karpenter_controller_role`), as [`crate::resources::kube::object::identity`] is for the
//! Kubernetes kinds.
//!
//! - **identity**: the queue's name, or the role's name, plus where it lives (`region` and
//!   `account_id` for the queue, `account_id` for a role), derived from the ARN in state. An
//!   import by identity checks those against the provider configuration (its region, and the
//!   account its credentials are in) and refuses a mismatch with a diagnostic that names the
//!   provider configuration to use; then it is the import by name.
//! - **list** (`list "karpenter_node_role" "all" { provider = karpenter }`): finds the Karpenter
//!   parts in the account (and region) of the provider configuration, by what they are made of:
//!   - an interruption queue is an SQS queue with this provider's ownership tag, or one an
//!     EventBridge rule with one of Karpenter's interruption event patterns targets (as
//!     Karpenter's CloudFormation reference builds it);
//!   - a node role trusts EC2 and carries the ownership tag, or is named
//!     `KarpenterNodeRole-<cluster>` (upstream's name) with AmazonEKSWorkerNodePolicy attached;
//!   - a controller role trusts a service account through IRSA or EKS Pod Identity and carries
//!     the ownership tag, is named `KarpenterControllerRole-<cluster>`, or trusts a Karpenter
//!     service account (`system:serviceaccount:<ns>:karpenter`). It must also have the
//!     permissions in the shape `karpenter_controller_role` manages (what its import needs);
//!     one that does not is reported as a warning, not listed.
//!
//!   ListRoles returns trust policies but not tags, so the per-role calls are made only for
//!   roles whose trust fits, and only while the sink wants more. A part that cannot be read is
//!   a warning ([`ListSink::skip`]); only a failure of the listing itself ends it.
//!   With `include_resource = true` each result's state is the type's own import followed by
//!   its read, so it is exactly what importing the listed identity gives.
//!
//! Each type's identity and list schema are with the type (`interruption_queue/identity.rs`
//! and `list.rs`; the roles' shared identity and role listing in `iam_role/identity.rs`,
//! `list.rs` and `trust.rs`). Here is only what the three share: the `cluster_name` filter
//! of their list schemas, the import-then-read of a listed part, warnings' text, reading a
//! policy field, and (in [`identity`]) the region and account of an ARN and the refusals
//! that name the provider configuration to use.

use serde_json::Value as Json;

use crate::aws_names;
use crate::context::KarpenterContext;
use crate::terraform::framework::schema::Attribute;
use crate::terraform::framework::{Diagnostics, ReadOutcome, Resource};
use crate::terraform::tfvalue::Value;

/// The `cluster_name` filter of a list schema; `how` says where the type reads a part's cluster.
pub fn cluster_name_filter(how: &str) -> Attribute {
    Attribute::string("cluster_name")
        .optional()
        .describe(format!("Only the parts of this EKS cluster: {how}"))
        .validate(aws_names::eks_cluster_name_validator())
}

mod identity;

pub use identity::{account_mismatch, arn_region_account, explain_failed_import};

/// The state an import of `id` followed by a refresh gives (what Terraform stores for an
/// imported object), or why there is none.
pub async fn imported_and_read<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    id: &str,
) -> Result<Value, String> {
    let imported = resource.import(ctx, id).await.map_err(|d| text(&d))?;
    read_back(resource, ctx, imported).await
}

/// The refresh Terraform makes right after an import.
pub async fn read_back<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    imported: Value,
) -> Result<Value, String> {
    match resource.read(ctx, &imported).await {
        Ok(ReadOutcome::Found(state)) | Ok(ReadOutcome::BeingDeleted(state, _)) => Ok(state),
        Ok(ReadOutcome::Gone) => Err("it was deleted while it was being listed".into()),
        Ok(ReadOutcome::KeptPrior(d)) | Err(d) => Err(text(&d)),
    }
}

/// The details of diagnostics, as one sentence for a warning.
pub fn text(d: &Diagnostics) -> String {
    d.iter()
        .map(|d| {
            if d.detail.is_empty() {
                d.summary.clone()
            } else {
                format!("{}: {}", d.summary, d.detail)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A policy field that is a string or a list of strings.
pub fn strings(v: &Json) -> Vec<&str> {
    match v {
        Json::String(s) => vec![s.as_str()],
        Json::Array(items) => items.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn arns_give_region_and_account_in_any_partition() {
        assert_eq!(
            arn_region_account("arn:aws:sqs:us-east-1:123456789012:demo"),
            Some(("us-east-1", "123456789012"))
        );
        assert_eq!(
            arn_region_account("arn:aws-iso:iam::111122223333:role/a/b:c"),
            Some(("", "111122223333"))
        );
        assert_eq!(arn_region_account("not-an-arn"), None);
        assert_eq!(arn_region_account("arn:aws:sqs:us-east-1"), None);
    }

    #[test]
    fn an_account_mismatch_names_the_provider_configuration_to_use() {
        let d = account_mismatch("karpenter_node_role", "210987654321", "123456789012");
        let detail = &d.iter().next().expect("diagnostic").detail;
        assert!(detail.contains("account 123456789012"), "{detail}");
        assert!(detail.contains("arn:aws:iam::210987654321:role/"), "{detail}");
    }
}
