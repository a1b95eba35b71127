//! Figure 9 (issue 50): what Karpenter's CEL kubelet expressions cost a plan. The provider's
//! own module (`instance_types::kubelet_cel`), in this process, does what a plan will do with
//! three expressions (one `maxPods`, one `kubeReserved`, one `systemReserved`, from Karpenter's
//! documentation) over every type of the offline table: compile them, read each type's
//! inputs, evaluate. The bench's own build is the one measured, so the figure is the release
//! build's only when the bench runs as `cargo run --release -p bench`.
//!
//! The ENI figures (`default_enis`, `ips_per_eni`) are the table's own (Karpenter's VPC limits);
//! the few types the table has none for are skipped by the expressions that read them, as the
//! provider's plan skips them.

use std::time::Instant;

use terraform_provider_karpenter::instance_types::kubelet_cel::{
    FieldRange, Kubelet, KubeletSource, MaxPodsSource, TypeFacts, evaluate,
};
use terraform_provider_karpenter::instance_types::{InstanceType, catalog};

use crate::error::BenchError;
use crate::stats::Samples;

/// The three expressions: (field, expression).
pub const EXPRESSIONS: &[(&str, &str)] = &[
    ("maxPods", "((default_enis - 1) * (ips_per_eni - 1)) + 2"),
    ("kubeReserved.memory", "11 * max_pods + 255"),
    ("systemReserved.cpu", "max(20, vcpus * 10)"),
];

/// Timed runs per repetition of the bench.
const RUNS_PER_REP: usize = 20;

/// Milliseconds of the whole job and of the evaluation alone, over `types` types.
#[derive(Debug, Clone, Default)]
pub struct CelFigures {
    pub types: usize,
    /// Compile the three, read every type's inputs, evaluate: what a plan pays.
    pub total_ms: Samples,
    /// The evaluation alone (its thread included).
    pub evaluate_ms: Samples,
}

fn source() -> KubeletSource<'static> {
    KubeletSource {
        max_pods: Some(MaxPodsSource::Expression(EXPRESSIONS[0].1)),
        pods_per_core: None,
        kube_reserved: vec![("memory", EXPRESSIONS[1].1)],
        system_reserved: vec![("cpu", EXPRESSIONS[2].1)],
    }
}

/// One run: (whole job, evaluation alone) in milliseconds, and the number of types.
fn once() -> Result<(f64, f64, usize), BenchError> {
    let start = Instant::now();
    let kubelet = Kubelet::compile(&source()).map_err(|errors| {
        BenchError::Measure(format!("the figure's expressions do not compile: {errors:?}"))
    })?;
    let facts: Vec<TypeFacts<'_>> = catalog::all()
        .iter()
        .filter_map(|row| {
            TypeFacts::of(row, |t| {
                Some((i64::from(t.default_enis()?), i64::from(t.ips_per_eni()?)))
            })
        })
        .collect();
    let evaluating = Instant::now();
    let evaluation = evaluate(&kubelet, facts);
    let end = Instant::now();
    let every_type = |f: &FieldRange| f.evaluated + f.skipped_without_eni == evaluation.types;
    if !evaluation.succeeded() || !evaluation.fields.iter().all(every_type) {
        return Err(BenchError::Measure(format!(
            "the figure's expressions did not evaluate for every type: {evaluation:?}"
        )));
    }
    Ok((
        (end - start).as_secs_f64() * 1000.0,
        (end - evaluating).as_secs_f64() * 1000.0,
        evaluation.types,
    ))
}

/// Runs figure 9: three untimed runs, then `RUNS_PER_REP` per repetition.
pub fn measure(reps: usize) -> Result<CelFigures, BenchError> {
    for _ in 0..3 {
        once()?;
    }
    let mut figures = CelFigures::default();
    for _ in 0..reps * RUNS_PER_REP {
        let (total, evaluate, types) = once()?;
        figures.total_ms.push(total);
        figures.evaluate_ms.push(evaluate);
        figures.types = types;
    }
    Ok(figures)
}
