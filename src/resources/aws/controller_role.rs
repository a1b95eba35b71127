//! Resource `karpenter_controller_role`: the IAM role the Karpenter controller runs as. Its
//! trust policy admits the controller's service account through IRSA (an OIDC provider,
//! `sts:AssumeRoleWithWebIdentity` with `aud` and `sub` conditions), through EKS Pod Identity
//! (`pods.eks.amazonaws.com`, `sts:AssumeRole` + `sts:TagSession`), or both. Its permissions
//! are exactly those `karpenter_controller_policy` renders for the same inputs (the same
//! `policy::controller` code), as one inline policy or as one managed policy per upstream group.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use async_trait::async_trait;
use serde_json::{Value as Json, json};

use super::iam_role::{self, Actual, Desired, OwnedPolicy, ReadScope};
use super::listing;
use super::tags_all;
use crate::aws::iam::Iam;
use crate::context::{KarpenterContext, ProviderDefault};
use crate::policy::PolicyDocument;
use crate::policy::arn::{self, Arn};
use crate::policy::controller::{ControllerPolicyInputs, policy_document, policy_groups};
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::framework::values::{get_str, object, string_list};
use crate::terraform::framework::{
    ApplyOutcome, Attribute, Diagnostics, IdentitySchema, ListRequest, ListSink, ReadOutcome, Resource,
    Schema,
};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

pub struct ControllerRole;

const DEFAULT_PREFIX: &str = "karpenter-controller-";
const TYPE_NAME: &str = "karpenter_controller_role";
/// Name of the inline policy holding the controller's permissions.
pub const INLINE_POLICY: &str = "KarpenterControllerPolicy";
/// The upstream groups, one managed policy each (`<role name>-<group>`).
pub const GROUPS: &[&str] = &[
    "NodeLifecycle",
    "IAMIntegration",
    "EKSIntegration",
    "Interruption",
    "ZonalShift",
    "ResourceDiscovery",
];
/// IAM's limit on one managed policy document.
pub const MANAGED_POLICY_LIMIT: usize = 6144;
/// IAM's limit on all inline policies of a role together.
pub const INLINE_POLICY_LIMIT: usize = 10240;
const POD_IDENTITY_PRINCIPAL: &str = "pods.eks.amazonaws.com";

fn k8s_name(attribute: &'static str, what: &'static str) -> impl Validator {
    v::check(
        format!(
            "Must be a Kubernetes {what}: 1–63 lowercase letters, digits and `-`, starting and ending with a letter or digit."
        ),
        move |value| {
            let s = value.as_str()?;
            let b = s.as_bytes();
            let ok = (1..=63).contains(&b.len())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b.first().is_some_and(u8::is_ascii_alphanumeric)
                && b.last().is_some_and(u8::is_ascii_alphanumeric);
            (!ok).then(|| format!("{attribute}: {s:?} is not a valid Kubernetes {what} (RFC 1123 label)."))
        },
    )
}

/// An OIDC provider ARN: `arn:<p>:iam::<account>:oidc-provider/<issuer host and path>`.
pub fn parse_oidc_provider(s: &str) -> Result<(Arn, String), String> {
    let a = Arn::parse(s).map_err(|e| e.to_string())?;
    let issuer = a
        .resource
        .strip_prefix("oidc-provider/")
        .unwrap_or_default()
        .to_string();
    let ok = a.service == "iam"
        && a.region.is_empty()
        && arn::is_account_id(&a.account)
        && !issuer.is_empty()
        && !issuer.contains("://")
        && !issuer.starts_with('/');
    if ok {
        Ok((a, issuer))
    } else {
        Err(format!(
            "{s:?} is not an IAM OIDC provider ARN such as \"arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE\"."
        ))
    }
}

fn arn_check(what: &'static str, parse: fn(&str) -> Result<Arn, arn::ArnError>) -> impl Validator {
    v::check(format!("Must be {what}."), move |value| {
        parse(value.as_str()?).err().map(|e| e.to_string())
    })
}

