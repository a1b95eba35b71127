//! Identity and listing of the AWS resource types (`karpenter_interruption_queue`,
//! `karpenter_node_role`, `karpenter_controller_role`), as [`super::kube_identity`] is for the
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

use std::collections::BTreeMap;
use std::sync::LazyLock;

use async_trait::async_trait;
use serde_json::Value as Json;

use super::controller_role::ControllerRole;
use super::interruption_queue::{self as queue, InterruptionQueue};
use super::node_role::NodeRole;
use crate::aws::iam::{Iam, ListedRole};
use crate::aws::{EventBridge, Sqs, ownership};
use crate::framework::list::{name_matches, name_prefix_attribute};
use crate::framework::schema::{Attribute, Schema};
use crate::framework::validate as v;
use crate::framework::values::get_str;
use crate::framework::{
    Diagnostics, IdentityAttribute, IdentitySchema, ListRequest, ListSink, ReadOutcome, Resource,
};
use crate::provider::KarpenterContext;
use crate::tfvalue::{AttributePath, Value};

/// Upstream's node role name: `KarpenterNodeRole-<cluster>`.
pub const NODE_ROLE_NAME_PREFIX: &str = "KarpenterNodeRole-";
/// Upstream's controller role name: `KarpenterControllerRole-<cluster>`.
pub const CONTROLLER_ROLE_NAME_PREFIX: &str = "KarpenterControllerRole-";
/// The EKS Pod Identity service principal.
const POD_IDENTITY_PRINCIPAL: &str = "pods.eks.amazonaws.com";
/// Tags other tools put on a role to name its cluster, in the order they are trusted.
const CLUSTER_TAG_KEYS: &[&str] = &[
    "karpenter.sh/discovery",
    "eks:eks-cluster-name",
    "eks:cluster-name",
    "alpha.eksctl.io/cluster-name",
];

// ---- schemas --------------------------------------------------------------------------------

pub static QUEUE_IDENTITY: LazyLock<IdentitySchema> = LazyLock::new(|| {
    IdentitySchema::new(vec![
        IdentityAttribute::required("queue_name", "The SQS queue's name (`queue_name`)."),
        IdentityAttribute::optional(
            "region",
            "The queue's AWS region. When set, an import checks that the provider configuration it uses is \
             configured for this region.",
        ),
        IdentityAttribute::optional(
            "account_id",
            "The queue's AWS account ID. When set, an import checks that the provider's credentials belong to \
             this account.",
        ),
    ])
});

pub static ROLE_IDENTITY: LazyLock<IdentitySchema> = LazyLock::new(|| {
    IdentitySchema::new(vec![
        IdentityAttribute::required("name", "The IAM role's name."),
        IdentityAttribute::optional(
            "account_id",
            "The role's AWS account ID. When set, an import checks that the provider's credentials belong to this \
             account.",
        ),
    ])
});

fn cluster_name_filter(how: &str) -> Attribute {
    Attribute::string("cluster_name")
        .optional()
        .describe(format!("Only the parts of this EKS cluster: {how}"))
        .validate(v::length(1, 100))
        .validate(v::matches(
            r"^[0-9A-Za-z][A-Za-z0-9_-]*$",
            "an EKS cluster name: letters, digits, hyphens and underscores, starting with a letter or digit",
        ))
}

pub static QUEUE_LIST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Finds the Karpenter interruption queues in the account and region of the provider configuration: SQS \
         queues that carry this provider's ownership tag, and queues an EventBridge rule with one of Karpenter's \
         interruption event patterns (Spot interruption, rebalance, AWS Health, instance state change, capacity \
         reservation interruption) targets, as Karpenter's CloudFormation reference builds them.",
        vec![
            name_prefix_attribute("queues"),
            cluster_name_filter(
                "the cluster an import records as `cluster_name` (the queue's cluster tag, else read from its rules' \
                 names or its own name).",
            ),
        ],
    )
});

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

pub static CONTROLLER_ROLE_LIST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Finds the Karpenter controller roles in the account of the provider configuration: IAM roles trusted \
         through IRSA or EKS Pod Identity that carry this provider's ownership tag, are named \
         `KarpenterControllerRole-<cluster>`, or trust a Karpenter service account \
         (`system:serviceaccount:<namespace>:karpenter`), and whose permissions are in the shape \
         `karpenter_controller_role` manages (one that is not is reported as a warning).",
        vec![
            name_prefix_attribute("roles"),
            cluster_name_filter("the cluster the role's permissions are scoped to (its `cluster_name`)."),
        ],
    )
});

// ---- identity -------------------------------------------------------------------------------

/// The region and account of an ARN (`arn:<partition>:<service>:<region>:<account>:…`), in
/// any partition.
pub fn arn_region_account(arn: &str) -> Option<(&str, &str)> {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), Some(_), Some(_), Some(region), Some(account), Some(_)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    Some((region, account))
}

