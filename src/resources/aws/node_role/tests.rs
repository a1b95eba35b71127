use std::collections::BTreeMap;

use super::model::{desired, state};
use super::schema::{
    ECR_POLICIES, EKS_AUTO_MODE, KARPENTER, SCHEMA, node_policies, policies_for, trust_policy,
};
use super::*;
use crate::aws::iam::{ProfileInfo, RoleInfo};
use crate::resources::aws::iam_role::Actual;
use crate::terraform::framework::plan::plan;
use crate::terraform::framework::schema::validate_attributes;
use crate::terraform::framework::upgrade::upgrade_state;
use crate::terraform::framework::values::string_list;
use crate::terraform::tfvalue::AttributePath;
use crate::terraform::tfvalue::json;

fn config(pairs: Vec<(&str, Value)>) -> Value {
    let mut fields: BTreeMap<String, Value> = SCHEMA
        .attributes
        .iter()
        .map(|a| (a.name.to_string(), Value::Null))
        .collect();
    for (k, val) in pairs {
        fields.insert(k.to_string(), val);
    }
    Value::Object(fields)
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
    NodeRole.validate(c, &mut d);
    d
}

fn actual(attached: &[String], profile: bool) -> Actual {
    Actual {
        role: RoleInfo {
            name: "nodes".into(),
            arn: "arn:aws-cn:iam::123456789012:role/nodes".into(),
            path: "/".into(),
            trust_policy: trust_policy("aws-cn"),
            permissions_boundary: None,
        },
        tags: BTreeMap::new(),
        owner: None,
        attached: attached.iter().cloned().collect(),
        inline_names: vec![],
        inline: BTreeMap::new(),
        owned: BTreeMap::new(),
        owned_tags: BTreeMap::new(),
        profile: profile.then(|| ProfileInfo {
            name: "nodes".into(),
            arn: "arn:aws-cn:iam::123456789012:instance-profile/nodes".into(),
            roles: vec!["nodes".into()],
            tags: BTreeMap::new(),
        }),
    }
}

#[tokio::test]
async fn refresh_with_unknown_aws_config_keeps_the_prior_state() {
    let mut settings = crate::settings::ProviderSettings::default();
    settings
        .unknown
        .push(AttributePath::root().attr("aws").attr("region"));
    let ctx = KarpenterContext::new(settings);
    let current = config(vec![("name", Value::string("nodes"))]);
    match NodeRole.read(&ctx, &current).await {
        Ok(ReadOutcome::Found(v)) => assert_eq!(v, current),
        other => panic!("{other:?}"),
    }
    // Create cannot proceed: it says why, and records nothing.
    let out = NodeRole.create(&ctx, &current).await;
    assert!(out.state.is_none() && out.diagnostics.has_errors());
}

#[test]
fn policies_follow_partition_ip_family_and_switches() {
    let v4 = node_policies("aws", "123456789012", false, true, ECR_POLICIES[0]);
    assert_eq!(
        v4,
        vec![
            "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
            "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
            "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
            "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
        ]
    );
    let v6 = node_policies("aws-us-gov", "123456789012", true, true, ECR_POLICIES[1]);
    assert!(v6.contains(&"arn:aws-us-gov:iam::123456789012:policy/AmazonEKS_CNI_IPv6_Policy".to_string()));
    assert!(v6.iter().all(|a| a.starts_with("arn:aws-us-gov:")));
    assert_eq!(node_policies("aws", "1", false, false, ECR_POLICIES[0]).len(), 3);
    assert_eq!(
        trust_policy("aws-cn")["Statement"][0]["Principal"]["Service"],
        "ec2.amazonaws.com.cn"
    );
}

#[test]
fn validation_points_at_attributes() {
    let ok = config(vec![("name", Value::string("KarpenterNodeRole-demo"))]);
    assert!(diagnose(&ok).is_empty());
    let cases = [
        ("name", Value::string("x".repeat(65)), "name"),
        ("name_prefix", Value::string("y".repeat(39)), "name_prefix"),
        ("ip_family", Value::string("dual"), "ip_family"),
        ("path", Value::string("nodes"), "path"),
        (
            "ecr_policy",
            Value::string("AmazonEC2ContainerRegistryFullAccess"),
            "ecr_policy",
        ),
        (
            "additional_policy_arns",
            Value::Set(vec![Value::string("arn:aws:iam::123456789012:role/r")]),
            "additional_policy_arns[0]",
        ),
    ];
    for (attr, value, path) in cases {
        let d = diagnose(&config(vec![(attr, value)]));
        let paths: Vec<String> = d
            .iter()
            .filter_map(|x| x.path.as_ref().map(|p| p.to_string()))
            .collect();
        assert!(paths.iter().any(|p| p == path), "{attr}: {paths:?}");
    }
    let both = config(vec![
        ("name", Value::string("a")),
        ("name_prefix", Value::string("b")),
    ]);
    assert!(diagnose(&both).has_errors());
}