static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let mut attributes = iam_role::common_attributes(DEFAULT_PREFIX);
    attributes.extend([
        Attribute::string("cluster_name")
            .required()
            .describe("Name of the EKS cluster the controller manages.")
            .validate(v::length(1, 100))
            .validate(v::matches(
                r"^[0-9A-Za-z][A-Za-z0-9_-]*$",
                "an EKS cluster name: letters, digits, hyphens and underscores, starting with a letter or digit",
            )),
        Attribute::string("region")
            .optional_computed()
            .describe("AWS region of the cluster, e.g. `us-east-1`. Defaults to the provider's `aws { region }` (which falls back to `AWS_REGION`, then `AWS_DEFAULT_REGION`), as hashicorp/aws resources do.")
            .validate(v::check("Must be an AWS region name such as `us-east-1`.", |v| {
                let s = v.as_str()?;
                (!arn::is_region(s)).then(|| format!("{s:?} is not an AWS region name such as \"us-east-1\"."))
            })),
        Attribute::string("node_role_arn")
            .required()
            .describe("ARN of the node role (e.g. `karpenter_node_role.x.arn`); the controller may pass only this role to EC2. Its partition and account are the policy's.")
            .validate(arn_check("an IAM role ARN", Arn::parse_role)),
        Attribute::string("interruption_queue_arn")
            .optional()
            .describe("ARN of the SQS interruption queue. When unset, the interruption statement is left out.")
            .validate(arn_check("an SQS queue ARN", Arn::parse_queue)),
        Attribute::string("account_id")
            .optional_computed()
            .describe("AWS account ID of the cluster. Defaults to the node role's account.")
            .validate(v::matches(r"^[0-9]{12}$", "a 12-digit AWS account ID")),
        Attribute::string("partition").computed().describe("AWS partition, taken from `node_role_arn`."),
        Attribute::object(
            "irsa",
            vec![
                Attribute::string("oidc_provider_arn")
                    .required()
                    .describe("ARN of the cluster's IAM OIDC provider.")
                    .validate(v::check("Must be an IAM OIDC provider ARN.", |value| {
                        // Terraform cannot point into an object expression, so the text names the attribute.
                        parse_oidc_provider(value.as_str()?).err().map(|e| format!("irsa.oidc_provider_arn: {e}"))
                    })),
                Attribute::string("namespace")
                    .default_value(Value::string("kube-system"))
                    .describe("Namespace of the controller's service account (upstream installs into `kube-system`; older guides used `karpenter`).")
                    .validate(k8s_name("irsa.namespace", "namespace")),
                Attribute::string("service_account")
                    .default_value(Value::string("karpenter"))
                    .describe("Name of the controller's service account.")
                    .validate(v::check(
                        "Must be a Kubernetes object name: 1–253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit.",
                        |value| {
                            let s = value.as_str()?;
                            let b = s.as_bytes();
                            let ok = (1..=253).contains(&b.len())
                                && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'.')
                                && b.first().is_some_and(u8::is_ascii_alphanumeric)
                                && b.last().is_some_and(u8::is_ascii_alphanumeric);
                            (!ok).then(|| format!("irsa.service_account: {s:?} is not a valid Kubernetes service account name."))
                        },
                    )),
            ],
        )
        .optional()
        .describe("Trust the controller's service account through IRSA: `irsa = { oidc_provider_arn = module.eks.oidc_provider_arn }`."),
        Attribute::bool("pod_identity")
            .default_value(Value::Bool(false))
            .describe("Trust EKS Pod Identity (`pods.eks.amazonaws.com`). Pod Identity does not work on Fargate; use `irsa` there. Both may be set. A bool, since Pod Identity's trust has nothing to configure; the association itself is made with `aws_eks_pod_identity_association`."),
        Attribute::string("policy_attachment")
            .default_value(Value::string("inline"))
            .describe("How the permissions are attached: `inline` (one inline policy, `KarpenterControllerPolicy`), `managed` (one customer managed policy per upstream group, named `<role name>-<group>`, each under IAM's 6,144-character limit), or `none`: the provider writes no permissions, and the role has exactly the policies of `additional_policy_arns` (for a role whose policy is managed elsewhere, e.g. the policy terraform-aws-eks's Karpenter module made; import gives this mode for a role with only such policies attached).")
            .validate(v::one_of(&["inline", "managed", "none"])),
        Attribute::string("policy")
            .computed()
            .describe("The controller permissions in force, as one canonical JSON document (keys sorted); the statements `karpenter_controller_policy` renders for the same inputs."),
        Attribute::list_of("managed_policy_arns", Type::String)
            .computed()
            .describe("ARNs of the managed policies this resource created and attached (`policy_attachment = \"managed\"`), in upstream group order."),
        tags_all::attribute("the role and its managed policies"),
    ]);
    Schema::new(
        "The IAM role of the Karpenter controller, with a trust policy for IRSA, EKS Pod Identity or both, and \
         the controller permissions scoped to one cluster (the same statements as the \
         `karpenter_controller_policy` data source). Drift in the trust policy, the permissions, the attached \
         policies, inline policies added outside Terraform and the tags is detected and repaired. \
         Create never takes over an existing role of the configured name, nor a managed policy \
         named after it, whoever made it — another Terraform state, a module, or an apply of this \
         configuration interrupted before Terraform recorded the role: it fails on `name`, changes \
         nothing, and gives the `import {}` block that takes the role over on purpose. The parts the \
         resource creates carry the tag `terraform-provider-karpenter/resource-type`; the error says \
         when an existing part has it. Import by role name (the next apply may add that tag).",
        attributes,
    )
});

