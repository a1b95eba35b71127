//! Every case of Karpenter's own tests of its CEL kubelet expressions (aws/karpenter-provider-aws
//! `main` @ 1d927085, the only place the feature is; the research notes' §2), restated as data:
//! where the expression is written, the variables the test gives, and the outcome it expects:
//! a value, refused when compiled (`KubeletExpressionInvalid`), or failing when evaluated
//! (`KubeletExpressionEvaluationFailed`). The provider must agree on every one.
//!
//! Not here, as they are not the expressions' own: the feature-gate cases
//! (`KubeletExpressionsDisabled`: the gate is the cluster's, not the configuration's), the
//! empty instance-type cache (a requeue), and the structural ones (`InvalidKubeletConfiguration`:
//! a reservation starting with `-`, a key other than cpu/memory/ephemeral-storage/pid, image GC
//! thresholds), which the node class's own validation checks.

use super::super::eval::evaluate_expression;
use super::super::{
    EniFigures, Field, Kubelet, KubeletSource, MaxPodsSource, Reserved, TypeFacts, compile, evaluate,
};

/// An instance type's variables as a test gives them; `max_pods` is the type's default pod
/// count (what the `max_pods` variable is when `maxPods` is not set).
#[derive(Debug, Clone, Copy)]
struct Vars {
    instance_type: &'static str,
    vcpus: i64,
    memory_mib: i64,
    enis: i64,
    ips: i64,
    max_pods: i64,
}

impl Vars {
    fn facts(self) -> TypeFacts<'static> {
        TypeFacts {
            instance_type: self.instance_type,
            vcpus: self.vcpus,
            memory_mib: self.memory_mib,
            enis: Some(EniFigures {
                default_enis: self.enis,
                ips_per_eni: self.ips,
            }),
            default_pods: self.max_pods,
        }
    }

    const fn with(self, vcpus: i64, max_pods: i64) -> Vars {
        Vars {
            vcpus,
            max_pods,
            ..self
        }
    }

    const fn named(self, instance_type: &'static str) -> Vars {
        Vars {
            instance_type,
            ..self
        }
    }
}

/// m5.large as Karpenter's `ResolveResourceMap` tests give it (max_pods 20).
const M5: Vars = Vars {
    instance_type: "m5.large",
    vcpus: 2,
    memory_mib: 8192,
    enis: 3,
    ips: 10,
    max_pods: 20,
};
/// m5.large as the instance-type, launch-template and e2e suites have it: its ENI-limited
/// default of 3 × 9 + 2 = 29 pods.
const M5_DEFAULT: Vars = M5.with(2, 29);

