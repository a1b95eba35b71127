//! Karpenter's documented expressions and its own test cases, the rules of evaluation and
//! rendering, and inputs meant to break the parser (length, depth, overflow).

mod karpenter;

use super::super::{InstanceType, catalog};
use super::{
    EniFigures, Field, Kubelet, KubeletSource, MAX_CHARS, MaxPodsSource, Problem, TypeFacts, compile,
    evaluate, is_expression, is_quantity, render, summary,
};

fn facts(name: &str, vcpus: i64, memory_mib: i64, enis: i64, ips: i64) -> TypeFacts<'_> {
    TypeFacts {
        instance_type: name,
        vcpus,
        memory_mib,
        enis: Some(EniFigures {
            default_enis: enis,
            ips_per_eni: ips,
        }),
        default_pods: enis * (ips - 1) + 2,
    }
}

/// m5.large (2 vCPUs, 8 GiB, 3 ENIs × 10 IPs: 29 pods) and m5.24xlarge (96, 384 GiB, 15 × 50:
/// 737 pods).
fn two_types() -> Vec<TypeFacts<'static>> {
    vec![
        facts("m5.large", 2, 8192, 3, 10),
        facts("m5.24xlarge", 96, 393_216, 15, 50),
    ]
}

fn problem(field: Field, source: &str) -> Problem {
    match compile(&field, source) {
        Ok(c) => panic!("{source:?} compiled (result {})", c.result_type()),
        Err(e) => {
            assert_eq!(e.field, field);
            e.problem
        }
    }
}

fn message(field: Field, source: &str) -> String {
    match compile(&field, source) {
        Ok(_) => panic!("{source:?} compiled"),
        Err(e) => e.to_string(),
    }
}

/// The expression alone as kubeReserved.cpu, evaluated over `types`: (low, high) or the first
/// failure's message.
fn cpu_range(source: &str, types: Vec<TypeFacts<'_>>) -> Result<(String, String), String> {
    let kubelet = Kubelet::compile(&KubeletSource {
        kube_reserved: vec![("cpu", source)],
        ..KubeletSource::default()
    })
    .map_err(|e| format!("{e:?}"))?;
    let evaluation = evaluate(&kubelet, types);
    let range = evaluation
        .fields
        .first()
        .ok_or_else(|| format!("{source:?} is not an expression"))?;
    if let Some(f) = &range.first_failure {
        return Err(f.message.clone());
    }
    Ok((
        range.low.clone().unwrap_or_default(),
        range.high.clone().unwrap_or_default(),
    ))
}

#[test]
fn the_docs_example_compiles_and_evaluates_in_karpenters_order() {
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression(
            "((default_enis - 1) * (ips_per_eni - 1)) + 2",
        )),
        pods_per_core: None,
        kube_reserved: vec![("cpu", "max(60, vcpus * 30)"), ("memory", "11 * max_pods + 255")],
        system_reserved: vec![
            ("cpu", "max(20, vcpus * 10)"),
            ("memory", "max(100, memory_mib / 64)"),
        ],
    })
    .expect("the docs' example compiles");
    let evaluation = evaluate(&kubelet, two_types());
    assert!(evaluation.succeeded(), "{evaluation:?}");
    assert_eq!(evaluation.types, 2);
    let got: Vec<(String, String, String, usize)> = evaluation
        .fields
        .iter()
        .map(|f| {
            (
                f.field.name(),
                f.low.clone().unwrap_or_default(),
                f.high.clone().unwrap_or_default(),
                f.evaluated,
            )
        })
        .collect();
    // maxPods: (3-1)*(10-1)+2 = 20, (15-1)*(50-1)+2 = 688. kubeReserved.memory sees the
    // resolved maxPods: 11*20+255 = 475 → 480Mi, 11*688+255 = 7823 → 7824Mi.
    let want = [
        ("max_pods", "20", "688"),
        ("kube_reserved[\"cpu\"]", "60m", "2880m"),
        ("kube_reserved[\"memory\"]", "480Mi", "7824Mi"),
        ("system_reserved[\"cpu\"]", "20m", "960m"),
        ("system_reserved[\"memory\"]", "128Mi", "6144Mi"),
    ];
    assert_eq!(got.len(), want.len());
    for ((name, low, high, n), (wn, wl, wh)) in got.iter().zip(want) {
        assert_eq!((name.as_str(), low.as_str(), high.as_str(), *n), (wn, wl, wh, 2));
    }
}

