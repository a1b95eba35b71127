//! Evaluating the kubelet's expressions over a set of instance types, as Karpenter's validation
//! does after the apply (`KubeletExpressionEvaluationFailed`), and what they come to: per field
//! the smallest and largest result as Karpenter writes it, how many types were evaluated, and
//! the first failure.
//!
//! Per type, in Karpenter's order: the `maxPods` expression sees as `max_pods` Karpenter's
//! default pod count of the type with `podsPerCore` applied, and must give a value in
//! [0, 2147483647]; the reserved expressions then see the resolved `maxPods` (the literal, the
//! expression's value or the default) with `podsPerCore` applied, and must not be negative. A
//! double result is truncated toward zero; a non-finite one fails. Reserved results are written
//! in their field's unit: cpu in millicores rounded up to 10 (`480m`), memory in MiB rounded up
//! to 16 (`640Mi`), ephemeral-storage in GiB (`3Gi`), pid as a count.
//!
//! Where this differs from Karpenter:
//!
//! - a double at or beyond ±2^63 fails here. Go's conversion of it to int64 is not defined by
//!   the language: on amd64 it gives the smallest int64, so Karpenter refuses it as negative
//!   (or out of range for `maxPods`); on arm64 it saturates, and a reservation of 9.2 × 10^18
//!   would pass;
//! - every type is evaluated and every failure counted; Karpenter stops at the first (in
//!   random order) and names that one;
//! - a type whose ENI figures the data lacks (a few types of the offline table; Karpenter
//!   reads them from EC2) is skipped by an expression that reads `default_enis` or
//!   `ips_per_eni`, and by a reservation that reads `max_pods` when the `maxPods` expression
//!   reads them; every other expression is evaluated for it. `skipped_without_eni` counts them;
//! - an expression that uses durations or timestamps is checked but not evaluated (the CEL
//!   library is built without them), and a runtime error that is the library's own (an
//!   overload it lacks) leaves the type unevaluated instead of failing it: `not_evaluated`
//!   says so.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use cel::common::types::{CelInt, CelString};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, Env, ExecutionError, Value};

use super::compile::{CEL_STACK, Compiled, compile, environment, is_expression};
use super::facts::TypeFacts;
use super::field::{ExpressionError, Field};
use super::variables::Variable;

/// `maxPods` as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxPodsSource<'a> {
    /// A JSON integer: a literal pod count.
    Literal(i64),
    /// A JSON string: always an expression (`"110"` too).
    Expression(&'a str),
}

/// The kubelet settings the expressions depend on, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeletSource<'a> {
    pub max_pods: Option<MaxPodsSource<'a>>,
    /// `podsPerCore`, only when the AMI family applies it (Bottlerocket does not: `None`).
    pub pods_per_core: Option<i64>,
    /// `kubeReserved` entries (key, value).
    pub kube_reserved: Vec<(&'a str, &'a str)>,
    /// `systemReserved` entries (key, value).
    pub system_reserved: Vec<(&'a str, &'a str)>,
}

/// `maxPods`, compiled.
#[derive(Debug, Clone)]
pub enum MaxPods {
    Unset,
    Literal(i64),
    Expression(Compiled),
}

/// A `kubeReserved`/`systemReserved` value, compiled when it is an expression.
#[derive(Debug, Clone)]
pub enum Reserved {
    Quantity(String),
    Expression(Compiled),
}

/// The kubelet settings with every expression compiled.
#[derive(Debug, Clone)]
pub struct Kubelet {
    pub max_pods: MaxPods,
    /// `podsPerCore` where the AMI family applies it; ignored unless above 0.
    pub pods_per_core: Option<i64>,
    pub kube_reserved: Vec<(String, Reserved)>,
    pub system_reserved: Vec<(String, Reserved)>,
}

