//! What every Kubernetes kind's schema is built from, whatever its API version: the attributes
//! every kind has in the same shape ([`attributes`]) and the validation rules of Kubernetes
//! names, labels, requirements, quantities, durations and schedules ([`rules`]); the sentences
//! their descriptions share ([`describe`]); for tests, the
//! helpers that write configurations as JSON (`testing`) and the comparison of a schema with
//! its upstream CRD (`crd_coverage`).

pub mod attributes;
pub mod describe;
pub mod rules;
pub(crate) mod upgrades;

#[cfg(test)]
#[path = "tests/crd_coverage.rs"]
pub(crate) mod crd_coverage;
#[cfg(test)]
pub(crate) mod testing;
