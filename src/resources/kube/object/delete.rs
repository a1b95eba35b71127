//! Delete: foreground deletion that waits until the object is gone, with warnings about what
//! the wait could not check or waited on (the garbage collector); and `force_destroy`: when
//! Karpenter is gone, its cleanup ([`crate::resources::kube::teardown`]), scoped by the
//! provider's cluster name, then the delete again.

use std::time::Duration;

use tokio::time::Instant;

use super::KubeObjectType;
use crate::context::KarpenterContext;
use crate::k8s::{self, KubeError};
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{Diagnostics, timeouts};
use crate::terraform::tfvalue::{AttributePath, Value};

/// How long a delete waits for the object to be gone, unless `timeouts.delete` says.
const DEFAULT_DELETE: Duration = Duration::from_secs(15 * 60);

/// The attribute that opts into [`crate::resources::kube::teardown`].
pub(super) const FORCE_DESTROY: &str = "force_destroy";

impl KubeObjectType {
    /// Delete: foreground deletion, waiting until the object is gone; with Karpenter gone, fails
    /// fast or (`force_destroy`) does Karpenter's cleanup.
    pub(super) async fn delete_and_wait(&self, ctx: &KarpenterContext, prior: &Value) -> Diagnostics {
        let name = get_str(prior, "name").unwrap_or_default().to_string();
        let deadline = Instant::now() + timeouts::get(prior, "delete", DEFAULT_DELETE);
        let client = match self.client(ctx).await {
            Ok(c) => c,
            Err(d) => return d,
        };
        let force = prior.get("force_destroy").and_then(Value::as_bool) == Some(true);
        let namespace = self.namespace_of(prior);
        match k8s::wait::delete_and_wait(client, &self.kind, namespace, &name, self.dependents, deadline)
            .await
        {
            Ok(waited) => self.waited_notes(&waited, &self.label(prior)),
            Err(KubeError::KarpenterGone { why, .. }) if force => {
                self.force_destroy(ctx, client, &name, &why, deadline).await
            }
            Err(e @ KubeError::KarpenterGone { .. }) => {
                let mut d = Diagnostics::new();
                let summary = format!(
                    "Karpenter is not running: {} {} cannot finish deleting",
                    self.kind.kind,
                    self.label(prior)
                );
                let detail = format!("{e} {}", self.karpenter_gone_help(false));
                match self.schema.attribute(FORCE_DESTROY) {
                    Some(_) => d.error_at(&AttributePath::root().attr(FORCE_DESTROY), summary, detail),
                    None => d.error(summary, detail),
                }
                d
            }
            Err(e) => self.diagnose(&e, "deleting"),
        }
    }

    /// What to do when Karpenter is gone and its finalizers hold an object of this kind:
    /// start it again, or (for a kind that has it) `force_destroy`, promising only what this
    /// kind's `force_destroy` does. `recreate`: the object is deleted to be created again.
    pub(super) fn karpenter_gone_help(&self, recreate: bool) -> String {
        let what = self.kind.kind;
        let then = if recreate {
            format!("it then finishes the deletion and the next apply creates the {what}")
        } else {
            "then run the destroy again".to_string()
        };
        let restart = format!(
            "start Karpenter again (its Helm release, its controller's IAM role and the nodes it runs on must exist); {then}"
        );
        match self.force_destroy_cleanup {
            Some(cleanup) => format!(
                "Either {restart}, or set force_destroy = true on this resource and apply{}: the provider then does \
                 Karpenter's part itself: {cleanup} Removing the finalizers by hand (kubectl patch) would leave what \
                 Karpenter launched running and billed.",
                if recreate { " again" } else { " before destroying" }
            ),
            None => format!("{}{}.", restart[..1].to_uppercase(), &restart[1..]),
        }
    }

    /// Warnings about a delete that finished: what it could not check, and a wait on the
    /// garbage collector long enough to point at kube-controller-manager.
    pub(super) fn waited_notes(&self, waited: &k8s::wait::Waited, label: &str) -> Diagnostics {
        let mut d = Diagnostics::new();
        if let Some(collector) = waited.collector {
            d.warning(
                format!(
                    "The {} waited {} for the Kubernetes garbage collector",
                    self.kind.kind,
                    k8s::error::humantime(collector)
                ),
                format!(
                    "{}. It has run since: the delete finished.",
                    k8s::wait::collector_stuck(self.kind.kind, label, collector, &[])
                ),
            );
        }
        if let Some(reason) = &waited.liveness_unchecked {
            d.warning(
                format!(
                    "Could not check whether Karpenter is running while deleting the {}",
                    self.kind.kind
                ),
                k8s::wait::liveness_unchecked_cost(reason),
            );
        }
        d
    }

    /// `force_destroy` with Karpenter gone (`why`): Karpenter's cleanup, scoped by the cluster
    /// name of the provider (`cluster_name`, else `kubernetes { eks { cluster_name } }`), then the
    /// delete again.
    pub(super) async fn force_destroy(
        &self,
        ctx: &KarpenterContext,
        client: &kube::Client,
        name: &str,
        why: &str,
        deadline: Instant,
    ) -> Diagnostics {
        let path = AttributePath::root().attr(FORCE_DESTROY);
        let what = self.kind.kind;
        let Some(cluster) = ctx.settings.cluster_name.clone() else {
            let mut d = Diagnostics::new();
            d.error_at(
                &path,
                "force_destroy needs the cluster's name",
                format!(
                    "Karpenter is not running ({why}), so force_destroy would clean up {what} {name} itself, scoped by \
                     the tags Karpenter puts on what it creates, which include the cluster's name. The cluster's name \
                     is not known: set cluster_name = \"...\" in the provider block (or use kubernetes {{ eks {{ cluster_name }} }}), \
                     then run the destroy again. Nothing was deleted in AWS."
                ),
            );
            return d;
        };
        tracing::warn!(
            kind = what,
            name,
            cluster = %cluster,
            "Karpenter is not running ({why}); force_destroy: doing its cleanup of {what} {name}"
        );
        if let Err(e) =
            crate::resources::kube::teardown::run(ctx, client, &self.kind, name, &cluster, deadline).await
        {
            let mut d = Diagnostics::new();
            d.error_at(
                &path,
                format!("force_destroy could not finish Karpenter's cleanup of {what} {name}"),
                format!(
                    "{e}. What was already cleaned up stays cleaned up; run the destroy again to continue (every step \
                     is repeatable). Karpenter is not running: {why}."
                ),
            );
            return d;
        }
        // Only cluster-scoped kinds offer force_destroy (Karpenter's own cleanup).
        match k8s::wait::delete_and_wait(client, &self.kind, None, name, self.dependents, deadline).await {
            Ok(_) => Diagnostics::new(),
            Err(e) => self.diagnose(&e, "deleting"),
        }
    }
}