impl Kubelet {
    /// Compiles every expression of `source` (a string `maxPods`; each reserved value that is
    /// not a quantity); the errors of all that do not compile, in field order.
    pub fn compile(source: &KubeletSource<'_>) -> Result<Kubelet, Vec<ExpressionError>> {
        let mut errors = Vec::new();
        let mut keep = |result: Result<Compiled, ExpressionError>| match result {
            Ok(c) => Some(c),
            Err(e) => {
                errors.push(e);
                None
            }
        };
        let max_pods = match source.max_pods {
            None => MaxPods::Unset,
            Some(MaxPodsSource::Literal(n)) => MaxPods::Literal(n),
            Some(MaxPodsSource::Expression(text)) => {
                keep(compile(&Field::MaxPods, text)).map_or(MaxPods::Unset, MaxPods::Expression)
            }
        };
        let mut reserved = |entries: &[(&str, &str)], field: fn(String) -> Field| {
            let mut out = Vec::with_capacity(entries.len());
            for (key, value) in entries {
                let r = if is_expression(value) {
                    match keep(compile(&field(key.to_string()), value)) {
                        Some(c) => Reserved::Expression(c),
                        None => continue,
                    }
                } else {
                    Reserved::Quantity(value.to_string())
                };
                out.push((key.to_string(), r));
            }
            out
        };
        let kube_reserved = reserved(&source.kube_reserved, Field::KubeReserved);
        let system_reserved = reserved(&source.system_reserved, Field::SystemReserved);
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Kubelet {
            max_pods,
            pods_per_core: source.pods_per_core,
            kube_reserved,
            system_reserved,
        })
    }

    /// The reserved expressions, kubeReserved first.
    fn reserved_expressions(&self) -> impl Iterator<Item = &Compiled> {
        self.kube_reserved
            .iter()
            .chain(&self.system_reserved)
            .filter_map(|(_, r)| match r {
                Reserved::Expression(c) => Some(c),
                Reserved::Quantity(_) => None,
            })
    }

    /// Every expression, `maxPods` first (the order of [`Evaluation::fields`]).
    pub fn expressions(&self) -> impl Iterator<Item = &Compiled> {
        let max_pods = match &self.max_pods {
            MaxPods::Expression(c) => Some(c),
            _ => None,
        };
        max_pods.into_iter().chain(self.reserved_expressions())
    }

    /// Whether any setting is an expression (Karpenter's `NodeClassCEL` gate must then be on).
    pub fn has_expressions(&self) -> bool {
        self.expressions().next().is_some()
    }
}

/// A type an expression failed for, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub instance_type: String,
    pub message: String,
}

/// What one expression came to over the types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRange {
    pub field: Field,
    pub expression: String,
    /// The smallest and largest results as Karpenter writes them (`20m`, `480m`); `None` when
    /// no type was evaluated.
    pub low: Option<String>,
    pub high: Option<String>,
    /// Types it gave a usable value for.
    pub evaluated: usize,
    /// Types it failed for (Karpenter: `KubeletExpressionEvaluationFailed`).
    pub failed: usize,
    /// Types it was not evaluated for because it reads ENI figures the data lacks for them.
    pub skipped_without_eni: usize,
    pub first_failure: Option<Failure>,
    /// Why some types were not evaluated here (durations or timestamps, which this build
    /// cannot evaluate; a reserved expression for a type whose `maxPods` failed or was not
    /// evaluated; a library limit), when that happened.
    pub not_evaluated: Option<String>,
}

/// The expressions evaluated over a set of types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    /// How many types were given.
    pub types: usize,
    /// How many of them some expression skipped because it reads ENI figures the data lacks
    /// for them (Karpenter reads those from EC2).
    pub skipped_without_eni: usize,
    /// One per expression, `maxPods` first, then kubeReserved and systemReserved in the order
    /// given.
    pub fields: Vec<FieldRange>,
}

impl Evaluation {
    /// Whether every expression gave a usable value for every type it was evaluated for.
    pub fn succeeded(&self) -> bool {
        self.fields.iter().all(|f| f.failed == 0)
    }
}

