use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value as Json, json};

use super::names::{MAX_PREFIX, unique_name};
use super::trust::classify_trust;
use super::*;
use crate::aws::iam::{ProfileInfo, RoleInfo};
use crate::aws::ownership::OWNER_TAG_KEY;
use crate::policy::arn::policy_arn_validator;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::validate::Validator;
use crate::terraform::framework::values::object;
use crate::terraform::tfvalue::{AttributePath, Value};

#[test]
fn canonical_text_ignores_key_order_and_whitespace() {
    let a = canonical_text("{\"b\": 1,\n  \"a\": [\"x\"]}").expect("json");
    let b = canonical_text(r#"{"a":["x"],"b":1}"#).expect("json");
    assert_eq!(a, b);
    assert_eq!(a, r#"{"a":["x"],"b":1}"#);
    assert!(canonical_text("nope").is_none());
}

#[test]
fn unique_names_fit_a_role_name_and_differ() {
    let a = unique_name(&"p".repeat(MAX_PREFIX));
    let b = unique_name(&"p".repeat(MAX_PREFIX));
    assert_eq!(a.len(), 64);
    assert!(crate::aws_names::iam_role_name(&a).is_ok());
    assert_ne!(a, b);
}

#[test]
fn empty_collections_stay_null_when_unset() {
    assert_eq!(map_value(&BTreeMap::new(), None), Value::Null);
    assert_eq!(
        map_value(&BTreeMap::new(), Some(&Value::Map(BTreeMap::new()))),
        Value::Map(BTreeMap::new())
    );
    let set: BTreeSet<String> = ["a".to_string()].into();
    assert_eq!(set_value(&set, None), Value::Set(vec![Value::string("a")]));
}

fn actual_with(owner: Option<&str>, inline: &[&str]) -> Actual {
    Actual {
        role: RoleInfo {
            name: "r".into(),
            arn: "arn:aws:iam::123456789012:role/r".into(),
            path: "/".into(),
            trust_policy: Json::Null,
            permissions_boundary: None,
        },
        tags: BTreeMap::new(),
        owner: owner.map(str::to_string),
        attached: BTreeSet::new(),
        inline_names: inline.iter().map(|s| s.to_string()).collect(),
        inline: BTreeMap::new(),
        owned: BTreeMap::new(),
        owned_tags: BTreeMap::new(),
        profile: None,
    }
}

#[test]
fn a_create_never_takes_over_a_role_even_one_with_our_tag() {
    let refusal = |a: Option<&Actual>| {
        let mut d = Diagnostics::new();
        refuse_existing_role("karpenter_node_role", a, &mut d);
        d.iter()
            .filter(|x| x.path.as_ref().is_some_and(|p| p.to_string() == "name"))
            .map(|x| x.detail.clone())
            .collect::<Vec<_>>()
    };
    assert!(refusal(None).is_empty());
    let ours = refusal(Some(&actual_with(Some("karpenter_node_role"), &[])));
    assert_eq!(ours.len(), 1);
    assert!(ours[0].contains("another Terraform state"), "{}", ours[0]);
    for other in [None, Some("karpenter_controller_role")] {
        let refused = refusal(Some(&actual_with(other, &[])));
        assert_eq!(refused.len(), 1);
        assert!(refused[0].contains("not made by this provider"), "{}", refused[0]);
    }
}

#[test]
fn a_profile_with_our_tag_is_ours_only_on_an_update_of_its_role() {
    let profile = |tags: &[(&str, &str)]| ProfileInfo {
        name: "KarpenterNodeRole-demo".into(),
        arn: "arn:aws:iam::123456789012:instance-profile/KarpenterNodeRole-demo".into(),
        roles: Vec::new(),
        tags: tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    };
    let refused = |p: &ProfileInfo, creating: bool| {
        let mut d = Diagnostics::new();
        refuse_existing_profile("karpenter_node_role", "r", Some(p), creating, &mut d);
        d.has_errors()
    };
    let ours = profile(&[(OWNER_TAG_KEY, "karpenter_node_role")]);
    let foreign = profile(&[("team", "a")]);
    assert!(refused(&ours, true));
    assert!(!refused(&ours, false));
    assert!(refused(&foreign, true));
    assert!(refused(&foreign, false));
}

#[test]
fn the_ownership_tag_key_is_refused_as_a_user_tag() {
    let mut d = Diagnostics::new();
    reserved_tag_key_validator().validate(
        &Value::string(OWNER_TAG_KEY),
        &AttributePath::root().attr("tags").key(OWNER_TAG_KEY),
        &mut d,
    );
    assert!(d.has_errors());
    let mut d = Diagnostics::new();
    reserved_tag_key_validator().validate(&Value::string("team"), &AttributePath::root(), &mut d);
    assert!(!d.has_errors());
}

#[test]
fn unmanaged_inline_policies_leave_out_our_own() {
    let a = actual_with(None, &["KarpenterControllerPolicy", "s3-everything"]);
    assert_eq!(
        unmanaged_inline(&a, Some("KarpenterControllerPolicy")),
        Value::Set(vec![Value::string("s3-everything")])
    );
    assert_eq!(
        unmanaged_inline(&actual_with(None, &[]), None),
        Value::Set(vec![])
    );
}

#[test]
fn validators_reject_bad_names_paths_and_arns() {
    let check = |validator: &dyn Validator, s: &str| {
        let mut d = Diagnostics::new();
        validator.validate(&Value::string(s), &AttributePath::root().attr("x"), &mut d);
        d.has_errors()
    };
    assert!(!check(&role_name_validator(), "KarpenterNodeRole-demo"));
    assert!(check(&role_name_validator(), &"a".repeat(65)));
    assert!(check(&role_name_validator(), "bad name"));
    assert!(check(&name_prefix_validator(), &"a".repeat(39)));
    assert!(!check(&path_validator(), "/karpenter/"));
    assert!(check(&path_validator(), "karpenter"));
    assert!(!check(
        &policy_arn_validator(),
        "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
    ));
    assert!(!check(
        &policy_arn_validator(),
        "arn:aws-cn:iam::123456789012:policy/x/y"
    ));
    assert!(check(&policy_arn_validator(), "arn:aws:iam::123456789012:role/x"));
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
    let iso = json!({"Statement": {"Effect": "Allow", "Principal": {"Service": "ec2.c2s.ic.gov"},
        "Action": "sts:AssumeRole"}});
    assert!(classify_trust(&iso).ec2);
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
        cluster_from_name("KarpenterNodeRole-demo", "KarpenterNodeRole-"),
        Some("demo")
    );
    assert_eq!(
        cluster_from_name("KarpenterNodeRole-", "KarpenterNodeRole-"),
        None
    );
    assert_eq!(cluster_from_name("eks-nodes", "KarpenterNodeRole-"), None);
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
