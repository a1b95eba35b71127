use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value as Json, json};

use super::import::{NotImportable, infer};
use super::model::{
    INLINE_POLICY_LIMIT, check_sizes, desired, group_arn, groups, inputs, state, trust_policy,
};
use super::schema::{ADDITIONAL_INLINE, INLINE_POLICY, SCHEMA};
use super::*;
use crate::aws::iam::RoleInfo;
use crate::policy::PolicyDocument;
use crate::policy::controller::policy_groups;
use crate::policy::controller::{ControllerPolicyInputs, policy_document};
use crate::policy::releases::{newest, release};
use crate::resources::aws::iam_role::Actual;
use crate::terraform::framework::plan::plan;
use crate::terraform::framework::schema::validate_attributes;
use crate::terraform::framework::values::object;
use crate::terraform::tfvalue::AttributePath;

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
    // The newest release's groups first, in its order; then those only older ones have.
    assert_eq!(names, groups()[..names.len()]);
    assert_eq!(groups()[names.len()..], ["Controller"]);
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
        release: newest(),
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
    let imported = state(&infer(&a, &[]).expect("infer"), &a, &BTreeMap::new());
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
        release: newest(),
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

/// The warnings of a plan of `c` over `prior`, as (path, detail).
fn warnings(c: &Value, prior: &Value) -> Vec<(String, String)> {
    let mut p = plan(&SCHEMA.attributes, &SCHEMA.blocks, c, prior).planned;
    let mut d = Diagnostics::new();
    ControllerRole.modify_plan(c, prior, &mut p, &mut d);
    d.iter()
        .map(|x| {
            (
                x.path.as_ref().map(|p| p.to_string()).unwrap_or_default(),
                x.detail.clone(),
            )
        })
        .collect()
}

#[test]
fn a_plan_that_takes_a_trusted_principal_away_warns_on_the_attribute_that_causes_it() {
    let before = config(vec![
        ("name", Value::string("ctl")),
        ("irsa", irsa(Some("karpenter"))),
        ("pod_identity", Value::Bool(true)),
    ]);
    let p = planned(&before, &Value::Null);
    let prior = state(&p, &actual_for(&p, false, None), &BTreeMap::new());
    // The same configuration: nothing taken away, no warning; neither on create.
    assert!(warnings(&before, &prior).is_empty());
    assert!(warnings(&before, &Value::Null).is_empty());
    // `irsa.namespace` left out: the default, kube-system, replaces karpenter.
    let forgot = config(vec![
        ("name", Value::string("ctl")),
        ("irsa", irsa(None)),
        ("pod_identity", Value::Bool(true)),
    ]);
    let w = warnings(&forgot, &prior);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "irsa.namespace");
    assert!(
        w[0].1.contains("karpenter/karpenter") && w[0].1.contains(OIDC),
        "{}",
        w[0].1
    );
    // Pod Identity off, IRSA gone altogether.
    let neither = config(vec![
        ("name", Value::string("ctl")),
        ("pod_identity", Value::Bool(false)),
    ]);
    let paths: Vec<String> = warnings(&neither, &prior).into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, vec!["pod_identity".to_string(), "irsa".to_string()]);
}

