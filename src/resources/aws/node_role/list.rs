//! Listing `karpenter_node_role`: its list schema, and which roles are this type's, on the role
//! listing both role types share ([`crate::resources::aws::iam_role`]).

use std::sync::LazyLock;

use async_trait::async_trait;

use super::schema::aws_managed_policy;
use crate::aws::iam::{Iam, ListedRole};
use crate::aws::ownership;
use crate::context::KarpenterContext;
use crate::resources::aws::iam_role::{
    RoleListing, Trust, Verdict, cannot_import, cluster_from_name, cluster_from_tags, list_roles, unreadable,
};
use crate::resources::aws::listing::{cluster_name_filter, imported_and_read};
use crate::terraform::framework::list::name_prefix_attribute;
use crate::terraform::framework::{ListRequest, ListSink, Resource, Schema};

/// Upstream's node role name: `KarpenterNodeRole-<cluster>`.
pub const NODE_ROLE_NAME_PREFIX: &str = "KarpenterNodeRole-";

pub static NODE_ROLE_LIST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Finds the Karpenter node roles in the account of the provider configuration: IAM roles EC2 may assume \
         that carry this provider's ownership tag, or that are named `KarpenterNodeRole-<cluster>` (Karpenter's \
         CloudFormation reference) and have AmazonEKSWorkerNodePolicy attached.",
        vec![
            name_prefix_attribute("roles"),
            cluster_name_filter(
                "the cluster in the role's name (`KarpenterNodeRole-<cluster>`), else in its `karpenter.sh/discovery`, \
                 `eks:eks-cluster-name`, `eks:cluster-name` or `alpha.eksctl.io/cluster-name` tag, else its \
                 `kubernetes.io/cluster/<cluster>` tag. A role that names no cluster is left out.",
            ),
        ],
    )
});

/// The role listing of `karpenter_node_role`, importing through the resource type.
struct NodeRoles<'a, R>(&'a R);

#[async_trait]
impl<R: Resource<KarpenterContext>> RoleListing for NodeRoles<'_, R> {
    fn type_name(&self) -> &'static str {
        self.0.type_name()
    }

    fn trust_fits(&self, trust: &Trust) -> bool {
        trust.ec2
    }

    async fn examine(
        &self,
        ctx: &KarpenterContext,
        iam: &Iam,
        role: &ListedRole,
        _trust: &Trust,
        include_state: bool,
    ) -> Verdict {
        let tags = match iam.role_tags(&role.name).await {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return Verdict::NotOurs,
            Err(e) => return unreadable(&role.name, &e),
        };
        let named_cluster = cluster_from_name(&role.name, NODE_ROLE_NAME_PREFIX);
        if !ownership::is_owned_by(&tags, self.type_name()) {
            // Upstream's shape: its name, and the worker node policy attached.
            if named_cluster.is_none() {
                return Verdict::NotOurs;
            }
            let partition = role.arn.split(':').nth(1).unwrap_or("aws");
            let worker = aws_managed_policy(partition, "AmazonEKSWorkerNodePolicy");
            match iam.attached_policies(&role.name).await {
                Ok(attached) if attached.contains(&worker) => {}
                Ok(_) => return Verdict::NotOurs,
                Err(e) if e.is_not_found() => return Verdict::NotOurs,
                Err(e) => return unreadable(&role.name, &e),
            }
        }
        let cluster = named_cluster
            .map(str::to_string)
            .or_else(|| cluster_from_tags(&tags));
        let state = if include_state {
            match imported_and_read(self.0, ctx, &role.name).await {
                Ok(s) => Some(s),
                Err(why) => return cannot_import(self.type_name(), &role.name, &why),
            }
        } else {
            None
        };
        let display_name = match &cluster {
            Some(c) => format!("{} (cluster {c})", role.name),
            None => role.name.clone(),
        };
        Verdict::Found {
            display_name,
            cluster,
            state,
        }
    }
}

/// `list "karpenter_node_role" …`, importing each role found with `resource`.
pub async fn list_node_roles<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    request: &ListRequest,
    sink: &ListSink,
) {
    list_roles(&NodeRoles(resource), ctx, request, sink).await;
}
