//! Resource `karpenter_node_role`: the IAM role Karpenter's nodes run as. EC2 may assume it
//! (`ec2.<partition DNS suffix>`), and it has the managed policies a node needs attached:
//! AmazonEKSWorkerNodePolicy, the CNI policy (IPv4 or IPv6, or none), an ECR policy (pull-only,
//! as Karpenter's reference uses, or read-only) and AmazonSSMManagedInstanceCore. Optionally an
//! instance profile of the same name holds the role (for pre-v1 AWSNodeTemplate users).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use async_trait::async_trait;
use serde_json::{Value as Json, json};

use crate::aws::iam::Iam;
use crate::context::KarpenterContext;
use crate::policy::arn::{self, PARTITIONS};
use crate::resources::aws::iam_role::{self, Actual, Desired, ReadScope};
use crate::resources::aws::listing;
use crate::resources::aws::tags_all;
use crate::terraform::framework::validate as v;
use crate::terraform::framework::values::{get_str, opt_string, string_list, string_map};
use crate::terraform::framework::{
    ApplyOutcome, Attribute, Diagnostics, IdentitySchema, ListRequest, ListSink, ReadOutcome, Resource,
    Schema,
};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

mod list;
pub use list::*;

pub struct NodeRole;

const DEFAULT_PREFIX: &str = "karpenter-node-";
const TYPE_NAME: &str = "karpenter_node_role";
const ECR_POLICIES: &[&str] = &[
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonEC2ContainerRegistryReadOnly",
];

static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let mut attributes = iam_role::common_attributes(DEFAULT_PREFIX, "its instance profile");
    attributes.extend([
        Attribute::string("partition")
            .optional_computed()
            .stable()
            .replace_on_change()
            .describe("AWS partition the policy ARNs and the EC2 principal are built for. When unset, derived from the provider's region (`cn-*` → `aws-cn`, `us-gov-*` → `aws-us-gov`, else `aws`).")
            .validate(v::one_of(PARTITIONS)),
        Attribute::string("ip_family")
            .default_value(Value::string("ipv4"))
            .describe("IP family of the cluster: `ipv4` attaches AmazonEKS_CNI_Policy; `ipv6` attaches the account's `AmazonEKS_CNI_IPv6_Policy` (create it first, as the EKS IPv6 guide says).")
            .validate(v::one_of(&["ipv4", "ipv6"])),
        Attribute::bool("attach_cni_policy")
            .default_value(Value::Bool(true))
            .describe("Attach the CNI policy. Set false when the VPC CNI uses its own IRSA or Pod Identity role."),
        Attribute::string("ecr_policy")
            .default_value(Value::string(ECR_POLICIES[0]))
            .describe("The ECR policy nodes get: the pull-only policy Karpenter's reference uses, or the older read-only one.")
            .validate(v::one_of(ECR_POLICIES)),
        Attribute::bool("create_instance_profile")
            .default_value(Value::Bool(false))
            .describe("Create an instance profile of the role's name holding the role. Karpenter v1 creates its own profiles from the role name; this is for v1alpha5 / AWSNodeTemplate setups that name a profile."),
        Attribute::string("instance_profile_name").computed().describe("Name of the instance profile, when created."),
        Attribute::string("instance_profile_arn").computed().describe("ARN of the instance profile, when created."),
        Attribute::map_of("instance_profile_tags", Type::String)
            .computed()
            .describe("The instance profile's tags, which follow `tags_all`: a change made to them outside Terraform shows here and the next apply puts them back."),
        tags_all::attribute("the role and its instance profile"),
        Attribute::list_of("managed_policy_arns", Type::String)
            .computed()
            .describe("The node policies this resource attaches (besides `additional_policy_arns`)."),
    ]);
    Schema::new(
        "The IAM role for Karpenter's nodes: trusted by EC2, with the node policies of Karpenter's \
         reference attached, optionally with an instance profile. Drift in the trust policy, the \
         attached policies, inline policies added outside Terraform, the tags and the instance \
         profile is detected and repaired. Create never takes over an existing role or instance \
         profile of the same name, whoever made it — another Terraform state, a module, or an apply \
         of this configuration interrupted before Terraform recorded the role: it fails on `name`, \
         changes nothing, and gives the `import {}` block that takes the role over on purpose. The \
         parts the resource creates carry the tag `terraform-provider-karpenter/resource-type`; the \
         error says when an existing role has it. Import by role name (the next apply may add that \
         tag).",
        attributes,
    )
});

