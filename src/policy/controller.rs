//! The Karpenter v1 controller's IAM permissions, scoped to one cluster: the reference
//! statements of the Karpenter release the inputs name ([`super::releases`]: its getting-started
//! CloudFormation template's managed policies, grouped the same way), with the template's
//! placeholders filled in. They are scoped as upstream scopes them: EC2 writes only on
//! resources tagged for this cluster and a node pool, instance-profile writes only on profiles
//! tagged for this cluster, region and a node class, `iam:PassRole` only for the node role, SQS
//! only on the interruption queue, EKS only on this cluster.

use super::releases::Release;
use super::{Condition, PolicyDocument, Statement};

/// What the policy is scoped to, and which release's policy it is.
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
    /// The Karpenter release whose reference policy is rendered (`karpenter_version`).
    pub release: &'static Release,
}

/// A named group of statements: one managed policy in the upstream reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyGroup {
    pub name: &'static str,
    pub statements: Vec<Statement>,
}

/// The placeholder that stands for the interruption queue's ARN.
const QUEUE: &str = "${KarpenterInterruptionQueue.Arn}";

/// `template` with its placeholders filled in; None when it names the queue and there is none.
fn fill(template: &str, i: &ControllerPolicyInputs) -> Option<String> {
    let queue = if template.contains(QUEUE) {
        i.interruption_queue_arn.as_deref()?
    } else {
        ""
    };
    Some(
        template
            .replace("${AWS::Partition}", &i.partition)
            .replace("${AWS::Region}", &i.region)
            .replace("${AWS::AccountId}", &i.account_id)
            .replace("${ClusterName}", &i.cluster_name)
            .replace("${KarpenterNodeRole.Arn}", &i.node_role_arn)
            .replace(QUEUE, queue),
    )
}

