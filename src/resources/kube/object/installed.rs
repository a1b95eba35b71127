//! At plan, what the Karpenter installed in the cluster refuses: when the cluster can be read,
//! the planned object is checked against the CRD it serves (one read per kind and plan), so a
//! setting that needs a newer Karpenter (an upstream kubelet field or a kubelet expression
//! before v1.15, `replicas` before v1.8, …) is a plan error naming the release that added it,
//! not an apply that stops before the write. The apply checks again (the cluster may change in
//! between). Nothing is read, and nothing said, when the plan changes nothing, the provider
//! configuration is not known yet, or the cluster cannot be reached: the plan never depends on
//! the cluster.

use std::time::Duration;

use tokio::time::Instant;

use super::KubeObjectType;
use super::values::unknowns_to_null;
use crate::context::KarpenterContext;
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::Value;

/// The longest a plan waits for the CRD read (then it goes on without it).
const PLAN_READ: Duration = Duration::from_secs(5);

impl KubeObjectType {
    /// The errors of [`KubeObjectType::fit_to_cluster`] for `planned`, against the CRD the
    /// cluster serves now; nothing when that cannot be known.
    pub(super) async fn check_installed_release(
        &self,
        ctx: &KarpenterContext,
        prior: &Value,
        planned: &Value,
    ) -> Diagnostics {
        if planned.is_null() || planned == prior {
            return Diagnostics::new();
        }
        let Ok(client) = ctx.kube().await else {
            return Diagnostics::new();
        };
        let Some(served) = ctx
            .plan
            .reads
            .served_crd(client, &self.kind, Instant::now() + PLAN_READ)
            .await
        else {
            return Diagnostics::new();
        };
        if served.schema.is_none() {
            return Diagnostics::new();
        }
        let known = unknowns_to_null(planned);
        let Ok(manifest) = self.manifest(&known) else {
            return Diagnostics::new();
        };
        match self.fit_to_cluster(manifest, &known, &served) {
            Ok(_) => Diagnostics::new(),
            Err(d) => d,
        }
    }
}