/// The identity of an interruption queue state: its name, and the region and account of its
/// ARN (or, while the queue is gone and its rules are not, of a rule's ARN: the rules are made
/// in the queue's account and region). Null until all three are known.
pub fn queue_identity(state: &Value) -> Value {
    let Some(name) = get_str(state, "queue_name") else {
        return Value::Null;
    };
    let rule_arns = state
        .get("rules")
        .and_then(Value::as_entries)
        .into_iter()
        .flatten()
        .filter_map(|(_, r)| get_str(r, "arn"));
    let located = get_str(state, "queue_arn")
        .into_iter()
        .chain(rule_arns)
        .find_map(arn_region_account)
        .filter(|(region, account)| !region.is_empty() && !account.is_empty());
    let Some((region, account)) = located else {
        return Value::Null;
    };
    QUEUE_IDENTITY.value([
        ("queue_name", Value::string(name)),
        ("region", Value::string(region)),
        ("account_id", Value::string(account)),
    ])
}

/// The identity of a role state: its name and the account of its ARN; null until both are
/// known (a create whose name is generated).
pub fn role_identity(state: &Value) -> Value {
    let (Some(name), Some((_, account))) = (
        get_str(state, "name"),
        get_str(state, "arn").and_then(arn_region_account),
    ) else {
        return Value::Null;
    };
    if account.is_empty() {
        return Value::Null;
    }
    ROLE_IDENTITY.value([
        ("name", Value::string(name)),
        ("account_id", Value::string(account)),
    ])
}

fn identity_path(name: &str) -> AttributePath {
    AttributePath::root().attr(name)
}

/// The refusal of an identity naming another account than the credentials'.
pub fn account_mismatch(type_name: &str, wanted: &str, actual: &str) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.error_at(
        &identity_path("account_id"),
        "Identity in another AWS account",
        format!(
            "The identity names a {type_name} in account {wanted}, but this provider configuration's AWS credentials \
             belong to account {actual}. Import it with a provider configuration whose credentials are in account \
             {wanted} (e.g. a provider \"karpenter\" block with alias = \"other\" and aws {{ assume_role {{ role_arn = \
             \"arn:aws:iam::{wanted}:role/<role>\" }} }}, and provider = karpenter.other in the import block), or \
             correct account_id."
        ),
    );
    d
}

/// The refusal of an identity naming another region than the provider's.
pub fn region_mismatch(type_name: &str, wanted: &str, actual: &str) -> Diagnostics {
    let mut d = Diagnostics::new();
    d.error_at(
        &identity_path("region"),
        "Identity in another AWS region",
        format!(
            "The identity names a {type_name} in {wanted}, but this provider configuration is configured for \
             {actual}. Import it with a provider configuration for {wanted} (e.g. a provider \"karpenter\" block \
             with alias = \"{alias}\" and aws {{ region = \"{wanted}\" }}, and provider = karpenter.{alias} in the \
             import block), or correct region.",
            alias = region_alias(wanted),
        ),
    );
    d
}

/// A short provider alias for a region, as people write them: `us-east-1` → `use1`.
fn region_alias(region: &str) -> String {
    let parts: Vec<&str> = region.split('-').collect();
    match parts.as_slice() {
        [first, rest @ ..] if !rest.is_empty() => {
            let mut alias = first.to_string();
            for p in rest {
                match p.parse::<u32>() {
                    Ok(_) => alias.push_str(p),
                    Err(_) => alias.extend(p.chars().next()),
                }
            }
            alias
        }
        _ => region.replace('-', "_"),
    }
}

/// The account the provider's credentials are in (STS), when it can be asked.
async fn caller_account(ctx: &KarpenterContext) -> Option<String> {
    let aws = ctx.aws().await.ok()?;
    crate::aws::account::caller_account(aws)
        .await
        .map_err(|e| tracing::debug!(error = %e, "could not ask STS for the caller's account"))
        .ok()
}

/// After an import by name failed for an identity naming an account: when the credentials are
/// in another account, that is the reason, and the refusal says so.
async fn explain_failed_import(
    ctx: &KarpenterContext,
    type_name: &str,
    wanted_account: Option<&str>,
    failure: Diagnostics,
) -> Diagnostics {
    let Some(wanted) = wanted_account else {
        return failure;
    };
    match caller_account(ctx).await {
        Some(actual) if actual != wanted => account_mismatch(type_name, wanted, &actual),
        _ => failure,
    }
}

