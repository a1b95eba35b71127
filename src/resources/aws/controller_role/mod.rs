//! Resource `karpenter_controller_role`: the IAM role the Karpenter controller runs as. Its
//! trust policy admits the controller's service account through IRSA (an OIDC provider,
//! `sts:AssumeRoleWithWebIdentity` with `aud` and `sub` conditions), through EKS Pod Identity
//! (`pods.eks.amazonaws.com`, `sts:AssumeRole` + `sts:TagSession`), or both. Its permissions
//! are exactly those `karpenter_controller_policy` renders for the same inputs (the same
//! `policy::controller` code), as one inline policy or as one managed policy per upstream group.
//!
//! The schema in [`schema`], the desired and the read state in [`model`], the IAM client and
//! the read of the role in [`calls`], the list schema and listing in [`list`], what an update
//! would lose in [`losses`].

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value as Json;

use crate::aws::iam::Iam;
use crate::context::{KarpenterContext, ProviderDefault};
use crate::policy::arn::{self, Arn};
use crate::policy::controller::policy_groups;
use crate::policy::equivalence::{statements, values_of};
use crate::policy::releases;
use crate::resources::aws::iam_role::{self, Actual};
use crate::resources::aws::tags_all;
use crate::terraform::framework::values::{get_str, object, string_list};
use crate::terraform::framework::{
    ApplyOutcome, Diagnostics, IdentitySchema, ListRequest, ListSink, ReadOutcome, Resource, Schema,
};
use crate::terraform::tfvalue::{AttributePath, Value};
use calls::{iam, iam_to_change, read_role};
use list::{CONTROLLER_ROLE_LIST, list_controller_roles};
use model::{
    all_group_arns, check_sizes, desired, expected_policy, group_arn, groups, inputs, managed,
    policy_in_force, state, trust_policy, unmanaged, version_of,
};
use schema::{
    ADDITIONAL_INLINE, DEFAULT_PREFIX, INLINE_POLICY, POD_IDENTITY_PRINCIPAL, SCHEMA, TYPE_NAME,
    parse_oidc_provider,
};

mod calls;
mod list;
mod losses;
mod model;
mod schema;

pub struct ControllerRole;

impl ControllerRole {
    /// Ownership and `additional_policy_arns`, checked before anything is created or changed:
    /// a create (`prior` null) refuses an existing role and existing managed policies named
    /// after it; an update that switches to managed policies refuses those without our tag.
    async fn preflight(
        &self,
        iam: &Iam,
        prior: &Value,
        planned: &Value,
        name: &str,
        have: Option<&Actual>,
    ) -> Diagnostics {
        let mut diags = Diagnostics::new();
        let creating = prior.is_null();
        if creating {
            iam_role::refuse_existing_role(TYPE_NAME, have, &mut diags);
        }
        let node_role = get_str(planned, "node_role_arn").and_then(|a| Arn::parse_role(a).ok());
        let (partition, account) = match have {
            Some(a) => iam_role::partition_and_account(&a.role.arn).unwrap_or_default(),
            None => node_role.map(|r| (r.partition, r.account)).unwrap_or_default(),
        };
        let fail = |e| iam_role::diagnostics("check the controller role's parts", &e);
        if managed(planned) && (prior.is_null() || !managed(prior)) && !account.is_empty() {
            let path = get_str(planned, "path").unwrap_or("/");
            let arns: Vec<String> = groups()
                .iter()
                .map(|g| group_arn(&partition, &account, path, name, g))
                .collect();
            if let Err(e) =
                iam_role::refuse_existing_policies(iam, TYPE_NAME, &arns, creating, &mut diags).await
            {
                diags.extend(fail(e));
            }
        }
        let attached = have.map(|a| a.attached.clone()).unwrap_or_default();
        let partition = (!partition.is_empty()).then_some(partition.as_str());
        if let Err(e) =
            iam_role::check_additional_policies(iam, planned, partition, &attached, &mut diags).await
        {
            diags.extend(fail(e));
        }
        diags
    }

