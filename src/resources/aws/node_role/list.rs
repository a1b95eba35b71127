//! Listing `karpenter_node_role`: which roles are this type's, on the generic role listing of
//! [`crate::resources::aws::listing`].

use async_trait::async_trait;

use super::*;
use crate::aws::iam::{Iam, ListedRole};
use crate::aws::ownership;
use crate::resources::aws::listing::*;
use crate::terraform::framework::{ListRequest, ListSink};

struct NodeRoles;

#[async_trait]
impl RoleListing for NodeRoles {
    fn type_name(&self) -> &'static str {
        NodeRole.type_name()
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
            let worker = super::aws_managed_policy(partition, "AmazonEKSWorkerNodePolicy");
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
            match imported_and_read(&NodeRole, ctx, &role.name).await {
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

/// `list "karpenter_node_role" …`.
pub async fn list_node_roles(ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
    list_roles(&NodeRoles, ctx, request, sink).await;
}
