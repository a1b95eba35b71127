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

use async_trait::async_trait;

use crate::aws::iam::Iam;
use crate::context::KarpenterContext;
use crate::policy::arn;
use crate::resources::aws::iam_role;
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::{get_str, string_list};
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, IdentitySchema, ListRequest, ListSink, PlanToCheck, ReadOutcome, Resource,
    Schema,
};
use crate::terraform::tfvalue::{AttributePath, Value};
use calls::{iam, iam_to_change, read_role};
use list::{NODE_ROLE_LIST, list_node_roles};
use model::{desired, state};
use schema::{
    AUTO_MODE_POLICIES, DEFAULT_PREFIX, ECR_POLICIES, EKS_AUTO_MODE, KARPENTER, SCHEMA, TYPE_NAME,
    aws_managed_policy, bool_of, policies_for, trust_policy, validate_mode,
};

mod access_entry;
mod calls;
mod list;
mod model;
mod schema;

pub struct NodeRole;

impl NodeRole {
    /// Converges `name` onto `planned`, then returns the state of what exists (plus errors).
    async fn apply(
        &self,
        ctx: &KarpenterContext,
        iam: &Iam,
        prior: &Value,
        planned: &Value,
        name: &str,
        partition: &str,
    ) -> ApplyOutcome {
        let mut diags = Diagnostics::new();
        let have = match read_role(iam, name).await {
            Ok(a) => a,
            Err(d) => return ApplyOutcome::failed(None, d),
        };
        // Ownership: what the state records is ours; a create never adopts anything found
        // under our names. Checked before anything is created or changed.
        let creating = prior.is_null();
        if creating {
            iam_role::refuse_existing_role(TYPE_NAME, have.as_ref(), &mut diags);
        }
        if bool_of(planned, "create_instance_profile") && !bool_of(prior, "create_instance_profile") {
            // Read with the role; looked up alone when there is no role yet.
            let profile = match have.as_ref() {
                Some(a) => Ok(a.profile.clone()),
                None => iam.get_instance_profile(name).await,
            };
            match profile {
                Ok(p) => iam_role::refuse_existing_profile(TYPE_NAME, name, p.as_ref(), creating, &mut diags),
                Err(e) => diags.extend(iam_role::diagnostics("read the instance profile", &e)),
            }
        }
        let attached = have.as_ref().map(|a| a.attached.clone()).unwrap_or_default();
        if let Err(e) =
            iam_role::check_additional_policies(iam, planned, Some(partition), &attached, &mut diags).await
        {
            diags.extend(iam_role::diagnostics("check additional_policy_arns", &e));
        }
        if diags.has_errors() {
            // Nothing was created or changed: no new state (an update keeps the prior one).
            return ApplyOutcome::failed(None, diags);
        }
        let account = have
            .as_ref()
            .and_then(|a| iam_role::partition_and_account(&a.role.arn))
            .map(|(_, acct)| acct)
            .unwrap_or_default();
        let want = desired(
            planned,
            prior,
            name,
            partition,
            &account,
            tags_all::wanted(ctx, planned),
        );
        let converged = iam_role::converge(iam, &want, have.as_ref()).await;
        if let Err(e) = &converged {
            diags.extend(iam_role::diagnostics("apply the node role", e));
        }
        match read_role(iam, name).await {
            Ok(Some(actual)) => {
                let mut new_state = state(planned, &actual, &tags_all::defaults(ctx));
                access_entry::follow_role(
                    ctx,
                    prior,
                    planned,
                    converged.is_ok(),
                    &actual.role.arn,
                    partition,
                    &mut new_state,
                    &mut diags,
                )
                .await;
                ApplyOutcome::failed(Some(new_state), diags)
            }
            Ok(None) => ApplyOutcome::failed(None, diags),
            Err(d) => {
                diags.extend(d);
                ApplyOutcome::failed(None, diags)
            }
        }
    }
}