/// The policy inputs of a (planned, prior or imported) value, when all are known.
fn inputs(value: &Value) -> Option<ControllerPolicyInputs> {
    let node_role_arn = get_str(value, "node_role_arn")?;
    let role = Arn::parse_role(node_role_arn).ok()?;
    let queue = value.get("interruption_queue_arn")?;
    if queue.is_unknown() {
        return None;
    }
    let account = match value.get("account_id") {
        Some(a) if a.is_unknown() => return None,
        Some(a) => a.as_str().map(str::to_string).unwrap_or(role.account.clone()),
        None => role.account.clone(),
    };
    Some(ControllerPolicyInputs {
        cluster_name: get_str(value, "cluster_name")?.to_string(),
        partition: role.partition,
        region: get_str(value, "region")?.to_string(),
        account_id: account,
        node_role_arn: node_role_arn.to_string(),
        interruption_queue_arn: queue.as_str().map(str::to_string),
    })
}

/// The trust policy for the configured IRSA and Pod Identity settings (None while unknown).
fn trust_policy(value: &Value) -> Option<Json> {
    let mut statements = Vec::new();
    let irsa = value.get("irsa")?;
    if irsa.is_unknown() {
        return None;
    }
    if !irsa.is_null() {
        let provider = get_str(irsa, "oidc_provider_arn")?;
        let (_, issuer) = parse_oidc_provider(provider).ok()?;
        let subject = format!(
            "system:serviceaccount:{}:{}",
            get_str(irsa, "namespace")?,
            get_str(irsa, "service_account")?
        );
        statements.push(json!({
            "Effect": "Allow",
            "Principal": {"Federated": provider},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringEquals": {
                format!("{issuer}:aud"): "sts.amazonaws.com",
                format!("{issuer}:sub"): subject,
            }},
        }));
    }
    if value.get("pod_identity")?.as_bool()? {
        statements.push(json!({
            "Effect": "Allow",
            "Principal": {"Service": POD_IDENTITY_PRINCIPAL},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }));
    }
    Some(json!({"Version": "2012-10-17", "Statement": statements}))
}

fn managed(value: &Value) -> bool {
    get_str(value, "policy_attachment") == Some("managed")
}

/// `policy_attachment = "none"`: the provider writes no permissions; the role has what
/// `additional_policy_arns` attaches (a role whose policies someone else manages, such as
/// terraform-aws-eks's Karpenter module's).
fn unmanaged(value: &Value) -> bool {
    get_str(value, "policy_attachment") == Some("none")
}

fn group_arn(partition: &str, account: &str, path: &str, role: &str, group: &str) -> String {
    format!("arn:{partition}:iam::{account}:policy{path}{role}-{group}")
}

/// Every owned policy ARN this role could have (all groups).
fn all_group_arns(role_arn: &str, path: &str, role: &str) -> Vec<String> {
    let (p, a) = iam_role::partition_and_account(role_arn).unwrap_or_default();
    GROUPS.iter().map(|g| group_arn(&p, &a, path, role, g)).collect()
}

/// The full document in canonical form.
fn expected_policy(i: &ControllerPolicyInputs) -> String {
    canonical_of(&policy_document(i))
}

fn canonical_of(doc: &PolicyDocument) -> String {
    iam_role::canonical_text(&doc.to_json()).unwrap_or_default()
}

/// The plan-time checks on document sizes; an error names `policy_attachment`.
fn check_sizes(i: &ControllerPolicyInputs, managed: bool, diags: &mut Diagnostics) {
    let path = AttributePath::root().attr("policy_attachment");
    if managed {
        for g in policy_groups(i) {
            let len = PolicyDocument {
                statements: g.statements,
            }
            .to_json()
            .len();
            if len > MANAGED_POLICY_LIMIT {
                diags.error_at(&path, "Managed policy too large", format!("The {} statements take {len} characters, more than IAM's {MANAGED_POLICY_LIMIT} for one managed policy (a very long cluster name or ARN makes them grow). Use policy_attachment = \"inline\".", g.name));
            }
        }
    } else {
        let len = policy_document(i).to_json().len();
        if len > INLINE_POLICY_LIMIT {
            diags.error_at(&path, "Inline policy too large", format!("The controller policy takes {len} characters, more than IAM's {INLINE_POLICY_LIMIT} for a role's inline policies. Use policy_attachment = \"managed\", which splits it into one policy per group."));
        }
    }
}

