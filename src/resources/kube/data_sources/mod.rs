//! Read-only data sources over what Karpenter resolved in the cluster:
//! `karpenter_ec2_node_class` and `karpenter_node_pool` (one object, spec and status, see
//! [`object`]) and `karpenter_node_claims` (the NodeClaims of a pool or of the cluster, see
//! [`node_claims`]); and `karpenter_instance_types`, which needs no cluster: what a set of
//! NodePool requirements lets Karpenter launch, offline or from EC2 ([`instance_types`]).
//!
//! Their schemas are derived from the resources' own (same names, same descriptions, every
//! attribute computed), so the resource schema stays the one description of each kind.
//!
//! Reading happens at plan. When it cannot (the provider's `kubernetes {}` settings are still
//! unknown, or the cluster does not answer), the read is deferred where Terraform allows
//! deferral; otherwise it fails with an error saying why and what to do: unlike a resource, a
//! data source has no prior state to keep.

pub mod instance_types;
pub mod node_claims;
pub mod object;

use std::time::Duration;

use crate::context::KarpenterContext;
use crate::k8s::KubeError;
use crate::terraform::framework::schema::AttrType;
use crate::terraform::framework::{Attribute, DataReadOutcome, Diagnostics, Mode};

/// How long one data source read may take (retries of transient errors included).
pub const READ_TIMEOUT: Duration = Duration::from_secs(2 * 60);

/// A copy of `attributes` for a data source: every attribute computed, without validators,
/// defaults or replacement flags, with the same names, wire names and descriptions.
pub fn computed_copy(attributes: &[Attribute]) -> Vec<Attribute> {
    attributes
        .iter()
        .map(|a| {
            let mut c = a.clone();
            c.mode = Mode::Computed;
            c.validators.clear();
            c.default = None;
            c.requires_replace = false;
            c.stable = false;
            if let AttrType::Nested { nesting, attributes } = &a.ty {
                c.ty = AttrType::Nested {
                    nesting: *nesting,
                    attributes: computed_copy(attributes),
                };
            }
            c
        })
        .collect()
}

/// Why a read cannot happen yet, for a Kubernetes error; `None` when the error is a real
/// failure (not allowed, invalid answer) that deferring would not fix.
pub fn not_yet(type_name: &str, what: &str, e: &KubeError) -> Option<Diagnostics> {
    let detail = match e {
        KubeError::ConfigUnknown(_) | KubeError::NotConfigured(_) => format!(
            "{e}. A data source cannot keep an earlier result the way a resource does: make the provider's kubernetes settings known at plan time (create the cluster in an earlier apply, e.g. with -target), or plan with -allow-deferral where your Terraform supports it."
        ),
        KubeError::Transport(_) | KubeError::Timeout { .. } => format!(
            "{e}. The cluster did not answer, so {type_name} could not be read at plan time. Check that the cluster is reachable from where Terraform runs, then plan again."
        ),
        _ => return None,
    };
    Some(Diagnostics::from_error(format!("Cannot read {what} yet"), detail))
}

/// The Kubernetes client, or why the read has to wait.
pub async fn client<'a>(
    ctx: &'a KarpenterContext,
    type_name: &str,
    what: &str,
) -> Result<Result<&'a kube::Client, DataReadOutcome>, Diagnostics> {
    match ctx.kube().await {
        Ok(c) => Ok(Ok(c)),
        Err(e) => match not_yet(type_name, what, &e) {
            Some(d) => Ok(Err(DataReadOutcome::NotYet(d))),
            None => Err(Diagnostics::from_error(
                format!("Cannot connect to the cluster to read {what}"),
                e.to_string(),
            )),
        },
    }
}

/// A data source answer for a failed Kubernetes call: not yet (deferrable) or a failure.
pub fn outcome_of(type_name: &str, what: &str, e: &KubeError) -> Result<DataReadOutcome, Diagnostics> {
    match not_yet(type_name, what, e) {
        Some(d) => Ok(DataReadOutcome::NotYet(d)),
        None => {
            let detail = match e {
                KubeError::Api(status) if status.code == 403 || status.code == 401 => format!(
                    "{e}. The provider's Kubernetes credentials need get and list on the kind read here."
                ),
                _ => e.to_string(),
            };
            Err(Diagnostics::from_error(format!("Failed reading {what}"), detail))
        }
    }
}

/// What every data source's `read` does with an outcome: the state, or the reason as an error.
pub fn read_result(
    outcome: Result<DataReadOutcome, Diagnostics>,
) -> Result<crate::terraform::tfvalue::Value, Diagnostics> {
    match outcome? {
        DataReadOutcome::Read(v) => Ok(v),
        DataReadOutcome::Encoded(_) => Err(Diagnostics::from_error(
            "Data source not read",
            "The data source answered in encoded form where its value was asked for. This is a bug of the provider; please report it.",
        )),
        DataReadOutcome::NotYet(d) => Err(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::Nesting;

    #[test]
    fn computed_copy_keeps_names_and_drops_rules() {
        let schema = &crate::resources::kube::v1::NODE_POOL;
        let copy = computed_copy(&schema.attributes);
        fn check(a: &Attribute) {
            assert_eq!(a.mode, Mode::Computed, "{}", a.name);
            assert!(
                a.validators.is_empty() && a.default.is_none() && !a.requires_replace,
                "{}",
                a.name
            );
            if let Some((_, nested)) = a.nested() {
                nested.iter().for_each(check);
            }
        }
        copy.iter().for_each(check);
        let template = copy.iter().find(|a| a.name == "template").expect("template");
        assert!(matches!(template.nested(), Some((Nesting::Single, _))));
        for (a, c) in schema.attributes.iter().zip(&copy) {
            assert_eq!(a.value_type(), c.value_type(), "{} keeps its shape", a.name);
        }
    }

    #[test]
    fn unknown_config_and_unreachable_cluster_are_not_yet_but_forbidden_is_a_failure() {
        assert!(not_yet("t", "x", &KubeError::ConfigUnknown("kubernetes.host".into())).is_some());
        assert!(not_yet("t", "x", &KubeError::Transport("connection refused".into())).is_some());
        let forbidden = KubeError::Api(Box::new(kube::core::Status {
            code: 403,
            ..Default::default()
        }));
        assert!(not_yet("t", "x", &forbidden).is_none());
        let text = not_yet("t", "x", &KubeError::ConfigUnknown("kubernetes.host".into()))
            .map(|d| d.to_string())
            .unwrap_or_default();
        assert!(
            text.contains("kubernetes.host") && text.contains("-target"),
            "{text}"
        );
    }
}