/// The node policies for these settings, in a fixed order.
fn node_policies(partition: &str, account: &str, ipv6: bool, cni: bool, ecr: &str) -> Vec<String> {
    let aws = |name: &str| format!("arn:{partition}:iam::aws:policy/{name}");
    let mut out = vec![aws("AmazonEKSWorkerNodePolicy")];
    if cni {
        out.push(if ipv6 {
            format!("arn:{partition}:iam::{account}:policy/AmazonEKS_CNI_IPv6_Policy")
        } else {
            aws("AmazonEKS_CNI_Policy")
        });
    }
    out.push(aws(ecr));
    out.push(aws("AmazonSSMManagedInstanceCore"));
    out
}

fn policies_for(value: &Value, partition: &str, account: &str) -> Option<Vec<String>> {
    let ipv6 = get_str(value, "ip_family")? == "ipv6";
    let cni = value.get("attach_cni_policy")?.as_bool()?;
    let ecr = get_str(value, "ecr_policy")?;
    Some(node_policies(partition, account, ipv6, cni, ecr))
}

fn trust_policy(partition: &str) -> Json {
    json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": format!("ec2.{}", iam_role::dns_suffix(partition))},
            "Action": "sts:AssumeRole",
        }],
    })
}

fn bool_of(value: &Value, name: &str) -> bool {
    value.get(name).and_then(Value::as_bool).unwrap_or(false)
}

/// What the role should be, for a planned value whose name, partition and account are known;
/// `tags` is what every part carries (`tags_all`).
fn desired(
    planned: &Value,
    prior: &Value,
    name: &str,
    partition: &str,
    account: &str,
    tags: std::collections::BTreeMap<String, String>,
) -> Desired {
    let mut attached: BTreeSet<String> = policies_for(planned, partition, account)
        .unwrap_or_default()
        .into_iter()
        .collect();
    attached.extend(iam_role::string_set_of(planned, "additional_policy_arns"));
    let profile = bool_of(planned, "create_instance_profile");
    Desired {
        resource_type: TYPE_NAME,
        name: name.to_string(),
        path: get_str(planned, "path").unwrap_or("/").to_string(),
        description: Some("Karpenter node role (managed by Terraform)".to_string()),
        trust: trust_policy(partition),
        permissions_boundary: get_str(planned, "permissions_boundary").map(str::to_string),
        tags,
        attached,
        inline: None,
        owned: Vec::new(),
        stale_owned: Vec::new(),
        stale_inline: Vec::new(),
        instance_profile: profile.then(|| name.to_string()),
        stale_profile: (!profile
            && (bool_of(prior, "create_instance_profile")
                || get_str(prior, "instance_profile_name").is_some()))
        .then(|| name.to_string()),
    }
}

/// The state for what exists; `base` supplies the settings that are not read back, `defaults`
/// are the provider's default tags (to tell `tags` from `tags_all`).
fn state(base: &Value, actual: &Actual, default_tags: &std::collections::BTreeMap<String, String>) -> Value {
    let (partition, account) = iam_role::partition_and_account(&actual.role.arn).unwrap_or_default();
    let defaults = policies_for(base, &partition, &account).unwrap_or_default();
    let managed: Vec<&String> = defaults.iter().filter(|a| actual.attached.contains(*a)).collect();
    let additional: BTreeSet<String> = actual
        .attached
        .iter()
        .filter(|a| !defaults.contains(a))
        .cloned()
        .collect();
    // The profile counts as created when it holds the role. One that this resource made but
    // that does not hold the role yet (a create that failed between CreateInstanceProfile and
    // AddRoleToInstanceProfile) is still recorded by name, so destroy deletes it and no later
    // create meets it as a taken name; `create_instance_profile` stays false until it holds
    // the role, so the plan finishes the job.
    let holding = actual
        .profile
        .as_ref()
        .filter(|p| p.roles.contains(&actual.role.name));
    let profile = actual.profile.as_ref().filter(|p| {
        p.roles.contains(&actual.role.name) || crate::aws::ownership::is_owned_by(&p.tags, TYPE_NAME)
    });
    let mut fields = match base {
        Value::Object(f) => f.clone(),
        _ => Default::default(),
    };
    let mut set = |k: &str, v: Value| {
        fields.insert(k.to_string(), v);
    };
    set("id", Value::string(actual.role.name.clone()));
    set("name", Value::string(actual.role.name.clone()));
    set("arn", Value::string(actual.role.arn.clone()));
    set("path", Value::string(actual.role.path.clone()));
    set("partition", Value::string(partition.clone()));
    set(
        "permissions_boundary",
        opt_string(actual.role.permissions_boundary.clone()),
    );
    let (tags, all_tags) = tags_all::read(&actual.tags, default_tags, base.get("tags"));
    set("tags", tags);
    set(tags_all::TAGS_ALL, all_tags);
    set(
        "additional_policy_arns",
        iam_role::set_value(&additional, base.get("additional_policy_arns")),
    );
    set("managed_policy_arns", string_list(managed));
    set(
        "assume_role_policy",
        Value::string(iam_role::canonical(&actual.role.trust_policy)),
    );
    set(
        iam_role::UNMANAGED_INLINE,
        iam_role::unmanaged_inline(actual, None),
    );
    set("create_instance_profile", Value::Bool(holding.is_some()));
    set(
        "instance_profile_name",
        opt_string(profile.map(|p| p.name.clone())),
    );
    set("instance_profile_arn", opt_string(profile.map(|p| p.arn.clone())));
    set(
        "instance_profile_tags",
        profile.map_or(Value::Null, |p| {
            string_map(crate::aws::ownership::user_tags(&p.tags).iter())
        }),
    );
    Value::Object(fields)
}