    async fn apply(
        &self,
        ctx: &KarpenterContext,
        iam: &Iam,
        prior: &Value,
        planned: &Value,
        name: &str,
    ) -> ApplyOutcome {
        let tags = tags_all::wanted(ctx, planned);
        let mut have = match read_role(iam, name).await {
            Ok(a) => a,
            Err(d) => return ApplyOutcome::failed(None, d),
        };
        let checked = self.preflight(iam, prior, planned, name, have.as_ref()).await;
        if checked.has_errors() {
            // Nothing was created or changed: no new state (an update keeps the prior one).
            return ApplyOutcome::failed(None, checked);
        }
        if have.is_none() {
            // Create the role first: the owned policies' ARNs need its account.
            let Some(trust) = trust_policy(planned) else {
                return ApplyOutcome::failed(
                    None,
                    Diagnostics::from_error(
                        "Trust policy not known",
                        "irsa and pod_identity must be known to create the role.",
                    ),
                );
            };
            let tags = crate::aws::ownership::with_owner_tag(&tags, TYPE_NAME);
            let new = crate::aws::iam::NewRole {
                name,
                path: get_str(planned, "path").unwrap_or("/"),
                trust_policy: &trust,
                permissions_boundary: get_str(planned, "permissions_boundary"),
                description: Some("Karpenter controller role (managed by Terraform)"),
                tags: &tags,
            };
            if let Err(e) = iam.create_role(&new).await {
                return ApplyOutcome::failed(None, iam_role::diagnostics("create the controller role", &e));
            }
            have = match read_role(iam, name).await {
                Ok(a) => a,
                Err(d) => return ApplyOutcome::failed(None, d),
            };
        }
        let mut diags = Diagnostics::new();
        let role_arn = have.as_ref().map(|a| a.role.arn.clone()).unwrap_or_default();
        match desired(planned, name, &role_arn, have.as_ref(), tags) {
            Ok(want) => {
                if let Err(e) = iam_role::converge(iam, &want, have.as_ref()).await {
                    diags.extend(iam_role::diagnostics("apply the controller role", &e));
                }
            }
            Err(d) => diags.extend(d),
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

/// The checks that need the region `r`: the queue must be in it, and it must be in the node
/// role's partition. `origin` says where `r` came from when it is not `region` itself (the
/// provider's default), for the messages.
fn check_region(value: &Value, r: &str, role: &Arn, origin: &str, diags: &mut Diagnostics) {
    let root = AttributePath::root();
    if let Some(Ok(q)) = get_str(value, "interruption_queue_arn").map(Arn::parse_queue)
        && q.region != r
    {
        diags.error_at(
            &root.attr("interruption_queue_arn"),
            "Queue in another region",
            format!(
                "The queue is in {} but the cluster is in {r}{origin}; Karpenter reads its interruption queue in its own region.",
                q.region
            ),
        );
    }
    if arn::is_region(r) && arn::partition_of_region(r) != role.partition {
        diags.error_at(
            &root.attr("region"),
            "Region not in the node role's partition",
            format!(
                "Region {r}{origin} is in partition {:?}, the node role in {:?}.",
                arn::partition_of_region(r),
                role.partition
            ),
        );
    }
}

/// `region` when the configuration leaves it out: the provider's, checked like a configured
/// one; unknown while the provider's is unknown; an error when there is none.
fn default_region(ctx: Option<&KarpenterContext>, planned: &Value, diags: &mut Diagnostics) -> Value {
    let path = AttributePath::root().attr("region");
    match ctx.map(KarpenterContext::default_region) {
        Some(ProviderDefault::Known(r)) => {
            let origin = " (the provider's aws { region })";
            if !arn::is_region(&r) {
                diags.error_at(
                    &path,
                    "Invalid provider region",
                    format!(
                        "region is not set, so it defaults to the provider's aws {{ region }}, {r:?}, which is not an AWS \
                         region name such as \"us-east-1\". Set region here or fix the provider's."
                    ),
                );
            } else if let Some(Ok(role)) = get_str(planned, "node_role_arn").map(Arn::parse_role) {
                check_region(planned, &r, &role, origin, diags);
            }
            Value::string(r)
        }
        Some(ProviderDefault::Unknown) | None => Value::unknown(),
        Some(ProviderDefault::Unset) => {
            diags.error_at(
                &path,
                "No region",
                "region is not set and the provider has no region either. Set region = \"...\" here, or region in \
                 the provider's aws {} block (or AWS_REGION in its environment).",
            );
            Value::unknown()
        }
    }
}

#[async_trait]
impl Resource<KarpenterContext> for ControllerRole {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        iam_role::validate_names(config, diags);
        let root = AttributePath::root();
        let irsa_null = config.get("irsa").is_none_or(Value::is_null);
        // An unknown pod_identity may turn out true: only a known false (or unset) is an error.
        let pod_may_be_true = config
            .get("pod_identity")
            .is_some_and(|p| p.is_unknown() || p.as_bool() == Some(true));
        if irsa_null && !pod_may_be_true {
            diags.error_at(
                &root.attr("irsa"),
                "No way to assume the role",
                "Set irsa = { oidc_provider_arn = ... } (IRSA; works on Fargate), pod_identity = true (EKS Pod Identity), or both.",
            );
        }
        let Some(Ok(role)) = get_str(config, "node_role_arn").map(Arn::parse_role) else {
            return;
        };
        let account = get_str(config, "account_id").unwrap_or(&role.account).to_string();
        let region = get_str(config, "region");
        if account != role.account {
            diags.error_at(&root.attr("node_role_arn"), "Node role in another account", format!("The node role is in account {} but account_id is {account}; EC2 can only be passed a role of the cluster's own account.", role.account));
        }
        if let Some(Ok(q)) = get_str(config, "interruption_queue_arn").map(Arn::parse_queue) {
            let path = root.attr("interruption_queue_arn");
            if q.partition != role.partition || q.account != account {
                diags.error_at(
                    &path,
                    "Queue in another partition or account",
                    format!(
                        "The queue is in {}/{} but the node role is in {}/{account}.",
                        q.partition, q.account, role.partition
                    ),
                );
            }
        }
        if let Some(r) = region {
            check_region(config, r, &role, "", diags);
        }
        if let Some(provider) = config.get("irsa").and_then(|i| get_str(i, "oidc_provider_arn"))
            && let Ok((oidc, _)) = parse_oidc_provider(provider)
            && (oidc.partition != role.partition || oidc.account != account)
        {
            diags.error_at(
                &root.attr("irsa").attr("oidc_provider_arn"),
                "OIDC provider in another partition or account",
                format!(
                    "The OIDC provider is in {}/{} but the node role is in {}/{account}.",
                    oidc.partition, oidc.account, role.partition
                ),
            );
        }
    }

    fn modify_plan_in(
        &self,
        ctx: Option<&KarpenterContext>,
        config: &Value,
        prior: &Value,
        planned: &mut Value,
        diags: &mut Diagnostics,
    ) {
        if config.get("region").is_none_or(Value::is_null) {
            let region = default_region(ctx, planned, diags);
            if let Value::Object(fields) = planned {
                fields.insert("region".into(), region);
            }
        }
        tags_all::plan_into(ctx, planned);
        self.modify_plan(config, prior, planned, diags);
    }

    fn modify_plan(&self, config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
        iam_role::plan_unmanaged_inline(planned);
        let snapshot = planned.clone();
        let Value::Object(fields) = planned else { return };
        // Unset: a new role gets the newest release; an existing one keeps its own (stable).
        if config.get("karpenter_version").is_none_or(Value::is_null)
            && fields
                .get("karpenter_version")
                .is_none_or(|v| v.is_null() || v.is_unknown())
        {
            fields.insert(
                "karpenter_version".into(),
                Value::string(releases::newest().version),
            );
        }
        let node_role = get_str(&snapshot, "node_role_arn").and_then(|s| Arn::parse_role(s).ok());
        if fields.get("account_id").is_some_and(Value::is_null)
            || fields.get("account_id").is_some_and(Value::is_unknown)
        {
            let account = match (&node_role, get_str(prior, "account_id")) {
                (Some(r), _) => Value::string(r.account.clone()),
                (None, Some(a)) if !snapshot.get("node_role_arn").is_some_and(Value::is_unknown) => {
                    Value::string(a)
                }
                _ => Value::unknown(),
            };
            fields.insert("account_id".into(), account);
        }
        fields.insert(
            "partition".into(),
            node_role
                .as_ref()
                .map(|r| Value::string(r.partition.clone()))
                .unwrap_or_else(Value::unknown),
        );
        let snapshot = Value::Object(fields.clone());
        let policy = match inputs(&snapshot) {
            _ if unmanaged(&snapshot) => Value::Null,
            Some(i) => {
                check_sizes(&i, managed(&snapshot), diags);
                Value::string(expected_policy(&i))
            }
            None => Value::unknown(),
        };
        fields.insert("policy".into(), policy);
        // The trust policy that exists is kept when it admits the same (a module's, with its own
        // statement IDs and order): the plan shows a change only where a principal changes.
        fields.insert(
            "assume_role_policy".into(),
            trust_policy(&snapshot)
                .map(|t| Value::string(iam_role::planned_trust(get_str(prior, "assume_role_policy"), &t)))
                .unwrap_or_else(Value::unknown),
        );
        let arns = match (
            get_str(prior, "arn"),
            get_str(&snapshot, "name"),
            get_str(&snapshot, "path"),
            inputs(&snapshot),
        ) {
            (Some(role_arn), Some(name), Some(path), Some(i)) if !prior.is_null() => {
                if managed(&snapshot) {
                    let (p, a) = iam_role::partition_and_account(role_arn).unwrap_or_default();
                    string_list(
                        policy_groups(&i)
                            .iter()
                            .map(|g| group_arn(&p, &a, path, name, g.name)),
                    )
                } else {
                    Value::List(Vec::new())
                }
            }
            _ if matches!(get_str(&snapshot, "policy_attachment"), Some("inline" | "none")) => {
                Value::List(Vec::new())
            }
            _ => Value::unknown(),
        };
        fields.insert("managed_policy_arns".into(), arns);
        losses::warn(prior, planned, diags);
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
        let iam = match iam_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return ApplyOutcome::failed(None, d),
        };
        let name = iam_role::resolve_name(planned, DEFAULT_PREFIX);
        iam_role::explain_partial_create(
            TYPE_NAME,
            self.apply(ctx, &iam, &Value::Null, planned, &name).await,
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
        let iam = iam(ctx).await?;
        Ok(match read_role(&iam, name).await? {
            Some(actual) => ReadOutcome::Found(state(current, &actual, &tags_all::defaults(ctx))),
            None => ReadOutcome::Gone,
        })
    }

    async fn update(&self, ctx: &KarpenterContext, prior: &Value, planned: &Value) -> ApplyOutcome {
        let iam = match iam_to_change(ctx).await {
            Ok(c) => c,
            Err(d) => return ApplyOutcome::failed(Some(prior.clone()), d),
        };
        let name = get_str(prior, "name").unwrap_or_default().to_string();
        let out = self.apply(ctx, &iam, prior, planned, &name).await;
        if out.state.is_none() {
            return ApplyOutcome::failed(Some(prior.clone()), out.diagnostics);
        }
        out
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

    /// Import by role name: IRSA/Pod Identity settings come from the trust policy, the policy
    /// inputs from the permissions (inline policy, or the owned managed policies).
    async fn import(&self, ctx: &KarpenterContext, id: &str) -> Result<Value, Diagnostics> {
        let iam = iam(ctx).await?;
        let actual = read_role(&iam, id).await?.ok_or_else(|| {
            Diagnostics::from_error(
                "Cannot import karpenter_controller_role",
                format!("There is no IAM role named {id:?}. Import takes the role name."),
            )
        })?;
        // The documents of the customer managed policies attached that are not the resource's
        // own (the policy terraform-aws-eks's Karpenter module made), to read the policy inputs.
        let owned = all_group_arns(&actual.role.arn, &actual.role.path, &actual.role.name);
        let mut foreign = Vec::new();
        for arn in actual.attached.iter().filter(|a| !owned.contains(a)) {
            if Arn::parse(arn).is_ok_and(|a| a.account != "aws")
                && let Some(doc) = iam
                    .managed_policy_document(arn)
                    .await
                    .map_err(|e| iam_role::diagnostics("read a policy attached to the role", &e))?
            {
                foreign.push(doc);
            }
        }
        let base = infer(&actual, &foreign).map_err(|why| {
            Diagnostics::from_error("Cannot import karpenter_controller_role", why.detail(id))
        })?;
        Ok(state(&base, &actual, &tags_all::defaults(ctx)))
    }
}

/// What stops an import: why the role cannot be represented.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NotImportable {
    /// Nothing says it is a controller role.
    NotAController(String),
    /// Its trust policy admits more, or otherwise, than `irsa` and `pod_identity` can say.
    Trust(String),
}

impl NotImportable {
    fn detail(&self, role: &str) -> String {
        match self {
            NotImportable::NotAController(why) => {
                format!("Role {role:?} does not look like a Karpenter controller role: {why}")
            }
            NotImportable::Trust(why) => format!(
                "The trust policy of role {role:?} {why}. karpenter_controller_role's trust admits one service \
                 account through IRSA (irsa = {{ oidc_provider_arn, namespace, service_account }}) and EKS Pod \
                 Identity (pod_identity): an import would plan to remove the rest, and whoever assumes the role \
                 through it would lose access. Narrow the trust policy to the controller's service account \
                 first, or keep managing this role where it is."
            ),
        }
    }
}

/// `irsa` and `pod_identity` from a trust policy.
fn infer_trust(trust: &Json) -> Result<(Value, bool), NotImportable> {
    let mut pod_identity = false;
    let mut irsa = Value::Null;
    let trust_err = |s: String| NotImportable::Trust(s);
    for st in statements(trust).unwrap_or_default() {
        if st.get("Effect").and_then(Json::as_str) != Some("Allow") {
            continue;
        }
        if values_of(st.pointer("/Principal/Service"))
            .iter()
            .any(|s| s == POD_IDENTITY_PRINCIPAL)
        {
            pod_identity = true;
        }
        for provider in values_of(st.pointer("/Principal/Federated")) {
            let (_, issuer) = parse_oidc_provider(&provider).map_err(trust_err)?;
            let key = format!("{issuer}:sub");
            let condition = |test: &str| {
                st.get("Condition")
                    .and_then(|c| c.get(test))
                    .and_then(|c| c.get(&key))
            };
            if let Some(like) = condition("StringLike") {
                return Err(trust_err(format!(
                    "matches the IRSA subject with StringLike ({})",
                    values_of(Some(like)).join(", ")
                )));
            }
            let subjects = values_of(condition("StringEquals"));
            let subject = match subjects.as_slice() {
                [one] => one,
                [] => {
                    return Err(NotImportable::NotAController(
                        "the IRSA statement has no sub condition".to_string(),
                    ));
                }
                many => {
                    return Err(trust_err(format!(
                        "admits {} service accounts through IRSA ({})",
                        many.len(),
                        many.join(", ")
                    )));
                }
            };
            let Some((ns, sa)) = subject
                .strip_prefix("system:serviceaccount:")
                .and_then(|s| s.split_once(':'))
            else {
                return Err(NotImportable::NotAController(format!(
                    "the IRSA sub condition {subject:?} names no service account"
                )));
            };
            if !irsa.is_null() {
                return Err(trust_err("has more than one IRSA statement".to_string()));
            }
            irsa = object([
                ("oidc_provider_arn", Value::string(provider.clone())),
                ("namespace", Value::string(ns)),
                ("service_account", Value::string(sa)),
            ]);
        }
    }
    Ok((irsa, pod_identity))
}

/// The policy inputs Karpenter's statements name (`AllowPassingInstanceRole`: the node role,
/// `AllowAPIServerEndpointDiscovery`: the cluster, `AllowInterruptionQueueActions`: the queue),
/// found in any of `docs` — the resource's own permissions, or the policy terraform-aws-eks's
/// Karpenter module made, whose statements carry the same IDs. None without the first two.
fn inputs_from(docs: &[&Json]) -> Result<Option<BTreeMap<String, Value>>, String> {
    let by_sid = |sid: &str| {
        docs.iter()
            .flat_map(|d| statements(d).unwrap_or_default())
            .find(|st| st.get("Sid").and_then(Json::as_str) == Some(sid))
            .and_then(|st| values_of(st.get("Resource")).into_iter().next())
    };
    let (Some(node_role), Some(cluster)) = (
        by_sid("AllowPassingInstanceRole"),
        by_sid("AllowAPIServerEndpointDiscovery"),
    ) else {
        return Ok(None);
    };
    let cluster = Arn::parse(&cluster).map_err(|e| e.to_string())?;
    let cluster_name = cluster
        .resource
        .strip_prefix("cluster/")
        .ok_or("the EKS statement names no cluster")?;
    let queue = by_sid("AllowInterruptionQueueActions");
    Ok(Some(BTreeMap::from([
        ("node_role_arn".to_string(), Value::string(node_role)),
        ("cluster_name".to_string(), Value::string(cluster_name)),
        ("region".to_string(), Value::string(cluster.region.clone())),
        ("account_id".to_string(), Value::string(cluster.account.clone())),
        (
            "interruption_queue_arn".to_string(),
            crate::terraform::framework::values::opt_string(queue),
        ),
    ])))
}

/// The configuration a role was made from, inferred from its trust policy and permissions;
/// `foreign` are the documents of the customer managed policies attached that are not the
/// resource's own.
fn infer(actual: &Actual, foreign: &[Json]) -> Result<Value, NotImportable> {
    let mut fields: BTreeMap<String, Value> = SCHEMA
        .attributes
        .iter()
        .map(|a| (a.name.to_string(), Value::Null))
        .collect();
    let (irsa, pod_identity) = infer_trust(&actual.role.trust_policy)?;
    // Replaced below by the release whose policy the role has, when it has one.
    fields.insert(
        "karpenter_version".into(),
        Value::string(releases::newest().version),
    );
    fields.insert("irsa".into(), irsa);
    fields.insert("pod_identity".into(), Value::Bool(pod_identity));
    let all = all_group_arns(&actual.role.arn, &actual.role.path, &actual.role.name);
    let managed =
        !actual.inline.contains_key(INLINE_POLICY) && all.iter().any(|a| actual.owned.contains_key(a));
    fields.insert(
        "policy_attachment".into(),
        Value::string(if managed { "managed" } else { "inline" }),
    );
    // Every other inline policy is kept, as it is (the one terraform-aws-eks's Karpenter module
    // writes with enable_inline_policy = true, for instance).
    let others: BTreeMap<String, String> = actual
        .inline
        .iter()
        .filter(|(name, _)| name.as_str() != INLINE_POLICY)
        .map(|(name, doc)| (name.clone(), iam_role::canonical(doc)))
        .collect();
    if !others.is_empty() {
        fields.insert(
            ADDITIONAL_INLINE.into(),
            crate::terraform::framework::values::string_map(others.iter()),
        );
    }
    let probe = Value::Object(fields.clone());
    let not_a_controller = |why: &str| NotImportable::NotAController(why.to_string());
    let Some(doc) = policy_in_force(&probe, actual, &all).and_then(|t| serde_json::from_str::<Json>(&t).ok())
    else {
        if actual.owner.as_deref() == Some(TYPE_NAME) {
            // Made by this resource type, and a create stopped before the permissions were
            // written (the refusal of the next create names this import): the policy inputs
            // stay unset, and the apply after the import writes the permissions.
            return Ok(Value::Object(fields));
        }
        if actual.attached.is_empty() && others.is_empty() {
            return Err(not_a_controller(
                "it has neither the KarpenterControllerPolicy inline policy, nor its managed policies, nor any \
                 other policy",
            ));
        }
        // Its permissions are policies someone else manages (terraform-aws-eks's Karpenter
        // module attaches one of its own, or writes it inline): kept as they are, in
        // `additional_policy_arns` and `additional_inline_policies`; the policy inputs are read
        // from them when they carry Karpenter's statements.
        fields.insert("policy_attachment".into(), Value::string("none"));
        let inline_docs: Vec<&Json> = actual
            .inline
            .iter()
            .filter(|(name, _)| name.as_str() != INLINE_POLICY)
            .map(|(_, doc)| doc)
            .collect();
        let docs: Vec<&Json> = foreign.iter().chain(inline_docs).collect();
        if let Ok(Some(inputs)) = inputs_from(&docs) {
            fields.extend(inputs);
        }
        return Ok(Value::Object(fields));
    };
    let inputs = inputs_from(&[&doc])
        .map_err(|e| not_a_controller(&e))?
        .ok_or_else(|| {
            not_a_controller("no AllowPassingInstanceRole or AllowAPIServerEndpointDiscovery statement")
        })?;
    fields.extend(inputs);
    let version = version_of(&Value::Object(fields.clone()), &doc);
    fields.insert("karpenter_version".into(), Value::string(version));
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests;
