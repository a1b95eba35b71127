//! What every Kubernetes kind's schema is built from, whatever its API version: the validation
//! rules of Kubernetes names, labels, requirements, quantities, durations and schedules
//! ([`rules`]).

pub mod rules;
