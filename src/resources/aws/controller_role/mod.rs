//! Resource `karpenter_controller_role`: the IAM role the Karpenter controller runs as. Its
//! trust policy admits the controller's service account through IRSA (an OIDC provider,
//! `sts:AssumeRoleWithWebIdentity` with `aud` and `sub` conditions), through EKS Pod Identity
//! (`pods.eks.amazonaws.com`, `sts:AssumeRole` + `sts:TagSession`), or both. Its permissions
//! are exactly those `karpenter_controller_policy` renders for the same inputs (the same
//! `policy::controller` code), as one inline policy or as one managed policy per upstream group.
//!
//! One file per job: [`validate`] (the configuration alone), [`plan`], [`apply`] (create and
//! update), [`import`] (by role name); read and delete below. The schema in [`schema`], the
//! desired and the read state in [`model`], the IAM client and the read of the role in
//! [`calls`], the list schema and listing in [`list`], what an update would lose in
//! [`losses`]; what both roles share is in `iam_role`.

use async_trait::async_trait;

use crate::context::KarpenterContext;
use crate::resources::aws::iam_role;
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, IdentitySchema, ListRequest, ListSink, ReadOutcome, Resource, Schema,
};
use crate::terraform::tfvalue::Value;
use calls::{iam, iam_to_change, read_role};
use list::{CONTROLLER_ROLE_LIST, list_controller_roles};
use model::{all_group_arns, state};
use schema::{SCHEMA, TYPE_NAME};

mod apply;
mod calls;
mod import;
mod list;
mod losses;
mod model;
mod plan;
mod schema;
mod validate;

pub struct ControllerRole;

#[async_trait]
impl Resource<KarpenterContext> for ControllerRole {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        validate::validate(config, diags);
    }

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
        Some(&CONTROLLER_ROLE_LIST)
    }

    async fn list(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        list_controller_roles(self, ctx, request, sink).await;
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
        let iam = iam(ctx).await?;
        Ok(match read_role(&iam, name).await? {
            Some(actual) => ReadOutcome::Found(state(current, &actual, &tags_all::defaults(ctx))),
            None => ReadOutcome::Gone,
        })
    }

    async fn update(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
        apply::update(ctx, prior, planned).await
    }

    async fn delete(&self, ctx: &KarpenterContext, prior: &Value) -> Diagnostics {
        let Some(name) = get_str(prior, "name") else {
            return Diagnostics::new();
        };
        let iam = match iam_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return d,
        };
        let owned = match get_str(prior, "arn") {
            Some(arn) => all_group_arns(arn, get_str(prior, "path").unwrap_or("/"), name),
            None => Vec::new(),
        };
        match iam_role::delete(&iam, name, &owned, None).await {
            Ok(()) => Diagnostics::new(),
            Err(e) => iam_role::diagnostics("delete the controller role", &e),
        }
    }

    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
        import::import(ctx, id).await
    }
}

#[cfg(test)]
mod tests;