/// `import { identity = { name, account_id } }` of a role: the import by name, refused when
/// the role found is in another account than the identity names.
pub async fn import_role_by_identity<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    identity: &Value,
) -> Result<Value, Diagnostics> {
    let name = IdentitySchema::get(identity, "name").unwrap_or_default();
    let wanted = IdentitySchema::get(identity, "account_id");
    match resource.import(ctx, name).await {
        Ok(state) => {
            if let (Some(wanted), Some((_, actual))) =
                (wanted, get_str(&state, "arn").and_then(arn_region_account))
                && wanted != actual
            {
                return Err(account_mismatch(resource.type_name(), wanted, actual));
            }
            Ok(state)
        }
        Err(d) => Err(explain_failed_import(ctx, resource.type_name(), wanted, d).await),
    }
}

/// `import { identity = { queue_name, region, account_id } }`: the region is checked against
/// the provider's before any call, the account against the queue found (or STS when none is).
pub async fn import_queue_by_identity(
    ctx: &KarpenterContext,
    identity: &Value,
) -> Result<Value, Diagnostics> {
    let name = IdentitySchema::get(identity, "queue_name").unwrap_or_default();
    let wanted_region = IdentitySchema::get(identity, "region");
    let wanted_account = IdentitySchema::get(identity, "account_id");
    let provider_region = ctx.aws().await?.region().map(str::to_string);
    if let (Some(wanted), Some(actual)) = (wanted_region, provider_region.as_deref())
        && wanted != actual
    {
        return Err(region_mismatch(queue::TYPE_NAME, wanted, actual));
    }
    let state = match InterruptionQueue.import(ctx, name).await {
        Ok(s) => s,
        Err(d) => return Err(explain_failed_import(ctx, queue::TYPE_NAME, wanted_account, d).await),
    };
    if let Some((region, account)) = get_str(&state, "queue_arn").and_then(arn_region_account) {
        if let Some(wanted) = wanted_region.filter(|w| *w != region) {
            return Err(region_mismatch(queue::TYPE_NAME, wanted, region));
        }
        if let Some(wanted) = wanted_account.filter(|w| *w != account) {
            return Err(account_mismatch(queue::TYPE_NAME, wanted, account));
        }
    }
    Ok(state)
}

// ---- what the parts look like ---------------------------------------------------------------

/// What a trust policy lets assume the role, as far as the listings care.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    /// EC2 (`ec2.amazonaws.com`, `ec2.amazonaws.com.cn`) may `sts:AssumeRole`.
    pub ec2: bool,
    /// EKS Pod Identity (`pods.eks.amazonaws.com`) may assume it.
    pub pod_identity: bool,
    /// The Kubernetes service accounts IRSA statements admit, as (namespace, name); either may
    /// hold a wildcard (`StringLike`).
    pub service_accounts: Vec<(String, String)>,
}

impl Trust {
    /// Whether one of the service accounts is Karpenter's (`karpenter` in its name or namespace).
    pub fn admits_karpenter_service_account(&self) -> bool {
        self.service_accounts
            .iter()
            .any(|(ns, sa)| sa.contains("karpenter") || ns.contains("karpenter"))
    }
}

/// A policy field that is a string or a list of strings.
fn strings(v: &Json) -> Vec<&str> {
    match v {
        Json::String(s) => vec![s.as_str()],
        Json::Array(items) => items.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    }
}

fn allows_action(statement: &Json, action: &str) -> bool {
    strings(&statement["Action"])
        .iter()
        .any(|a| *a == "*" || *a == "sts:*" || a.eq_ignore_ascii_case(action))
}

/// Reads a trust policy.
pub fn classify_trust(doc: &Json) -> Trust {
    let statements = match &doc["Statement"] {
        Json::Array(items) => items.iter().collect::<Vec<_>>(),
        single @ Json::Object(_) => vec![single],
        _ => Vec::new(),
    };
    let mut trust = Trust::default();
    for st in statements.into_iter().filter(|s| s["Effect"] == "Allow") {
        let services = strings(&st["Principal"]["Service"]);
        if allows_action(st, "sts:AssumeRole") {
            if services
                .iter()
                .any(|s| *s == "ec2.amazonaws.com" || *s == "ec2.amazonaws.com.cn")
            {
                trust.ec2 = true;
            }
            if services.contains(&POD_IDENTITY_PRINCIPAL) {
                trust.pod_identity = true;
            }
        }
        let federated = strings(&st["Principal"]["Federated"]);
        if federated.iter().any(|f| f.contains(":oidc-provider/"))
            && allows_action(st, "sts:AssumeRoleWithWebIdentity")
            && let Json::Object(operators) = &st["Condition"]
        {
            for keys in operators.values().filter_map(Json::as_object) {
                for subject in keys
                    .iter()
                    .filter(|(k, _)| k.ends_with(":sub"))
                    .flat_map(|(_, v)| strings(v))
                {
                    let mut parts = subject
                        .strip_prefix("system:serviceaccount:")
                        .unwrap_or_default()
                        .splitn(2, ':');
                    if let (Some(ns), Some(sa)) = (parts.next(), parts.next()) {
                        trust.service_accounts.push((ns.to_string(), sa.to_string()));
                    }
                }
            }
        }
    }
    trust
}