#[test]
fn the_docs_common_expressions_compile_to_numbers() {
    for (field, source, result) in [
        (
            Field::MaxPods,
            "((default_enis - 1) * (ips_per_eni - 1)) + 2",
            "int",
        ),
        (
            Field::MaxPods,
            "min(250, ((default_enis - 1) * (ips_per_eni - 1)) * 16 + 2)",
            "int",
        ),
        (Field::MaxPods, "min(110, max_pods)", "int"),
        (Field::KubeReserved("memory".into()), "11 * max_pods + 255", "int"),
        (
            Field::SystemReserved("memory".into()),
            "max(100, memory_mib / 64)",
            "int",
        ),
        (Field::KubeReserved("cpu".into()), "max(60, vcpus * 30)", "int"),
        (Field::KubeReserved("cpu".into()), "70 + vcpus", "int"),
        // also fine in CEL, as far as a plan can tell
        (Field::MaxPods, "110", "int"),
        (Field::KubeReserved("cpu".into()), "double(vcpus) * 1.5", "double"),
        (Field::KubeReserved("cpu".into()), "max(3.9, 7.9)", "double"),
        (Field::KubeReserved("cpu".into()), "max(1, 2.5)", "double"),
        (
            Field::KubeReserved("cpu".into()),
            "int(double(memory_mib) * 0.01)",
            "int",
        ),
        (
            Field::MaxPods,
            "instance_type.startsWith('m5') ? 58 : max_pods",
            "int",
        ),
        (
            Field::MaxPods,
            "size(instance_type) > 8 && vcpus >= 4 ? 110 : 58",
            "int",
        ),
        (Field::MaxPods, "double(vcpus) > 2.5 ? 1 : 2", "int"),
        (Field::MaxPods, "vcpus == 2 ? 1 : 0", "int"),
        (Field::MaxPods, "[10, 20, 30][1]", "int"),
        (Field::MaxPods, "{'a': 1}['a'] + {'b': 2}.b", "int"),
        (Field::MaxPods, "[2, 4].exists(x, x == vcpus) ? 1 : 2", "int"),
        // cel-go binds the element type of `map`'s result: an int, not a dyn.
        (Field::MaxPods, "[1, 2].map(x, x * vcpus)[0]", "int"),
        (Field::MaxPods, "[1, 2].filter(x, x > 1).size()", "int"),
        (Field::MaxPods, "[1, 2].exists_one(x, x == 2) ? 1 : 0", "int"),
        (Field::MaxPods, "{'a': 1}.all(k, k == 'a') ? 1 : 0", "int"),
        (Field::MaxPods, "int('12') + int(2.9) + int(3u)", "int"),
        (Field::MaxPods, "has({'a': 1}.a) ? 1 : 0", "int"),
        // What comes through dyn is fine once converted, or compared with one type.
        (Field::MaxPods, "int(dyn(5))", "int"),
        (Field::MaxPods, "int([1, 2.0][1])", "int"),
        (Field::MaxPods, "dyn(vcpus) == 2.0 ? 1 : 0", "int"),
        (Field::MaxPods, "dyn(2) + vcpus", "int"),
        (Field::MaxPods, "[1, 2.0].size()", "int"),
        (Field::MaxPods, "vcpus in [1, 2.0] ? 1 : 0", "int"),
        (Field::MaxPods, "size([]) + size({})", "int"),
        (Field::MaxPods, "([] + [vcpus])[0]", "int"),
        (Field::MaxPods, "type(vcpus) == int ? 1 : 0", "int"),
        (Field::MaxPods, "null == null ? 1 : 0", "int"),
        (Field::MaxPods, "duration('1h') != null ? 1 : 0", "int"),
        (Field::MaxPods, "duration('90m').getMinutes()", "int"),
        (Field::MaxPods, "timestamp(0).getFullYear('UTC')", "int"),
        (Field::MaxPods, "{'a-b': 3}.`a-b`", "int"),
    ] {
        match compile(&field, source) {
            Ok(c) => assert_eq!(c.result_type(), result, "{source}"),
            Err(e) => panic!("{source:?} was refused: {e}"),
        }
    }
}

#[test]
fn karpenters_compile_failures_are_refused_naming_the_field() {
    let cpu = || Field::KubeReserved("cpu".into());
    assert!(matches!(
        problem(Field::MaxPods, "min(110,"),
        Problem::Syntax { .. }
    ));
    assert_eq!(
        problem(Field::MaxPods, "undefined_var + 1"),
        Problem::UnknownVariable {
            name: "undefined_var".into()
        }
    );
    assert_eq!(
        problem(cpu(), "max(a, b, c)"),
        Problem::TwoArguments {
            name: "max".into(),
            given: 3
        }
    );
    assert_eq!(
        problem(cpu(), "min(vcpus)"),
        Problem::TwoArguments {
            name: "min".into(),
            given: 1
        }
    );
    let text = message(cpu(), "vcpus * 1.5");
    assert!(
        text.starts_with("kubelet.kube_reserved[\"cpu\"] = `vcpus * 1.5`: "),
        "{text}"
    );
    assert!(text.contains("`double(vcpus) * 1.5`"), "{text}");
    let text = message(Field::SystemReserved("memory".into()), "memory_mib / 64 + 0.5");
    assert!(text.contains("kubelet.system_reserved[\"memory\"]"), "{text}");
    assert!(text.contains("double("), "{text}");
    let text = message(Field::MaxPods, "vcpus > 4 ? 110 : 58.5");
    assert!(
        text.contains("branches of `?:`") && text.contains("int and double"),
        "{text}"
    );
    let text = message(Field::MaxPods, "undefined_var + 1");
    assert!(text.contains("vcpus, memory_mib, default_enis"), "{text}");
    // Whole messages, as a plan shows them.
    for (field, source, said) in [
        (
            Field::MaxPods,
            "min(110,",
            "kubelet.max_pods = `min(110,`: not valid CEL: it ends too early: a call, a bracket or an operator is not complete (line 1, column 9)",
        ),
        (
            cpu(),
            "max(a, b, c)",
            "kubelet.kube_reserved[\"cpu\"] = `max(a, b, c)`: max() takes exactly two arguments, here 3: nest the calls instead, e.g. `max(a, max(b, c))`",
        ),
        (
            Field::MaxPods,
            "double(memory_mib) / 1024.0 == 8 ? 20 : 30",
            "kubelet.max_pods = `double(memory_mib) / 1024.0 == 8 ? 20 : 30`: `==` compares a double with an int, and CEL compares only values of one type: compare a double with a double: write `8.0`, or `int(…) == 8`",
        ),
        (
            Field::MaxPods,
            "vcpus == 2.0 ? 1 : 0",
            "kubelet.max_pods = `vcpus == 2.0 ? 1 : 0`: `==` compares an int with a double, and CEL compares only values of one type: compare an int with an int: write `2`, or `double(vcpus) == 2.0`",
        ),
        (
            Field::MaxPods,
            "vcpus > 2.5 ? 1 : 2",
            "kubelet.max_pods = `vcpus > 2.5 ? 1 : 2`: `>` compares an int with a double, and CEL compares only values of one type (Karpenter's environment does not turn on CEL's cross-type numeric comparisons): write `double(vcpus) > 2.5`",
        ),
        (
            cpu(),
            "max(dyn(1), 2)",
            "kubelet.kube_reserved[\"cpu\"] = `max(dyn(1), 2)`: the expression's type is dyn, known only when it runs (from dyn(…), a list or map mixing types, or a `?:`, max() or min() with a dyn side), but Karpenter needs one whose type is int or double (millicores): convert it, e.g. `int(…)` or `double(…)`",
        ),
        (
            cpu(),
            "-1 + vcpus",
            "kubelet.kube_reserved[\"cpu\"] = `-1 + vcpus`: Karpenter refuses a reservation that starts with `-` before it reads it as CEL (InvalidKubeletConfiguration: \"can't be a negative resource quantity\"): write it so that it does not start with `-`, e.g. `vcpus - 1` rather than `-1 + vcpus`",
        ),
        (
            Field::SystemReserved("cpu".into()),
            "vcpus * 1.5",
            "kubelet.system_reserved[\"cpu\"] = `vcpus * 1.5`: `*` of an int and a double: CEL converts nothing implicitly: write `double(vcpus) * 1.5` (a double result is truncated to an integer), or keep to ints, e.g. `vcpus * 3 / 2` for 1.5 times",
        ),
    ] {
        assert_eq!(message(field, source), said);
    }
}