/// Running totals of one expression.
#[derive(Default)]
struct Tally {
    low: Option<i64>,
    high: Option<i64>,
    evaluated: usize,
    failed: usize,
    skipped_without_eni: usize,
    first_failure: Option<Failure>,
    not_evaluated: Option<String>,
}

impl Tally {
    fn value(&mut self, n: i64) {
        self.low = Some(self.low.map_or(n, |l| l.min(n)));
        self.high = Some(self.high.map_or(n, |h| h.max(n)));
        self.evaluated += 1;
    }

    fn fail(&mut self, instance_type: &str, message: String) {
        self.failed += 1;
        self.first_failure.get_or_insert_with(|| Failure {
            instance_type: instance_type.to_string(),
            message,
        });
    }

    fn skip(&mut self, reason: impl FnOnce() -> String) {
        if self.not_evaluated.is_none() {
            self.not_evaluated = Some(reason());
        }
    }
}

/// What one evaluation gave.
enum Outcome {
    Number(i64),
    Failed(String),
    Skipped(String),
}

/// The variables of one evaluation, handed to cel-rust without copying.
struct Vars<'a> {
    instance_type: CelString<'a>,
    vcpus: CelInt,
    memory_mib: CelInt,
    default_enis: CelInt,
    ips_per_eni: CelInt,
    max_pods: CelInt,
}

impl<'a> Vars<'a> {
    /// The variables of `t` (its ENI figures 0 when it has none: an expression that reads them
    /// is not evaluated for it).
    fn new(t: &TypeFacts<'a>, max_pods: i64) -> Self {
        Vars {
            instance_type: CelString::from(t.instance_type),
            vcpus: CelInt::from(t.vcpus),
            memory_mib: CelInt::from(t.memory_mib),
            default_enis: CelInt::from(t.enis.map_or(0, |e| e.default_enis)),
            ips_per_eni: CelInt::from(t.enis.map_or(0, |e| e.ips_per_eni)),
            max_pods: CelInt::from(max_pods),
        }
    }
}

impl VariableResolver for Vars<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        let value: &(dyn Val + 'b) = match variable {
            "instance_type" => &self.instance_type,
            "vcpus" => &self.vcpus,
            "memory_mib" => &self.memory_mib,
            "default_enis" => &self.default_enis,
            "ips_per_eni" => &self.ips_per_eni,
            "max_pods" => &self.max_pods,
            _ => return None,
        };
        Some(CowVal::Borrowed(value))
    }
}

/// Karpenter's pod count: `count`, lowered to `podsPerCore × vCPUs` when `podsPerCore` is
/// above 0.
fn with_pods_per_core(count: i64, pods_per_core: Option<i64>, vcpus: i64) -> i64 {
    match pods_per_core {
        Some(p) if p > 0 => count.min(p.saturating_mul(vcpus)),
        _ => count,
    }
}

/// 2^63: doubles at or beyond it (or below its negative) do not fit an int64.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// Evaluates `c` for one type.
fn run(c: &Compiled, env: &Arc<Env>, vars: &Vars<'_>) -> Outcome {
    if !c.evaluable() {
        return Outcome::Skipped(
            "it uses durations or timestamps, which the provider does not evaluate".into(),
        );
    }
    let mut ctx = Context::with_env(Arc::clone(env));
    ctx.set_variable_resolver(vars);
    let result = catch_unwind(AssertUnwindSafe(|| Value::resolve(c.expr(), &ctx)));
    match result {
        Err(_) => Outcome::Skipped("the CEL library failed on it".into()),
        Ok(Ok(Value::Int(n))) => Outcome::Number(n),
        Ok(Ok(Value::Float(d))) => {
            if !d.is_finite() {
                Outcome::Failed(format!(
                    "it evaluates to {d}, not a finite number (Karpenter refuses it): guard the divisor, e.g. `x / max(1.0, y)`"
                ))
            } else if !(-TWO_POW_63..TWO_POW_63).contains(&d) {
                Outcome::Failed(format!(
                    "it evaluates to {d:e}, beyond a 64-bit integer (Karpenter's conversion of it is not a usable value): bound it with min()"
                ))
            } else {
                Outcome::Number(d.trunc() as i64)
            }
        }
        Ok(Ok(other)) => Outcome::Failed(format!(
            "it evaluates to a {}, not a number: Karpenter needs an int or a double",
            other.type_of()
        )),
        Ok(Err(e)) => failure(e),
    }
}

