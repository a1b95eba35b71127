//! What one call of terraform-aws-eks's `modules/karpenter` leaves in an AWS account, made in
//! moto call by call, for the module's last v20 (v20.37.2) and v21 (v21.19.0) releases: the facts
//! of the module's `main.tf`, `policy.tf` and `variables.tf` at those tags, restated.
//!
//! - names: the controller role and policy `KarpenterController-<suffix>` (`iam_role_name`,
//!   `iam_role_use_name_prefix`), the node role `Karpenter-<cluster>-<suffix>`
//!   (`node_iam_role_name`, `node_iam_role_use_name_prefix`), the queue `Karpenter-<cluster>`
//!   (`queue_name`), the rules `<rule_name_prefix><Event>-<suffix>`;
//! - tags: `tags` on everything; `iam_role_tags` and `node_iam_role_tags` on the roles (and the
//!   module's instance profile); the rules also carry `ClusterName`;
//! - trust: v20 Pod Identity (`enable_pod_identity`, no statement id) and IRSA (`enable_irsa`,
//!   one `sub` per `irsa_namespace_service_accounts` entry); v21 Pod Identity (statement id
//!   `PodIdentity`) after the statements of `iam_role_source_assume_policy_documents`; the node
//!   role's EC2 trust has the statement id `EKSNodeAssumeRole`;
//! - permissions: one customer managed policy attached (v20: the v0.33 statements, or v1's with
//!   `enable_v1_permissions`; v21: its own), or v21's inline policy (`enable_inline_policy`);
//!   `iam_role_policies` attached besides;
//! - the queue (300 s retention, SSE-SQS) with its `SqsWrite` / `DenyHTTP` policy (`DenyHTTP`
//!   tests `StringEquals` in v20, `Bool` in v21), four rules (v20) or five (v21), each with the
//!   target `KarpenterInterruptionQueueTarget`;
//! - the node role with WorkerNode, ECR (ReadOnly in v20, PullOnly in v21) and CNI attached, plus
//!   `node_iam_role_additional_policies`; the module's instance profile with
//!   `create_instance_profile`.
//!
//! Besides, what Karpenter's controller made: an instance profile for the node role (the one
//! nodes run with) and a message waiting in the queue. Not made: the EKS access entry and the
//! Pod Identity association — moto has no API for either; they stay with hashicorp/aws.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

use acceptance_tests::moto::{ACCOUNT_ID, REGION};
use serde_json::{Value as Json, json};

use super::Aws;

/// The module's major version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V20,
    V21,
}

/// The inputs of one module call that decide what it makes (defaults as the module has them).
#[derive(Debug, Clone)]
pub struct ModuleCall {
    pub version: Version,
    pub cluster: &'static str,
    pub tags: Vec<(&'static str, &'static str)>,
    pub iam_role_name: &'static str,
    pub iam_role_use_name_prefix: bool,
    pub iam_role_tags: Vec<(&'static str, &'static str)>,
    /// Names of customer managed policies made beforehand and attached (`iam_role_policies`).
    pub iam_role_policies: Vec<&'static str>,
    /// v20 only (v21 always trusts Pod Identity).
    pub enable_pod_identity: bool,
    /// v20's `enable_irsa`; for v21, an IRSA statement passed in
    /// `iam_role_source_assume_policy_documents`.
    pub irsa_service_accounts: Vec<&'static str>,
    pub enable_v1_permissions: bool,
    pub enable_inline_policy: bool,
    pub node_iam_role_name: Option<&'static str>,
    pub node_iam_role_use_name_prefix: bool,
    pub node_iam_role_tags: Vec<(&'static str, &'static str)>,
    /// Names of customer managed policies made beforehand and attached to the node role.
    pub node_iam_role_additional_policies: Vec<&'static str>,
    pub queue_name: Option<&'static str>,
    pub rule_name_prefix: &'static str,
    pub create_instance_profile: bool,
}

