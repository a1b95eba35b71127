use regex::Regex;

use super::budgets::{BUDGET_DURATION, BUDGET_NODES, cron_problem};
use super::labels::{
    LABEL_NAME, LABEL_VALUE, TOTAL_ANNOTATION_BYTES, annotations_total_size, label_key_problem,
    restricted_label_problem,
};
use super::names::{DNS_SUBDOMAIN, QUALIFIED_NAME};
use super::numbers::QUANTITY;
use super::time::{DURATION, DURATION_OR_NEVER, date_time_problem};
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

#[test]
fn patterns_compile() {
    for p in [
        QUANTITY,
        QUALIFIED_NAME,
        LABEL_VALUE,
        DURATION_OR_NEVER,
        DURATION,
        BUDGET_DURATION,
        BUDGET_NODES,
        DNS_SUBDOMAIN,
        LABEL_NAME,
    ] {
        assert!(Regex::new(p).is_ok(), "{p}");
    }
}

#[test]
fn cron_schedules() {
    for ok in [
        "@daily",
        "@annually",
        "0 9 * * 1-5",
        "*/15 * * * *",
        "0 0 1 jan,jul *",
        "30 22 ? * SUN",
        "0 0-6/2 1,15 * mon-fri",
    ] {
        assert_eq!(cron_problem(ok), None, "{ok}");
    }
    for bad in [
        "@every 1h",
        "@dailyx",
        "0 9 * *",
        "0 9 * * * *",
        "60 * * * *",
        "0 24 * * *",
        "0 0 0 * *",
        "0 0 * 13 *",
        "0 0 * * 7",
        "0 0 * * funday",
        "*/0 * * * *",
        "5-1 * * * *",
        "? * * * *",
    ] {
        assert!(cron_problem(bad).is_some(), "{bad}");
    }
}

#[test]
fn restricted_keys() {
    assert!(restricted_label_problem("karpenter.sh/capacity-type").is_none());
    assert!(restricted_label_problem("karpenter.sh/nodepool").is_some());
    assert!(restricted_label_problem("karpenter.sh/anything").is_some());
    assert!(restricted_label_problem("sub.karpenter.sh/x").is_some());
    assert!(restricted_label_problem("kubernetes.io/hostname").is_some());
    assert!(restricted_label_problem("karpenter.k8s.aws/instance-family").is_none());
    assert!(restricted_label_problem("karpenter.k8s.aws/instance-pods").is_some());
    // Added to the allow-list by Karpenter v1.15.
    assert!(restricted_label_problem("karpenter.k8s.aws/nitro-sandbox").is_none());
    assert!(restricted_label_problem("karpenter.k8s.aws/nitro-enclaves").is_some());
    assert!(restricted_label_problem("node.kubernetes.io/instance-type").is_none());
    assert!(restricted_label_problem("example.com/team").is_none());
}

#[test]
fn label_keys() {
    assert!(label_key_problem("team").is_none());
    assert!(label_key_problem("example.com/team").is_none());
    assert!(label_key_problem("Example.com/team").is_some());
    assert!(label_key_problem("/team").is_some());
    assert!(label_key_problem(&"a".repeat(64)).is_some());
    assert!(label_key_problem("-team").is_some());
}

#[test]
fn date_times_are_real_dates() {
    for ok in [
        "2024-05-01T10:00:00Z",
        "2024-02-29T23:59:59.123+05:30",
        "2023-12-31t00:00:00z",
    ] {
        assert_eq!(date_time_problem(ok), None, "{ok}");
    }
    for bad in [
        "2024-02-30T10:00:00Z",
        "2023-02-29T10:00:00Z",
        "2024-04-31T10:00:00Z",
        "2024-01-01T10:00:60Z",
        "2024-00-01T10:00:00Z",
        "2024-01-01 10:00:00Z",
        "2024-01-01T10:00:00+24:00",
    ] {
        assert!(date_time_problem(bad).is_some(), "{bad}");
    }
}

#[test]
fn annotation_total_is_limited() {
    let path = AttributePath::root().attr("metadata").attr("annotations");
    let map = |n: usize| {
        Value::Map(
            [("a".to_string(), Value::string("x".repeat(n)))]
                .into_iter()
                .collect(),
        )
    };
    let mut d = Diagnostics::new();
    annotations_total_size(Some(&map(TOTAL_ANNOTATION_BYTES - 1)), &path, &mut d);
    assert!(!d.has_errors());
    annotations_total_size(Some(&map(TOTAL_ANNOTATION_BYTES)), &path, &mut d);
    assert!(d.has_errors());
}