/// A runtime error: a failure Karpenter has too (arithmetic, conversions, a missing element),
/// or one of the library's own (not evaluated).
fn failure(e: ExecutionError) -> Outcome {
    match e {
        ExecutionError::DivisionByZero(_) => {
            Outcome::Failed("it divides by zero: guard the divisor, e.g. `x / max(1, y)`".into())
        }
        ExecutionError::RemainderByZero(_) => {
            Outcome::Failed("it takes a remainder by zero: guard the divisor, e.g. `x % max(1, y)`".into())
        }
        ExecutionError::Overflow(op, _, _) => Outcome::Failed(format!(
            "its `{op}` overflows a 64-bit integer: keep the numbers smaller"
        )),
        ExecutionError::FunctionError { function, message } => {
            Outcome::Failed(format!("{function}() fails: {message}"))
        }
        e @ (ExecutionError::IndexOutOfBounds(_) | ExecutionError::NoSuchKey(_)) => {
            Outcome::Failed(format!("it fails: {e}"))
        }
        other => Outcome::Skipped(format!(
            "the CEL library used here could not evaluate it ({other})"
        )),
    }
}

/// A result in its field's unit as Karpenter rounds it: cpu up to 10 millicores, memory up to
/// 16 MiB (exact multiples, values of 0 or less, and values within one step of the largest
/// int64 as they are).
fn amount(field: &Field, n: i64) -> i64 {
    let granularity = match field.key() {
        Some("cpu") => 10,
        Some("memory") => 16,
        _ => return n,
    };
    if n <= 0 || n % granularity == 0 || n > i64::MAX - granularity {
        n
    } else {
        (n / granularity + 1) * granularity
    }
}

/// The unit suffix Karpenter writes after a result of `field`.
fn suffix(field: &Field) -> &'static str {
    match field.key() {
        Some("cpu") => "m",
        Some("memory") => "Mi",
        Some("ephemeral-storage") => "Gi",
        _ => "",
    }
}

/// A result as Karpenter writes it into the kubelet configuration: `480m`, `640Mi`, `3Gi`,
/// `4096`; `maxPods` as the number.
pub fn render(field: &Field, n: i64) -> String {
    format!("{}{}", amount(field, n), suffix(field))
}

/// The `maxPods` expression for one type: its value when usable; otherwise the failure or
/// the reason is tallied and `None` returned.
fn max_pods_value(
    c: &Compiled,
    env: &Arc<Env>,
    vars: &Vars<'_>,
    tally: &mut Tally,
    name: &str,
) -> Option<i64> {
    match run(c, env, vars) {
        Outcome::Number(n) if (0..=i64::from(i32::MAX)).contains(&n) => {
            tally.value(n);
            Some(n)
        }
        Outcome::Number(n) => {
            tally.fail(
                name,
                format!(
                    "it evaluates to {n}, outside [0, {}]: bound it, e.g. `max(0, min(110, …))`",
                    i32::MAX
                ),
            );
            None
        }
        Outcome::Failed(message) => {
            tally.fail(name, message);
            None
        }
        Outcome::Skipped(reason) => {
            tally.skip(|| reason);
            None
        }
    }
}