/// What the role should be, given what exists (`have`) and the role's ARN (known once created);
/// `tags` is what every part carries (`tags_all`).
fn desired(
    planned: &Value,
    name: &str,
    role_arn: &str,
    have: Option<&Actual>,
    tags: BTreeMap<String, String>,
) -> Result<Desired, Diagnostics> {
    let missing = || {
        Diagnostics::from_error(
            "Controller role inputs are not known",
            "cluster_name, region, node_role_arn, interruption_queue_arn and irsa must be known to apply the role.",
        )
    };
    let i = inputs(planned).ok_or_else(missing)?;
    let trust = trust_policy(planned).ok_or_else(missing)?;
    let path = get_str(planned, "path").unwrap_or("/").to_string();
    let (p, a) = iam_role::partition_and_account(role_arn).unwrap_or_default();
    let all = all_group_arns(role_arn, &path, name);
    let (inline, owned, stale_inline) = if unmanaged(planned) {
        (None, Vec::new(), vec![INLINE_POLICY.to_string()])
    } else if managed(planned) {
        let owned = policy_groups(&i)
            .into_iter()
            .map(|g| OwnedPolicy {
                arn: group_arn(&p, &a, &path, name, g.name),
                name: format!("{name}-{}", g.name),
                document: PolicyDocument {
                    statements: g.statements,
                }
                .to_json(),
            })
            .collect::<Vec<_>>();
        (None, owned, vec![INLINE_POLICY.to_string()])
    } else {
        (
            Some((INLINE_POLICY.to_string(), policy_document(&i).to_json())),
            Vec::new(),
            Vec::new(),
        )
    };
    let stale_owned = all
        .into_iter()
        .filter(|arn| !owned.iter().any(|o| o.arn == *arn))
        .filter(|arn| have.is_some_and(|h| h.owned.contains_key(arn)))
        .collect();
    Ok(Desired {
        resource_type: TYPE_NAME,
        name: name.to_string(),
        path,
        description: Some("Karpenter controller role (managed by Terraform)".to_string()),
        trust,
        permissions_boundary: get_str(planned, "permissions_boundary").map(str::to_string),
        tags,
        attached: iam_role::string_set_of(planned, "additional_policy_arns"),
        inline,
        owned,
        stale_owned,
        stale_inline,
        instance_profile: None,
        stale_profile: None,
    })
}

/// The permissions in force, merged into one canonical document (None when there are none).
fn policy_in_force(base: &Value, actual: &Actual, all: &[String]) -> Option<String> {
    if unmanaged(base) {
        None
    } else if managed(base) {
        let statements: Vec<Json> = all
            .iter()
            .filter_map(|arn| actual.owned.get(arn))
            .flat_map(|doc| doc["Statement"].as_array().cloned().unwrap_or_default())
            .collect();
        (!statements.is_empty())
            .then(|| iam_role::canonical(&json!({"Version": "2012-10-17", "Statement": statements})))
    } else {
        actual.inline.get(INLINE_POLICY).map(iam_role::canonical)
    }
}

/// The state for what exists; `defaults` are the provider's default tags (to tell `tags` from
/// `tags_all`).
fn state(base: &Value, actual: &Actual, defaults: &BTreeMap<String, String>) -> Value {
    let all = all_group_arns(&actual.role.arn, &actual.role.path, &actual.role.name);
    let managed_arns: Vec<&String> = all
        .iter()
        .filter(|a| actual.owned.contains_key(*a) && actual.attached.contains(*a))
        .collect();
    let additional: BTreeSet<String> = actual
        .attached
        .iter()
        .filter(|a| !all.contains(a))
        .cloned()
        .collect();
    let mut fields = match base {
        Value::Object(f) => f.clone(),
        _ => BTreeMap::new(),
    };
    let partition = iam_role::partition_and_account(&actual.role.arn).map(|(p, _)| p);
    let policy = policy_in_force(base, actual, &all);
    let mut set = |k: &str, v: Value| {
        fields.insert(k.to_string(), v);
    };
    set("id", Value::string(actual.role.name.clone()));
    set("name", Value::string(actual.role.name.clone()));
    set("arn", Value::string(actual.role.arn.clone()));
    set("path", Value::string(actual.role.path.clone()));
    set("partition", partition.map(Value::string).unwrap_or(Value::Null));
    set(
        "permissions_boundary",
        crate::terraform::framework::values::opt_string(actual.role.permissions_boundary.clone()),
    );
    let (tags, all_tags) = tags_all::read(&actual.tags, defaults, base.get("tags"));
    set("tags", tags);
    set(tags_all::TAGS_ALL, all_tags);
    set(
        "additional_policy_arns",
        iam_role::set_value(&additional, base.get("additional_policy_arns")),
    );
    set("managed_policy_arns", string_list(managed_arns));
    set(
        "assume_role_policy",
        Value::string(iam_role::canonical(&actual.role.trust_policy)),
    );
    set("policy", policy.map(Value::string).unwrap_or(Value::Null));
    let own_inline = (!managed(base) && !unmanaged(base)).then_some(INLINE_POLICY);
    set(
        iam_role::UNMANAGED_INLINE,
        iam_role::unmanaged_inline(actual, own_inline),
    );
    if base.get("account_id").is_none_or(Value::is_null)
        && let Some(i) = inputs(base)
    {
        set("account_id", Value::string(i.account_id));
    }
    Value::Object(fields)
}