impl ModuleCall {
    /// A call of v20.37.2 with its defaults.
    pub fn v20(cluster: &'static str) -> ModuleCall {
        ModuleCall {
            version: Version::V20,
            cluster,
            tags: Vec::new(),
            iam_role_name: "KarpenterController",
            iam_role_use_name_prefix: true,
            iam_role_tags: Vec::new(),
            iam_role_policies: Vec::new(),
            enable_pod_identity: true,
            irsa_service_accounts: Vec::new(),
            enable_v1_permissions: false,
            enable_inline_policy: false,
            node_iam_role_name: None,
            node_iam_role_use_name_prefix: true,
            node_iam_role_tags: Vec::new(),
            node_iam_role_additional_policies: Vec::new(),
            queue_name: None,
            rule_name_prefix: "Karpenter",
            create_instance_profile: false,
        }
    }

    /// A call of v21.19.0 with its defaults.
    pub fn v21(cluster: &'static str) -> ModuleCall {
        ModuleCall {
            version: Version::V21,
            ..ModuleCall::v20(cluster)
        }
    }

    fn oidc_issuer(&self) -> String {
        format!(
            "oidc.eks.{REGION}.amazonaws.com/id/{}",
            self.cluster.to_uppercase().replace('-', "")
        )
    }

    pub fn oidc_provider_arn(&self) -> String {
        format!("arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{}", self.oidc_issuer())
    }
}

