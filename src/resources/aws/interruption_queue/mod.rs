//! Resource `karpenter_interruption_queue`: the SQS queue Karpenter reads interruption events
//! from, its queue policy, and the EventBridge rules (one per event kind, each with the queue as
//! its target), managed as one object, after Karpenter's CloudFormation reference.
//!
//! Contract: every part is recorded in state as soon as it exists, so a failure midway returns
//! what exists plus the error, and the next apply finishes (Terraform marks a failed create as
//! tainted and replaces it; deletion removes exactly what is recorded plus our derived names).
//! Read checks every part (queue attributes, policy, each rule's pattern and state, each
//! target); modify_plan plans the desired value of each, so drift shows as exactly that part.
//!
//! One file per job: [`validate`] (the configuration alone), [`plan`], [`apply`] (create and
//! update), [`import`] (by queue name or URL); read and delete below. The schema in
//! [`schema`], the desired and the read state in [`model`], the AWS side (clients, refresh,
//! converge, delete) in [`calls`], the rule kinds and names in [`kinds`], the queue policy in
//! [`document`] and [`policy_equivalence`], identity and listing in [`identity`] and [`list`],
//! the backlog a plan warns about in [`health`].

use async_trait::async_trait;

use crate::context::KarpenterContext;
use crate::resources::aws::tags_all;
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, IdentitySchema, ListRequest, ListSink, PlanToCheck, ReadOutcome, Resource,
    Schema,
};
use crate::terraform::tfvalue::{AttributePath, Value};
use calls::{clients, clients_to_change, delete_parts, refresh};
use identity::{QUEUE_IDENTITY, import_queue_by_identity, queue_identity};
use list::{QUEUE_LIST, list_queues};
use schema::{SCHEMA, TYPE_NAME};

mod apply;
mod calls;
mod document;
mod health;
mod identity;
mod import;
mod kinds;
mod list;
mod model;
mod plan;
mod policy_equivalence;
mod schema;
mod validate;

// What the acceptance tests use to build an upstream-shaped queue by hand.
pub use calls::TARGET_ID;
pub use document::policy_document;
pub use kinds::{RULE_KINDS, RuleKind};

/// The resource type.
pub struct InterruptionQueue;

// ----------------------------------------------------------------------------------------

#[async_trait]
impl Resource<KarpenterContext> for InterruptionQueue {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        validate::validate(config, diags);
    }

    /// `tags_all` needs the provider's default tags; with them, the parts may carry at most
    /// [`schema::MAX_USER_TAGS`] tags of the user's.
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

    /// A new queue name (from `name` or `cluster_name`) replaces the whole resource.
    fn extra_replacements(&self, prior: &Value, planned: &Value) -> Vec<AttributePath> {
        plan::extra_replacements(prior, planned)
    }

    /// `queue_name`, `region` and `account_id` (see [`super::listing`]).
    fn identity_schema(&self) -> Option<&IdentitySchema> {
        Some(&QUEUE_IDENTITY)
    }

    fn identity(&self, state: &Value) -> Value {
        queue_identity(state)
    }

    async fn import_by_identity(
        &self,
        ctx: &KarpenterContext,
        identity: &Value,
    ) -> Result<Value, Diagnostics> {
        import_queue_by_identity(self, ctx, identity).await
    }

    fn list_schema(&self) -> Option<&Schema> {
        Some(&QUEUE_LIST)
    }

    async fn list(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        list_queues(self, ctx, request, sink).await;
    }

    /// What the queue's refresh read of its messages: a backlog no running Karpenter leaves
    /// ([`health`]).
    async fn check_plan_remotely(&self, ctx: &KarpenterContext, change: &PlanToCheck<'_>) -> Diagnostics {
        health::backlog_note(ctx, change)
    }

    async fn create(&self, ctx: &KarpenterContext, planned: &Value) -> ApplyOutcome {
        apply::apply(ctx, &Value::Null, planned, "create").await
    }

    async fn read(&self, ctx: &KarpenterContext, current: &Value) -> Result<ReadOutcome, Diagnostics> {
        // With the aws {} block still unknown (plan of a stack being built), keep what we have.
        if ctx.aws_unknown() {
            return Ok(ReadOutcome::Found(current.clone()));
        }
        let c = clients(ctx).await?;
        match refresh(&c, current, &tags_all::defaults(ctx)).await {
            Ok(Some((v, backlog))) => {
                if let (Some(backlog), Some(queue)) = (backlog, v.get("queue_name").and_then(Value::as_str)) {
                    ctx.plan.queue_read(queue, backlog);
                }
                Ok(ReadOutcome::Found(v))
            }
            Ok(None) => Ok(ReadOutcome::Gone),
            Err(e) => Err(e.to_diagnostics()),
        }
    }

    async fn update(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
        apply::apply(ctx, prior, planned, "update").await
    }

    async fn delete(&self, ctx: &KarpenterContext, prior: &Value) -> Diagnostics {
        let c = match clients_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return d,
        };
        let mut notes = Diagnostics::new();
        if let Err(e) = delete_parts(&c, prior, &mut notes).await {
            notes.extend(e.to_diagnostics());
        }
        notes
    }

    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
        import::import(ctx, id).await
    }
}

#[cfg(test)]
mod tests;