/// Evaluates every expression of `kubelet` for every type of `types`, as Karpenter's
/// validation does for every type it knows. The work runs on a thread with a large stack (see
/// [`super::compile`]); should that thread not start, every field says so in `not_evaluated`.
pub fn evaluate<'t>(kubelet: &Kubelet, types: impl IntoIterator<Item = TypeFacts<'t>>) -> Evaluation {
    let types: Vec<TypeFacts<'t>> = types.into_iter().collect();
    let unevaluated = |reason: String| {
        let mut tallies: Vec<Tally> = kubelet.expressions().map(|_| Tally::default()).collect();
        for tally in &mut tallies {
            tally.skip(|| reason.clone());
        }
        finish(kubelet, tallies, types.len(), 0)
    };
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("kubelet-cel".into())
            .stack_size(CEL_STACK)
            .spawn_scoped(scope, || evaluate_here(kubelet, &types));
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|_| unevaluated("the CEL library failed on it".into())),
            Err(e) => unevaluated(format!("no thread for the CEL evaluator: {e}")),
        }
    })
}

/// [`evaluate`] on the current thread.
fn evaluate_here(kubelet: &Kubelet, types: &[TypeFacts<'_>]) -> Evaluation {
    let max_pods_expression = match &kubelet.max_pods {
        MaxPods::Expression(c) => Some(c),
        _ => None,
    };
    let reserved: Vec<&Compiled> = kubelet.reserved_expressions().collect();
    let first_reserved = usize::from(max_pods_expression.is_some());
    let mut tallies: Vec<Tally> = kubelet.expressions().map(|_| Tally::default()).collect();
    let env = environment();
    let mut skipped_types = 0;
    for t in types {
        let env = match &env {
            Ok(env) => env,
            Err(reason) => {
                for tally in &mut tallies {
                    tally.skip(|| format!("the CEL environment could not be built: {reason}"));
                }
                continue;
            }
        };
        let ppc = kubelet.pods_per_core;
        let without_eni = t.enis.is_none();
        let mut skipped = false;
        let mut max_pods_skipped = false;
        let resolved = match (&kubelet.max_pods, max_pods_expression) {
            (_, Some(c)) if without_eni && c.reads_eni_figures() => {
                tallies[0].skipped_without_eni += 1;
                (skipped, max_pods_skipped) = (true, true);
                None
            }
            (_, Some(c)) => {
                let vars = Vars::new(t, with_pods_per_core(t.default_pods, ppc, t.vcpus));
                let value = max_pods_value(c, env, &vars, &mut tallies[0], t.instance_type);
                if value.is_none() {
                    for tally in &mut tallies[first_reserved..] {
                        tally.skip(|| "the maxPods expression gave no value for some types".into());
                    }
                    continue;
                }
                value
            }
            (MaxPods::Literal(n), None) => Some(*n),
            _ => None,
        };
        let max_pods = with_pods_per_core(resolved.unwrap_or(t.default_pods), ppc, t.vcpus);
        let vars = Vars::new(t, max_pods);
        for (c, tally) in reserved.iter().zip(&mut tallies[first_reserved..]) {
            let reads_missing = c.reads_eni_figures() || (max_pods_skipped && c.reads(Variable::MaxPods));
            if without_eni && reads_missing {
                tally.skipped_without_eni += 1;
                skipped = true;
                continue;
            }
            match run(c, env, &vars) {
                Outcome::Number(n) if n >= 0 => tally.value(amount(c.field(), n)),
                Outcome::Number(n) => tally.fail(
                    t.instance_type,
                    format!(
                        "it evaluates to {n}, and a reservation cannot be negative: bound it, e.g. `max(0, …)`"
                    ),
                ),
                Outcome::Failed(message) => tally.fail(t.instance_type, message),
                Outcome::Skipped(reason) => tally.skip(|| reason),
            }
        }
        skipped_types += usize::from(skipped);
    }
    finish(kubelet, tallies, types.len(), skipped_types)
}

/// The ranges of the tallies, one per expression of `kubelet`.
fn finish(kubelet: &Kubelet, tallies: Vec<Tally>, types: usize, skipped_without_eni: usize) -> Evaluation {
    let fields = kubelet
        .expressions()
        .zip(tallies)
        .map(|(c, tally)| {
            let show = |amount: i64| format!("{amount}{}", suffix(c.field()));
            FieldRange {
                field: c.field().clone(),
                expression: c.source().to_string(),
                low: tally.low.map(show),
                high: tally.high.map(show),
                evaluated: tally.evaluated,
                failed: tally.failed,
                skipped_without_eni: tally.skipped_without_eni,
                first_failure: tally.first_failure,
                not_evaluated: tally.not_evaluated,
            }
        })
        .collect();
    Evaluation {
        types,
        skipped_without_eni,
        fields,
    }
}

/// `1363` → `1,363`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "8 types without ENI figures in the table were skipped: Karpenter reads those from EC2".
fn skipped_note(skipped: usize) -> Option<String> {
    (skipped > 0).then(|| {
        let (types, were) = if skipped == 1 {
            ("type", "was")
        } else {
            ("types", "were")
        };
        format!(
            "{} {types} without ENI figures in the table {were} skipped: Karpenter reads those from EC2",
            grouped(skipped)
        )
    })
}

/// One line on what an expression comes to over `types` types described by `what` ("types
/// this pool can launch"): "max_pods evaluates to 8–250 over the 412 types this pool can
/// launch", or the first failure; the types skipped for want of ENI figures are not counted
/// in, and said.
pub fn summary(range: &FieldRange, types: usize, what: &str) -> String {
    let name = range.field.name();
    let considered = types.saturating_sub(range.skipped_without_eni);
    let over = format!("the {} {what}", grouped(considered));
    let skipped = skipped_note(range.skipped_without_eni);
    if let Some(f) = &range.first_failure {
        let aside = skipped.map(|s| format!(" ({s})")).unwrap_or_default();
        return format!(
            "{name} fails for {} of {over}{aside}; for {}: {}",
            grouped(range.failed),
            f.instance_type,
            f.message
        );
    }
    let (Some(low), Some(high)) = (&range.low, &range.high) else {
        return match (&range.not_evaluated, considered) {
            (Some(reason), _) => format!("{name} is not evaluated at plan: {reason}"),
            (None, 0) if range.skipped_without_eni > 0 => format!(
                "{name} is not evaluated at plan: the table has no ENI figures for the {} {what} (Karpenter reads those from EC2)",
                grouped(types)
            ),
            (None, _) => format!("{name}: no types to evaluate it over ({over})"),
        };
    };
    let values = if low == high {
        low.clone()
    } else {
        format!("{low}–{high}")
    };
    let mut line = if range.evaluated == considered {
        format!("{name} evaluates to {values} over {over}")
    } else {
        format!(
            "{name} evaluates to {values} over {} of {over}",
            grouped(range.evaluated)
        )
    };
    if let Some(reason) = range
        .not_evaluated
        .as_ref()
        .filter(|_| range.evaluated < considered)
    {
        line.push_str(&format!(" (the others are not evaluated: {reason})"));
    }
    if let Some(skipped) = skipped {
        line.push_str(&format!("; {skipped}"));
    }
    line
}

/// What Karpenter's `EvaluateExpression` gives for `c` over the type `t`, with `max_pods` as
/// the `max_pods` variable: the number (a double truncated toward zero), or why it fails. The
/// field's own rules (the range of `maxPods`, no negative reservation) are not applied: the
/// tests restate Karpenter's own cases of that function with it.
#[cfg(test)]
pub(super) fn evaluate_expression(c: &Compiled, t: &TypeFacts<'_>, max_pods: i64) -> Result<i64, String> {
    let env = environment()?;
    match run(c, &env, &Vars::new(t, max_pods)) {
        Outcome::Number(n) => Ok(n),
        Outcome::Failed(message) | Outcome::Skipped(message) => Err(message),
    }
}