async fn iam(ctx: &KarpenterContext) -> Result<Iam, Diagnostics> {
    Ok(Iam::new(ctx.aws().await?.iam()))
}

/// [`iam`] for create, update and delete: the account guards are checked first.
async fn iam_to_change(ctx: &KarpenterContext) -> Result<Iam, Diagnostics> {
    Ok(Iam::new(ctx.aws_to_change().await?.iam()))
}

/// Reads the role, with its inline policy and every owned managed policy it could have.
async fn read_role(iam: &Iam, name: &str) -> Result<Option<Actual>, Diagnostics> {
    let fail = |e| iam_role::diagnostics("read the controller role", &e);
    let Some(role) = iam.get_role(name).await.map_err(fail)? else {
        return Ok(None);
    };
    let owned = all_group_arns(&role.arn, &role.path, name);
    let inline = [INLINE_POLICY.to_string()];
    let scope = ReadScope {
        inline: &inline,
        owned_arns: &owned,
        profile: None,
    };
    iam_role::read(iam, name, &scope).await.map_err(fail)
}

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
            let arns: Vec<String> = GROUPS
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

    fn modify_plan(&self, _config: &Value, prior: &Value, planned: &mut Value, diags: &mut Diagnostics) {
        iam_role::plan_unmanaged_inline(planned);
        let snapshot = planned.clone();
        let Value::Object(fields) = planned else { return };
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
        fields.insert(
            "assume_role_policy".into(),
            trust_policy(&snapshot)
                .map(|t| Value::string(iam_role::canonical(&t)))
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
        Some(&listing::CONTROLLER_ROLE_LIST)
    }

    async fn list(&self, ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
        listing::list_controller_roles(ctx, request, sink).await;
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
        let base = infer(&actual).map_err(|why| {
            Diagnostics::from_error(
                "Cannot import karpenter_controller_role",
                format!("Role {id:?} does not look like a Karpenter controller role: {why}"),
            )
        })?;
        Ok(state(&base, &actual, &tags_all::defaults(ctx)))
    }
}