/// The cluster a role's tags name, if any (see [`CLUSTER_TAG_KEYS`], then a
/// `kubernetes.io/cluster/<cluster>` key).
pub fn cluster_from_tags(tags: &BTreeMap<String, String>) -> Option<String> {
    CLUSTER_TAG_KEYS
        .iter()
        .find_map(|k| tags.get(*k).filter(|v| !v.is_empty()).cloned())
        .or_else(|| {
            tags.keys()
                .find_map(|k| k.strip_prefix("kubernetes.io/cluster/"))
                .filter(|c| !c.is_empty())
                .map(str::to_string)
        })
}

/// The cluster in an upstream-shaped name (`<prefix><cluster>`).
pub fn cluster_from_name<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    name.strip_prefix(prefix).filter(|c| !c.is_empty())
}

/// Whether an EventBridge event pattern is one of Karpenter's interruption patterns: its
/// `source` and `detail-type` include one kind's (other fields may narrow it further).
pub fn is_interruption_pattern(pattern: &str) -> bool {
    let Ok(doc) = serde_json::from_str::<Json>(pattern) else {
        return false;
    };
    queue::RULE_KINDS.iter().any(|k| {
        strings(&doc["source"]).contains(&k.source) && strings(&doc["detail-type"]).contains(&k.detail_type)
    })
}

/// The state an import of `id` followed by a refresh gives (what Terraform stores for an
/// imported object), or why there is none.
async fn imported_and_read<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    id: &str,
) -> Result<Value, String> {
    let imported = resource.import(ctx, id).await.map_err(|d| text(&d))?;
    read_back(resource, ctx, imported).await
}