#[test]
fn a_plan_that_takes_a_permission_away_warns_and_names_it() {
    let extra = "arn:aws:iam::123456789012:policy/KarpenterController-2024";
    let base = |pairs: Vec<(&str, Value)>| {
        let mut all = vec![
            ("name", Value::string("ctl")),
            ("pod_identity", Value::Bool(true)),
        ];
        all.extend(pairs);
        config(all)
    };
    let with_extra = base(vec![(
        "additional_policy_arns",
        Value::Set(vec![Value::string(extra)]),
    )]);
    let p = planned(&with_extra, &Value::Null);
    let mut a = actual_for(&p, false, None);
    a.attached.insert(extra.to_string());
    a.inline_names.push("KeptFromModule".into());
    let kept = json!({"Version": "2012-10-17", "Statement": [
        {"Sid": "Azs", "Effect": "Allow", "Action": "ec2:DescribeAvailabilityZones", "Resource": "*"}]});
    a.inline.insert("KeptFromModule".into(), kept.clone());
    let inline = crate::terraform::framework::values::string_map([("KeptFromModule", kept.to_string())]);
    let full = base(vec![
        ("additional_policy_arns", Value::Set(vec![Value::string(extra)])),
        (ADDITIONAL_INLINE, inline),
    ]);
    let prior = state(&planned(&full, &Value::Null), &a, &BTreeMap::new());
    assert!(
        warnings(&full, &prior).is_empty(),
        "{:?}",
        warnings(&full, &prior)
    );
    // The module's policy detached, the kept statement dropped, the provider's own statements
    // given up: each warned about on its attribute, naming what goes.
    let stripped = base(vec![("policy_attachment", Value::string("none"))]);
    let w = warnings(&stripped, &prior);
    let find = |path: &str| {
        w.iter()
            .find(|(p, _)| p == path)
            .map(|(_, d)| d.clone())
            .unwrap_or_else(|| panic!("no warning on {path}: {w:?}"))
    };
    assert!(find("additional_policy_arns").contains(extra));
    assert!(find(ADDITIONAL_INLINE).contains("ec2:DescribeAvailabilityZones"));
    assert!(find("policy_attachment").contains("AllowPassingInstanceRole (iam:PassRole on"));
    // A changed node role takes PassRole on the old one away.
    let moved = base(vec![
        ("additional_policy_arns", Value::Set(vec![Value::string(extra)])),
        (
            ADDITIONAL_INLINE,
            crate::terraform::framework::values::string_map([("KeptFromModule", kept.to_string())]),
        ),
        (
            "node_role_arn",
            Value::string("arn:aws:iam::123456789012:role/other"),
        ),
    ]);
    let w = warnings(&moved, &prior);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "node_role_arn");
    assert!(w[0].1.contains(NODE), "{}", w[0].1);
}

/// What terraform-aws-eks's Karpenter module v21 leaves with `enable_inline_policy = true`: a
/// Pod Identity trust with the statement ID `PodIdentity`, and its policy inline, named
/// `KarpenterController-<suffix>`, with Karpenter's statement IDs.
fn module_inline_role() -> Actual {
    let module_policy = json!({"Version": "2012-10-17", "Statement": [
        {"Sid": "AllowInterruptionQueueActions", "Effect": "Allow",
         "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"], "Resource": QUEUE},
        {"Sid": "AllowPassingInstanceRole", "Effect": "Allow", "Action": "iam:PassRole", "Resource": NODE},
        {"Sid": "AllowAPIServerEndpointDiscovery", "Effect": "Allow", "Action": "eks:DescribeCluster",
         "Resource": "arn:aws:eks:us-east-1:123456789012:cluster/demo"},
    ]});
    Actual {
        role: RoleInfo {
            name: "KarpenterController-2024".into(),
            arn: "arn:aws:iam::123456789012:role/KarpenterController-2024".into(),
            path: "/".into(),
            trust_policy: json!({"Version": "2012-10-17", "Statement": [{"Sid": "PodIdentity", "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"}, "Action": ["sts:TagSession", "sts:AssumeRole"]}]}),
            permissions_boundary: None,
        },
        tags: BTreeMap::from([("team".to_string(), "platform".to_string())]),
        owner: None,
        attached: BTreeSet::new(),
        inline_names: vec!["KarpenterController-2025".into()],
        inline: BTreeMap::from([("KarpenterController-2025".to_string(), module_policy)]),
        owned: BTreeMap::new(),
        owned_tags: BTreeMap::new(),
        profile: None,
    }
}