/// What a refused expression's problem must be.
type Expect = fn(&Problem) -> bool;

#[test]
fn what_cel_go_refuses_for_certain_is_refused() {
    let cases: &[(&str, Expect)] = &[
        ("vcpus > 4", |p| matches!(p, Problem::NotANumber { .. })),
        ("instance_type", |p| matches!(p, Problem::NotANumber { .. })),
        ("5u", |p| matches!(p, Problem::NotANumber { .. })),
        ("vcpus + 1u", |p| matches!(p, Problem::Type(_))),
        ("max(1u, 2)", |p| matches!(p, Problem::Type(_))),
        ("max('a', 2)", |p| matches!(p, Problem::Type(_))),
        ("1 % 2.0", |p| matches!(p, Problem::Type(_))),
        ("-(1u) + 1", |p| matches!(p, Problem::Type(_))),
        ("vcpus && true ? 1 : 2", |p| matches!(p, Problem::Type(_))),
        ("vcpus ? 1 : 2", |p| matches!(p, Problem::Type(_))),
        ("!vcpus ? 1 : 2", |p| matches!(p, Problem::Type(_))),
        ("size(vcpus)", |p| matches!(p, Problem::Type(_))),
        ("int(true)", |p| matches!(p, Problem::Type(_))),
        ("vcpus.foo", |p| matches!(p, Problem::Type(_))),
        ("vcpus[0]", |p| matches!(p, Problem::Type(_))),
        ("[1, 2]['a']", |p| matches!(p, Problem::Type(_))),
        ("vcpus < 'a' ? 1 : 2", |p| matches!(p, Problem::Type(_))),
        ("[1] < [2] ? 1 : 2", |p| matches!(p, Problem::Type(_))),
        ("instance_type + 1", |p| matches!(p, Problem::Type(_))),
        ("Foo{a: 1}", |p| matches!(p, Problem::Type(_))),
        ("[1, 2].all(i, v, v > 0) ? 1 : 0", |p| {
            matches!(
                p,
                Problem::Type(_) | Problem::UnknownFunction { .. } | Problem::UnknownVariable { .. }
            )
        }),
        ("vcpus in 3 ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("math.greatest(1, 2)", |p| {
            matches!(p, Problem::UnknownFunction { .. })
        }),
        ("greatest(1, 2)", |p| matches!(p, Problem::UnknownFunction { .. })),
        ("vcpus.max(2)", |p| matches!(p, Problem::Type(_))),
        ("int(1, 2)", |p| matches!(p, Problem::Type(_))),
        ("instance_type.size(1)", |p| matches!(p, Problem::Type(_))),
        ("ceil(2.5)", |p| matches!(p, Problem::UnknownFunction { .. })),
        ("foo.bar + 1", |p| matches!(p, Problem::UnknownVariable { .. })),
        // No cross-type comparison in Karpenter's environment, and `==` wants one type.
        ("vcpus > 2.5 ? 1 : 2", |p| matches!(p, Problem::Type(_))),
        ("vcpus < 2u ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("1.5 <= max_pods ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("vcpus == 2.0 ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("double(memory_mib) / 1024.0 == 8 ? 20 : 30", |p| {
            matches!(p, Problem::Type(_))
        }),
        ("instance_type == 1 ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("instance_type != null ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("vcpus == null ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("[1] == [1.0] ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        // `?:` branches of one type, null included.
        ("vcpus > 4 ? 20 : 10.0", |p| matches!(p, Problem::Type(_))),
        ("vcpus > 4 ? 1 : null", |p| matches!(p, Problem::Type(_))),
        ("vcpus > 4 ? null : 1", |p| matches!(p, Problem::Type(_))),
        // A dyn result: Karpenter wants exactly int or double.
        ("dyn(5)", |p| matches!(p, Problem::Dynamic { .. })),
        ("max(dyn(1), 2)", |p| matches!(p, Problem::Dynamic { .. })),
        ("[1, 2.0][0]", |p| matches!(p, Problem::Dynamic { .. })),
        ("vcpus > 4 ? 1 : dyn(2)", |p| matches!(p, Problem::Dynamic { .. })),
        ("[][0]", |p| matches!(p, Problem::Dynamic { .. })),
        ("{}['a']", |p| matches!(p, Problem::Dynamic { .. })),
        ("{'a': 1, 'b': 2.0}['a']", |p| {
            matches!(p, Problem::Dynamic { .. })
        }),
        ("dyn('a')", |p| matches!(p, Problem::Dynamic { .. })),
        // Aggregates: one element type for `+`, the key type for a lookup, `in`.
        ("size([1] + [2.0])", |p| matches!(p, Problem::Type(_))),
        ("{'a': 1}[1]", |p| matches!(p, Problem::Type(_))),
        ("1 in ['a'] ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("[1, 2].exists(x, x + 1) ? 1 : 0", |p| {
            matches!(p, Problem::Type(_))
        }),
        ("[1, 2].filter(x, x).size()", |p| matches!(p, Problem::Type(_))),
        // Time: no duration of an int (cel-go v0.28.1), dates of timestamps only.
        ("int(duration(5))", |p| matches!(p, Problem::Type(_))),
        ("duration('1h').getFullYear()", |p| matches!(p, Problem::Type(_))),
        ("duration('1h').getHours('UTC')", |p| {
            matches!(p, Problem::Type(_))
        }),
        ("timestamp(0).getHours(1)", |p| matches!(p, Problem::Type(_))),
        // `dyn` is a function, not a type name; existsOne is cel-rust's, not cel-go's.
        ("type(vcpus) == dyn ? 1 : 0", |p| {
            matches!(p, Problem::UnknownVariable { .. })
        }),
        ("[1].existsOne(x, x == 1) ? 1 : 0", |p| {
            matches!(p, Problem::Type(_))
        }),
        ("[1]. existsOne (x, x == 1) ? 1 : 0", |p| {
            matches!(p, Problem::Type(_))
        }),
        ("contains('a', 'b') ? 1 : 0", |p| matches!(p, Problem::Type(_))),
        ("{'a': 1}.?a", |p| matches!(p, Problem::Syntax { .. })),
        ("", |p| matches!(p, Problem::Syntax { .. })),
        ("vcpus +", |p| matches!(p, Problem::Syntax { .. })),
        ("99999999999999999999", |p| matches!(p, Problem::Syntax { .. })),
    ];
    for (source, expected) in cases {
        let p = problem(Field::MaxPods, source);
        assert!(expected(&p), "{source:?}: {p:?}");
    }
}

