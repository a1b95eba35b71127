//! Karpenter v1.15's CEL kubelet expressions (alpha, `NodeClassCEL` gate; #50), checked and
//! evaluated at plan. Karpenter lets `maxPods` (a JSON string) and the values of `kubeReserved`
//! and `systemReserved` that are not quantities be CEL expressions over an instance type's
//! `vcpus`, `memory_mib`, `default_enis`, `ips_per_eni`, `max_pods` and `instance_type`, and
//! finds out only after the apply whether they compile and give usable values. Here:
//!
//! - [`compile`] (or [`Kubelet::compile`] for all of them): parse with cel-rust, then a static
//!   check of what Karpenter's cel-go environment refuses ([`check`] lists what still differs);
//!   errors name the attribute and say what to write instead;
//! - [`evaluate`]: every expression over a set of types (the whole offline table, or the types
//!   a pool's requirements select), in Karpenter's order and with its rules: per field the
//!   range of results as Karpenter writes them, the number of types, the first failure;
//! - [`summary`]: that range in one line ("max_pods evaluates to 8–250 over the 412 types this
//!   pool can launch");
//! - [`TypeFacts`]: the inputs for one type, read from an
//!   [`InstanceType`](super::InstanceType) given its ENI figures; a type without them takes
//!   part in every expression that does not read `default_enis` or `ips_per_eni` (the
//!   evaluation counts the others as skipped, and the summary says so).
//!
//! Pure: no I/O, no Terraform types. Files: `field` (attributes and errors), `variables` (the
//! six, and which an expression reads), `compile` (environment, quantities, parsing), `check`
//! (the type check, cel-go's rules), `facts`, `eval`.

mod check;
mod compile;
mod eval;
mod facts;
mod field;
mod variables;

pub use check::Ty;
pub use compile::{CEL_STACK, Compiled, compile, is_expression, is_quantity};
pub use eval::{
    Evaluation, Failure, FieldRange, Kubelet, KubeletSource, MaxPods, MaxPodsSource, Reserved, evaluate,
    render, summary,
};
pub use facts::{EniFigures, TypeFacts};
pub use field::{ExpressionError, Field, MAX_CHARS, MAX_DEPTH, Problem};
pub use variables::Variable;

#[cfg(test)]
mod tests;
