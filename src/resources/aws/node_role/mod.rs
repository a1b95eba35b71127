//! Resource `karpenter_node_role`: the IAM role Karpenter's nodes run as. EC2 may assume it
//! (`ec2.<partition DNS suffix>`), and it has the managed policies a node needs attached:
//! AmazonEKSWorkerNodePolicy, the CNI policy (IPv4 or IPv6, or none), an ECR policy (pull-only,
//! as Karpenter's reference uses, or read-only) and AmazonSSMManagedInstanceCore. Optionally an
//! instance profile of the same name holds the role (for pre-v1 AWSNodeTemplate users). With
//! `mode = "eks_auto_mode"` it is the role of EKS Auto Mode's nodes instead (the two policies
//! the EKS guide names, no instance profile), and `eks_access_entry` adds the role's EKS access
//! entry ([`access_entry`]). The schema and the policies of each shape are in [`schema`], the
//! desired and the read state in [`model`], the IAM client and the read of the role in
//! [`calls`], the list schema and listing in [`list`].
//!
//! One file per job: [`validate`] (the configuration alone), [`plan`], [`apply`] (create and
//! update), [`import`] (by role name, or with its access entry); the plan's remote check, read
//! and delete below.

use async_trait::async_trait;

use crate::context::KarpenterContext;
use crate::resources::aws::iam_role;
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, IdentitySchema, ListRequest, ListSink, PlanToCheck, ReadOutcome, Resource,
    Schema,
};
use crate::terraform::tfvalue::Value;
use calls::{iam, iam_to_change, read_role};
use list::{NODE_ROLE_LIST, list_node_roles};
use model::state;
use schema::{SCHEMA, TYPE_NAME};

mod access_entry;
mod apply;
mod calls;
mod import;
mod list;
mod model;
mod plan;
mod schema;
mod validate;

pub struct NodeRole;

#[async_trait]
impl Resource<KarpenterContext> for NodeRole {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        validate::validate(config, diags);
    }

    /// `tags_all` needs the provider's default tags.
    fn modify_plan_in(
        &self,
        ctx: Option<&KarpenterContext>,
        config: &Value,
        prior: &Value,
        planned: &mut Value,
        diags: &mut Diagnostics,
    ) {
        plan::modify_plan_in(ctx, config, prior, planned, diags);
    }

    fn modify_plan(&self, config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
        plan::modify_plan(config, prior, planned, diags);
    }

    /// `name` and `account_id` (see [`super::listing`]).
    fn identity_schema(&self) -> Option<&IdentitySchema> {
        Some(&iam_role::ROLE_IDENTITY)
    }

    /// The access entry EKS made itself for the cluster's Auto Mode node role is refused at plan
    /// when the cluster already says this role is its node role.
    async fn check_plan_remotely(&self, ctx: &KarpenterContext, change: &PlanToCheck<'_>) -> Diagnostics {
        if change.planned.is_null() {
            return Diagnostics::new();
        }
        access_entry::plan_eks_managed(ctx, change.prior, change.planned).await
    }

    fn identity(&self, state: &Value) -> Value {
        iam_role::role_identity(state)
    }

    async fn import_by_identity(
        &self,
        ctx: &KarpenterContext,
        identity: &Value,
    ) -> Result<Value, Diagnostics> {
        iam_role::import_role_by_identity(self, ctx, identity).await
    }

    fn list_schema(&self) -> Option<&Schema> {
        Some(&NODE_ROLE_LIST)
    }

    async fn list(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        list_node_roles(self, ctx, request, sink).await;
    }

    async fn create(&self, ctx: &KarpenterContext, planned: &Value) -> ApplyOutcome {
        apply::create(ctx, planned).await
    }

    async fn read(&self, ctx: &KarpenterContext, current: &Value) -> Result<ReadOutcome, Diagnostics> {
        let Some(name) = get_str(current, "name") else {
            return Ok(ReadOutcome::Gone);
        };
        if ctx.aws_unknown() {
            tracing::warn!(
                role = name,
                "aws {{}} configuration not known yet; keeping the prior state"
            );
            return Ok(ReadOutcome::Found(current.clone()));
        }
        let (iam, _) = iam(ctx).await?;
        let Some(actual) = read_role(&iam, name).await? else {
            return Ok(ReadOutcome::Gone);
        };
        let mut found = state(current, &actual, &tags_all::defaults(ctx));
        // Only a recorded entry is read: one found for the role but never recorded (refused on
        // create as someone else's) is not this state's.
        if access_entry::recorded_cluster(current).is_some() {
            let eks = ctx.aws().await?.eks_access();
            let entry = access_entry::read(&eks, &found).await?;
            access_entry::into_state(&mut found, entry.as_ref());
        }
        Ok(ReadOutcome::Found(found))
    }

    async fn update(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
        apply::update(ctx, prior, planned).await
    }

    async fn delete(&self, ctx: &KarpenterContext, prior: &Value) -> Diagnostics {
        let Some(name) = get_str(prior, "name") else {
            return Diagnostics::new();
        };
        let (iam, _) = match iam_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return d,
        };
        if access_entry::recorded_cluster(prior).is_some() {
            let gone = match ctx.aws_to_change().await {
                Ok(aws) => access_entry::delete(&aws.eks_access(), prior).await,
                Err(d) => d,
            };
            if gone.has_errors() {
                return gone;
            }
        }
        let profile = get_str(prior, "instance_profile_name").map(str::to_string);
        match iam_role::delete(&iam, name, &[], profile.as_deref()).await {
            Ok(()) => Diagnostics::new(),
            Err(e) => iam_role::diagnostics("delete the node role", &e),
        }
    }

    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
        import::import(ctx, id).await
    }
}

#[cfg(test)]
mod tests;