#[test]
fn results_are_truncated_rounded_and_written_in_the_fields_unit() {
    // Rounding from Karpenter's units table: 480 → 480m (a multiple of 10), 3 → 3Gi, 4096 →
    // 4096. The docs' memory example, 630 → 630Mi, does not follow the rounding they state (up
    // to a multiple of 16): 630 = 39 × 16 + 6, so Karpenter writes 640Mi.
    let cpu = Field::KubeReserved("cpu".into());
    let memory = Field::SystemReserved("memory".into());
    for (field, n, written) in [
        (&cpu, 480, "480m"),
        (&cpu, 481, "490m"),
        (&cpu, 0, "0m"),
        (&cpu, i64::MAX, "9223372036854775807m"),
        (&memory, 630, "640Mi"),
        (&memory, 640, "640Mi"),
        (&memory, 1, "16Mi"),
        (&Field::KubeReserved("ephemeral-storage".into()), 3, "3Gi"),
        (&Field::SystemReserved("pid".into()), 4096, "4096"),
        (&Field::MaxPods, 110, "110"),
    ] {
        assert_eq!(render(field, n), written, "{field} {n}");
    }
    let one = || vec![facts("m5.large", 2, 8192, 3, 10)];
    assert_eq!(
        cpu_range("max(3.9, 7.9)", one()),
        Ok(("10m".into(), "10m".into()))
    );
    assert_eq!(
        cpu_range("max(1, 2.5) * 100.0", one()),
        Ok(("250m".into(), "250m".into()))
    );
    assert_eq!(
        cpu_range("1.0 - 0.9 - 0.5", one()),
        Ok(("0m".into(), "0m".into()))
    );
    assert_eq!(cpu_range("min(-0.5, 3)", one()), Ok(("0m".into(), "0m".into())));
    assert_eq!(
        cpu_range("vcpus * 30", two_types()),
        Ok(("60m".into(), "2880m".into()))
    );
}