/// What a call made, by name.
#[derive(Debug, Clone)]
pub struct Made {
    pub call: ModuleCall,
    pub controller_role: String,
    /// The module's managed controller policy (none with `enable_inline_policy`).
    pub controller_policy_arn: Option<String>,
    /// The module's inline controller policy (`enable_inline_policy`).
    pub controller_inline_policy: Option<String>,
    /// `iam_role_policies`.
    pub controller_extra_arns: Vec<String>,
    pub node_role: String,
    pub queue: String,
    pub queue_url: String,
    pub queue_arn: String,
    /// The rules by the module's event key (`health_event`, …), with their names.
    pub rules: Vec<(&'static str, String)>,
    /// The module's instance profile (`create_instance_profile`).
    pub module_profile: Option<String>,
    /// The instance profile Karpenter's controller made for the node role.
    pub karpenter_profile: String,
}

/// A 26-character suffix as Terraform appends to a `name_prefix` (time, then a counter).
fn suffix() -> String {
    static N: AtomicU32 = AtomicU32::new(1);
    format!("20240312093015123400{:06}", N.fetch_add(1, Ordering::Relaxed))
}

fn tag_map(parts: &[&[(&'static str, &'static str)]]) -> BTreeMap<String, String> {
    parts
        .iter()
        .flat_map(|p| p.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn iam_tags(tags: &BTreeMap<String, String>) -> Vec<aws_sdk_iam::types::Tag> {
    tags.iter()
        .map(|(k, v)| {
            aws_sdk_iam::types::Tag::builder()
                .key(k)
                .value(v)
                .build()
                .expect("tag")
        })
        .collect()
}

/// One statement as `aws_iam_policy_document` writes it (one value → a string).
fn statement(
    sid: &str,
    actions: &[&str],
    resources: &[String],
    conditions: &[(&str, String, &[&str])],
) -> Json {
    let one_or_many = |v: Vec<Json>| {
        if v.len() == 1 {
            v[0].clone()
        } else {
            Json::Array(v)
        }
    };
    let mut st = json!({
        "Sid": sid,
        "Effect": "Allow",
        "Action": one_or_many(actions.iter().map(|a| json!(a)).collect()),
        "Resource": one_or_many(resources.iter().map(|r| json!(r)).collect()),
    });
    let mut by_test: BTreeMap<&str, serde_json::Map<String, Json>> = BTreeMap::new();
    for (test, variable, values) in conditions {
        by_test.entry(test).or_default().insert(
            variable.clone(),
            one_or_many(values.iter().map(|v| json!(v)).collect()),
        );
    }
    if !by_test.is_empty() {
        st["Condition"] = json!(by_test);
    }
    st
}

/// The module's controller policy for `call`, given the names it refers to.
pub fn controller_policy(call: &ModuleCall, node_role_arn: &str, queue_arn: &str) -> Json {
    let c = call.cluster;
    let r = REGION;
    let a = ACCOUNT_ID;
    // v20's v0.33 statements leave the region of EC2 ARNs open; the later ones name it.
    let region = if call.version == Version::V20 && !call.enable_v1_permissions {
        "*"
    } else {
        r
    };
    let ec2 = |acct: &str, res: &str| format!("arn:aws:ec2:{region}:{acct}:{res}");
    let owned_req = format!("aws:RequestTag/kubernetes.io/cluster/{c}");
    let owned_res = format!("aws:ResourceTag/kubernetes.io/cluster/{c}");
    let profiles = if region == "*" {
        "*".to_string()
    } else {
        format!("arn:aws:iam::{a}:instance-profile/*")
    };
    let tagged = [
        "fleet/*",
        "instance/*",
        "volume/*",
        "network-interface/*",
        "launch-template/*",
        "spot-instances-request/*",
    ]
    .iter()
    .map(|res| ec2("*", res))
    .collect::<Vec<_>>();
    let mut create_access = vec![
        ec2("", "image/*"),
        ec2("", "snapshot/*"),
        ec2("*", "security-group/*"),
        ec2("*", "subnet/*"),
    ];
    let mut reads = vec![
        "ec2:DescribeAvailabilityZones",
        "ec2:DescribeImages",
        "ec2:DescribeInstances",
        "ec2:DescribeInstanceTypeOfferings",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeLaunchTemplates",
        "ec2:DescribeSecurityGroups",
        "ec2:DescribeSpotPriceHistory",
        "ec2:DescribeSubnets",
    ];
    let mut queue_actions = vec!["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"];
    let mut statements = Vec::new();
    if region == "*" {
        // v0.33: spot requests and launch templates among the launch resources.
        create_access.extend([
            ec2("*", "spot-instances-request/*"),
            ec2("*", "launch-template/*"),
        ]);
        queue_actions.insert(1, "sqs:GetQueueAttributes");
        statements.push(statement(
            "AllowScopedEC2InstanceActions",
            &["ec2:RunInstances", "ec2:CreateFleet"],
            &create_access,
            &[],
        ));
    } else {
        create_access.push(ec2("*", "capacity-reservation/*"));
        if call.version == Version::V21 {
            create_access.push(ec2("*", "placement-group/*"));
            reads.extend([
                "ec2:DescribeCapacityReservations",
                "ec2:DescribeInstanceStatus",
                "ec2:DescribePlacementGroups",
            ]);
        }
        statements.push(statement(
            "AllowScopedEC2InstanceAccessActions",
            &["ec2:RunInstances", "ec2:CreateFleet"],
            &create_access,
            &[],
        ));
        statements.push(statement(
            "AllowScopedEC2LaunchTemplateAccessActions",
            &["ec2:RunInstances", "ec2:CreateFleet"],
            &[ec2("*", "launch-template/*")],
            &[
                ("StringEquals", owned_res.clone(), &["owned"]),
                (
                    "StringLike",
                    "aws:ResourceTag/karpenter.sh/nodepool".into(),
                    &["*"],
                ),
            ],
        ));
    }
    statements.extend([
        statement(
            "AllowScopedEC2InstanceActionsWithTags",
            &["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
            &tagged,
            &[
                ("StringEquals", owned_req.clone(), &["owned"]),
                (
                    "StringLike",
                    "aws:RequestTag/karpenter.sh/nodepool".into(),
                    &["*"],
                ),
            ],
        ),
        statement(
            "AllowScopedResourceCreationTagging",
            &["ec2:CreateTags"],
            &tagged,
            &[
                ("StringEquals", owned_req.clone(), &["owned"]),
                (
                    "StringEquals",
                    "ec2:CreateAction".into(),
                    &["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                ),
                (
                    "StringLike",
                    "aws:RequestTag/karpenter.sh/nodepool".into(),
                    &["*"],
                ),
            ],
        ),
        statement(
            "AllowScopedResourceTagging",
            &["ec2:CreateTags"],
            &[ec2("*", "instance/*")],
            &[
                ("StringEquals", owned_res.clone(), &["owned"]),
                (
                    "StringLike",
                    "aws:ResourceTag/karpenter.sh/nodepool".into(),
                    &["*"],
                ),
            ],
        ),
        statement(
            "AllowScopedDeletion",
            &["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            &[ec2("*", "instance/*"), ec2("*", "launch-template/*")],
            &[
                ("StringEquals", owned_res.clone(), &["owned"]),
                (
                    "StringLike",
                    "aws:ResourceTag/karpenter.sh/nodepool".into(),
                    &["*"],
                ),
            ],
        ),
        statement(
            "AllowRegionalReadActions",
            &reads,
            &["*".into()],
            &[("StringEquals", "aws:RequestedRegion".into(), &[r])],
        ),
        statement(
            "AllowSSMReadActions",
            &["ssm:GetParameter"],
            &[format!("arn:aws:ssm:{r}::parameter/aws/service/*")],
            &[],
        ),
        statement(
            "AllowPricingReadActions",
            &["pricing:GetProducts"],
            &["*".into()],
            &[],
        ),
    ]);
    if call.version == Version::V21 {
        statements.push(statement(
            "AllowZonalShiftReadActions",
            &["arc-zonal-shift:GetManagedResource"],
            &[format!("arn:aws:eks:{r}:{a}:cluster/{c}")],
            &[],
        ));
    }
    statements.extend([
        statement(
            "AllowInterruptionQueueActions",
            &queue_actions,
            &[queue_arn.to_string()],
            &[],
        ),
        statement(
            "AllowPassingInstanceRole",
            &["iam:PassRole"],
            &[node_role_arn.to_string()],
            &[(
                "StringEquals",
                "iam:PassedToService".into(),
                &["ec2.amazonaws.com"],
            )],
        ),
        statement(
            "AllowScopedInstanceProfileCreationActions",
            &["iam:CreateInstanceProfile"],
            std::slice::from_ref(&profiles),
            &[
                ("StringEquals", owned_req.clone(), &["owned"]),
                (
                    "StringEquals",
                    "aws:RequestTag/topology.kubernetes.io/region".into(),
                    &[r],
                ),
            ],
        ),
        statement(
            "AllowScopedInstanceProfileTagActions",
            &["iam:TagInstanceProfile"],
            std::slice::from_ref(&profiles),
            &[
                ("StringEquals", owned_res.clone(), &["owned"]),
                ("StringEquals", owned_req.clone(), &["owned"]),
            ],
        ),
        statement(
            "AllowScopedInstanceProfileActions",
            &[
                "iam:AddRoleToInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
                "iam:DeleteInstanceProfile",
            ],
            std::slice::from_ref(&profiles),
            &[("StringEquals", owned_res, &["owned"])],
        ),
        statement(
            "AllowInstanceProfileReadActions",
            &["iam:GetInstanceProfile"],
            &[profiles],
            &[],
        ),
    ]);
    if call.version == Version::V21 {
        statements.push(statement(
            "AllowUnscopedInstanceProfileListAction",
            &["iam:ListInstanceProfiles"],
            &["*".into()],
            &[],
        ));
    }
    statements.push(statement(
        "AllowAPIServerEndpointDiscovery",
        &["eks:DescribeCluster"],
        &[format!("arn:aws:eks:{r}:{a}:cluster/{c}")],
        &[],
    ));
    json!({"Version": "2012-10-17", "Statement": statements})
}

/// The rules the module makes: its event key, the name part, the detail type and source.
fn module_events(version: Version) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    let mut events = vec![
        ("health_event", "HealthEvent", "AWS Health Event", "aws.health"),
        (
            "spot_interrupt",
            "SpotInterrupt",
            "EC2 Spot Instance Interruption Warning",
            "aws.ec2",
        ),
        (
            "instance_rebalance",
            "InstanceRebalance",
            "EC2 Instance Rebalance Recommendation",
            "aws.ec2",
        ),
        (
            "instance_state_change",
            "InstanceStateChange",
            "EC2 Instance State-change Notification",
            "aws.ec2",
        ),
    ];
    if version == Version::V21 {
        events.push((
            "capacity_reservation_interruption",
            "CRInterruption",
            "EC2 Capacity Reservation Instance Interruption Warning",
            "aws.ec2",
        ));
    }
    events
}

impl Aws {
    /// A customer managed policy (for `iam_role_policies` and the node role's additional
    /// policies), made before the module call.
    async fn extra_policy(&self, name: &str) -> String {
        let doc = json!({"Version": "2012-10-17", "Statement": [{"Sid": "Extra", "Effect": "Allow",
            "Action": "s3:GetObject", "Resource": format!("arn:aws:s3:::{name}/*")}]});
        self.iam
            .create_policy()
            .policy_name(name)
            .policy_document(doc.to_string())
            .send()
            .await
            .expect("CreatePolicy (extra)")
            .policy()
            .and_then(|p| p.arn())
            .expect("arn")
            .to_string()
    }

    /// Makes what `call` makes, call by call, plus what Karpenter's controller made.
    pub async fn apply_module(&self, call: &ModuleCall) -> Made {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let c = call.cluster;
        let tags = tag_map(&[&call.tags]);

        // The queue, its policy.
        let queue = call
            .queue_name
            .map_or_else(|| format!("Karpenter-{c}"), str::to_string);
        let queue_url = self
            .sqs
            .create_queue()
            .queue_name(&queue)
            .attributes(A::MessageRetentionPeriod, "300")
            .attributes(A::SqsManagedSseEnabled, "true")
            .set_tags((!tags.is_empty()).then(|| tags.clone().into_iter().collect()))
            .send()
            .await
            .expect("CreateQueue")
            .queue_url()
            .expect("url")
            .to_string();
        let queue_arn = format!("arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{queue}");
        let deny_test = if call.version == Version::V20 {
            "StringEquals"
        } else {
            "Bool"
        };
        let queue_policy = json!({"Version": "2012-10-17", "Statement": [
            {"Sid": "SqsWrite", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": queue_arn,
             "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}},
            {"Sid": "DenyHTTP", "Effect": "Deny", "Action": "sqs:*", "Resource": queue_arn, "Principal": "*",
             "Condition": {deny_test: {"aws:SecureTransport": "false"}}},
        ]});
        self.sqs
            .set_queue_attributes()
            .queue_url(&queue_url)
            .attributes(A::Policy, queue_policy.to_string())
            .send()
            .await
            .expect("SetQueueAttributes");

        // The rules, each with the queue as its target.
        let mut rule_tags = BTreeMap::from([("ClusterName".to_string(), c.to_string())]);
        rule_tags.extend(tags.clone());
        let mut rules = Vec::new();
        for (key, part, detail, source) in module_events(call.version) {
            let name = format!("{}{part}-{}", call.rule_name_prefix, suffix());
            let pattern = json!({"detail-type": [detail], "source": [source]});
            let mut put = self
                .events
                .put_rule()
                .name(&name)
                .description(format!("Karpenter interrupt - {}", detail.to_lowercase()))
                .event_pattern(pattern.to_string());
            for (k, v) in &rule_tags {
                put = put.tags(
                    aws_sdk_eventbridge::types::Tag::builder()
                        .key(k)
                        .value(v)
                        .build()
                        .expect("tag"),
                );
            }
            put.send().await.expect("PutRule");
            self.events
                .put_targets()
                .rule(&name)
                .targets(
                    aws_sdk_eventbridge::types::Target::builder()
                        .id("KarpenterInterruptionQueueTarget")
                        .arn(&queue_arn)
                        .build()
                        .expect("target"),
                )
                .send()
                .await
                .expect("PutTargets");
            rules.push((key, name));
        }

        // The node role and its policies.
        let node_base = call
            .node_iam_role_name
            .map_or_else(|| format!("Karpenter-{c}"), str::to_string);
        let node_role = if call.node_iam_role_use_name_prefix {
            format!("{node_base}-{}", suffix())
        } else {
            node_base.clone()
        };
        let node_tags = tag_map(&[&call.tags, &call.node_iam_role_tags]);
        let ec2_trust = json!({"Version": "2012-10-17", "Statement": [{"Sid": "EKSNodeAssumeRole", "Effect": "Allow",
            "Action": "sts:AssumeRole", "Principal": {"Service": "ec2.amazonaws.com"}}]});
        self.iam
            .create_role()
            .role_name(&node_role)
            .assume_role_policy_document(ec2_trust.to_string())
            .set_tags(Some(iam_tags(&node_tags)))
            .send()
            .await
            .expect("CreateRole node");
        let ecr = match call.version {
            Version::V20 => "AmazonEC2ContainerRegistryReadOnly",
            Version::V21 => "AmazonEC2ContainerRegistryPullOnly",
        };
        let mut node_policies: Vec<String> = ["AmazonEKSWorkerNodePolicy", ecr, "AmazonEKS_CNI_Policy"]
            .iter()
            .map(|p| format!("arn:aws:iam::aws:policy/{p}"))
            .collect();
        for extra in &call.node_iam_role_additional_policies {
            node_policies.push(self.extra_policy(extra).await);
        }
        for arn in &node_policies {
            self.iam
                .attach_role_policy()
                .role_name(&node_role)
                .policy_arn(arn)
                .send()
                .await
                .expect("attach node policy");
        }
        let node_role_arn = format!("arn:aws:iam::{ACCOUNT_ID}:role/{node_role}");
        let module_profile = if call.create_instance_profile {
            let name = if call.node_iam_role_use_name_prefix {
                format!("{node_base}-{}", suffix())
            } else {
                node_base.clone()
            };
            self.iam
                .create_instance_profile()
                .instance_profile_name(&name)
                .set_tags(Some(iam_tags(&node_tags)))
                .send()
                .await
                .expect("CreateInstanceProfile (module)");
            self.iam
                .add_role_to_instance_profile()
                .instance_profile_name(&name)
                .role_name(&node_role)
                .send()
                .await
                .expect("AddRoleToInstanceProfile (module)");
            Some(name)
        } else {
            None
        };

        // The controller role: its trust, its policy.
        let mut trust = Vec::new();
        if !call.irsa_service_accounts.is_empty() {
            self.iam
                .create_open_id_connect_provider()
                .url(format!("https://{}", call.oidc_issuer()))
                .client_id_list("sts.amazonaws.com")
                .send()
                .await
                .expect("CreateOpenIDConnectProvider");
            let subjects: Vec<Json> = call
                .irsa_service_accounts
                .iter()
                .map(|sa| json!(format!("system:serviceaccount:{sa}")))
                .collect();
            let sub = if subjects.len() == 1 {
                subjects[0].clone()
            } else {
                Json::Array(subjects)
            };
            let issuer = call.oidc_issuer();
            let mut irsa = json!({"Effect": "Allow", "Action": "sts:AssumeRoleWithWebIdentity",
                "Principal": {"Federated": call.oidc_provider_arn()},
                "Condition": {"StringEquals": {format!("{issuer}:sub"): sub, format!("{issuer}:aud"): "sts.amazonaws.com"}}});
            if call.version == Version::V21 {
                // Passed in iam_role_source_assume_policy_documents, with an id of the user's.
                irsa["Sid"] = json!("IRSA");
            }
            trust.push(irsa);
        }
        let pod_identity = json!({"Effect": "Allow", "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Principal": {"Service": "pods.eks.amazonaws.com"}});
        match call.version {
            Version::V20 if call.enable_pod_identity => trust.insert(0, pod_identity),
            Version::V20 => {}
            Version::V21 => {
                let mut st = pod_identity;
                st["Sid"] = json!("PodIdentity");
                trust.push(st);
            }
        }
        let controller_role = if call.iam_role_use_name_prefix {
            format!("{}-{}", call.iam_role_name, suffix())
        } else {
            call.iam_role_name.to_string()
        };
        let role_tags = tag_map(&[&call.tags, &call.iam_role_tags]);
        self.iam
            .create_role()
            .role_name(&controller_role)
            .description("Karpenter controller IAM role")
            .assume_role_policy_document(json!({"Version": "2012-10-17", "Statement": trust}).to_string())
            .set_tags(Some(iam_tags(&role_tags)))
            .send()
            .await
            .expect("CreateRole controller");
        let policy = controller_policy(call, &node_role_arn, &queue_arn).to_string();
        let policy_name = format!("KarpenterController-{}", suffix());
        let (controller_policy_arn, controller_inline_policy) = if call.enable_inline_policy {
            self.iam
                .put_role_policy()
                .role_name(&controller_role)
                .policy_name(&policy_name)
                .policy_document(&policy)
                .send()
                .await
                .expect("PutRolePolicy (module)");
            (None, Some(policy_name))
        } else {
            let arn = self
                .iam
                .create_policy()
                .policy_name(&policy_name)
                .description("Karpenter controller IAM policy")
                .policy_document(&policy)
                .set_tags(Some(iam_tags(&tags)))
                .send()
                .await
                .expect("CreatePolicy (module)")
                .policy()
                .and_then(|p| p.arn())
                .expect("arn")
                .to_string();
            self.iam
                .attach_role_policy()
                .role_name(&controller_role)
                .policy_arn(&arn)
                .send()
                .await
                .expect("attach controller policy");
            (Some(arn), None)
        };
        let mut controller_extra_arns = Vec::new();
        for extra in &call.iam_role_policies {
            let arn = self.extra_policy(extra).await;
            self.iam
                .attach_role_policy()
                .role_name(&controller_role)
                .policy_arn(&arn)
                .send()
                .await
                .expect("attach iam_role_policies");
            controller_extra_arns.push(arn);
        }

        // What Karpenter's controller made: the nodes' instance profile, a message.
        let karpenter_profile = format!("{c}_1234567890123456789");
        let karpenter_tags = BTreeMap::from([
            (format!("kubernetes.io/cluster/{c}"), "owned".to_string()),
            ("eks:eks-cluster-name".to_string(), c.to_string()),
            (
                "karpenter.k8s.aws/ec2nodeclass".to_string(),
                "default".to_string(),
            ),
            ("topology.kubernetes.io/region".to_string(), REGION.to_string()),
        ]);
        self.iam
            .create_instance_profile()
            .instance_profile_name(&karpenter_profile)
            .path(format!("/karpenter/{REGION}/{c}/0b1c2d3e/"))
            .set_tags(Some(iam_tags(&karpenter_tags)))
            .send()
            .await
            .expect("CreateInstanceProfile (Karpenter)");
        self.iam
            .add_role_to_instance_profile()
            .instance_profile_name(&karpenter_profile)
            .role_name(&node_role)
            .send()
            .await
            .expect("AddRoleToInstanceProfile (Karpenter)");
        self.sqs
            .send_message()
            .queue_url(&queue_url)
            .message_body("{\"detail-type\":\"EC2 Spot Instance Interruption Warning\"}")
            .send()
            .await
            .expect("SendMessage");

        Made {
            call: call.clone(),
            controller_role,
            controller_policy_arn,
            controller_inline_policy,
            controller_extra_arns,
            node_role,
            queue,
            queue_url,
            queue_arn,
            rules,
            module_profile,
            karpenter_profile,
        }
    }
}
