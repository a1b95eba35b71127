//! Which kubelet setting an expression is the value of, and what can be wrong with one before
//! it is evaluated. Messages name the provider's attribute (`kubelet.max_pods`,
//! `kubelet.kube_reserved["cpu"]`) and say what to write instead.

use std::fmt;

/// The most characters an expression may have: cel-go's default parser limit (100,000 code
/// points), which Karpenter keeps.
pub const MAX_CHARS: usize = 100_000;

/// The deepest an expression may nest (calls in calls, operators in operators). cel-go, which
/// Karpenter uses, refuses a parse that nests one rule more than 250 times; the same bound on
/// the parsed tree also keeps the checker and the evaluator within a small stack.
pub const MAX_DEPTH: usize = 250;

/// The kubelet setting an expression is written in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// `kubelet.max_pods` (Karpenter's `spec.kubelet.maxPods`).
    MaxPods,
    /// `kubelet.kube_reserved["<key>"]` (`spec.kubelet.kubeReserved`).
    KubeReserved(String),
    /// `kubelet.system_reserved["<key>"]` (`spec.kubelet.systemReserved`).
    SystemReserved(String),
}

impl Field {
    /// The name inside the `kubelet` block: `max_pods`, `kube_reserved["cpu"]`.
    pub fn name(&self) -> String {
        match self {
            Field::MaxPods => "max_pods".to_string(),
            Field::KubeReserved(key) => format!("kube_reserved[{key:?}]"),
            Field::SystemReserved(key) => format!("system_reserved[{key:?}]"),
        }
    }

    /// The reserved resource (`cpu`, `memory`, `ephemeral-storage`, `pid`); `None` for
    /// `max_pods`.
    pub fn key(&self) -> Option<&str> {
        match self {
            Field::MaxPods => None,
            Field::KubeReserved(key) | Field::SystemReserved(key) => Some(key),
        }
    }

    /// What a bare number means in this field, for messages.
    pub fn unit(&self) -> &'static str {
        match self.key() {
            None => "pods",
            Some("cpu") => "millicores",
            Some("memory") => "MiB",
            Some("ephemeral-storage") => "GiB",
            Some(_) => "a count",
        }
    }
}

/// The attribute path: `kubelet.max_pods`, `kubelet.kube_reserved["cpu"]`.
impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kubelet.{}", self.name())
    }
}

/// An expression Karpenter would refuse to compile (`KubeletExpressionInvalid`; a reservation
/// starting with `-` it refuses before, `InvalidKubeletConfiguration`), or one this provider
/// could not check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} = {}: {problem}", quoted(.expression))]
pub struct ExpressionError {
    /// The attribute the expression is the value of.
    pub field: Field,
    /// The expression as written (shortened in the message when long).
    pub expression: String,
    /// What is wrong.
    pub problem: Problem,
}

impl ExpressionError {
    /// Whether Karpenter is known to refuse the expression; `false` only when the provider could
    /// not check it (then a warning, not an error, fits).
    pub fn refused(&self) -> bool {
        !matches!(self.problem, Problem::Unchecked { .. })
    }
}

/// The expression in backquotes, cut to 80 characters.
fn quoted(expression: &str) -> String {
    const SHOWN: usize = 80;
    if expression.chars().count() <= SHOWN {
        return format!("`{expression}`");
    }
    let head: String = expression.chars().take(SHOWN).collect();
    format!("`{head}…`")
}

/// What is wrong with an expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error(
        "the expression is {chars} characters long; CEL accepts at most {MAX_CHARS}: write a shorter one"
    )]
    TooLong { chars: usize },
    #[error("not valid CEL: {message}")]
    Syntax { message: String },
    #[error(
        "the expression nests deeper than {MAX_DEPTH} levels, more than CEL accepts: split it up (e.g. a long chain of `+` into a few parenthesised groups)"
    )]
    TooDeep,
    #[error(
        "unknown variable `{name}`: the variables are instance_type (a string), vcpus, memory_mib, default_enis, ips_per_eni and max_pods (ints)"
    )]
    UnknownVariable { name: String },
    #[error(
        "unknown function `{name}`: Karpenter's environment has max(a, b), min(a, b) and CEL's standard functions (int(), double(), size(), …), no extension libraries"
    )]
    UnknownFunction { name: String },
    #[error(
        "{name}() takes exactly two arguments, here {given}: nest the calls instead, e.g. `{name}(a, {name}(b, c))`"
    )]
    TwoArguments { name: String, given: usize },
    /// A type error, said in full (operator, types, what to write instead).
    #[error("{0}")]
    Type(String),
    #[error(
        "the expression evaluates to {found}, but Karpenter needs an int or a double ({unit}): convert it, e.g. `int(…)`, or choose between numbers, e.g. `vcpus > 4 ? 20 : 10`"
    )]
    NotANumber { found: String, unit: &'static str },
    #[error(
        "the expression's type is dyn, known only when it runs (from dyn(…), a list or map mixing types, or a `?:`, max() or min() with a dyn side), but Karpenter needs one whose type is int or double ({unit}): convert it, e.g. `int(…)` or `double(…)`"
    )]
    Dynamic { unit: &'static str },
    #[error(
        "Karpenter refuses a reservation that starts with `-` before it reads it as CEL (InvalidKubeletConfiguration: \"can't be a negative resource quantity\"): write it so that it does not start with `-`, e.g. `vcpus - 1` rather than `-1 + vcpus`"
    )]
    StartsWithMinus,
    /// The provider could not run its check (no thread for the parser); nothing is known.
    #[error("not checked at plan ({reason}); Karpenter checks it after the apply")]
    Unchecked { reason: String },
}