/// Where a case's expression is written.
#[derive(Debug, Clone, Copy)]
enum At {
    /// Karpenter's `EvaluateExpression` / `ValidateExpression` alone: the number, no field rule.
    Alone,
    MaxPods,
    KubeReserved(&'static str),
    SystemReserved(&'static str),
}

/// What Karpenter's test expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Accepted, with this value (as Karpenter writes it for a field).
    Value(&'static str),
    /// Accepted; the test gives no value.
    Valid,
    /// Refused when compiled: `KubeletExpressionInvalid`.
    Invalid,
    /// Compiles, fails when evaluated: `KubeletExpressionEvaluationFailed`.
    EvalFail,
}

use At::{Alone, KubeReserved as Kube, MaxPods, SystemReserved as System};
use Outcome::{EvalFail, Invalid, Valid, Value};

const ENV: &str = "pkg/cel/environment_test.go";
const VALIDATION: &str = "pkg/controllers/nodeclass/validation_test.go";
const STRUCTURE: &str = "pkg/apis/v1/kubeletconfiguration_validation_test.go";
const INSTANCE_TYPES: &str = "pkg/providers/instancetype/suite_test.go";
const LAUNCH_TEMPLATES: &str = "pkg/providers/launchtemplate/suite_test.go";
const E2E: &str = "test/suites/integration/ and test/suites/drift/";
const DOCS: &str = "website/content/en/preview/concepts/nodeclasses.md";

/// (test file, where, expression, variables, outcome).
type Case = (&'static str, At, &'static str, Vars, Outcome);

const CASES: &[Case] = &[
    // EvaluateExpression.
    (
        ENV,
        Alone,
        "((default_enis - 1) * (ips_per_eni - 1)) + 2",
        M5,
        Value("20"),
    ),
    (
        ENV,
        Alone,
        "min(250, ((default_enis - 1) * (ips_per_eni - 1)) * 16 + 2)",
        M5,
        Value("250"),
    ),
    (ENV, Alone, "max(60, vcpus * 30)", M5.with(16, 20), Value("480")),
    (ENV, Alone, "11 * max_pods + 255", M5.with(2, 58), Value("893")),
    (ENV, Alone, "min(110, max_pods)", M5, Value("20")),
    (ENV, Alone, "max(vcpus, 60.5)", M5.with(4, 20), Value("60")),
    (ENV, Alone, "min(110.5, max_pods)", M5, Value("20")),
    (
        ENV,
        Alone,
        "instance_type == \"m5.large\" ? vcpus * 2 : vcpus",
        M5.with(4, 20),
        Value("8"),
    ),
    (
        ENV,
        Alone,
        "instance_type == \"m5.large\" ? vcpus * 2 : vcpus",
        M5.with(4, 20).named("c5.xlarge"),
        Value("4"),
    ),
    (ENV, Alone, "vcpus - 100", M5, Value("-98")),
    (ENV, Alone, "100 / (vcpus - vcpus)", M5, EvalFail),
    (ENV, Alone, "100 % (vcpus - vcpus)", M5, EvalFail),
    (ENV, Alone, "100.0 / 0.0", M5, EvalFail),
    (ENV, Alone, "0.0 / 0.0", M5, EvalFail),
    // "max and min overloads", vcpus 4.
    (ENV, Alone, "max(3, 7)", M5.with(4, 20), Value("7")),
    (ENV, Alone, "max(3.9, 7.9)", M5.with(4, 20), Value("7")),
    (ENV, Alone, "max(3, 7.9)", M5.with(4, 20), Value("7")),
    (ENV, Alone, "max(7.9, 3)", M5.with(4, 20), Value("7")),
    (ENV, Alone, "min(3, 7)", M5.with(4, 20), Value("3")),
    (ENV, Alone, "min(3.9, 7.9)", M5.with(4, 20), Value("3")),
    (ENV, Alone, "min(3, 7.9)", M5.with(4, 20), Value("3")),
    (ENV, Alone, "min(7.9, 3)", M5.with(4, 20), Value("3")),
    // The concurrency test: one expression, and one per goroutine with its number.
    (ENV, Alone, "max(60, vcpus * 30)", M5.with(4, 20), Value("120")),
    (ENV, Alone, "100 + 7", M5, Value("107")),
    // ValidateExpression.
    (
        ENV,
        Alone,
        "((default_enis - 1) * (ips_per_eni - 1)) + 2",
        M5,
        Valid,
    ),
    (ENV, Alone, "((default_enis -", M5, Invalid),
    (ENV, Alone, "undefined_var + 1", M5, Invalid),
    (ENV, Alone, "vcpus > 4", M5, Invalid),
    (ENV, Alone, "instance_type", M5, Invalid),
    (ENV, Alone, "", M5, Invalid),
    (ENV, Alone, "   ", M5, Invalid),
    // ResolveResourceMap (m5.large, max_pods 20): the values as written into the kubelet
    // configuration; an entry it drops is a failure at validation.
    (ENV, Kube("cpu"), "vcpus * 30", M5, Value("60m")),
    (ENV, Kube("cpu"), "max(60, vcpus * 30)", M5, Value("60m")),
    (ENV, Kube("cpu"), "vcpus * 250", M5, Value("500m")),
    (ENV, Kube("memory"), "max_pods * 11", M5, Value("224Mi")),
    (ENV, Kube("ephemeral-storage"), "1 + 1", M5, Value("2Gi")),
    (ENV, Kube("pid"), "max_pods * 10", M5, Value("200")),
    (ENV, Kube("memory"), "memory_mib / 100", M5, Value("96Mi")),
    (ENV, Kube("memory"), "memory_mib / 64", M5, Value("128Mi")),
    (ENV, Kube("cpu"), "70 + vcpus", M5, Value("80m")),
    (ENV, Kube("cpu"), "60 + vcpus - 1", M5, Value("70m")),
    (ENV, Kube("cpu"), "70 + vcpus - 1", M5, Value("80m")),
    (ENV, Kube("cpu"), "80 - vcpus", M5, Value("80m")),
    (ENV, Kube("memory"), "max_pods + vcpus", M5, Value("32Mi")),
    (ENV, Kube("cpu"), "vcpus - vcpus", M5, Value("0m")),
    (ENV, Kube("memory"), "vcpus - vcpus", M5, Value("0Mi")),
    (ENV, Kube("pid"), "70 + vcpus - 1", M5, Value("71")),
    (ENV, Kube("ephemeral-storage"), "vcpus + 1", M5, Value("3Gi")),
    (
        ENV,
        Kube("cpu"),
        "9223372036854775807 - vcpus + 2",
        M5,
        Value("9223372036854775807m"),
    ),
    (ENV, Kube("cpu"), "vcpus - 100", M5, EvalFail),
    (ENV, Kube("cpu"), "100 / (vcpus - vcpus)", M5, EvalFail),
    (ENV, Kube("good"), "vcpus * 30", M5, Value("60")),
    (ENV, Kube("negative"), "vcpus - 100", M5, EvalFail),
    (
        ENV,
        Kube("memory"),
        "double(memory_mib) * 0.5",
        M5,
        Value("4096Mi"),
    ),
    // The node class's validation.
    (VALIDATION, MaxPods, "min(110,", M5_DEFAULT, Invalid),
    (VALIDATION, MaxPods, "undefined_var + 1", M5_DEFAULT, Invalid),
    (VALIDATION, MaxPods, "vcpus > 4", M5_DEFAULT, Invalid),
    (VALIDATION, Kube("cpu"), "vcpus *", M5_DEFAULT, Invalid),
    (
        VALIDATION,
        System("memory"),
        "bogus_var * 1048576",
        M5_DEFAULT,
        Invalid,
    ),
    (VALIDATION, Kube("cpu"), "0 - 1", M5_DEFAULT, EvalFail),
    (
        VALIDATION,
        System("memory"),
        "1048576 / (vcpus - vcpus)",
        M5_DEFAULT,
        EvalFail,
    ),
    (VALIDATION, MaxPods, "0 - 1", M5_DEFAULT, EvalFail),
    (
        VALIDATION,
        MaxPods,
        "min(110, default_enis * (ips_per_eni - 1))",
        M5_DEFAULT,
        Valid,
    ),
    // The structural test's expressions pass its shape check; compiled, two are not CEL over
    // Karpenter's variables (`memory` is none, `10m` no number).
    (STRUCTURE, MaxPods, "vcpus * 10", M5_DEFAULT, Valid),
    (STRUCTURE, Kube("memory"), "memory * 0.1", M5_DEFAULT, Invalid),
    (STRUCTURE, System("cpu"), "vcpus * 10m", M5_DEFAULT, Invalid),
    // The instance-type provider.
    (INSTANCE_TYPES, MaxPods, "0 - 1", M5_DEFAULT, EvalFail),
    (INSTANCE_TYPES, MaxPods, "2147483647 + 1", M5_DEFAULT, EvalFail),
    (
        INSTANCE_TYPES,
        MaxPods,
        "1 / (vcpus - vcpus)",
        M5_DEFAULT,
        EvalFail,
    ),
    (
        INSTANCE_TYPES,
        MaxPods,
        "min(110, vcpus * 8)",
        M5_DEFAULT,
        Value("16"),
    ),
    (
        INSTANCE_TYPES,
        Kube("cpu"),
        "vcpus * 30",
        M5_DEFAULT,
        Value("60m"),
    ),
    (
        INSTANCE_TYPES,
        Kube("memory"),
        "memory_mib / 100",
        M5_DEFAULT,
        Value("96Mi"),
    ),
    (
        INSTANCE_TYPES,
        System("cpu"),
        "vcpus * 30",
        M5_DEFAULT,
        Value("60m"),
    ),
    (
        INSTANCE_TYPES,
        System("memory"),
        "memory_mib / 100",
        M5_DEFAULT,
        Value("96Mi"),
    ),
    // The launch templates.
    (
        LAUNCH_TEMPLATES,
        MaxPods,
        "min(110, 20 * 2)",
        M5_DEFAULT,
        Value("40"),
    ),
    (
        LAUNCH_TEMPLATES,
        Kube("cpu"),
        "vcpus * 30",
        M5_DEFAULT,
        Value("60m"),
    ),
    (
        LAUNCH_TEMPLATES,
        Kube("memory"),
        "memory_mib / 100",
        M5_DEFAULT,
        Value("96Mi"),
    ),
    // End to end.
    (E2E, MaxPods, "min(110,", M5_DEFAULT, Invalid),
    (E2E, MaxPods, "undefined_var + 1", M5_DEFAULT, Invalid),
    (E2E, Kube("cpu"), "vcpus *", M5_DEFAULT, Invalid),
    (E2E, System("memory"), "bogus_var * 1048576", M5_DEFAULT, Invalid),
    (E2E, MaxPods, "0 - 1", M5_DEFAULT, EvalFail),
    (E2E, Kube("cpu"), "0 - 1", M5_DEFAULT, EvalFail),
    (
        E2E,
        System("memory"),
        "1048576 / (vcpus - vcpus)",
        M5_DEFAULT,
        EvalFail,
    ),
    (E2E, MaxPods, "min(110, vcpus * 20)", M5_DEFAULT, Valid),
    (E2E, MaxPods, "vcpus * 8", M5_DEFAULT, Value("16")),
    (E2E, MaxPods, "vcpus * 8", M5_DEFAULT.with(4, 58), Value("32")),
    (E2E, Kube("cpu"), "vcpus * 100", M5_DEFAULT, Value("200m")),
    (E2E, System("cpu"), "vcpus * 150", M5_DEFAULT, Value("300m")),
    // The documentation's examples and common expressions.
    (
        DOCS,
        MaxPods,
        "((default_enis - 1) * (ips_per_eni - 1)) + 2",
        M5_DEFAULT,
        Valid,
    ),
    (DOCS, Kube("cpu"), "max(60, vcpus * 30)", M5_DEFAULT, Valid),
    (DOCS, Kube("memory"), "11 * max_pods + 255", M5_DEFAULT, Valid),
    (DOCS, System("cpu"), "max(20, vcpus * 10)", M5_DEFAULT, Valid),
    (
        DOCS,
        System("memory"),
        "max(100, memory_mib / 64)",
        M5_DEFAULT,
        Valid,
    ),
    (
        DOCS,
        MaxPods,
        "min(250, ((default_enis - 1) * (ips_per_eni - 1)) * 16 + 2)",
        M5_DEFAULT,
        Valid,
    ),
    (DOCS, MaxPods, "min(110, max_pods)", M5_DEFAULT, Valid),
];

/// The field a case's expression is the value of.
fn field(at: At) -> Field {
    match at {
        Alone | MaxPods => Field::MaxPods,
        Kube(key) => Field::KubeReserved(key.to_string()),
        System(key) => Field::SystemReserved(key.to_string()),
    }
}

/// What the provider makes of a case: the value, `Invalid` or `EvalFail`.
fn provider_outcome(at: At, expression: &str, vars: Vars) -> Result<String, Outcome> {
    let compiled = match compile(&field(at), expression) {
        Ok(c) => c,
        Err(e) if e.refused() => return Err(Invalid),
        Err(e) => panic!("{expression:?} was not checked: {e}"),
    };
    if let Alone = at {
        return evaluate_expression(&compiled, &vars.facts(), vars.max_pods)
            .map(|n| n.to_string())
            .map_err(|_| EvalFail);
    }
    let (mut max_pods, mut kube_reserved, mut system_reserved) = (None, vec![], vec![]);
    match at {
        Alone | MaxPods => max_pods = Some(MaxPodsSource::Expression(expression)),
        Kube(key) => kube_reserved.push((key, expression)),
        System(key) => system_reserved.push((key, expression)),
    }
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods,
        pods_per_core: None,
        kube_reserved,
        system_reserved,
    })
    .map_err(|_| Invalid)?;
    let evaluation = evaluate(&kubelet, [vars.facts()]);
    let range = &evaluation.fields[0];
    if range.failed > 0 {
        return Err(EvalFail);
    }
    range.low.clone().ok_or(EvalFail)
}