/// The refresh Terraform makes right after an import.
async fn read_back<R: Resource<KarpenterContext>>(
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
fn text(d: &Diagnostics) -> String {
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

// ---- listing roles --------------------------------------------------------------------------

/// What a role listing concludes about one candidate.
#[derive(Debug)]
pub enum Verdict {
    /// Not one of this type's roles.
    NotOurs,
    /// One of them: its name for people, the cluster when known, and its state when asked for.
    Found {
        display_name: String,
        cluster: Option<String>,
        state: Option<Value>,
    },
    /// It looks like one but cannot be listed: a warning, and the listing goes on.
    Skip { summary: String, detail: String },
}

/// The type-specific part of a role listing.
#[async_trait]
trait RoleListing: Send + Sync {
    fn type_name(&self) -> &'static str;
    /// The cheap test, on what ListRoles returns: whether the trust policy is this type's.
    fn trust_fits(&self, trust: &Trust) -> bool;
    /// The closer look at a candidate whose trust fits (its tags, policies, an import).
    async fn examine(
        &self,
        ctx: &KarpenterContext,
        iam: &Iam,
        role: &ListedRole,
        trust: &Trust,
        include_state: bool,
    ) -> Verdict;
}

fn unreadable(role: &str, e: &crate::aws::iam::IamError) -> Verdict {
    Verdict::Skip {
        summary: format!("IAM role {role} not listed"),
        detail: format!(
            "Its trust policy fits, but the role could not be read ({e}), so whether it is Karpenter's is not known. \
             Allow the provider's credentials to read it, or leave it out with name_prefix."
        ),
    }
}

/// Pages through ListRoles, examines the roles whose trust fits, and writes the ones that are
/// this type's into `sink`, until it says to stop.
async fn list_roles(
    lister: &dyn RoleListing,
    ctx: &KarpenterContext,
    request: &ListRequest,
    sink: &ListSink,
) {
    let iam = match ctx.aws().await {
        Ok(aws) => Iam::new(aws.iam()),
        Err(d) => return sink.fail(d).await,
    };
    let config = &request.config;
    let cluster_filter = get_str(config, "cluster_name");
    let mut marker = None;
    loop {
        if !sink.wants_more() {
            return;
        }
        let page = match iam.list_roles_page(marker).await {
            Ok(p) => p,
            Err(e) => {
                return sink
                    .fail(Diagnostics::from_error(
                        format!("Could not list {} roles", lister.type_name()),
                        format!("{e}. Allow iam:ListRoles for the provider's AWS credentials."),
                    ))
                    .await;
            }
        };
        for role in &page.roles {
            if !name_matches(config, &role.name) {
                continue;
            }
            let Some(trust) = role.trust_policy.as_ref().map(classify_trust) else {
                continue;
            };
            if !lister.trust_fits(&trust) {
                continue;
            }
            if !sink.wants_more() {
                return;
            }
            let verdict = lister
                .examine(ctx, &iam, role, &trust, sink.include_state())
                .await;
            let more = match verdict {
                Verdict::NotOurs => true,
                Verdict::Skip { summary, detail } => sink.skip(summary, detail).await,
                Verdict::Found {
                    display_name,
                    cluster,
                    state,
                } => {
                    if cluster_filter.is_some_and(|want| cluster.as_deref() != Some(want)) {
                        continue;
                    }
                    let identity = match &state {
                        Some(s) => role_identity(s),
                        None => ROLE_IDENTITY.value([
                            ("name", Value::string(role.name.clone())),
                            (
                                "account_id",
                                arn_region_account(&role.arn)
                                    .map_or(Value::Null, |(_, account)| Value::string(account)),
                            ),
                        ]),
                    };
                    sink.found(identity, display_name, state, Diagnostics::new())
                        .await
                }
            };
            if !more {
                return;
            }
        }
        match page.next {
            Some(next) => marker = Some(next),
            None => return,
        }
    }
}

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
            let worker = format!("arn:{partition}:iam::aws:policy/AmazonEKSWorkerNodePolicy");
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

fn cannot_import(type_name: &str, role: &str, why: &str) -> Verdict {
    Verdict::Skip {
        summary: format!("IAM role {role} not listed"),
        detail: format!("It looks like a {type_name}, but importing it failed: {why}"),
    }
}

struct ControllerRoles;

#[async_trait]
impl RoleListing for ControllerRoles {
    fn type_name(&self) -> &'static str {
        ControllerRole.type_name()
    }

    fn trust_fits(&self, trust: &Trust) -> bool {
        trust.pod_identity || !trust.service_accounts.is_empty()
    }

    async fn examine(
        &self,
        ctx: &KarpenterContext,
        iam: &Iam,
        role: &ListedRole,
        trust: &Trust,
        include_state: bool,
    ) -> Verdict {
        let karpenter_shaped = cluster_from_name(&role.name, CONTROLLER_ROLE_NAME_PREFIX).is_some()
            || trust.admits_karpenter_service_account();
        if !karpenter_shaped {
            match iam.role_tags(&role.name).await {
                Ok(tags) if ownership::is_owned_by(&tags, self.type_name()) => {}
                Ok(_) => return Verdict::NotOurs,
                Err(e) if e.is_not_found() => return Verdict::NotOurs,
                Err(e) => return unreadable(&role.name, &e),
            }
        }
        // Its permissions must be in the shape the resource manages: the import reads them
        // (and the cluster they are scoped to).
        let imported = match ControllerRole.import(ctx, &role.name).await {
            Ok(s) => s,
            Err(d) => {
                return Verdict::Skip {
                    summary: format!("IAM role {} not listed", role.name),
                    detail: format!(
                        "It looks like a Karpenter controller role, but karpenter_controller_role cannot manage it: {}. \
                         Keep managing it as it is managed now, or replace it with a karpenter_controller_role.",
                        text(&d)
                    ),
                };
            }
        };
        let state = if include_state {
            match read_back(&ControllerRole, ctx, imported.clone()).await {
                Ok(s) => Some(s),
                Err(why) => return cannot_import(self.type_name(), &role.name, &why),
            }
        } else {
            None
        };
        let described = state.as_ref().unwrap_or(&imported);
        let cluster = get_str(described, "cluster_name").map(str::to_string);
        let display_name = match (&cluster, get_str(described, "region")) {
            (Some(c), Some(r)) => format!("{} (cluster {c}, {r})", role.name),
            (Some(c), None) => format!("{} (cluster {c})", role.name),
            _ => role.name.clone(),
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

/// `list "karpenter_controller_role" …`.
pub async fn list_controller_roles(ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
    list_roles(&ControllerRoles, ctx, request, sink).await;
}

// ---- listing interruption queues ------------------------------------------------------------

/// The name a person reads for a queue: its cluster and region, and the queue's own name
/// when it is not the cluster's.
fn queue_display_name(queue_name: &str, cluster: &str, region: &str) -> String {
    if queue_name == cluster {
        format!("{cluster} ({region})")
    } else {
        format!("{cluster} ({region}, queue {queue_name})")
    }
}

/// The last path segment of a queue URL: the queue's name.
fn queue_name_of_url(url: &str) -> &str {
    url.trim_end_matches('/').rsplit('/').next().unwrap_or_default()
}

/// `list "karpenter_interruption_queue" …`: one ListRules and a ListTargetsByRule per rule
/// with an interruption pattern first, then the queues in name order, each with one
/// ListQueueTags (and the import, when states are asked for).
/// A warning for the Karpenter rules that target a queue but that its import does not adopt:
/// the resource names its rules `<rule_name_prefix><Kind>` with one prefix, so rules named
/// otherwise (CloudFormation names them `<stack>-<LogicalId>-<suffix>`) keep working but stay
/// outside Terraform.
fn rules_not_adopted(queue: &str, rule_names: &[String]) -> Diagnostics {
    let prefix = queue::rule_prefix_of(rule_names.iter().map(String::as_str));
    let foreign: Vec<&str> = rule_names
        .iter()
        .map(String::as_str)
        .filter(|n| queue::split_rule_name(n).map(|(p, _)| p) != prefix || prefix.is_none())
        .collect();
    let mut d = Diagnostics::new();
    if !foreign.is_empty() {
        d.warning(
            format!("Some EventBridge rules of queue {queue} are not adopted"),
            format!(
                "The rules {} send Karpenter's interruption events to this queue, but their names do not have the \
                 form <rule_name_prefix><Kind> that karpenter_interruption_queue manages (CloudFormation names \
                 rules <stack>-<LogicalId>-<suffix>). Importing the queue leaves them as they are: they keep \
                 working, outside Terraform, and the generated configuration does not enable those kinds. To \
                 hand them over, add their kinds to enabled_rules (the provider creates its own rules) and then \
                 delete these (for a stack, with the stack).",
                foreign.join(", ")
            ),
        );
    }
    d
}

pub async fn list_queues(ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
    let aws = match ctx.aws().await {
        Ok(a) => a,
        Err(d) => return sink.fail(d).await,
    };
    let sqs = Sqs::new(aws.sqs(), aws.endpoint_for("sqs"));
    let events = EventBridge::new(aws.events(), aws.endpoint_for("events"));
    let region = aws.region().map(str::to_string);
    let config = &request.config;

    // The queues Karpenter's rules send to, with the names of those rules.
    let rules = match events.list_rules().await {
        Ok(r) => r,
        Err(e) => return sink.fail(e.to_diagnostics()).await,
    };
    let mut targeted: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for rule in rules
        .iter()
        .filter(|r| r.event_pattern.as_deref().is_some_and(is_interruption_pattern))
    {
        match events.list_targets(&rule.name).await {
            Ok(targets) => {
                for t in targets.unwrap_or_default() {
                    if t.arn.split(':').nth(2) == Some("sqs") {
                        targeted.entry(t.arn).or_default().push(rule.name.clone());
                    }
                }
            }
            Err(e) => {
                let more = sink
                    .skip(
                        format!("EventBridge rule {} not read", rule.name),
                        format!(
                            "It has one of Karpenter's interruption event patterns, but its targets could not be listed \
                             ({e}); a queue it targets is listed only if it carries this provider's ownership tag."
                        ),
                    )
                    .await;
                if !more {
                    return;
                }
            }
        }
    }

    let mut urls = match sqs.list_queues(get_str(config, "name_prefix")).await {
        Ok(u) => u,
        Err(e) => return sink.fail(e.to_diagnostics()).await,
    };
    urls.sort_by(|a, b| queue_name_of_url(a).cmp(queue_name_of_url(b)));
    let cluster_filter = get_str(config, "cluster_name");
    for url in urls {
        let name = queue_name_of_url(&url).to_string();
        if name.is_empty() || !name_matches(config, &name) {
            continue;
        }
        if !sink.wants_more() {
            return;
        }
        let unreadable = |e: &crate::aws::AwsError| {
            (
                format!("SQS queue {name} not listed"),
                format!(
                    "It could not be read ({e}), so whether it is a Karpenter interruption queue is not known."
                ),
            )
        };
        let arn = match region.as_deref().and_then(|r| queue::queue_arn_from_url(&url, r)) {
            Some(arn) => arn,
            None => match sqs.get_attributes(&url).await {
                Ok(attrs) => attrs.get("QueueArn").cloned().unwrap_or_default(),
                Err(e) if e.is_not_found() => continue,
                Err(e) => {
                    let (summary, detail) = unreadable(&e);
                    if !sink.skip(summary, detail).await {
                        return;
                    }
                    continue;
                }
            },
        };
        let tags = match sqs.list_tags(&url).await {
            Ok(t) => t,
            Err(e) if e.is_not_found() => continue,
            Err(e) => {
                let (summary, detail) = unreadable(&e);
                if !sink.skip(summary, detail).await {
                    return;
                }
                continue;
            }
        };
        let rule_names = targeted.get(&arn);
        if rule_names.is_none() && !ownership::is_owned_by(&tags, queue::TYPE_NAME) {
            continue;
        }
        let state = if sink.include_state() {
            match imported_and_read(&InterruptionQueue, ctx, &name).await {
                Ok(s) => Some(s),
                Err(why) => {
                    let more = sink
                        .skip(
                            format!("SQS queue {name} not listed"),
                            format!(
                                "It looks like a Karpenter interruption queue, but importing it failed: {why}"
                            ),
                        )
                        .await;
                    if !more {
                        return;
                    }
                    continue;
                }
            }
        } else {
            None
        };
        // The cluster as the import records it.
        let cluster = match state.as_ref().and_then(|s| get_str(s, "cluster_name")) {
            Some(c) => c.to_string(),
            None => queue::cluster_for_import(
                &name,
                tags.get(queue::CLUSTER_TAG_KEY).map(String::as_str),
                queue::rule_prefix_of(rule_names.into_iter().flatten().map(String::as_str)),
            ),
        };
        if cluster_filter.is_some_and(|want| want != cluster) {
            continue;
        }
        let (arn_region, arn_account) = arn_region_account(&arn).unwrap_or_default();
        let identity = match &state {
            Some(s) => queue_identity(s),
            None => QUEUE_IDENTITY.value([
                ("queue_name", Value::string(name.clone())),
                ("region", Value::string(arn_region)),
                ("account_id", Value::string(arn_account)),
            ]),
        };
        let display_name = queue_display_name(&name, &cluster, arn_region);
        let notes = rules_not_adopted(&name, rule_names.map(Vec::as_slice).unwrap_or_default());
        if !sink.found(identity, display_name, state, notes).await {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::values::object;
    use serde_json::json;

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
    fn a_queue_identity_needs_name_region_and_account() {
        let state = object([
            ("queue_name", Value::string("demo")),
            (
                "queue_arn",
                Value::string("arn:aws:sqs:eu-west-1:123456789012:demo"),
            ),
            ("rules", Value::Null),
        ]);
        assert_eq!(
            queue_identity(&state),
            object([
                ("queue_name", Value::string("demo")),
                ("region", Value::string("eu-west-1")),
                ("account_id", Value::string("123456789012")),
            ])
        );
        // A planned create: the ARN is not known yet.
        let planned = object([
            ("queue_name", Value::string("demo")),
            ("queue_arn", Value::unknown()),
            ("rules", Value::unknown()),
        ]);
        assert_eq!(queue_identity(&planned), Value::Null);
        // The queue gone out of band, its rules not: they name the same region and account.
        let gone = object([
            ("queue_name", Value::string("demo")),
            ("queue_arn", Value::Null),
            (
                "rules",
                Value::Map(
                    [(
                        "rebalance".to_string(),
                        object([(
                            "arn",
                            Value::string(
                                "arn:aws:events:eu-west-1:123456789012:rule/Karpenter-demo-Rebalance",
                            ),
                        )]),
                    )]
                    .into(),
                ),
            ),
        ]);
        assert_eq!(queue_identity(&gone), queue_identity(&state));
        assert_eq!(queue_identity(&Value::Null), Value::Null);
    }

    #[test]
    fn a_role_identity_is_its_name_and_account() {
        let state = object([
            ("name", Value::string("KarpenterNodeRole-demo")),
            (
                "arn",
                Value::string("arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"),
            ),
        ]);
        assert_eq!(
            role_identity(&state),
            object([
                ("name", Value::string("KarpenterNodeRole-demo")),
                ("account_id", Value::string("123456789012")),
            ])
        );
        let planned = object([("name", Value::unknown()), ("arn", Value::unknown())]);
        assert_eq!(role_identity(&planned), Value::Null);
        let named = object([("name", Value::string("x")), ("arn", Value::unknown())]);
        assert_eq!(role_identity(&named), Value::Null);
    }

    #[test]
    fn trust_policies_are_classified() {
        let ec2 = json!({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
        assert_eq!(
            classify_trust(&ec2),
            Trust {
                ec2: true,
                ..Default::default()
            }
        );
        let cn = json!({"Statement": {"Effect": "Allow", "Principal": {"Service": ["ec2.amazonaws.com.cn"]},
            "Action": ["sts:AssumeRole"]}});
        assert!(classify_trust(&cn).ec2);
        let lambda = json!({"Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": "sts:AssumeRole"}]});
        assert_eq!(classify_trust(&lambda), Trust::default());
        let denied = json!({"Statement": [{"Effect": "Deny", "Principal": {"Service": "ec2.amazonaws.com"},
            "Action": "sts:AssumeRole"}]});
        assert!(!classify_trust(&denied).ec2);
        let irsa = json!({"Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/X"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {
                "oidc.eks.us-east-1.amazonaws.com/id/X:aud": "sts.amazonaws.com",
                "oidc.eks.us-east-1.amazonaws.com/id/X:sub": "system:serviceaccount:kube-system:karpenter"}}}]});
        let t = classify_trust(&irsa);
        assert_eq!(
            t.service_accounts,
            vec![("kube-system".to_string(), "karpenter".to_string())]
        );
        assert!(t.admits_karpenter_service_account());
        let other_sa = json!({"Statement": [{
            "Effect": "Allow",
            "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/oidc.example/id/X"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringLike": {"oidc.example/id/X:sub": ["system:serviceaccount:apps:*"]}}}]});
        let t = classify_trust(&other_sa);
        assert_eq!(t.service_accounts, vec![("apps".to_string(), "*".to_string())]);
        assert!(!t.admits_karpenter_service_account());
        let pod = json!({"Statement": [{"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"]}]});
        assert!(classify_trust(&pod).pod_identity);
        assert!(!classify_trust(&json!("garbage")).ec2);
    }

    #[test]
    fn clusters_come_from_names_and_tags() {
        assert_eq!(
            cluster_from_name("KarpenterNodeRole-demo", NODE_ROLE_NAME_PREFIX),
            Some("demo")
        );
        assert_eq!(
            cluster_from_name("KarpenterNodeRole-", NODE_ROLE_NAME_PREFIX),
            None
        );
        assert_eq!(cluster_from_name("eks-nodes", NODE_ROLE_NAME_PREFIX), None);
        let tags = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            cluster_from_tags(&tags(&[
                ("karpenter.sh/discovery", "prod"),
                ("eks:cluster-name", "x")
            ])),
            Some("prod".into())
        );
        assert_eq!(
            cluster_from_tags(&tags(&[("kubernetes.io/cluster/blue", "owned")])),
            Some("blue".into())
        );
        assert_eq!(cluster_from_tags(&tags(&[("team", "a")])), None);
    }

    #[test]
    fn interruption_patterns_are_karpenters_kinds() {
        for k in queue::RULE_KINDS {
            assert!(is_interruption_pattern(&k.event_pattern()), "{}", k.key);
        }
        assert!(is_interruption_pattern(
            r#"{"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"], "region": ["us-east-1"]}"#
        ));
        assert!(!is_interruption_pattern(r#"{"source": ["aws.ec2"]}"#));
        assert!(!is_interruption_pattern(
            r#"{"source": ["aws.s3"], "detail-type": ["Object Created"]}"#
        ));
        assert!(!is_interruption_pattern("not json"));
    }

    #[test]
    fn mismatches_name_the_provider_configuration_to_use() {
        let d = region_mismatch("karpenter_interruption_queue", "us-east-1", "us-west-2");
        let detail = &d.iter().next().expect("diagnostic").detail;
        assert!(detail.contains("configured for us-west-2"), "{detail}");
        assert!(detail.contains("provider = karpenter.use1"), "{detail}");
        assert!(
            d.iter()
                .all(|d| d.path.as_ref().is_some_and(|p| p.to_string() == "region"))
        );
        let d = account_mismatch("karpenter_node_role", "210987654321", "123456789012");
        let detail = &d.iter().next().expect("diagnostic").detail;
        assert!(detail.contains("account 123456789012"), "{detail}");
        assert!(detail.contains("arn:aws:iam::210987654321:role/"), "{detail}");
        assert_eq!(region_alias("eu-central-2"), "euc2");
        assert_eq!(region_alias("us-gov-west-1"), "usgw1");
    }

    #[test]
    fn the_rule_prefix_is_read_as_import_reads_it() {
        assert_eq!(
            queue::rule_prefix_of(["Other", "Karpenter-demo-Rebalance", "x-SpotInterruption"]),
            Some("Karpenter-demo-")
        );
        assert_eq!(
            queue::rule_prefix_of(["Karpenter-cfn-SpotInterruptionRule-1X2Y"]),
            None
        );
        assert_eq!(
            queue::cluster_for_import("prod-interruption", Some("prod"), None),
            "prod"
        );
    }

    #[test]
    fn queue_display_names_read_as_cluster_and_region() {
        assert_eq!(
            queue_display_name("demo", "demo", "us-east-1"),
            "demo (us-east-1)"
        );
        assert_eq!(
            queue_display_name("events", "demo", "us-east-1"),
            "demo (us-east-1, queue events)"
        );
        assert_eq!(
            queue_name_of_url("http://127.0.0.1:5000/123456789012/demo"),
            "demo"
        );
    }

    #[test]
    fn rules_the_import_does_not_adopt_are_named_in_a_warning() {
        let own = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert!(
            rules_not_adopted(
                "demo",
                &own(&["Karpenter-demo-SpotInterruption", "Karpenter-demo-Rebalance"])
            )
            .is_empty()
        );
        let cfn = rules_not_adopted("cfn", &own(&["Karpenter-cfn-SpotInterruptionRule-1X2Y"]));
        assert!(
            cfn.iter()
                .any(|d| d.detail.contains("Karpenter-cfn-SpotInterruptionRule-1X2Y"))
        );
        let mixed = rules_not_adopted("q", &own(&["a-Rebalance", "b-SpotInterruption", "odd"]));
        let detail = mixed.iter().map(|d| d.detail.clone()).collect::<String>();
        assert!(
            detail.contains("b-SpotInterruption")
                && detail.contains("odd")
                && !detail.contains("a-Rebalance")
        );
        assert!(rules_not_adopted("q", &[]).is_empty());
    }
}
