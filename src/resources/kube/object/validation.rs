//! After a write, Karpenter's own validation of the object, when a Karpenter runs in the
//! cluster: an EC2NodeClass it refuses (`ValidationSucceeded=False`: an unsupported kubelet
//! field, a CEL expression without the `NodeClassCEL` feature gate, a failed dry-run of its
//! EC2 permissions, …) launches no node, so the apply fails with Karpenter's reason and
//! message, on the attribute the message names. Nothing is waited for when no Karpenter runs
//! (its leader-election Lease is absent or released), or when the user waits for `Ready`
//! anyway (`wait_for_ready`, which includes this condition).

use std::time::Duration;

use kube::api::DynamicObject;
use tokio::time::Instant;

use super::KubeObjectType;
use super::values::wire_path_to_attribute;
use crate::k8s;
use crate::k8s::karpenter_liveness::{self, Seen};
use crate::k8s::validation::{Verdict, named_path, wait_verdict};
use crate::terraform::framework::Diagnostics;

/// The longest wait for Karpenter's verdict (within the apply's timeout): Karpenter validates
/// a node class within seconds of a change; past this, the apply goes on with a warning.
pub const VALIDATION_WAIT: Duration = Duration::from_secs(60);

impl KubeObjectType {
    /// Waits for Karpenter's verdict on the object just written (`stored`), when this kind is
    /// validated by Karpenter and a Karpenter runs; adds an error for a refusal and a warning
    /// for no verdict in time. Whether it waited (the object's status has news then).
    pub(super) async fn check_karpenter_verdict(
        &self,
        client: &kube::Client,
        stored: &DynamicObject,
        deadline: Instant,
        diags: &mut Diagnostics,
    ) -> bool {
        if !self.validated_by_karpenter {
            return false;
        }
        let (Some(name), Some(generation)) = (stored.metadata.name.as_deref(), stored.metadata.generation)
        else {
            return false;
        };
        let namespace = stored.metadata.namespace.as_deref();
        let running = matches!(karpenter_liveness::look(client).await, Seen::Held { .. });
        if !running {
            tracing::debug!(
                kind = self.kind.kind,
                name,
                "no Karpenter holds its Lease: not waiting for its validation"
            );
            return false;
        }
        let started = Instant::now();
        let until = (started + VALIDATION_WAIT).min(deadline);
        let label = k8s::apply::object_label(namespace, name);
        match wait_verdict(client, &self.kind, namespace, name, generation, until).await {
            Ok(Verdict::Succeeded | Verdict::NotValidated) => {}
            Ok(Verdict::Refused { reason, message }) => {
                let summary = format!("Karpenter refused this {}", self.kind.kind);
                let detail = format!(
                    "Karpenter validated the {} {label} after it was written and set ValidationSucceeded=False \
                     (reason {reason}): {message}. It launches no node from it until this is fixed: change the \
                     configuration and apply again.",
                    self.kind.kind
                );
                let at =
                    named_path(&message).and_then(|p| wire_path_to_attribute(&self.schema.attributes, &p));
                match at {
                    Some(path) => diags.error_at(&path, summary, detail),
                    None => diags.error(summary, detail),
                }
            }
            Ok(Verdict::Pending { reason, message }) => {
                let said = match (reason, message) {
                    (Some(r), Some(m)) if !m.is_empty() => format!(" It says {r}: {m}."),
                    (Some(r), _) => format!(" It says {r}."),
                    _ => String::new(),
                };
                diags.warning(
                    format!("Karpenter has not validated this {} yet", self.kind.kind),
                    format!(
                        "Karpenter runs in the cluster but gave no verdict on {label} within {} s.{said} Check its \
                         ValidationSucceeded condition (`kubectl get {} {name} -o yaml`) before relying on it.",
                        started.elapsed().as_secs(),
                        self.kind.kind.to_lowercase()
                    ),
                );
            }
            Err(e) => diags.extend(self.diagnose(&e, "waiting for Karpenter's validation of")),
        }
        true
    }
}