/// The configuration a role was made from, inferred from its trust policy and permissions.
fn infer(actual: &Actual) -> Result<Value, String> {
    let mut fields: BTreeMap<String, Value> = SCHEMA
        .attributes
        .iter()
        .map(|a| (a.name.to_string(), Value::Null))
        .collect();
    let statements = actual.role.trust_policy["Statement"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut pod_identity = false;
    for st in &statements {
        if st["Principal"]["Service"] == POD_IDENTITY_PRINCIPAL {
            pod_identity = true;
        }
        if let Some(provider) = st["Principal"]["Federated"].as_str() {
            let (_, issuer) = parse_oidc_provider(provider)?;
            let sub = st["Condition"]["StringEquals"][format!("{issuer}:sub")]
                .as_str()
                .ok_or("the IRSA statement has no sub condition")?;
            let mut parts = sub
                .strip_prefix("system:serviceaccount:")
                .unwrap_or_default()
                .splitn(2, ':');
            let (Some(ns), Some(sa)) = (parts.next(), parts.next()) else {
                return Err(format!("the IRSA sub condition {sub:?} names no service account"));
            };
            fields.insert(
                "irsa".into(),
                object([
                    ("oidc_provider_arn", Value::string(provider)),
                    ("namespace", Value::string(ns)),
                    ("service_account", Value::string(sa)),
                ]),
            );
        }
    }
    fields.insert("pod_identity".into(), Value::Bool(pod_identity));
    let all = all_group_arns(&actual.role.arn, &actual.role.path, &actual.role.name);
    let managed =
        !actual.inline.contains_key(INLINE_POLICY) && all.iter().any(|a| actual.owned.contains_key(a));
    fields.insert(
        "policy_attachment".into(),
        Value::string(if managed { "managed" } else { "inline" }),
    );
    let probe = Value::Object(fields.clone());
    let Some(doc) = policy_in_force(&probe, actual, &all).and_then(|t| serde_json::from_str::<Json>(&t).ok())
    else {
        if actual.owner.as_deref() == Some(TYPE_NAME) {
            // Made by this resource type, and a create stopped before the permissions were
            // written (the refusal of the next create names this import): the policy inputs
            // stay unset, and the apply after the import writes the permissions.
            return Ok(Value::Object(fields));
        }
        if !actual.attached.is_empty() {
            // Its permissions are policies someone else manages (terraform-aws-eks's Karpenter
            // module attaches one of its own): kept as they are, in `additional_policy_arns`.
            fields.insert("policy_attachment".into(), Value::string("none"));
            return Ok(Value::Object(fields));
        }
        return Err(
            "it has neither the KarpenterControllerPolicy inline policy, nor its managed policies, nor any \
             attached policy"
                .into(),
        );
    };
    let by_sid = |sid: &str| {
        doc["Statement"]
            .as_array()
            .and_then(|s| s.iter().find(|st| st["Sid"] == sid))
            .map(|st| st["Resource"].clone())
    };
    let node_role = by_sid("AllowPassingInstanceRole")
        .and_then(|r| r.as_str().map(str::to_string))
        .ok_or("no AllowPassingInstanceRole statement")?;
    let cluster = by_sid("AllowAPIServerEndpointDiscovery")
        .and_then(|r| r.as_str().map(str::to_string))
        .ok_or("no AllowAPIServerEndpointDiscovery statement")?;
    let cluster = Arn::parse(&cluster).map_err(|e| e.to_string())?;
    let cluster_name = cluster
        .resource
        .strip_prefix("cluster/")
        .ok_or("the EKS statement names no cluster")?;
    let queue = by_sid("AllowInterruptionQueueActions").and_then(|r| r.as_str().map(str::to_string));
    fields.insert("node_role_arn".into(), Value::string(node_role));
    fields.insert("cluster_name".into(), Value::string(cluster_name));
    fields.insert("region".into(), Value::string(cluster.region.clone()));
    fields.insert("account_id".into(), Value::string(cluster.account.clone()));
    fields.insert(
        "interruption_queue_arn".into(),
        crate::terraform::framework::values::opt_string(queue),
    );
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws::iam::RoleInfo;
    use crate::terraform::framework::plan::plan;
    use crate::terraform::framework::schema::validate_attributes;

    const OIDC: &str = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC";
    const NODE: &str = "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo";
    const QUEUE: &str = "arn:aws:sqs:us-east-1:123456789012:demo";

    fn config(pairs: Vec<(&str, Value)>) -> Value {
        let mut fields: BTreeMap<String, Value> = SCHEMA
            .attributes
            .iter()
            .map(|a| (a.name.to_string(), Value::Null))
            .collect();
        fields.insert("cluster_name".into(), Value::string("demo"));
        fields.insert("region".into(), Value::string("us-east-1"));
        fields.insert("node_role_arn".into(), Value::string(NODE));
        fields.insert("interruption_queue_arn".into(), Value::string(QUEUE));
        for (k, val) in pairs {
            fields.insert(k.to_string(), val);
        }
        Value::Object(fields)
    }

    fn irsa(ns: Option<&str>) -> Value {
        object([
            ("oidc_provider_arn", Value::string(OIDC)),
            ("namespace", ns.map(Value::string).unwrap_or(Value::Null)),
            ("service_account", Value::Null),
        ])
    }

    fn diagnose(c: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        validate_attributes(
            &SCHEMA.attributes,
            &SCHEMA.blocks,
            c,
            &AttributePath::root(),
            &mut d,
        );
        ControllerRole.validate(c, &mut d);
        d
    }

    fn paths(d: &Diagnostics) -> Vec<String> {
        d.iter()
            .filter_map(|x| x.path.as_ref().map(|p| p.to_string()))
            .collect()
    }

    fn planned(c: &Value, prior: &Value) -> Value {
        let mut p = plan(&SCHEMA.attributes, &SCHEMA.blocks, c, prior).planned;
        ControllerRole.modify_plan(c, prior, &mut p, &mut Diagnostics::new());
        p
    }

    #[test]
    fn groups_match_the_policy_module() {
        let i = inputs(&planned(
            &config(vec![("pod_identity", Value::Bool(true))]),
            &Value::Null,
        ))
        .expect("inputs");
        let names: Vec<&str> = policy_groups(&i).iter().map(|g| g.name).collect();
        assert_eq!(names, GROUPS);
    }

    #[test]
    fn trust_policies_for_irsa_pod_identity_and_both() {
        let p = planned(&config(vec![("irsa", irsa(None))]), &Value::Null);
        let t = trust_policy(&p).expect("trust");
        let st = &t["Statement"];
        assert_eq!(st.as_array().map(Vec::len), Some(1));
        assert_eq!(st[0]["Action"], "sts:AssumeRoleWithWebIdentity");
        assert_eq!(st[0]["Principal"]["Federated"], OIDC);
        let cond = &st[0]["Condition"]["StringEquals"];
        assert_eq!(
            cond["oidc.eks.us-east-1.amazonaws.com/id/ABC:aud"],
            "sts.amazonaws.com"
        );
        assert_eq!(
            cond["oidc.eks.us-east-1.amazonaws.com/id/ABC:sub"],
            "system:serviceaccount:kube-system:karpenter"
        );
        let p = planned(
            &config(vec![
                ("irsa", irsa(Some("karpenter"))),
                ("pod_identity", Value::Bool(true)),
            ]),
            &Value::Null,
        );
        let t = trust_policy(&p).expect("trust");
        assert_eq!(t["Statement"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            t["Statement"][0]["Condition"]["StringEquals"]["oidc.eks.us-east-1.amazonaws.com/id/ABC:sub"],
            "system:serviceaccount:karpenter:karpenter"
        );
        assert_eq!(
            t["Statement"][1]["Principal"]["Service"],
            "pods.eks.amazonaws.com"
        );
        assert_eq!(
            t["Statement"][1]["Action"],
            json!(["sts:AssumeRole", "sts:TagSession"])
        );
    }

    #[test]
    fn the_policy_is_the_data_sources_policy() {
        let p = planned(&config(vec![("pod_identity", Value::Bool(true))]), &Value::Null);
        let i = ControllerPolicyInputs {
            cluster_name: "demo".into(),
            partition: "aws".into(),
            region: "us-east-1".into(),
            account_id: "123456789012".into(),
            node_role_arn: NODE.into(),
            interruption_queue_arn: Some(QUEUE.into()),
        };
        let want: Json = serde_json::from_str(&policy_document(&i).to_json()).expect("json");
        let got: Json = serde_json::from_str(get_str(&p, "policy").expect("policy")).expect("json");
        assert_eq!(got, want);
        assert_eq!(get_str(&p, "account_id"), Some("123456789012"));
        assert_eq!(get_str(&p, "partition"), Some("aws"));
    }

    #[test]
    fn validation_points_at_attributes() {
        assert!(diagnose(&config(vec![("irsa", irsa(None))])).is_empty());
        let none = diagnose(&config(vec![]));
        assert!(paths(&none).contains(&"irsa".to_string()));
        assert!(diagnose(&config(vec![("pod_identity", Value::unknown())])).is_empty());
        let cases: Vec<(Value, &str)> = vec![
            (
                config(vec![(
                    "irsa",
                    object([
                        (
                            "oidc_provider_arn",
                            Value::string("arn:aws:iam::123456789012:role/x"),
                        ),
                        ("namespace", Value::Null),
                        ("service_account", Value::Null),
                    ]),
                )]),
                "irsa.oidc_provider_arn",
            ),
            (
                config(vec![("irsa", irsa(Some("Kube_System")))]),
                "irsa.namespace",
            ),
            (
                config(vec![
                    ("pod_identity", Value::Bool(true)),
                    (
                        "interruption_queue_arn",
                        Value::string("arn:aws:sqs:eu-west-1:123456789012:demo"),
                    ),
                ]),
                "interruption_queue_arn",
            ),
            (
                config(vec![
                    ("pod_identity", Value::Bool(true)),
                    ("account_id", Value::string("999999999999")),
                ]),
                "node_role_arn",
            ),
            (
                config(vec![
                    ("pod_identity", Value::Bool(true)),
                    ("region", Value::string("cn-north-1")),
                ]),
                "region",
            ),
            (
                config(vec![
                    ("pod_identity", Value::Bool(true)),
                    ("policy_attachment", Value::string("both")),
                ]),
                "policy_attachment",
            ),
            (
                config(vec![(
                    "irsa",
                    object([
                        (
                            "oidc_provider_arn",
                            Value::string(
                                "arn:aws:iam::999999999999:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/X",
                            ),
                        ),
                        ("namespace", Value::Null),
                        ("service_account", Value::Null),
                    ]),
                )]),
                "irsa.oidc_provider_arn",
            ),
        ];
        for (c, path) in cases {
            let d = diagnose(&c);
            assert!(paths(&d).iter().any(|p| p == path), "{path}: {:?}", paths(&d));
        }
    }

    fn actual_for(p: &Value, managed_mode: bool, skip_group: Option<usize>) -> Actual {
        let role_arn = "arn:aws:iam::123456789012:role/ctl";
        let i = inputs(p).expect("inputs");
        let mut a = Actual {
            role: RoleInfo {
                name: "ctl".into(),
                arn: role_arn.into(),
                path: "/".into(),
                trust_policy: trust_policy(p).expect("trust"),
                permissions_boundary: None,
            },
            tags: BTreeMap::new(),
            owner: None,
            attached: BTreeSet::new(),
            inline_names: vec![],
            inline: BTreeMap::new(),
            owned: BTreeMap::new(),
            owned_tags: BTreeMap::new(),
            profile: None,
        };
        if managed_mode {
            for (n, g) in policy_groups(&i).into_iter().enumerate() {
                let arn = group_arn("aws", "123456789012", "/", "ctl", g.name);
                let doc = serde_json::from_str(
                    &PolicyDocument {
                        statements: g.statements,
                    }
                    .to_json(),
                )
                .expect("json");
                a.owned.insert(arn.clone(), doc);
                if skip_group != Some(n) {
                    a.attached.insert(arn);
                }
            }
        } else {
            a.inline_names.push(INLINE_POLICY.into());
            a.inline.insert(
                INLINE_POLICY.into(),
                serde_json::from_str(&policy_document(&i).to_json()).expect("json"),
            );
        }
        a
    }

    #[test]
    fn managed_mode_state_plans_empty_and_detects_a_detached_policy() {
        let c = config(vec![
            ("name", Value::string("ctl")),
            ("irsa", irsa(None)),
            ("policy_attachment", Value::string("managed")),
        ]);
        let p = planned(&c, &Value::Null);
        let good = state(&p, &actual_for(&p, true, None), &BTreeMap::new());
        assert_eq!(
            good.get("managed_policy_arns")
                .and_then(Value::as_elements)
                .map(<[Value]>::len),
            Some(6)
        );
        assert_eq!(planned(&c, &good), good);
        let drifted = state(&p, &actual_for(&p, true, Some(0)), &BTreeMap::new());
        let repair = planned(&c, &drifted);
        assert_ne!(repair, drifted);
        assert_eq!(repair.get("managed_policy_arns"), good.get("managed_policy_arns"));
    }

    #[test]
    fn inline_mode_detects_an_edited_trust_policy_and_import_infers_the_config() {
        let c = config(vec![
            ("name", Value::string("ctl")),
            ("irsa", irsa(Some("karpenter"))),
            ("pod_identity", Value::Bool(true)),
        ]);
        let p = planned(&c, &Value::Null);
        let mut a = actual_for(&p, false, None);
        let good = state(&p, &a, &BTreeMap::new());
        assert_eq!(planned(&c, &good), good);
        // Import reconstructs the same state from the role alone.
        let imported = state(&infer(&a).expect("infer"), &a, &BTreeMap::new());
        assert_eq!(planned(&c, &imported), imported);
        // An edited trust policy is drift.
        a.role.trust_policy["Statement"][0]["Condition"]["StringEquals"]["oidc.eks.us-east-1.amazonaws.com/id/ABC:sub"] =
            json!("system:serviceaccount:default:evil");
        let drifted = state(&p, &a, &BTreeMap::new());
        let repair = planned(&c, &drifted);
        assert_ne!(
            repair.get("assume_role_policy"),
            drifted.get("assume_role_policy")
        );
    }

    #[test]
    fn oversized_managed_policies_are_a_plan_error() {
        let i = ControllerPolicyInputs {
            cluster_name: "c".repeat(100),
            partition: "aws".into(),
            region: "us-east-1".into(),
            account_id: "123456789012".into(),
            node_role_arn: NODE.into(),
            interruption_queue_arn: Some(QUEUE.into()),
        };
        let mut d = Diagnostics::new();
        check_sizes(&i, true, &mut d);
        // Each group of the upstream split stays under the limit even with a 100-character name.
        assert!(d.is_empty(), "{:?}", paths(&d));
        let mut d = Diagnostics::new();
        check_sizes(&i, false, &mut d);
        let total = policy_document(&i).to_json().len();
        assert_eq!(d.has_errors(), total > INLINE_POLICY_LIMIT);
    }
}