#[test]
fn import_keeps_a_module_inline_policy_and_reads_the_inputs_from_it() {
    let a = module_inline_role();
    let base = infer(&a, &[]).expect("infer");
    let imported = state(&base, &a, &BTreeMap::new());
    assert_eq!(get_str(&imported, "policy_attachment"), Some("none"));
    assert_eq!(get_str(&imported, "cluster_name"), Some("demo"));
    assert_eq!(get_str(&imported, "node_role_arn"), Some(NODE));
    assert_eq!(get_str(&imported, "interruption_queue_arn"), Some(QUEUE));
    assert_eq!(get_str(&imported, "region"), Some("us-east-1"));
    assert_eq!(imported.get("pod_identity"), Some(&Value::Bool(true)));
    let kept = imported
        .get(ADDITIONAL_INLINE)
        .and_then(Value::as_entries)
        .expect("kept");
    assert!(kept.contains_key("KarpenterController-2025"));
    assert_eq!(
        imported.get(iam_role::UNMANAGED_INLINE),
        Some(&Value::Set(Vec::new()))
    );
    // The configuration generated from it plans nothing, keeps the module's trust policy as it
    // is (statement ID, action order), and warns about nothing.
    let generated = crate::terraform::framework::generate::config_from_state(&SCHEMA, &imported);
    let p = planned(&generated, &imported);
    assert_eq!(p.get("assume_role_policy"), imported.get("assume_role_policy"));
    assert!(
        get_str(&p, "assume_role_policy").is_some_and(|t| t.contains("PodIdentity")),
        "{p:?}"
    );
    assert_eq!(p, imported);
    assert!(warnings(&generated, &imported).is_empty());
    // The desired role writes the module's inline policy as it is, and no other.
    let want = desired(
        &p,
        "KarpenterController-2024",
        &a.role.arn,
        Some(&a),
        BTreeMap::new(),
    )
    .expect("desired");
    assert_eq!(want.inline.len(), 1);
    assert_eq!(want.inline[0].0, "KarpenterController-2025");
    assert!(want.attached.is_empty());
}

#[test]
fn import_refuses_a_trust_it_cannot_say_and_says_why() {
    let mut a = module_inline_role();
    a.role.trust_policy = json!({"Statement": [{"Effect": "Allow", "Principal": {"Federated": OIDC},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {"oidc.eks.us-east-1.amazonaws.com/id/ABC:sub":
            ["system:serviceaccount:karpenter:karpenter", "system:serviceaccount:ops:karpenter"]}}}]});
    let why = infer(&a, &[]).expect_err("two service accounts").detail("r");
    assert!(why.contains("admits 2 service accounts"), "{why}");
    a.role.trust_policy["Statement"][0]["Condition"] = json!({"StringLike": {"oidc.eks.us-east-1.amazonaws.com/id/ABC:sub": "system:serviceaccount:karpenter:*"}});
    let why = infer(&a, &[]).expect_err("StringLike").detail("r");
    assert!(why.contains("StringLike"), "{why}");
    // A role with no policy at all is not a controller role.
    let mut bare = module_inline_role();
    bare.inline.clear();
    bare.inline_names.clear();
    assert!(matches!(infer(&bare, &[]), Err(NotImportable::NotAController(_))));
}

