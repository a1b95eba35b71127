use std::collections::BTreeMap;

use super::calls::queue_arn_from_url;
use super::document::{ExtraStatement, canonical_json, policy_document};
use super::identity::{queue_identity, region_alias, region_mismatch};
use super::kinds::rule_name_in;
use super::kinds::rule_prefix_of;
use super::kinds::{
    KIND_KEYS, RULE_KINDS, RULE_NAME_MAX, cluster_for_import, default_rule_prefix, is_shortened_prefix, kind,
    kind_of_pattern, max_prefix_len, queue_name_from_import_id, split_rule_name,
};
use super::list::{is_interruption_pattern, queue_display_name, queue_name_of_url, rules_not_adopted};
use super::model::visible_tags;
use super::schema::{CLUSTER_TAG_KEY, SCHEMA, TYPE_NAME};
use super::*;
use crate::aws::ownership;
use crate::terraform::framework::values::{get_str, object};
use crate::terraform::tfvalue::Number;

#[test]
fn patterns_spelled_by_others_are_classified_by_source_and_detail_type() {
    let module =
        "{\n  \"source\": [\"aws.ec2\"],\n  \"detail-type\": [\"EC2 Spot Instance Interruption Warning\"]\n}";
    assert_eq!(kind_of_pattern(module).map(|k| k.key), Some("spot_interruption"));
    for k in RULE_KINDS {
        assert_eq!(kind_of_pattern(&k.event_pattern()).map(|x| x.key), Some(k.key));
    }
    assert!(kind_of_pattern(r#"{"source":["aws.ec2"],"detail-type":["Something else"]}"#).is_none());
    assert!(
        kind_of_pattern(r#"{"source":["aws.ec2","aws.health"],"detail-type":["AWS Health Event"]}"#)
            .is_none()
    );
    assert!(kind_of_pattern("not json").is_none());
}

#[test]
fn event_patterns_match_upstream() {
    let spot = kind("spot_interruption").unwrap();
    let p: serde_json::Value = serde_json::from_str(&spot.event_pattern()).unwrap();
    assert_eq!(
        p,
        serde_json::json!({"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]})
    );
    let health = kind("scheduled_change").unwrap();
    let p: serde_json::Value = serde_json::from_str(&health.event_pattern()).unwrap();
    assert_eq!(p["source"][0], "aws.health");
    assert_eq!(p["detail-type"][0], "AWS Health Event");
    assert_eq!(RULE_KINDS.len(), 5);
    assert_eq!(
        KIND_KEYS,
        RULE_KINDS.iter().map(|k| k.key).collect::<Vec<_>>().as_slice()
    );
}

#[test]
fn policy_has_upstream_statements_and_extras() {
    let arn = "arn:aws:sqs:us-east-1:123456789012:demo";
    let extra = ExtraStatement {
        sid: Some("AllowSns".into()),
        effect: "Allow".into(),
        actions: vec!["sqs:SendMessage".into()],
        principals: vec![("Service".into(), vec!["sns.amazonaws.com".into()])],
        conditions: vec![(
            "ArnEquals".into(),
            "aws:SourceArn".into(),
            vec!["arn:aws:sns:us-east-1:123456789012:t".into()],
        )],
    };
    let doc: serde_json::Value = serde_json::from_str(&policy_document(arn, &[extra])).unwrap();
    assert_eq!(doc["Id"], "EC2InterruptionPolicy");
    let s = doc["Statement"].as_array().unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(
        s[0]["Principal"]["Service"],
        serde_json::json!(["events.amazonaws.com", "sqs.amazonaws.com"])
    );
    assert_eq!(s[0]["Action"], "sqs:SendMessage");
    assert_eq!(s[0]["Resource"], arn);
    assert_eq!(s[1]["Sid"], "DenyHTTP");
    assert_eq!(s[1]["Effect"], "Deny");
    assert_eq!(s[1]["Principal"], "*");
    assert_eq!(s[1]["Condition"]["Bool"]["aws:SecureTransport"], "false");
    assert_eq!(s[2]["Principal"]["Service"][0], "sns.amazonaws.com");
    assert_eq!(
        s[2]["Condition"]["ArnEquals"]["aws:SourceArn"][0],
        "arn:aws:sns:us-east-1:123456789012:t"
    );
    assert_eq!(s[2]["Resource"], arn);
}

#[test]
fn rule_names_fit_the_limit() {
    assert_eq!(default_rule_prefix("demo"), "Karpenter-demo-");
    let long = "a".repeat(100);
    let other = format!("{}b", "a".repeat(99));
    let p = default_rule_prefix(&long);
    assert!(p.len() <= max_prefix_len(), "{p}");
    assert_ne!(p, default_rule_prefix(&other), "long names stay apart");
    for k in RULE_KINDS {
        assert!(k.rule_name(&p).len() <= RULE_NAME_MAX);
    }
    // the exact boundary: a 22-character cluster name still fits unshortened
    let c22 = "c".repeat(22);
    assert_eq!(default_rule_prefix(&c22), format!("Karpenter-{c22}-"));
    assert!(default_rule_prefix(&"c".repeat(23)).len() <= max_prefix_len());
}

#[test]
fn import_ids_and_rule_names() {
    assert_eq!(queue_name_from_import_id("demo").as_deref(), Some("demo"));
    assert_eq!(
        queue_name_from_import_id("https://sqs.us-east-1.amazonaws.com/123456789012/demo").as_deref(),
        Some("demo")
    );
    assert_eq!(queue_name_from_import_id("bad name"), None);
    let (p, k) = split_rule_name("Karpenter-demo-SpotInterruption").unwrap();
    assert_eq!((p, k.key), ("Karpenter-demo-", "spot_interruption"));
    assert!(split_rule_name("Something").is_none());
    assert_eq!(
        cluster_for_import("prod-karpenter", None, Some("Karpenter-prod-")),
        "prod"
    );
    assert_eq!(cluster_for_import("demo", None, Some("Karpenter-demo-")), "demo");
    assert_eq!(cluster_for_import("demo", None, Some("custom-")), "demo");
    assert_eq!(cluster_for_import("demo", None, None), "demo");
    assert_eq!(
        canonical_json("{\"b\": [1, 2], \"a\": \"x\"}"),
        r#"{"a":"x","b":[1,2]}"#
    );
}

/// A long cluster name's rule prefix is shortened with a hash; read back as a cluster name
/// it gave `Karpenter-<head>-<hash>-`'s middle (issue #15). The queue's name, or its
/// cluster tag, is the answer.
#[test]
fn import_never_reads_a_cluster_name_out_of_a_hashed_prefix() {
    let long = format!("c{}", "23456789-".repeat(9));
    let long = &long[..80];
    let prefix = default_rule_prefix(long);
    assert!(is_shortened_prefix(&prefix), "{prefix}");
    assert_eq!(cluster_for_import(long, None, Some(&prefix)), long);
    let hundred = "d".repeat(100);
    let prefix = default_rule_prefix(&hundred);
    assert_eq!(
        cluster_for_import("events", Some(&hundred), Some(&prefix)),
        hundred
    );
    assert_eq!(cluster_for_import("events", None, Some(&prefix)), "events");
    assert!(!is_shortened_prefix("Karpenter-demo-"));
}

#[test]
fn bookkeeping_tags_are_reserved_and_hidden() {
    let config = object([
        ("cluster_name", Value::string("demo")),
        (
            "tags",
            crate::terraform::framework::values::string_map([(ownership::OWNER_TAG_KEY, "x"), ("team", "a")]),
        ),
    ]);
    let mut d = Diagnostics::new();
    InterruptionQueue.validate(&config, &mut d);
    let paths: Vec<String> = d
        .iter()
        .filter_map(|d| d.path.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(paths.len(), 1, "{paths:?}");
    assert!(paths[0].starts_with("tags"), "{paths:?}");
    let aws: BTreeMap<String, String> = [
        (ownership::OWNER_TAG_KEY, TYPE_NAME),
        (CLUSTER_TAG_KEY, "demo"),
        ("team", "a"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(visible_tags(aws).into_keys().collect::<Vec<_>>(), vec!["team"]);
}

#[test]
fn queue_arns_come_from_the_url_where_the_partition_is_certain() {
    assert_eq!(
        queue_arn_from_url(
            "https://sqs.us-east-1.amazonaws.com/123456789012/demo",
            "us-east-1"
        )
        .as_deref(),
        Some("arn:aws:sqs:us-east-1:123456789012:demo")
    );
    assert_eq!(
        queue_arn_from_url(
            "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/demo",
            "cn-north-1"
        )
        .as_deref(),
        Some("arn:aws-cn:sqs:cn-north-1:123456789012:demo")
    );
    assert_eq!(
        queue_arn_from_url("http://127.0.0.1:4566/123456789012/demo", "us-gov-west-1").as_deref(),
        Some("arn:aws-us-gov:sqs:us-gov-west-1:123456789012:demo")
    );
    assert_eq!(
        queue_arn_from_url(
            "https://sqs.us-iso-east-1.c2s.ic.gov/123456789012/q",
            "us-iso-east-1"
        ),
        None
    );
    assert_eq!(
        queue_arn_from_url("https://example.com/not-an-account/q", "us-east-1"),
        None
    );
    assert_eq!(
        queue_arn_from_url("https://example.com/123456789012/", "us-east-1"),
        None
    );
}

#[test]
fn plan_derives_names_and_rules() {
    let config = object([("cluster_name", Value::string("demo"))]);
    let mut planned =
        crate::terraform::framework::plan::plan(&SCHEMA.attributes, &SCHEMA.blocks, &config, &Value::Null)
            .planned;
    InterruptionQueue.modify_plan(&config, &Value::Null, &mut planned, &mut Diagnostics::new());
    assert_eq!(get_str(&planned, "queue_name"), Some("demo"));
    assert_eq!(get_str(&planned, "rule_name_prefix"), Some("Karpenter-demo-"));
    assert_eq!(planned.get("sqs_managed_sse_enabled"), Some(&Value::Bool(true)));
    assert!(planned.get("queue_arn").is_some_and(Value::is_unknown));
    let rules = planned.get("rules").and_then(Value::as_entries).unwrap();
    assert_eq!(rules.len(), 5);
    assert_eq!(
        get_str(&rules["rebalance"], "name"),
        Some("Karpenter-demo-Rebalance")
    );
}

#[test]
fn validation_catches_cross_attribute_errors() {
    let config = object([
        ("cluster_name", Value::string("x".repeat(90))),
        ("name", Value::Null),
        ("kms_master_key_id", Value::Null),
        (
            "kms_data_key_reuse_period_seconds",
            Value::number(Number::from_i64(300)),
        ),
    ]);
    let mut d = Diagnostics::new();
    InterruptionQueue.validate(&config, &mut d);
    let paths: Vec<String> = d
        .iter()
        .filter_map(|d| d.path.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(paths, vec!["cluster_name", "kms_data_key_reuse_period_seconds"]);
}

#[test]
fn rule_names_name_enabled_kinds() {
    let config = object([
        ("cluster_name", Value::string("demo")),
        (
            "enabled_rules",
            Value::Set(vec![Value::string("spot_interruption")]),
        ),
        (
            "rule_names",
            crate::terraform::framework::values::string_map([
                ("spot_interruption", "cfn-SpotInterruptionRule-1"),
                ("rebalance", "cfn-RebalanceRule-1"),
                ("spot", "x"),
            ]),
        ),
    ]);
    let mut d = Diagnostics::new();
    InterruptionQueue.validate(&config, &mut d);
    let paths: Vec<String> = d
        .iter()
        .filter_map(|d| d.path.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(paths, vec![r#"rule_names["rebalance"]"#, r#"rule_names["spot"]"#]);
    let names = BTreeMap::from([("rebalance".to_string(), "cfn-RebalanceRule-1".to_string())]);
    let rebalance = kind("rebalance").unwrap();
    assert_eq!(
        rule_name_in(&names, "Karpenter-demo-", rebalance),
        "cfn-RebalanceRule-1"
    );
    let spot = kind("spot_interruption").unwrap();
    assert_eq!(
        rule_name_in(&names, "Karpenter-demo-", spot),
        "Karpenter-demo-SpotInterruption"
    );
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
                        Value::string("arn:aws:events:eu-west-1:123456789012:rule/Karpenter-demo-Rebalance"),
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
fn interruption_patterns_are_karpenters_kinds() {
    for k in RULE_KINDS {
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
fn the_rule_prefix_is_read_as_import_reads_it() {
    assert_eq!(
        rule_prefix_of(["Other", "Karpenter-demo-Rebalance", "x-SpotInterruption"]),
        Some("Karpenter-demo-")
    );
    assert_eq!(rule_prefix_of(["Karpenter-cfn-SpotInterruptionRule-1X2Y"]), None);
    assert_eq!(
        cluster_for_import("prod-interruption", Some("prod"), None),
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
fn rules_of_a_second_prefix_are_named_in_a_warning() {
    let own = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert!(
        rules_not_adopted(
            "demo",
            &own(&["Karpenter-demo-SpotInterruption", "Karpenter-demo-Rebalance"])
        )
        .is_empty()
    );
    // Named otherwise altogether: adopted under their own names, no warning.
    assert!(rules_not_adopted("cfn", &own(&["Karpenter-cfn-SpotInterruptionRule-1X2Y"])).is_empty());
    let mixed = rules_not_adopted("q", &own(&["a-Rebalance", "b-SpotInterruption", "odd"]));
    let detail = mixed.iter().map(|d| d.detail.clone()).collect::<String>();
    assert!(
        detail.contains("b-SpotInterruption") && !detail.contains("odd") && !detail.contains("a-Rebalance"),
        "{detail}"
    );
    assert!(rules_not_adopted("q", &[]).is_empty());
}

#[test]
fn a_region_mismatch_names_the_provider_configuration_to_use() {
    let d = region_mismatch("karpenter_interruption_queue", "us-east-1", "us-west-2");
    let detail = &d.iter().next().expect("diagnostic").detail;
    assert!(detail.contains("configured for us-west-2"), "{detail}");
    assert!(detail.contains("provider = karpenter.use1"), "{detail}");
    assert!(
        d.iter()
            .all(|d| d.path.as_ref().is_some_and(|p| p.to_string() == "region"))
    );
    assert_eq!(region_alias("eu-central-2"), "euc2");
    assert_eq!(region_alias("us-gov-west-1"), "usgw1");
}