#[async_trait]
impl Resource<KarpenterContext> for NodeRole {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        iam_role::validate_names(config, diags);
        validate_mode(config, diags);
        if let Some(p) = get_str(config, "partition") {
            for attr in ["permissions_boundary"] {
                if let Some(a) = get_str(config, attr).and_then(|s| arn::Arn::parse(s).ok())
                    && a.partition != p
                {
                    diags.error_at(
                        &AttributePath::root().attr(attr),
                        "ARN in another partition",
                        format!(
                            "The ARN is in partition {:?} but the role is in {p:?}.",
                            a.partition
                        ),
                    );
                }
            }
        }
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
        if !planned.is_null()
            && let Some(ctx) = ctx
        {
            ctx.require_region("The node role", diags);
        }
        tags_all::plan_into(ctx, planned);
        self.modify_plan(config, prior, planned, diags);
    }

    fn modify_plan(&self, _config: &Value, prior: &Value, planned: &mut Value, _diags: &mut Diagnostics) {
        iam_role::plan_unmanaged_inline(planned);
        access_entry::plan(prior, planned);
        let Value::Object(fields) = planned else { return };
        let profile = fields.get("create_instance_profile").and_then(Value::as_bool);
        // The profile carries the role's tags (`tags_all`).
        let profile_tags = match (profile, fields.get(tags_all::TAGS_ALL)) {
            (Some(false), _) => Value::Null,
            (Some(true), Some(t)) if t.is_wholly_known() => match t {
                Value::Null => Value::Map(Default::default()),
                known => known.clone(),
            },
            (Some(true), None) => Value::Map(Default::default()),
            _ => Value::unknown(),
        };
        fields.insert("instance_profile_tags".into(), profile_tags);
        if profile == Some(false) {
            fields.insert("instance_profile_name".into(), Value::Null);
            fields.insert("instance_profile_arn".into(), Value::Null);
        } else if profile == Some(true) && !bool_of(prior, "create_instance_profile") {
            fields.insert("instance_profile_name".into(), Value::unknown());
            fields.insert("instance_profile_arn".into(), Value::unknown());
        } else if profile == Some(true) {
            for k in ["instance_profile_name", "instance_profile_arn"] {
                fields.insert(k.into(), prior.get(k).cloned().unwrap_or(Value::Null));
            }
        }
        if prior.is_null() {
            return;
        }
        let partition = fields
            .get("partition")
            .and_then(Value::as_str)
            .map(str::to_string);
        let account = get_str(prior, "arn")
            .and_then(iam_role::partition_and_account)
            .map(|(_, a)| a);
        let planned_copy = Value::Object(fields.clone());
        let (policies, trust) = match (partition, account) {
            (Some(p), Some(a)) => (
                policies_for(&planned_copy, &p, &a)
                    .map(string_list)
                    .unwrap_or_else(Value::unknown),
                Value::string(iam_role::planned_trust(
                    get_str(prior, "assume_role_policy"),
                    &trust_policy(&p),
                )),
            ),
            _ => (Value::unknown(), Value::unknown()),
        };
        fields.insert("managed_policy_arns".into(), policies);
        fields.insert("assume_role_policy".into(), trust);
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
        let (iam, region) = match iam_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return ApplyOutcome::failed(None, d),
        };
        let partition = get_str(planned, "partition")
            .map(str::to_string)
            .unwrap_or_else(|| {
                arn::partition_of_region(region.as_deref().unwrap_or("us-east-1")).to_string()
            });
        let name = iam_role::resolve_name(planned, DEFAULT_PREFIX);
        iam_role::explain_partial_create(
            TYPE_NAME,
            self.apply(ctx, &iam, &Value::Null, planned, &name, &partition)
                .await,
        )
    }

    async fn read(&self, ctx: &KarpenterContext, current: &Value) -> Result<ReadOutcome, Diagnostics> {
        let Some(name) = get_str(current, "name") else {
            return Ok(ReadOutcome::Gone);
        };
        if iam_role::aws_config_unknown(ctx) {
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
        let (iam, _) = match iam_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return ApplyOutcome::failed(Some(prior.clone()), d),
        };
        let name = get_str(prior, "name").unwrap_or_default().to_string();
        let partition = get_str(planned, "partition")
            .or_else(|| get_str(prior, "partition"))
            .unwrap_or("aws")
            .to_string();
        let out = self.apply(ctx, &iam, prior, planned, &name, &partition).await;
        if out.state.is_none() {
            return ApplyOutcome::failed(Some(prior.clone()), out.diagnostics);
        }
        out
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

    /// Import by role name: the settings are inferred from what is attached.
    /// Import by role name, or by `<role name>:<cluster name>` to take over the role's access
    /// entry in that cluster too (IAM role names cannot contain `:`).
    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
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
}

#[cfg(test)]
mod tests;
