//! The Karpenter v1 controller's IAM permissions, scoped to one cluster.
//!
//! These are the statements of Karpenter's getting-started CloudFormation reference (v1.14),
//! grouped the way it groups them into managed policies, and scoped the same way: EC2 writes
//! only on resources tagged for this cluster and a node pool, instance-profile writes only on
//! profiles tagged for this cluster, region and a node class, `iam:PassRole` only for the node
//! role, SQS only on the interruption queue, EKS only on this cluster.

use super::{PolicyDocument, Statement};

/// What the policy is scoped to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerPolicyInputs {
    pub cluster_name: String,
    pub partition: String,
    pub region: String,
    pub account_id: String,
    pub node_role_arn: String,
    /// Without a queue, the interruption statement is left out (Karpenter then runs without
    /// interruption handling).
    pub interruption_queue_arn: Option<String>,
}

/// A named group of statements: one managed policy in the upstream reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyGroup {
    pub name: &'static str,
    pub statements: Vec<Statement>,
}

/// The groups in upstream order.
pub fn policy_groups(inputs: &ControllerPolicyInputs) -> Vec<PolicyGroup> {
    let mut groups = vec![
        PolicyGroup {
            name: "NodeLifecycle",
            statements: node_lifecycle(inputs),
        },
        PolicyGroup {
            name: "IAMIntegration",
            statements: iam_integration(inputs),
        },
        PolicyGroup {
            name: "EKSIntegration",
            statements: vec![eks_integration(inputs)],
        },
    ];
    if let Some(queue) = &inputs.interruption_queue_arn {
        groups.push(PolicyGroup {
            name: "Interruption",
            statements: vec![Statement::allow(
                "AllowInterruptionQueueActions",
                &["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
                vec![queue.clone()],
            )],
        });
    }
    groups.push(PolicyGroup {
        name: "ZonalShift",
        statements: vec![zonal_shift(inputs)],
    });
    groups.push(PolicyGroup {
        name: "ResourceDiscovery",
        statements: resource_discovery(inputs),
    });
    groups
}

/// All statements as one document.
pub fn policy_document(inputs: &ControllerPolicyInputs) -> PolicyDocument {
    PolicyDocument {
        statements: policy_groups(inputs)
            .into_iter()
            .flat_map(|g| g.statements)
            .collect(),
    }
}

const CREATE_ACTIONS: &[&str] = &["ec2:RunInstances", "ec2:CreateFleet"];
const NODEPOOL_TAG: &str = "karpenter.sh/nodepool";
const NODECLASS_TAG: &str = "karpenter.k8s.aws/ec2nodeclass";

fn ec2(i: &ControllerPolicyInputs, account: &str, resource: &str) -> String {
    format!("arn:{}:ec2:{}:{account}:{resource}", i.partition, i.region)
}

fn instance_profiles(i: &ControllerPolicyInputs) -> String {
    format!("arn:{}:iam::{}:instance-profile/*", i.partition, i.account_id)
}

fn cluster_arn(i: &ControllerPolicyInputs) -> String {
    format!(
        "arn:{}:eks:{}:{}:cluster/{}",
        i.partition, i.region, i.account_id, i.cluster_name
    )
}

fn owned_tag(kind: &str, i: &ControllerPolicyInputs) -> String {
    format!("aws:{kind}/kubernetes.io/cluster/{}", i.cluster_name)
}

fn node_lifecycle(i: &ControllerPolicyInputs) -> Vec<Statement> {
    let cluster = i.cluster_name.as_str();
    let tagged_on_create: Vec<String> = [
        "fleet/*",
        "instance/*",
        "volume/*",
        "network-interface/*",
        "launch-template/*",
        "spot-instances-request/*",
    ]
    .iter()
    .map(|r| ec2(i, "*", r))
    .collect();
    vec![
        Statement::allow(
            "AllowScopedEC2InstanceAccessActions",
            CREATE_ACTIONS,
            vec![
                ec2(i, "", "image/*"),
                ec2(i, "", "snapshot/*"),
                ec2(i, "*", "security-group/*"),
                ec2(i, "*", "subnet/*"),
                ec2(i, "*", "capacity-reservation/*"),
                ec2(i, "*", "placement-group/*"),
            ],
        ),
        Statement::allow(
            "AllowScopedEC2LaunchTemplateAccessActions",
            CREATE_ACTIONS,
            vec![ec2(i, "*", "launch-template/*")],
        )
        .when("StringEquals", owned_tag("ResourceTag", i), &["owned"])
        .when("StringLike", format!("aws:ResourceTag/{NODEPOOL_TAG}"), &["*"]),
        Statement::allow(
            "AllowScopedEC2InstanceActionsWithTags",
            &["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
            tagged_on_create.clone(),
        )
        .when("StringEquals", owned_tag("RequestTag", i), &["owned"])
        .when("StringEquals", "aws:RequestTag/eks:eks-cluster-name", &[cluster])
        .when("StringLike", format!("aws:RequestTag/{NODEPOOL_TAG}"), &["*"]),
        Statement::allow(
            "AllowScopedResourceCreationTagging",
            &["ec2:CreateTags"],
            tagged_on_create,
        )
        .when("StringEquals", owned_tag("RequestTag", i), &["owned"])
        .when("StringEquals", "aws:RequestTag/eks:eks-cluster-name", &[cluster])
        .when(
            "StringEquals",
            "ec2:CreateAction",
            &["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
        )
        .when("StringLike", format!("aws:RequestTag/{NODEPOOL_TAG}"), &["*"]),
        Statement::allow(
            "AllowScopedResourceTagging",
            &["ec2:CreateTags"],
            vec![ec2(i, "*", "instance/*")],
        )
        .when("StringEquals", owned_tag("ResourceTag", i), &["owned"])
        .when("StringLike", format!("aws:ResourceTag/{NODEPOOL_TAG}"), &["*"])
        .when(
            "StringEqualsIfExists",
            "aws:RequestTag/eks:eks-cluster-name",
            &[cluster],
        )
        .when(
            "ForAllValues:StringEquals",
            "aws:TagKeys",
            &["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"],
        ),
        Statement::allow(
            "AllowScopedDeletion",
            &["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            vec![ec2(i, "*", "instance/*"), ec2(i, "*", "launch-template/*")],
        )
        .when("StringEquals", owned_tag("ResourceTag", i), &["owned"])
        .when("StringLike", format!("aws:ResourceTag/{NODEPOOL_TAG}"), &["*"]),
    ]
}

fn iam_integration(i: &ControllerPolicyInputs) -> Vec<Statement> {
    let cluster = i.cluster_name.as_str();
    let region = i.region.as_str();
    vec![
        Statement::allow(
            "AllowPassingInstanceRole",
            &["iam:PassRole"],
            vec![i.node_role_arn.clone()],
        )
        .when(
            "StringEquals",
            "iam:PassedToService",
            &["ec2.amazonaws.com", "ec2.amazonaws.com.cn"],
        ),
        Statement::allow(
            "AllowScopedInstanceProfileCreationActions",
            &["iam:CreateInstanceProfile"],
            vec![instance_profiles(i)],
        )
        .when("StringEquals", owned_tag("RequestTag", i), &["owned"])
        .when("StringEquals", "aws:RequestTag/eks:eks-cluster-name", &[cluster])
        .when(
            "StringEquals",
            "aws:RequestTag/topology.kubernetes.io/region",
            &[region],
        )
        .when("StringLike", format!("aws:RequestTag/{NODECLASS_TAG}"), &["*"]),
        Statement::allow(
            "AllowScopedInstanceProfileTagActions",
            &["iam:TagInstanceProfile"],
            vec![instance_profiles(i)],
        )
        .when("StringEquals", owned_tag("ResourceTag", i), &["owned"])
        .when(
            "StringEquals",
            "aws:ResourceTag/topology.kubernetes.io/region",
            &[region],
        )
        .when("StringEquals", owned_tag("RequestTag", i), &["owned"])
        .when("StringEquals", "aws:RequestTag/eks:eks-cluster-name", &[cluster])
        .when(
            "StringEquals",
            "aws:RequestTag/topology.kubernetes.io/region",
            &[region],
        )
        .when("StringLike", format!("aws:ResourceTag/{NODECLASS_TAG}"), &["*"])
        .when("StringLike", format!("aws:RequestTag/{NODECLASS_TAG}"), &["*"]),
        Statement::allow(
            "AllowScopedInstanceProfileActions",
            &[
                "iam:AddRoleToInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
                "iam:DeleteInstanceProfile",
            ],
            vec![instance_profiles(i)],
        )
        .when("StringEquals", owned_tag("ResourceTag", i), &["owned"])
        .when(
            "StringEquals",
            "aws:ResourceTag/topology.kubernetes.io/region",
            &[region],
        )
        .when("StringLike", format!("aws:ResourceTag/{NODECLASS_TAG}"), &["*"]),
    ]
}

fn eks_integration(i: &ControllerPolicyInputs) -> Statement {
    Statement::allow(
        "AllowAPIServerEndpointDiscovery",
        &["eks:DescribeCluster"],
        vec![cluster_arn(i)],
    )
}

fn zonal_shift(i: &ControllerPolicyInputs) -> Statement {
    Statement::allow(
        "AllowZonalShiftStatusReadOnly",
        &["arc-zonal-shift:GetManagedResource"],
        vec!["*".into()],
    )
    .when(
        "StringEquals",
        "arc-zonal-shift:ResourceIdentifier",
        &[cluster_arn(i).as_str()],
    )
}

fn resource_discovery(i: &ControllerPolicyInputs) -> Vec<Statement> {
    vec![
        Statement::allow(
            "AllowRegionalReadActions",
            &[
                "ec2:DescribeCapacityReservations",
                "ec2:DescribeImages",
                "ec2:DescribeInstances",
                "ec2:DescribeInstanceStatus",
                "ec2:DescribeInstanceTypeOfferings",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplates",
                "ec2:DescribePlacementGroups",
                "ec2:DescribeSecurityGroups",
                "ec2:DescribeSpotPriceHistory",
                "ec2:DescribeSubnets",
            ],
            vec!["*".into()],
        )
        .when("StringEquals", "aws:RequestedRegion", &[i.region.as_str()]),
        Statement::allow(
            "AllowSSMReadActions",
            &["ssm:GetParameter"],
            vec![format!(
                "arn:{}:ssm:{}::parameter/aws/service/*",
                i.partition, i.region
            )],
        ),
        Statement::allow(
            "AllowPricingReadActions",
            &["pricing:GetProducts"],
            vec!["*".into()],
        ),
        Statement::allow(
            "AllowUnscopedInstanceProfileListAction",
            &["iam:ListInstanceProfiles"],
            vec!["*".into()],
        ),
        Statement::allow(
            "AllowInstanceProfileReadActions",
            &["iam:GetInstanceProfile"],
            vec![instance_profiles(i)],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;

    fn inputs() -> ControllerPolicyInputs {
        ControllerPolicyInputs {
            cluster_name: "demo".into(),
            partition: "aws".into(),
            region: "eu-west-1".into(),
            account_id: "111122223333".into(),
            node_role_arn: "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo".into(),
            interruption_queue_arn: Some("arn:aws:sqs:eu-west-1:111122223333:demo".into()),
        }
    }

    fn statement<'a>(doc: &'a Json, sid: &str) -> &'a Json {
        doc["Statement"]
            .as_array()
            .and_then(|s| s.iter().find(|st| st["Sid"] == sid))
            .unwrap_or_else(|| panic!("no {sid}"))
    }

    #[test]
    fn has_every_upstream_statement_once() {
        let doc: Json = serde_json::from_str(&policy_document(&inputs()).to_json()).expect("json");
        let sids: Vec<&str> = doc["Statement"]
            .as_array()
            .expect("array")
            .iter()
            .filter_map(|s| s["Sid"].as_str())
            .collect();
        assert_eq!(sids.len(), 18, "{sids:?}");
        let mut unique = sids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), sids.len());
    }

    #[test]
    fn statements_are_scoped_to_the_cluster_region_and_account() {
        let doc: Json = serde_json::from_str(&policy_document(&inputs()).to_json()).expect("json");
        let pass = statement(&doc, "AllowPassingInstanceRole");
        assert_eq!(
            pass["Resource"],
            "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
        );
        let delete = statement(&doc, "AllowScopedDeletion");
        assert_eq!(
            delete["Condition"]["StringEquals"]["aws:ResourceTag/kubernetes.io/cluster/demo"],
            "owned"
        );
        assert_eq!(delete["Resource"][0], "arn:aws:ec2:eu-west-1:*:instance/*");
        let images = statement(&doc, "AllowScopedEC2InstanceAccessActions");
        assert_eq!(images["Resource"][0], "arn:aws:ec2:eu-west-1::image/*");
        let eks = statement(&doc, "AllowAPIServerEndpointDiscovery");
        assert_eq!(eks["Resource"], "arn:aws:eks:eu-west-1:111122223333:cluster/demo");
        let read = statement(&doc, "AllowRegionalReadActions");
        assert_eq!(
            read["Condition"]["StringEquals"]["aws:RequestedRegion"],
            "eu-west-1"
        );
        let sqs = statement(&doc, "AllowInterruptionQueueActions");
        assert_eq!(sqs["Resource"], "arn:aws:sqs:eu-west-1:111122223333:demo");
        let tag = statement(&doc, "AllowScopedResourceTagging");
        assert_eq!(
            tag["Condition"]["ForAllValues:StringEquals"]["aws:TagKeys"]
                .as_array()
                .map(Vec::len),
            Some(3)
        );
    }

    #[test]
    fn no_queue_no_interruption_statement_and_partition_is_used() {
        let mut i = inputs();
        i.interruption_queue_arn = None;
        i.partition = "aws-cn".into();
        i.region = "cn-north-1".into();
        i.node_role_arn = "arn:aws-cn:iam::111122223333:role/KarpenterNodeRole-demo".into();
        let json = policy_document(&i).to_json();
        assert!(!json.contains("AllowInterruptionQueueActions"));
        assert!(!json.contains("arn:aws:"), "every ARN uses the partition: {json}");
        assert!(json.contains("arn:aws-cn:ec2:cn-north-1:*:instance/*"));
    }

    #[test]
    fn every_group_fits_a_managed_policy() {
        for group in policy_groups(&inputs()) {
            let json = PolicyDocument {
                statements: group.statements,
            }
            .to_json();
            assert!(json.len() < 6144, "{} is {} characters", group.name, json.len());
        }
    }
}
