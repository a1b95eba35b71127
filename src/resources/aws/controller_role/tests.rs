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