/// The groups in upstream order; a group left without statements (the interruption policy
/// without a queue) is left out.
pub fn policy_groups(inputs: &ControllerPolicyInputs) -> Vec<PolicyGroup> {
    inputs
        .release
        .groups
        .iter()
        .filter_map(|g| {
            let statements: Vec<Statement> = g
                .statements
                .iter()
                .filter_map(|s| {
                    let resources = s
                        .resources
                        .iter()
                        .map(|r| fill(r, inputs))
                        .collect::<Option<Vec<String>>>()?;
                    let conditions = s
                        .conditions
                        .iter()
                        .map(|c| {
                            Some(Condition {
                                test: c.test,
                                variable: fill(c.key, inputs)?,
                                values: c
                                    .values
                                    .iter()
                                    .map(|v| fill(v, inputs))
                                    .collect::<Option<Vec<String>>>()?,
                            })
                        })
                        .collect::<Option<Vec<Condition>>>()?;
                    Some(Statement {
                        sid: s.sid,
                        effect: s.effect,
                        actions: s.actions.to_vec(),
                        resources,
                        conditions,
                    })
                })
                .collect();
            (!statements.is_empty()).then_some(PolicyGroup {
                name: g.name,
                statements,
            })
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use serde_json::Value as Json;

    use super::{ControllerPolicyInputs, PolicyGroup, policy_document, policy_groups};
    use crate::policy::equivalence::normal_statements;
    use crate::policy::releases::{RELEASES, Release, newest, release};
    use crate::policy::{PolicyDocument, equivalence};

    fn inputs() -> ControllerPolicyInputs {
        ControllerPolicyInputs {
            cluster_name: "demo".into(),
            partition: "aws".into(),
            region: "eu-west-1".into(),
            account_id: "111122223333".into(),
            node_role_arn: "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo".into(),
            interruption_queue_arn: Some("arn:aws:sqs:eu-west-1:111122223333:demo".into()),
            release: newest(),
        }
    }

    fn of(version: &str) -> ControllerPolicyInputs {
        ControllerPolicyInputs {
            release: release(version).expect("a known release"),
            ..inputs()
        }
    }

    fn document(i: &ControllerPolicyInputs) -> Json {
        serde_json::from_str(&policy_document(i).to_json()).expect("json")
    }

    fn statement<'a>(doc: &'a Json, sid: &str) -> &'a Json {
        doc["Statement"]
            .as_array()
            .and_then(|s| s.iter().find(|st| st["Sid"] == sid))
            .unwrap_or_else(|| panic!("no {sid}"))
    }

    fn has(doc: &Json, sid: &str) -> bool {
        doc["Statement"]
            .as_array()
            .is_some_and(|s| s.iter().any(|st| st["Sid"] == sid))
    }

    fn actions(doc: &Json, sid: &str) -> Vec<String> {
        equivalence::values_of(statement(doc, sid).get("Action"))
    }

    fn resources(doc: &Json, sid: &str) -> Vec<String> {
        equivalence::values_of(statement(doc, sid).get("Resource"))
    }

    fn groups(version: &str) -> Vec<&'static str> {
        policy_groups(&of(version)).iter().map(|g| g.name).collect()
    }

    #[test]
    fn has_every_upstream_statement_once() {
        let doc = document(&inputs());
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
        let doc = document(&inputs());
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
        for r in RELEASES {
            let mut i = inputs();
            i.release = r;
            i.interruption_queue_arn = None;
            i.partition = "aws-cn".into();
            i.region = "cn-north-1".into();
            i.node_role_arn = "arn:aws-cn:iam::111122223333:role/KarpenterNodeRole-demo".into();
            let json = policy_document(&i).to_json();
            assert!(!json.contains("AllowInterruptionQueueActions"), "{}", r.version);
            assert!(
                !json.contains("arn:aws:"),
                "{}: every ARN uses the partition: {json}",
                r.version
            );
            assert!(
                !json.contains("${"),
                "{}: a placeholder is left: {json}",
                r.version
            );
            assert!(json.contains("arn:aws-cn:ec2:cn-north-1:*:instance/*"));
            assert!(!policy_groups(&i).iter().any(|g| g.name == "Interruption"));
        }
    }

    #[test]
    fn every_group_of_v1_9_and_later_fits_a_managed_policy() {
        // From v1.9 the reference splits the policy so each part fits IAM's limit; the one
        // policy of v1.0–v1.8 is checked at plan time (`check_sizes`).
        for r in RELEASES.iter().filter(|r| (r.major, r.minor) >= (1, 9)) {
            for group in policy_groups(&ControllerPolicyInputs {
                release: r,
                ..inputs()
            }) {
                let json = PolicyDocument {
                    statements: group.statements,
                }
                .to_json();
                assert!(
                    json.len() < 6144,
                    "{} {} is {} characters",
                    r.version,
                    group.name,
                    json.len()
                );
            }
        }
    }

    /// The versions users write name their minor; others say what to write.
    #[test]
    fn versions_name_their_minor() {
        for spelling in ["v1.15", "1.15", "v1.15.1", "1.15.0"] {
            assert_eq!(release(spelling).map(|r| r.version), Ok("v1.15"), "{spelling}");
        }
        assert_eq!(release("v1.9").map(|r| r.version), Ok("v1.9"));
        let unknown = release("v1.16").expect_err("unknown").to_string();
        assert!(
            unknown.contains("v1.0, v1.1, v1.2") && unknown.contains("v1.15"),
            "{unknown}"
        );
        for bad in ["latest", "v1", "1.x", "v1.15.1.2", "", "v1..2"] {
            let e = release(bad).expect_err(bad).to_string();
            assert!(e.contains("v<major>.<minor>"), "{bad}: {e}");
        }
        assert_eq!(newest().version, "v1.15");
        let versions: Vec<&str> = RELEASES.iter().map(|r| r.version).collect();
        assert_eq!(versions.len(), 16, "v1.0 to v1.15: {versions:?}");
        assert!(
            RELEASES
                .windows(2)
                .all(|w| (w[0].major, w[0].minor) < (w[1].major, w[1].minor))
        );
    }

    /// The template of `cloudformation.yaml` (`../shared`: v1.14's) with our inputs in place of
    /// its placeholders: each managed policy's document, by logical ID.
    fn shared_template_policies(i: &ControllerPolicyInputs) -> Vec<(String, Json)> {
        let path = kube_testserver::upstream::path("reference/cloudformation.yaml");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let template: Json = serde_saphyr::from_str(&text).expect("YAML");
        let mut out = Vec::new();
        for (id, resource) in template["Resources"].as_object().expect("Resources") {
            if resource["Type"] != "AWS::IAM::ManagedPolicy" {
                continue;
            }
            let document = resource["Properties"]["PolicyDocument"]
                .as_str()
                .expect("a !Sub JSON document")
                .replace("${AWS::Partition}", &i.partition)
                .replace("${AWS::Region}", &i.region)
                .replace("${AWS::AccountId}", &i.account_id)
                .replace("${ClusterName}", &i.cluster_name)
                .replace("${KarpenterNodeRole.Arn}", &i.node_role_arn)
                .replace(
                    "${KarpenterInterruptionQueue.Arn}",
                    i.interruption_queue_arn.as_deref().unwrap_or_default(),
                );
            out.push((id.clone(), serde_json::from_str(&document).expect("JSON")));
        }
        out
    }

    /// v1.14's policy is the reference template's, policy by policy: the same statements (Sid
    /// included) in each managed policy.
    #[test]
    fn v1_14_is_the_reference_cloudformation_template() {
        let i = of("v1.14");
        let ours: Vec<PolicyGroup> = policy_groups(&i);
        let theirs = shared_template_policies(&i);
        assert_eq!(ours.len(), theirs.len());
        for (id, doc) in theirs {
            let name = id.trim_end_matches("Policy");
            let group = ours
                .iter()
                .find(|g| g.name == name)
                .unwrap_or_else(|| panic!("no group {name}"));
            let ours: Json = serde_json::from_str(
                &PolicyDocument {
                    statements: group.statements.clone(),
                }
                .to_json(),
            )
            .expect("json");
            assert!(equivalence::equivalent(&ours, &doc), "{id} differs");
            let sids = |d: &Json| -> Vec<String> {
                let mut s: Vec<String> = d["Statement"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|st| st["Sid"].as_str().map(str::to_string))
                    .collect();
                s.sort();
                s
            };
            assert_eq!(sids(&ours), sids(&doc), "{id}");
        }
        // v1.13 has the same template (research: one blob for both minors).
        assert_eq!(
            normal_statements(&document(&of("v1.13"))),
            normal_statements(&document(&i))
        );
    }

    /// What each minor changed, as Karpenter's templates at the release tags say (written here
    /// as facts: the earlier templates are not beside the repository, so their data is checked
    /// by what it must show).
    #[test]
    fn each_minor_has_its_documented_changes() {
        let doc = |v: &str| document(&of(v));
        let (v10, v11) = (doc("v1.0"), doc("v1.1"));
        assert!(actions(&v10, "AllowRegionalReadActions").contains(&"ec2:DescribeAvailabilityZones".into()));
        assert!(!actions(&v11, "AllowRegionalReadActions").contains(&"ec2:DescribeAvailabilityZones".into()));
        let passed = |d: &Json| {
            equivalence::values_of(
                statement(d, "AllowPassingInstanceRole")
                    .pointer("/Condition/StringEquals/iam:PassedToService"),
            )
        };
        assert_eq!(passed(&v10), ["ec2.amazonaws.com"]);
        assert_eq!(passed(&v11), ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]);
        assert_eq!(normal_statements(&v11), normal_statements(&doc("v1.2")));
        let reservation = "arn:aws:ec2:eu-west-1:*:capacity-reservation/*".to_string();
        let v13 = doc("v1.3");
        assert!(!resources(&doc("v1.2"), "AllowScopedEC2InstanceAccessActions").contains(&reservation));
        assert!(resources(&v13, "AllowScopedEC2InstanceAccessActions").contains(&reservation));
        assert!(resources(&v13, "AllowScopedEC2InstanceActionsWithTags").contains(&reservation));
        assert!(
            actions(&v13, "AllowRegionalReadActions").contains(&"ec2:DescribeCapacityReservations".into())
        );
        for v in ["v1.4", "v1.5", "v1.6"] {
            assert_eq!(normal_statements(&v13), normal_statements(&doc(v)), "{v}");
        }
        assert!(!has(&doc("v1.6"), "AllowUnscopedInstanceProfileListAction"));
        let v17 = doc("v1.7");
        assert_eq!(
            actions(&v17, "AllowUnscopedInstanceProfileListAction"),
            ["iam:ListInstanceProfiles"]
        );
        assert_eq!(normal_statements(&v17), normal_statements(&doc("v1.8")));
        for v in ["v1.0", "v1.8"] {
            assert_eq!(groups(v), ["Controller"], "{v}: one managed policy");
        }
        assert_eq!(
            groups("v1.9"),
            [
                "NodeLifecycle",
                "IAMIntegration",
                "EKSIntegration",
                "Interruption",
                "ResourceDiscovery"
            ]
        );
        let v19 = doc("v1.9");
        assert!(!resources(&v19, "AllowScopedEC2InstanceActionsWithTags").contains(&reservation));
        assert!(resources(&v19, "AllowScopedEC2InstanceAccessActions").contains(&reservation));
        assert_eq!(normal_statements(&v19), normal_statements(&doc("v1.10")));
        let v111 = doc("v1.11");
        assert!(
            resources(&v111, "AllowScopedEC2InstanceAccessActions")
                .contains(&"arn:aws:ec2:eu-west-1:*:placement-group/*".into())
        );
        assert!(actions(&v111, "AllowRegionalReadActions").contains(&"ec2:DescribePlacementGroups".into()));
        let v112 = doc("v1.12");
        assert!(groups("v1.12").contains(&"ZonalShift"));
        assert_eq!(
            statement(&v112, "AllowZonalShiftStatusReadOnly")["Resource"],
            "arn:aws:eks:eu-west-1:111122223333:cluster/demo"
        );
        assert_eq!(
            actions(&v112, "AllowUnscopedEC2DescribeInstanceStatus"),
            ["ec2:DescribeInstanceStatus"]
        );
        let v113 = doc("v1.13");
        assert!(!has(&v113, "AllowUnscopedEC2DescribeInstanceStatus"));
        assert!(actions(&v113, "AllowRegionalReadActions").contains(&"ec2:DescribeInstanceStatus".into()));
        let zonal = statement(&v113, "AllowZonalShiftStatusReadOnly");
        assert_eq!(zonal["Resource"], "*");
        assert_eq!(
            zonal["Condition"]["StringEquals"]["arc-zonal-shift:ResourceIdentifier"],
            "arn:aws:eks:eu-west-1:111122223333:cluster/demo"
        );
        // v1.15: node repair may reboot (RebootForRepair), on the instances it may terminate.
        let (v114, v115) = (doc("v1.14"), doc("v1.15"));
        assert_eq!(
            actions(&v115, "AllowScopedDeletion"),
            [
                "ec2:TerminateInstances",
                "ec2:RebootInstances",
                "ec2:DeleteLaunchTemplate"
            ]
        );
        let mut deletion = statement(&v115, "AllowScopedDeletion").clone();
        deletion["Action"] = statement(&v114, "AllowScopedDeletion")["Action"].clone();
        assert_eq!(&deletion, statement(&v114, "AllowScopedDeletion"));
        let without = |d: &Json| -> Vec<Json> {
            d["Statement"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|s| s["Sid"] != "AllowScopedDeletion")
                .cloned()
                .collect()
        };
        assert_eq!(without(&v114), without(&v115));
        assert_eq!(release("v1.15").map(|r| r.derived_from), Ok(Some("v1.14")));
        assert!(
            RELEASES
                .iter()
                .filter(|r| r.version != "v1.15")
                .all(|r: &Release| r.derived_from.is_none())
        );
    }
}