#[test]
fn karpenters_evaluation_failures_are_found_for_the_type_that_fails() {
    let types = || vec![facts("m5.large", 2, 8192, 3, 10), facts("t3.nano", 2, 512, 2, 2)];
    // Karpenter's test cases: a negative reservation, an integer division by zero.
    let err = cpu_range("0 - 1", types()).expect_err("negative");
    assert!(err.contains("-1") && err.contains("max(0, …)"), "{err}");
    let kubelet = Kubelet::compile(&KubeletSource {
        system_reserved: vec![("memory", "1048576 / (vcpus - vcpus)")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let evaluation = evaluate(&kubelet, types());
    let range = &evaluation.fields[0];
    assert_eq!((range.failed, range.evaluated), (2, 0));
    let failure = range.first_failure.as_ref().expect("a failure");
    assert_eq!(failure.instance_type, "m5.large");
    assert!(failure.message.contains("divides by zero"), "{failure:?}");
    // Only small instances go negative: the type is named.
    let err = cpu_range("memory_mib - 1024", types()).expect_err("t3.nano goes negative");
    assert!(err.contains("-512"), "{err}");
    let kubelet = Kubelet::compile(&KubeletSource {
        kube_reserved: vec![("cpu", "memory_mib - 1024")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let range = &evaluate(&kubelet, types()).fields[0];
    assert_eq!(
        range.first_failure.as_ref().map(|f| f.instance_type.as_str()),
        Some("t3.nano")
    );
    assert_eq!((range.low.as_deref(), range.evaluated), (Some("7170m"), 1));
    for (source, needle) in [
        ("1.0 / 0.0", "not a finite number"),
        ("0.0 / 0.0", "not a finite number"),
        ("1e30 * double(vcpus)", "beyond a 64-bit integer"),
        ("9223372036854775807 + vcpus", "overflows"),
        ("vcpus % 0", "remainder by zero"),
        ("int(1e19)", "int() fails"),
        ("int('x')", "int() fails"),
        ("[1][vcpus]", "it fails"),
    ] {
        let err = cpu_range(source, types()).expect_err(source);
        assert!(err.contains(needle), "{source}: {err}");
    }
}

#[test]
fn max_pods_is_range_checked_and_reservations_see_the_resolved_value() {
    let m5 = || vec![facts("m5.large", 2, 8192, 3, 10)];
    let max_pods = |source: &str| {
        let kubelet = Kubelet::compile(&KubeletSource {
            max_pods: Some(MaxPodsSource::Expression(source)),
            ..KubeletSource::default()
        })
        .expect("compiles");
        let range = evaluate(&kubelet, m5()).fields.remove(0);
        match range.first_failure {
            Some(f) => Err(f.message),
            None => Ok(range.low.unwrap_or_default()),
        }
    };
    assert_eq!(max_pods("\"110\".size() + 107"), Ok("110".into()));
    assert_eq!(max_pods("110"), Ok("110".into()));
    assert_eq!(max_pods("2147483647"), Ok("2147483647".into()));
    assert!(max_pods("2147483648").is_err_and(|m| m.contains("outside [0, 2147483647]")));
    assert!(max_pods("max_pods - 30").is_err_and(|m| m.contains("-1")));
    // What `max_pods` is: for the maxPods expression the type's default (29 for m5.large) with
    // podsPerCore applied; for the reservations the resolved maxPods, podsPerCore applied too.
    let memory = |max_pods: Option<MaxPodsSource<'_>>, pods_per_core: Option<i64>| {
        let kubelet = Kubelet::compile(&KubeletSource {
            max_pods,
            pods_per_core,
            kube_reserved: vec![("pid", "max_pods")],
            ..KubeletSource::default()
        })
        .expect("compiles");
        let evaluation = evaluate(&kubelet, m5());
        evaluation
            .fields
            .iter()
            .map(|f| f.low.clone().unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert_eq!(memory(None, None), ["29"]);
    assert_eq!(memory(None, Some(10)), ["20"]);
    assert_eq!(memory(None, Some(0)), ["29"]);
    assert_eq!(memory(Some(MaxPodsSource::Literal(110)), None), ["110"]);
    assert_eq!(memory(Some(MaxPodsSource::Literal(110)), Some(4)), ["8"]);
    assert_eq!(
        memory(Some(MaxPodsSource::Expression("max_pods + 1")), None),
        ["30", "30"]
    );
    assert_eq!(
        memory(Some(MaxPodsSource::Expression("max_pods + 1")), Some(10)),
        ["21", "20"]
    );
}

#[test]
fn a_failing_max_pods_leaves_the_reservations_unevaluated_for_that_type() {
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression("vcpus > 8 ? max_pods : 0 - 1")),
        kube_reserved: vec![("memory", "11 * max_pods + 255")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let evaluation = evaluate(&kubelet, two_types());
    assert!(!evaluation.succeeded());
    let [max_pods, memory] = evaluation.fields.as_slice() else {
        panic!("two fields: {evaluation:?}")
    };
    assert_eq!((max_pods.failed, max_pods.evaluated), (1, 1));
    assert_eq!(memory.evaluated, 1);
    assert!(memory.not_evaluated.is_some());
    let line = summary(max_pods, evaluation.types, "types this pool can launch");
    assert!(
        line.starts_with(
            "max_pods fails for 1 of the 2 types this pool can launch; for m5.large: it evaluates to -1"
        ),
        "{line}"
    );
}

#[test]
fn only_values_that_are_not_quantities_are_expressions() {
    for quantity in [
        "480", "1e3", "100m", "1.5Gi", "0.5", "+1k", "-1", ".5", "5.", "1E-3", "e3", "m", "2Ei",
    ] {
        assert!(is_quantity(quantity) && !is_expression(quantity), "{quantity}");
    }
    for expression in [
        "vcpus * 10",
        "max(60, vcpus * 30)",
        "70 + vcpus",
        "memory_mib / 64",
        "",
        "1e",
        "1Ki5",
        "1KiB",
        " 480",
        "480 ",
        "1e99999999999999999999",
        "max_pods",
    ] {
        assert!(is_expression(expression), "{expression:?}");
    }
    // A quantity is passed through, not compiled; `"480"` is 480 cores, not millicores.
    let kubelet = Kubelet::compile(&KubeletSource {
        kube_reserved: vec![("cpu", "480"), ("memory", "vcpus * 64")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let fields: Vec<String> = kubelet.expressions().map(|c| c.field().name()).collect();
    assert_eq!(fields, ["kube_reserved[\"memory\"]"]);
}

#[test]
fn every_bad_expression_of_a_kubelet_is_reported() {
    let errors = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression("min(110,")),
        pods_per_core: None,
        kube_reserved: vec![("cpu", "vcpus * 1.5"), ("memory", "512Mi")],
        system_reserved: vec![("memory", "undefined_var + 1")],
    })
    .expect_err("three are bad");
    let fields: Vec<String> = errors.iter().map(|e| e.field.to_string()).collect();
    assert_eq!(
        fields,
        [
            "kubelet.max_pods",
            "kubelet.kube_reserved[\"cpu\"]",
            "kubelet.system_reserved[\"memory\"]"
        ]
    );
    assert!(errors.iter().all(|e| e.refused()));
}

#[test]
fn the_summary_says_the_range_in_the_issues_words() {
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression("max_pods")),
        kube_reserved: vec![("cpu", "20 + vcpus * 0 + (vcpus > 2 ? 460 : 0)")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let mut types: Vec<TypeFacts<'_>> = Vec::new();
    for i in 0..1363_i64 {
        let mut t = facts("x", 2 + i % 3, 1024, 3, 10);
        t.default_pods = 8 + (i % 243);
        types.push(t);
    }
    let evaluation = evaluate(&kubelet, types);
    let lines: Vec<String> = evaluation
        .fields
        .iter()
        .map(|f| summary(f, evaluation.types, "types this pool can launch"))
        .collect();
    assert_eq!(
        lines,
        [
            "max_pods evaluates to 8–250 over the 1,363 types this pool can launch",
            "kube_reserved[\"cpu\"] evaluates to 20m–480m over the 1,363 types this pool can launch",
        ]
    );
    let one = evaluate(&kubelet, [facts("m5.large", 2, 8192, 3, 10)]);
    assert_eq!(
        summary(&one.fields[1], 1, "types of the table"),
        "kube_reserved[\"cpu\"] evaluates to 20m over the 1 types of the table"
    );
}

#[test]
fn durations_and_timestamps_are_checked_not_evaluated() {
    let source = "duration('1h').getHours() > 0 ? 110 : 58";
    let c = compile(&Field::MaxPods, source).expect("CEL's standard library has durations");
    assert!(!c.evaluable());
    assert!(compile(&Field::MaxPods, "vcpus.getHours()").is_err());
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression(source)),
        ..KubeletSource::default()
    })
    .expect("compiles");
    let evaluation = evaluate(&kubelet, two_types());
    let range = &evaluation.fields[0];
    assert_eq!((range.evaluated, range.failed), (0, 0));
    assert!(evaluation.succeeded());
    let line = summary(range, 2, "types");
    assert!(
        line.starts_with("max_pods is not evaluated at plan: it uses durations"),
        "{line}"
    );
}

/// m5.large and t3.nano with their ENI figures, c9g.medium without (its default of 40 pods
/// known all the same).
fn with_one_without_enis() -> Vec<TypeFacts<'static>> {
    let mut c9g = facts("c9g.medium", 1, 2048, 2, 20);
    c9g.enis = None;
    vec![
        facts("m5.large", 2, 8192, 3, 10),
        facts("t3.nano", 2, 512, 2, 2),
        c9g,
    ]
}

#[test]
fn a_type_without_eni_figures_is_skipped_only_by_what_reads_them() {
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression(
            "((default_enis - 1) * (ips_per_eni - 1)) + 2",
        )),
        pods_per_core: None,
        // reads max_pods, which the maxPods expression gives from ENI figures
        kube_reserved: vec![("memory", "11 * max_pods + 255")],
        // reads neither
        system_reserved: vec![("cpu", "max(20, vcpus * 10)")],
    })
    .expect("compiles");
    let evaluation = evaluate(&kubelet, with_one_without_enis());
    assert!(evaluation.succeeded(), "{evaluation:?}");
    assert_eq!((evaluation.types, evaluation.skipped_without_eni), (3, 1));
    let counts: Vec<(usize, usize)> = evaluation
        .fields
        .iter()
        .map(|f| (f.evaluated, f.skipped_without_eni))
        .collect();
    assert_eq!(counts, [(2, 1), (2, 1), (3, 0)]);
    let lines: Vec<String> = evaluation
        .fields
        .iter()
        .map(|f| summary(f, evaluation.types, "types of the table"))
        .collect();
    assert_eq!(
        lines,
        [
            "max_pods evaluates to 3–20 over the 2 types of the table; 1 type without ENI figures in the table was skipped: Karpenter reads those from EC2",
            "kube_reserved[\"memory\"] evaluates to 288Mi–480Mi over the 2 types of the table; 1 type without ENI figures in the table was skipped: Karpenter reads those from EC2",
            "system_reserved[\"cpu\"] evaluates to 20m over the 3 types of the table",
        ]
    );
    // Without an expression that reads ENI figures, every type takes part: c9g.medium's
    // max_pods is its default, 40.
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression("min(110, max_pods)")),
        kube_reserved: vec![("pid", "max_pods")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let evaluation = evaluate(&kubelet, with_one_without_enis());
    assert_eq!(evaluation.skipped_without_eni, 0);
    let ranges: Vec<(String, usize)> = evaluation
        .fields
        .iter()
        .map(|f| (format!("{:?}–{:?}", f.low, f.high), f.evaluated))
        .collect();
    assert_eq!(
        ranges,
        [
            ("Some(\"4\")–Some(\"40\")".to_string(), 3),
            ("Some(\"4\")–Some(\"40\")".to_string(), 3)
        ]
    );
    // A pool of such types only: nothing to say but why.
    let kubelet = Kubelet::compile(&KubeletSource {
        kube_reserved: vec![("cpu", "default_enis * 100 - 250")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let only = evaluate(&kubelet, with_one_without_enis().split_off(2));
    assert_eq!(
        summary(&only.fields[0], only.types, "types this pool can launch"),
        "kube_reserved[\"cpu\"] is not evaluated at plan: the table has no ENI figures for the 1 types this pool can launch (Karpenter reads those from EC2)"
    );
    // A failure says the skipped types too.
    let evaluation = evaluate(&kubelet, with_one_without_enis());
    assert_eq!(
        summary(&evaluation.fields[0], evaluation.types, "types of the table"),
        "kube_reserved[\"cpu\"] fails for 1 of the 2 types of the table (1 type without ENI figures in the table was skipped: Karpenter reads those from EC2); for t3.nano: it evaluates to -50, and a reservation cannot be negative: bound it, e.g. `max(0, …)`"
    );
}

/// What the provider reads of a row: its ENI figures when the table has them.
fn of_the_table(row: &catalog::Row) -> Option<TypeFacts<'_>> {
    TypeFacts::of(row, |t| {
        Some((i64::from(t.default_enis()?), i64::from(t.ips_per_eni()?)))
    })
}

#[test]
fn the_offline_table_gives_the_inputs_of_every_type() {
    let rows = catalog::all();
    let all: Vec<TypeFacts<'_>> = rows.iter().filter_map(of_the_table).collect();
    assert!(
        all.len() > 1000 && all.len() == rows.len(),
        "{} of {}",
        all.len(),
        rows.len()
    );
    let without: Vec<&str> = all
        .iter()
        .filter(|t| t.enis.is_none())
        .map(|t| t.instance_type)
        .collect();
    // The types Karpenter's VPC limits have no figures for (it reads them from EC2).
    assert_eq!(
        without,
        [
            "hpc6a.48xlarge",
            "hpc6id.32xlarge",
            "hpc7a.12xlarge",
            "hpc7a.24xlarge",
            "hpc7a.48xlarge",
            "hpc7a.96xlarge",
            "hpc8a.96xlarge",
            "trn2.48xlarge"
        ]
    );
    // An expression that reads no ENI figure is evaluated for every type; one that does, for
    // those the table has figures for, and says how many it skipped.
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression(
            "((default_enis - 1) * (ips_per_eni - 1)) + 2",
        )),
        system_reserved: vec![("cpu", "max(20, vcpus * 10)")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let evaluation = evaluate(&kubelet, all.iter().cloned());
    assert!(evaluation.succeeded(), "{evaluation:?}");
    let [max_pods, cpu] = evaluation.fields.as_slice() else {
        panic!("two fields")
    };
    assert_eq!(
        (max_pods.evaluated, max_pods.skipped_without_eni),
        (rows.len() - without.len(), without.len())
    );
    assert_eq!((cpu.evaluated, cpu.skipped_without_eni), (rows.len(), 0));
    assert_eq!(
        summary(max_pods, evaluation.types, "types of the table"),
        "max_pods evaluates to 3–1451 over the 1,355 types of the table; 8 types without ENI figures in the table were skipped: Karpenter reads those from EC2"
    );
    let m5 = all
        .iter()
        .find(|t| t.instance_type == "m5.large")
        .expect("m5.large is in the table");
    assert_eq!((m5.vcpus, m5.memory_mib, m5.default_pods), (2, 8192, 29));
    assert!(TypeFacts::of(&rows[0], |_| None).is_some_and(|t| t.enis.is_none()));
    let kubelet = Kubelet::compile(&KubeletSource {
        max_pods: Some(MaxPodsSource::Expression("min(110, max_pods)")),
        kube_reserved: vec![("memory", "11 * max_pods + 255")],
        system_reserved: vec![("cpu", "max(20, vcpus * 10)")],
        ..KubeletSource::default()
    })
    .expect("compiles");
    let evaluation = evaluate(&kubelet, all.iter().cloned());
    assert!(evaluation.succeeded(), "{evaluation:?}");
    assert!(evaluation.fields.iter().all(|f| f.evaluated == all.len()));
}

/// Runs `f` on a thread with the stack of a tokio worker (2 MiB), where the provider serves
/// plans.
fn on_a_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("no panic")
}

#[test]
fn long_and_deep_inputs_are_refused_without_exhausting_the_stack() {
    on_a_small_stack(|| {
        let long = format!("1{}", " + 1".repeat(MAX_CHARS / 4));
        assert!(matches!(problem(Field::MaxPods, &long), Problem::TooLong { .. }));
        let half = MAX_CHARS / 2 - 10;
        for source in [
            format!("1{}", "+1".repeat(half)),
            format!("vcpus{}", ".a".repeat(half)),
            format!("{}1{}", "(".repeat(half), ")".repeat(half)),
            format!("{}1{}", "[".repeat(half), "]".repeat(half)),
            format!("{}1{}", "max(1,".repeat(MAX_CHARS / 8), ")".repeat(MAX_CHARS / 8)),
            format!("{}1", "!".repeat(MAX_CHARS - 1)),
            format!("{}1", "vcpus > 1 ? 1 : ".repeat(MAX_CHARS / 20)),
            format!("{}1", "1 * (".repeat(300)) + &")".repeat(300),
        ] {
            match compile(&Field::MaxPods, &source) {
                Err(e) => assert!(
                    matches!(
                        e.problem,
                        Problem::TooDeep | Problem::Syntax { .. } | Problem::Type(_)
                    ),
                    "{}…: {:?}",
                    &source[..20],
                    e.problem
                ),
                Ok(c) => panic!("{}… compiled ({})", &source[..20], c.result_type()),
            }
        }
        // A chain of negations collapses to one or none (as in cel-go).
        for n in [MAX_CHARS - 2, MAX_CHARS - 1] {
            let c = compile(&Field::MaxPods, &format!("{}1", "-".repeat(n))).expect("compiles");
            assert_eq!(super::compile::depth(c.expr()), 1 + n % 2);
        }
        // As deep as allowed still evaluates on a small stack.
        let deep = format!("{}vcpus{}", "max(1, ".repeat(240), ")".repeat(240));
        let kubelet = Kubelet::compile(&KubeletSource {
            max_pods: Some(MaxPodsSource::Expression(&deep)),
            ..KubeletSource::default()
        })
        .expect("240 nested calls compile");
        let evaluation = evaluate(&kubelet, two_types());
        assert_eq!(evaluation.fields[0].high.as_deref(), Some("96"));
    });
}

/// Tokens of kubelet-like expressions, put together at random below.
const TOKENS: &[&str] = &[
    "vcpus",
    "memory_mib",
    "max_pods",
    "default_enis",
    "ips_per_eni",
    "instance_type",
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615u",
    "2u",
    "1.5",
    "1e308",
    "-1e308",
    "0.0",
    "'m5'",
    "\"x\"",
    "b'y'",
    "true",
    "null",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">=",
    "&&",
    "||",
    "!",
    "?",
    ":",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "max",
    "min",
    "int",
    "double",
    "uint",
    "string",
    "bool",
    "bytes",
    "size",
    "dyn",
    "type",
    "has",
    "exists",
    "all",
    "exists_one",
    "map",
    "filter",
    "x",
    "in",
    "duration",
    "timestamp",
    "'1h'",
    "matches",
    "startsWith",
    "getHours",
    "math",
    "a",
    ".?",
    "[?",
];

/// A failure of the library itself: a panic caught by the module, or a thread it could not get.
fn library_failure(problem: &Problem) -> bool {
    matches!(problem, Problem::Unchecked { .. })
}

fn compile_and_evaluate(source: &str) -> Result<(), String> {
    match compile(&Field::KubeReserved("cpu".into()), source) {
        Err(e) if library_failure(&e.problem) => Err(format!("{source:?}: {e}")),
        Err(_) => Ok(()),
        Ok(_) => {
            let kubelet = Kubelet::compile(&KubeletSource {
                max_pods: Some(MaxPodsSource::Expression(source)),
                kube_reserved: vec![("cpu", source)],
                ..KubeletSource::default()
            })
            .map_err(|e| format!("{source:?} compiled alone, not in a kubelet: {e:?}"))?;
            let evaluation = evaluate(&kubelet, two_types());
            for f in &evaluation.fields {
                if f.not_evaluated
                    .as_deref()
                    .is_some_and(|r| r.contains("failed on it"))
                {
                    return Err(format!("{source:?}: {f:?}"));
                }
            }
            Ok(())
        }
    }
}

mod random {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::{TOKENS, compile_and_evaluate};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Any sequence of tokens compiles or is refused, and what compiles evaluates, all
        /// without a panic (the module would turn one into "not checked").
        #[test]
        fn token_soup_never_panics(tokens in vec(prop::sample::select(TOKENS), 1..30)) {
            let source = tokens.join(" ");
            prop_assert_eq!(compile_and_evaluate(&source), Ok(()));
        }

        #[test]
        fn any_text_never_panics(source in ".{0,60}") {
            prop_assert_eq!(compile_and_evaluate(&source), Ok(()));
        }

        /// Well-formed arithmetic over the variables and extreme numbers: each compiles or is
        /// refused by the check, and what compiles evaluates for every type (a value, or a
        /// failure with a message), never a panic.
        #[test]
        fn arithmetic_never_panics(source in arithmetic()) {
            prop_assert_eq!(compile_and_evaluate(&source), Ok(()));
        }
    }

    fn arithmetic() -> BoxedStrategy<String> {
        let leaf = prop::sample::select(
            &[
                "vcpus",
                "memory_mib",
                "max_pods",
                "default_enis",
                "ips_per_eni",
                "0",
                "1",
                "7",
                "-3",
                "9223372036854775807",
                "-9223372036854775808",
                "2.5",
                "0.0",
                "-0.0",
                "1e308",
                "3u",
            ][..],
        )
        .prop_map(str::to_string);
        leaf.prop_recursive(6, 40, 3, |inner| {
            let binary = prop::sample::select(&["+", "-", "*", "/", "%", "<", "==", "&&"][..]);
            prop_oneof![
                (inner.clone(), binary, inner.clone()).prop_map(|(a, op, b)| format!("({a} {op} {b})")),
                (
                    prop::sample::select(&["max", "min"][..]),
                    inner.clone(),
                    inner.clone()
                )
                    .prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
                (
                    prop::sample::select(&["int", "double", "-", "dyn"][..]),
                    inner.clone()
                )
                    .prop_map(|(f, a)| format!("{f}({a})")),
                (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| format!("({c} > 4 ? {a} : {b})")),
            ]
        })
        .boxed()
    }
}