#[test]
fn state_reports_drift_and_a_repaired_plan_is_empty() {
    let c = config(vec![
        ("name", Value::string("nodes")),
        ("create_instance_profile", Value::Bool(true)),
    ]);
    let planned = plan(&SCHEMA.attributes, &SCHEMA.blocks, &c, &Value::Null).planned;
    let all = node_policies("aws-cn", "123456789012", false, true, ECR_POLICIES[0]);
    let good = state(&planned, &actual(&all, true), &BTreeMap::new());
    // Everything in place: the plan from that state changes nothing.
    let mut again = plan(&SCHEMA.attributes, &SCHEMA.blocks, &c, &good).planned;
    NodeRole.modify_plan(&c, &good, &mut again, &mut Diagnostics::new());
    assert_eq!(again, good);

    // A detached policy and a missing profile show up, and the plan puts them back.
    let drifted = state(&planned, &actual(&all[1..], false), &BTreeMap::new());
    assert_eq!(drifted.get("create_instance_profile"), Some(&Value::Bool(false)));
    let mut repair = plan(&SCHEMA.attributes, &SCHEMA.blocks, &c, &drifted).planned;
    NodeRole.modify_plan(&c, &drifted, &mut repair, &mut Diagnostics::new());
    assert_ne!(repair, drifted);
    assert_eq!(repair.get("managed_policy_arns"), Some(&string_list(&all)));
    assert_eq!(repair.get("create_instance_profile"), Some(&Value::Bool(true)));

    // An unexpected policy is shown in additional_policy_arns (and would be detached).
    let mut extra = all.clone();
    extra.push("arn:aws-cn:iam::aws:policy/AdministratorAccess".into());
    let s = state(&planned, &actual(&extra, true), &BTreeMap::new());
    assert_eq!(
        s.get("additional_policy_arns"),
        Some(&Value::Set(vec![Value::string(
            "arn:aws-cn:iam::aws:policy/AdministratorAccess"
        )]))
    );
}

#[test]
fn desired_includes_additional_policies_and_profile() {
    let c = config(vec![
        ("name", Value::string("nodes")),
        (
            "additional_policy_arns",
            Value::Set(vec![Value::string(
                "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy",
            )]),
        ),
    ]);
    let planned = plan(&SCHEMA.attributes, &SCHEMA.blocks, &c, &Value::Null).planned;
    let d = desired(
        &planned,
        &Value::Null,
        "nodes",
        "aws",
        "123456789012",
        BTreeMap::new(),
    );
    assert_eq!(d.attached.len(), 5);
    assert_eq!(d.instance_profile, None);
    let prior = config(vec![("create_instance_profile", Value::Bool(true))]);
    let d = desired(&planned, &prior, "nodes", "aws", "123456789012", BTreeMap::new());
    assert_eq!(d.stale_profile.as_deref(), Some("nodes"));
}

/// State written before `mode` existed is upgraded to Karpenter's shape (the schema's default,
/// filled by the framework's state upgrade), so the configuration's default plans no change;
/// the Auto Mode shape plans its two policies and the `EC2` entry.
#[test]
fn state_without_mode_is_karpenters_shape_and_auto_mode_plans_its_own() {
    let c = config(vec![("name", Value::string("nodes"))]);
    let planned = plan(&SCHEMA.attributes, &SCHEMA.blocks, &c, &Value::Null).planned;
    let all = node_policies("aws-cn", "123456789012", false, true, ECR_POLICIES[0]);
    // As stored: the planned values, what apply learns (unknown in the plan) as yet unset.
    let known = Value::Object(
        planned
            .as_entries()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), if v.is_unknown() { Value::Null } else { v.clone() }))
            .collect(),
    );
    let mut stored: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&json::encode(&known, &SCHEMA.value_type()).expect("encode"))
            .expect("state JSON");
    assert!(stored.remove("mode").is_some());
    let old = upgrade_state(
        "karpenter_node_role",
        &SCHEMA,
        0,
        &serde_json::to_vec(&stored).expect("state JSON"),
    )
    .expect("upgrade");
    assert_eq!(old.get("mode"), Some(&Value::string(KARPENTER)));
    let read = state(&old, &actual(&all, false), &BTreeMap::new());
    assert_eq!(read.get("mode"), Some(&Value::string(KARPENTER)));
    let mut again = plan(&SCHEMA.attributes, &SCHEMA.blocks, &c, &read).planned;
    NodeRole.modify_plan(&c, &read, &mut again, &mut Diagnostics::new());
    assert_eq!(again, read);

    let auto = config(vec![
        ("name", Value::string("nodes")),
        ("mode", Value::string(EKS_AUTO_MODE)),
        ("partition", Value::string("aws")),
        (
            "eks_access_entry",
            Value::Object([("cluster_name".to_string(), Value::string("demo"))].into()),
        ),
    ]);
    assert_eq!(
        policies_for(&auto, "aws", "123456789012"),
        Some(vec![
            "arn:aws:iam::aws:policy/AmazonEKSWorkerNodeMinimalPolicy".to_string(),
            "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly".to_string(),
        ])
    );
    let mut planned = plan(&SCHEMA.attributes, &SCHEMA.blocks, &auto, &Value::Null).planned;
    NodeRole.modify_plan(&auto, &Value::Null, &mut planned, &mut Diagnostics::new());
    assert_eq!(planned.get("access_entry_type"), Some(&Value::string("EC2")));
    assert_eq!(
        planned.get("access_policy_arns"),
        Some(&Value::List(vec![Value::string(
            "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAutoNodePolicy"
        )]))
    );
    assert!(planned.get("access_entry_arn").is_some_and(Value::is_unknown));
}
