//! Validation rules shared by the schemas of the Karpenter kinds: Kubernetes names, label keys
//! and values, the restricted label domains and the AWS allow-list, node-pool requirements,
//! resource quantities, Karpenter durations and budget cron schedules.
//!
//! Every function here returns a [`Validator`](crate::terraform::framework::validate::Validator)
//! (so the generated docs state the rule) or is a pure check used by one. The patterns are those
//! the v1.14.1 CRDs declare; where we are stricter than the CRD (because Karpenter rejects the
//! value at run time, or the CRD pattern is looser than its own description), the function says
//! so.
//!
//! Validators only see known values; inside lists and objects they skip unknown parts, because
//! a configuration may be partly unknown at plan time.
//!
//! One module per topic: [`names`], [`labels`], [`requirements`], [`numbers`], [`time`],
//! [`budgets`], and [`values`] (reading known values, the shared diagnostic and patterns, rules of
//! whole lists and maps); [`contradictions`] (requirements that never hold together) and
//! [`launchable`] (whether a pool can launch anything) are the plan-time checks across a pool.

pub mod budgets;
pub mod contradictions;
pub mod labels;
pub mod launchable;
pub mod names;
pub mod numbers;
pub mod requirements;
pub mod time;
pub mod values;

#[cfg(test)]
mod tests;