#[test]
fn the_provider_agrees_with_every_case_of_karpenters_tests() {
    let mut disagreements = Vec::new();
    for (file, at, expression, vars, expected) in CASES {
        let got = provider_outcome(*at, expression, *vars);
        let agrees = match (expected, &got) {
            (Value(v), Ok(n)) => n == v,
            (Valid, Ok(_)) => true,
            (Invalid | EvalFail, Err(class)) => class == expected,
            _ => false,
        };
        if !agrees {
            disagreements.push(format!(
                "{file}: {at:?} {expression:?} with {vars:?}: Karpenter {expected:?}, the provider {got:?}"
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// `environment_test.go`'s table of reserved-resource expressions over six types: each
/// evaluates, without overflow, to a value of 0 or more, and two are exact.
#[test]
fn karpenters_reserved_expressions_evaluate_for_its_six_types() {
    // (type, vcpus, memory_mib, enis, ips, max_pods)
    let types: [(&str, i64, i64, i64, i64, i64); 6] = [
        ("m5.large", 2, 8192, 3, 10, 27),
        ("c5.xlarge", 4, 8192, 4, 15, 58),
        ("m5.4xlarge", 16, 65_536, 8, 30, 234),
        ("m5.24xlarge", 96, 393_216, 15, 50, 737),
        ("x1e.32xlarge", 128, 3_997_696, 8, 30, 234),
        ("u-24tb1.metal", 448, 25_165_824, 15, 50, 737),
    ];
    let expressions = [
        "min(110, default_enis * (ips_per_eni - 1))",
        "max_pods * 11",
        "memory_mib / 100",
        "max(60, vcpus * 30)",
        "max(100, memory_mib / 64)",
    ];
    for (instance_type, vcpus, memory_mib, enis, ips, max_pods) in types {
        let vars = Vars {
            instance_type,
            vcpus,
            memory_mib,
            enis,
            ips,
            max_pods,
        };
        for expression in expressions {
            let c = compile(&Field::MaxPods, expression).expect("compiles");
            let n = evaluate_expression(&c, &vars.facts(), max_pods)
                .unwrap_or_else(|e| panic!("{expression} on {instance_type}: {e}"));
            assert!(n >= 0, "{expression} on {instance_type}: {n}");
            match expression {
                "memory_mib / 100" => assert_eq!(n, memory_mib / 100),
                "max_pods * 11" => assert_eq!(n, max_pods * 11),
                _ => {}
            }
        }
    }
}

/// The tests that set several fields at once: each field's value, in order (`maxPods`, then
/// kubeReserved, then systemReserved), on m5.large.
#[test]
fn karpenters_whole_kubelets_give_its_values() {
    let cpu_and_memory = |cpu: &'static str, memory: &'static str| vec![("cpu", cpu), ("memory", memory)];
    let cases: Vec<(&str, KubeletSource<'static>, &[&str])> = vec![
        (
            VALIDATION,
            KubeletSource {
                max_pods: Some(MaxPodsSource::Expression(
                    "min(110, default_enis * (ips_per_eni - 1))",
                )),
                kube_reserved: vec![("cpu", "max(60, vcpus * 30)")],
                system_reserved: vec![("memory", "max_pods * 11")],
                ..KubeletSource::default()
            },
            // maxPods 27, and the reservation sees it: 297 → 304Mi.
            &["27", "60m", "304Mi"],
        ),
        (
            INSTANCE_TYPES,
            KubeletSource {
                max_pods: Some(MaxPodsSource::Expression("min(110, vcpus * 8)")),
                kube_reserved: vec![("memory", "max_pods * 11")],
                ..KubeletSource::default()
            },
            &["16", "176Mi"],
        ),
        (
            INSTANCE_TYPES,
            KubeletSource {
                kube_reserved: vec![
                    ("cpu", "vcpus * 30"),
                    ("memory", "memory_mib / 100"),
                    ("ephemeral-storage", "3Gi"),
                ],
                ..KubeletSource::default()
            },
            &["60m", "96Mi"],
        ),
        (
            LAUNCH_TEMPLATES,
            KubeletSource {
                max_pods: Some(MaxPodsSource::Expression("min(110, 20 * 2)")),
                kube_reserved: cpu_and_memory("vcpus * 30", "memory_mib / 100"),
                system_reserved: cpu_and_memory("vcpus * 30", "memory_mib / 100"),
                ..KubeletSource::default()
            },
            &["40", "60m", "96Mi", "60m", "96Mi"],
        ),
        (
            E2E,
            KubeletSource {
                max_pods: Some(MaxPodsSource::Expression("min(110, 1 + 5)")),
                kube_reserved: cpu_and_memory("vcpus * 10", "memory_mib / 100"),
                system_reserved: cpu_and_memory("vcpus * 10", "memory_mib / 100"),
                ..KubeletSource::default()
            },
            &["6", "20m", "96Mi", "20m", "96Mi"],
        ),
        (
            DOCS,
            KubeletSource {
                max_pods: Some(MaxPodsSource::Expression(
                    "((default_enis - 1) * (ips_per_eni - 1)) + 2",
                )),
                kube_reserved: cpu_and_memory("max(60, vcpus * 30)", "11 * max_pods + 255"),
                system_reserved: cpu_and_memory("max(20, vcpus * 10)", "max(100, memory_mib / 64)"),
                ..KubeletSource::default()
            },
            &["20", "60m", "480Mi", "20m", "128Mi"],
        ),
    ];
    for (file, source, want) in cases {
        let kubelet = Kubelet::compile(&source).unwrap_or_else(|e| panic!("{file}: {e:?}"));
        let quantities = kubelet
            .kube_reserved
            .iter()
            .filter(|(_, r)| matches!(r, Reserved::Quantity(_)))
            .count();
        assert!(quantities <= 1, "{file}");
        let evaluation = evaluate(&kubelet, [M5_DEFAULT.facts()]);
        assert!(evaluation.succeeded(), "{file}: {evaluation:?}");
        let got: Vec<String> = evaluation
            .fields
            .iter()
            .map(|f| f.low.clone().unwrap_or_default())
            .collect();
        assert_eq!(got, want, "{file}");
    }
}
