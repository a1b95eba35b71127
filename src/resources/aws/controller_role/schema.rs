//! The schema of `karpenter_controller_role` and its input checks (service account names, the OIDC
//! provider ARN, policy ARNs).

use std::sync::LazyLock;

use crate::aws_names;
use crate::policy::arn;
use crate::policy::arn::Arn;
use crate::resources::aws::controller_policy::karpenter_version_attribute;
use crate::resources::aws::{iam_role, tags_all};
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::framework::{Attribute, Schema};
use crate::terraform::tfvalue::{Type, Value};

pub(super) const DEFAULT_PREFIX: &str = "karpenter-controller-";
pub(super) const TYPE_NAME: &str = "karpenter_controller_role";
/// Name of the inline policy holding the controller's permissions.
pub const INLINE_POLICY: &str = "KarpenterControllerPolicy";
/// The `karpenter_version` of roles made before the attribute existed (provider 0.1.x wrote
/// v1.14's policy): the default fill writes it into their state, so they keep that policy.
pub const VERSION_OF_EARLIER_ROLES: &str = "v1.14";
/// The attribute of the role's other inline policies, by name.
pub const ADDITIONAL_INLINE: &str = "additional_inline_policies";

pub(super) const POD_IDENTITY_PRINCIPAL: &str = "pods.eks.amazonaws.com";

pub(super) fn k8s_name(attribute: &'static str, what: &'static str) -> impl Validator {
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
        && aws_names::aws_account_id(&a.account).is_ok()
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

pub(super) static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    let mut attributes = iam_role::common_attributes(
        DEFAULT_PREFIX,
        "the managed policies of `policy_attachment = \"managed\"`",
    );
    attributes.extend([
        Attribute::string("cluster_name")
            .required()
            .describe("Name of the EKS cluster the controller manages.")
            .validate(aws_names::eks_cluster_name_validator()),
        Attribute::string("region")
            .optional_computed()
            .describe("AWS region of the cluster, e.g. `us-east-1`. Defaults to the provider's `aws { region }` (which falls back to `AWS_REGION`, then `AWS_DEFAULT_REGION`), as hashicorp/aws resources do.")
            .validate(aws_names::aws_region_validator()),
        Attribute::string("node_role_arn")
            .required()
            .describe("ARN of the node role (e.g. `karpenter_node_role.x.arn`); the controller may pass only this role to EC2. Its partition and account are the policy's.")
            .validate(arn::role_arn_validator()),
        Attribute::string("interruption_queue_arn")
            .optional()
            .describe("ARN of the SQS interruption queue. When unset, the interruption statement is left out.")
            .validate(arn::queue_arn_validator()),
        Attribute::string("account_id")
            .optional_computed()
            .describe("AWS account ID of the cluster. Defaults to the node role's account.")
            .validate(aws_names::aws_account_id_validator()),
        Attribute::string("partition").computed().describe("AWS partition, taken from `node_role_arn`."),
        karpenter_version_attribute(&format!(
            "Unset, a new role gets the newest, {newest}, and keeps it: a later provider that knows a newer \
             release does not change the permissions of an existing role, and neither does removing the \
             setting; roles made by provider 0.1.x, before this attribute, keep the {VERSION_OF_EARLIER_ROLES} \
             policy they were given. Change it to change the permissions (the plan shows the statements \
             that change, and warns on this attribute when one would be taken away). Import reads it from \
             the permissions: the newest release whose policy they are, written `vX.Y` (write it so, and \
             the plan after the import is empty).",
            newest = crate::policy::releases::newest().version
        ))
        .stable()
        .fill_stored_state_with(Value::string(VERSION_OF_EARLIER_ROLES)),
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
            .describe("How the permissions are attached: `inline` (one inline policy, `KarpenterControllerPolicy`), `managed` (one customer managed policy per upstream group, named `<role name>-<group>`: from v1.9 each under IAM's 6,144-character limit; up to v1.8 the one group `Controller`), or `none`: the provider writes no permissions, and the role has exactly the policies of `additional_policy_arns` and `additional_inline_policies` (for a role whose policy is managed elsewhere, e.g. the policy terraform-aws-eks's Karpenter module made; import gives this mode for a role with only such policies, and reads `cluster_name`, `region`, `node_role_arn` and `interruption_queue_arn` from their statements when they have Karpenter's statement IDs).")
            .validate(v::one_of(&["inline", "managed", "none"])),
        Attribute::map_of(ADDITIONAL_INLINE, Type::String)
            .optional()
            .describe(format!(
                "Inline policies of the role besides the controller permissions, by name: each a JSON policy \
                 document (`jsonencode({{ Version = \"2012-10-17\", Statement = [...] }})`), written as given, before \
                 anything is detached or deleted. Import puts every inline policy of the role that is not this \
                 resource's own here (the one terraform-aws-eks's Karpenter module writes with \
                 `enable_inline_policy = true`, for instance), so a configuration generated from the import keeps \
                 them; an inline policy neither here nor the resource's own shows in `unmanaged_inline_policies` and \
                 apply deletes it. Also the place for a permission the provider's statements leave out. \
                 `{INLINE_POLICY}` is the resource's own and cannot be named here."
            ))
            .validate(v::each_key(aws_names::iam_policy_name_validator()))
            .validate(v::each_key(v::check(
                format!("Must not be `{INLINE_POLICY}`."),
                |value| {
                    let s = value.as_str()?;
                    (s == INLINE_POLICY).then(|| {
                        format!("{s:?} is the inline policy this resource writes itself (policy_attachment = \"inline\"); give this one another name.")
                    })
                },
            )))
            .validate(v::each(v::check(
                "Must be a JSON policy document with a `Statement`.",
                |value| {
                    let s = value.as_str()?;
                    match serde_json::from_str::<serde_json::Value>(s) {
                        Ok(doc) if doc.get("Statement").is_some() => None,
                        Ok(_) => Some("The policy document has no Statement.".to_string()),
                        Err(e) => Some(format!("Not a JSON policy document: {e}. Write it with jsonencode({{ ... }}).")),
                    }
                },
            ))),
        Attribute::string("policy")
            .computed()
            .describe("The controller permissions in force, as one canonical JSON document (keys sorted); the statements `karpenter_controller_policy` renders for the same inputs and `karpenter_version`."),
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
         when an existing part has it. Import by role name: the trust policy gives `irsa` and \
         `pod_identity`, the permissions `policy_attachment` and the policy inputs, and every policy \
         that is not the resource's own is kept in `additional_policy_arns` or \
         `additional_inline_policies`, so `terraform plan -generate-config-out` writes a configuration \
         that changes nothing (the tag is added with the next change of the role's tags). A plan that \
         would take a trusted principal or a permission away from the role warns on the attribute \
         that causes it.",
        attributes,
    )
});