/// `karpenter_version` unset: a new role gets the newest release; an existing role keeps the
/// release it has, so neither a provider upgrade nor removing the setting changes its
/// permissions; setting it moves the role, and only a move that takes a permission away warns.
#[test]
fn a_new_role_gets_the_newest_release_and_an_existing_one_keeps_its_own() {
    let unset = config(vec![
        ("name", Value::string("ctl")),
        ("pod_identity", Value::Bool(true)),
    ]);
    let created = planned(&unset, &Value::Null);
    assert_eq!(get_str(&created, "karpenter_version"), Some(newest().version));
    assert!(get_str(&created, "policy").is_some_and(|p| p.contains("ec2:RebootInstances")));
    let pinned = |v: &str| {
        config(vec![
            ("name", Value::string("ctl")),
            ("pod_identity", Value::Bool(true)),
            ("karpenter_version", Value::string(v)),
        ])
    };
    let p14 = planned(&pinned("v1.14"), &Value::Null);
    let v14 = state(&p14, &actual_for(&p14, false, None), &BTreeMap::new());
    assert!(get_str(&v14, "policy").is_some_and(|p| !p.contains("ec2:RebootInstances")));
    // Unset over a v1.14 role: nothing changes.
    assert_eq!(planned(&unset, &v14), v14);
    assert!(warnings(&unset, &v14).is_empty());
    // Pinned to v1.15: RebootInstances is added, and nothing is taken away (no warning).
    let up = planned(&pinned("1.15.1"), &v14);
    assert!(get_str(&up, "policy").is_some_and(|p| p.contains("ec2:RebootInstances")));
    assert!(
        warnings(&pinned("1.15.1"), &v14).is_empty(),
        "{:?}",
        warnings(&pinned("v1.15"), &v14)
    );
    // Back to v1.8 from v1.14: statements go (placement groups, zonal shift…): a warning on the
    // attribute that causes it.
    let w = warnings(&pinned("v1.8"), &v14);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "karpenter_version");
    assert!(w[0].1.contains("AllowZonalShiftStatusReadOnly"), "{}", w[0].1);
    // v1.8 in managed mode: its one policy, `Controller`.
    let managed = config(vec![
        ("name", Value::string("ctl")),
        ("pod_identity", Value::Bool(true)),
        ("policy_attachment", Value::string("managed")),
        ("karpenter_version", Value::string("v1.8")),
    ]);
    let p = planned(&managed, &Value::Null);
    let s = state(&p, &actual_for(&p, true, None), &BTreeMap::new());
    assert_eq!(
        s.get("managed_policy_arns")
            .and_then(Value::as_elements)
            .map(<[Value]>::to_vec),
        Some(vec![Value::string(group_arn(
            "aws",
            "123456789012",
            "/",
            "ctl",
            "Controller"
        ))])
    );
    assert_eq!(planned(&managed, &s), s);
    assert!(
        diagnose(&pinned("v1.99"))
            .iter()
            .any(|d| d.path.as_ref().map(ToString::to_string).as_deref() == Some("karpenter_version"))
    );
}

/// State written before `karpenter_version` existed (provider 0.1.x, which wrote v1.14's
/// policy) reads back as v1.14, not as the newest: its plan stays empty.
#[test]
fn state_from_before_the_version_reads_back_as_v1_14() {
    let stored = serde_json::json!({"name": "ctl", "cluster_name": "demo", "policy_attachment": "inline"});
    let upgraded = crate::terraform::framework::upgrade::upgrade_state(
        "karpenter_controller_role",
        &SCHEMA,
        0,
        stored.to_string().as_bytes(),
    )
    .expect("upgrade");
    assert_eq!(get_str(&upgraded, "karpenter_version"), Some("v1.14"));
    assert_eq!(
        release("v1.14").map(|r| r.version),
        Ok(super::schema::VERSION_OF_EARLIER_ROLES)
    );
}

/// Import names the newest release whose policy the role has.
#[test]
fn import_reads_the_version_from_the_permissions() {
    for (version, want) in [
        ("v1.14", "v1.14"),
        ("v1.15", "v1.15"),
        ("v1.9", "v1.10"),
        ("v1.3", "v1.6"),
    ] {
        let c = config(vec![
            ("name", Value::string("ctl")),
            ("pod_identity", Value::Bool(true)),
            ("karpenter_version", Value::string(version)),
        ]);
        let p = planned(&c, &Value::Null);
        let a = actual_for(&p, false, None);
        let imported = infer(&a, &[]).expect("infer");
        // Releases with the same policy: the newest of them (v1.9 = v1.10, v1.3 = … = v1.6).
        assert_eq!(get_str(&imported, "karpenter_version"), Some(want), "{version}");
    }
}