async fn iam(ctx: &KarpenterContext) -> Result<(Iam, Option<String>), Diagnostics> {
    let aws = ctx.aws().await?;
    Ok((Iam::new(aws.iam()), aws.region().map(str::to_string)))
}

/// [`iam`] for create, update and delete: the account guards are checked first.
async fn iam_to_change(ctx: &KarpenterContext) -> Result<(Iam, Option<String>), Diagnostics> {
    let aws = ctx.aws_to_change().await?;
    Ok((Iam::new(aws.iam()), aws.region().map(str::to_string)))
}

async fn read_role(iam: &Iam, name: &str) -> Result<Option<Actual>, Diagnostics> {
    let scope = ReadScope {
        profile: Some(name),
        ..Default::default()
    };
    iam_role::read(iam, name, &scope)
        .await
        .map_err(|e| iam_role::diagnostics("read the node role", &e))
}

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
        if let Err(e) = iam_role::converge(iam, &want, have.as_ref()).await {
            diags.extend(iam_role::diagnostics("apply the node role", &e));
        }
        match read_role(iam, name).await {
            Ok(Some(actual)) => {
                ApplyOutcome::failed(Some(state(planned, &actual, &tags_all::defaults(ctx))), diags)
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
                Value::string(iam_role::canonical(&trust_policy(&p))),
            ),
            _ => (Value::unknown(), Value::unknown()),
        };
        fields.insert("managed_policy_arns".into(), policies);
        fields.insert("assume_role_policy".into(), trust);
    }

    /// `name` and `account_id` (see [`super::listing`]).
    fn identity_schema(&self) -> Option<&IdentitySchema> {
        Some(&listing::ROLE_IDENTITY)
    }

    fn identity(&self, state: &Value) -> Value {
        listing::role_identity(state)
    }

    async fn import_by_identity(
        &self,
        ctx: &KarpenterContext,
        identity: &Value,
    ) -> Result<Value, Diagnostics> {
        listing::import_role_by_identity(self, ctx, identity).await
    }

    fn list_schema(&self) -> Option<&Schema> {
        Some(&listing::NODE_ROLE_LIST)
    }

    async fn list(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        list_node_roles(ctx, request, sink).await;
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
        Ok(match read_role(&iam, name).await? {
            Some(actual) => ReadOutcome::Found(state(current, &actual, &tags_all::defaults(ctx))),
            None => ReadOutcome::Gone,
        })
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
        let profile = get_str(prior, "instance_profile_name").map(str::to_string);
        match iam_role::delete(&iam, name, &[], profile.as_deref()).await {
            Ok(()) => Diagnostics::new(),
            Err(e) => iam_role::diagnostics("delete the node role", &e),
        }
    }

    /// Import by role name: the settings are inferred from what is attached.
    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
        let (iam, _) = iam(ctx).await?;
        let actual = read_role(&iam, id).await?.ok_or_else(|| {
            Diagnostics::from_error(
                "Cannot import karpenter_node_role",
                format!("There is no IAM role named {id:?}. Import takes the role name."),
            )
        })?;
        let (partition, account) = iam_role::partition_and_account(&actual.role.arn).unwrap_or_default();
        let attached = |arn: &str| actual.attached.contains(arn);
        let p = |name: &str| format!("arn:{partition}:iam::aws:policy/{name}");
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
        Ok(state(&Value::Object(base), &actual, &tags_all::defaults(ctx)))
    }
}

#[cfg(test)]
mod tests;
