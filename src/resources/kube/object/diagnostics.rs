//! Kubernetes errors as Terraform diagnostics for a kind (one per invalid field where the
//! server names them, with what to do), and warnings about what an operation's waits sat out.

use std::time::Duration;

use super::KubeObjectType;
use super::values::wire_path_to_attribute;
use crate::context::KarpenterContext;
use crate::k8s::{self, KubeError};
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

impl KubeObjectType {
    pub(super) async fn client<'a>(
        &self,
        ctx: &'a KarpenterContext,
    ) -> Result<&'a kube::Client, Diagnostics> {
        ctx.kube()
            .await
            .map_err(|e| self.diagnose(&e, "connecting to the cluster"))
    }

    /// One diagnostic (or one per invalid field) for a Kubernetes error.
    pub(crate) fn diagnose(&self, e: &KubeError, doing: &str) -> Diagnostics {
        let mut d = Diagnostics::new();
        let what = self.kind.kind;
        match e {
            KubeError::Api(_) if e.missing_namespace().is_some() => {
                let namespace = e.missing_namespace().unwrap_or_default();
                d.error_at(
                    &AttributePath::root().attr("namespace"),
                    "Namespace does not exist",
                    format!(
                        "The namespace {namespace:?} does not exist in the cluster, so the {what} cannot be created \
                         there ({e}). Create the namespace first (for example with a kubernetes_namespace resource that \
                         this resource refers to, so Terraform orders them), or set namespace to an existing one."
                    ),
                );
            }
            KubeError::Api(status) if e.is_schema_refusal() => {
                let fields = k8s::skew::undeclared_in_error(&status.message);
                if fields.is_empty() {
                    d.error(
                        format!("The API server cannot take this {what}"),
                        format!(
                            "{e}. The object does not fit the {what} schema of the Karpenter CRDs installed in this \
                             cluster; upgrade them, or remove the settings they do not have."
                        ),
                    );
                }
                for wire in fields {
                    self.undeclared_field(&mut d, &wire);
                }
            }
            KubeError::Api(status) if status.code == 422 => {
                let causes = status.details.as_ref().map(|x| x.causes.as_slice()).unwrap_or_default();
                // One error per problem: the causes when the server names them, its message
                // (which repeats them) only when it does not.
                if causes.is_empty() {
                    d.error(format!("The API server rejected the {what}"), status.message.clone());
                }
                for cause in causes {
                    let detail = format!("{} ({})", cause.message, cause.field);
                    match wire_path_to_attribute(&self.schema.attributes, &cause.field) {
                        Some(path) => d.error_at(&path, format!("Invalid {what} field"), detail),
                        None => d.error(format!("Invalid {what} field"), detail),
                    }
                }
            }
            KubeError::Api(status) if status.code == 401 => d.error(
                "The Kubernetes API server did not accept the provider's credentials",
                format!(
                    "{e}. A 401 means the credential itself is bad or expired, not that permissions are missing: \
                     check the token (an EKS token lasts 15 minutes), the client certificate and key, or what the exec \
                     plugin prints (run it by hand), and that they belong to this cluster."
                ),
            ),
            KubeError::Api(status) if status.code == 403 => {
                let denied = k8s::error::forbidden_action(&status.message);
                let summary = match &denied {
                    Some((verb, resource)) => format!("Not allowed to {verb} {resource}"),
                    None => format!("Not allowed to manage {what} objects"),
                };
                d.error(
                    summary,
                    format!(
                        "{e}. The credentials are valid but lack RBAC permissions: the provider needs {} (see the \
                         permissions table and the least-privilege ClusterRole in the docs).",
                        k8s::permissions::needed_for(&self.kind.crd_name())
                    ),
                )
            }
            KubeError::Unreachable {
                answered_before: true,
                ..
            } => d.error(
                "The Kubernetes API server stopped answering",
                format!(
                    "{e}. The server answered earlier in this run, so the provider waited for it while {doing} {what}, \
                     retrying with backoff until the resource's timeout ran out. A control-plane upgrade or an endpoint \
                     failover can take minutes: raise the resource's timeouts {{}} to wait longer, and run terraform apply \
                     again once the cluster answers. (If a create's write reached the server just before it went away, \
                     that apply finds the {what} and refuses it with the import {{}} block that records it.)"
                ),
            ),
            KubeError::Unreachable { .. } => d.error(
                "Cannot reach the Kubernetes API server",
                format!(
                    "{e}. Nothing answered at that address while {doing} {what}. Check kubernetes.host (or the server of \
                     the kubeconfig context) and that the cluster exists and its endpoint is reachable from here. A server \
                     this provider has not reached yet is retried for {} (so a wrong address fails fast); one that \
                     answered and then went away is waited for until the resource's timeout.",
                    k8s::error::humantime(k8s::retry::UNREACHABLE_FOR)
                ),
            ),
            KubeError::Tls(_) => d.error(
                "TLS connection to the Kubernetes API server failed",
                format!(
                    "{e}. The server's certificate is not trusted or does not match its name. Check \
                     kubernetes.cluster_ca_certificate (or the kubeconfig's certificate-authority-data) and \
                     tls_server_name; this is not retried."
                ),
            ),
            _ => d.error(format!("Failed {doing} {what}"), e.to_string()),
        }
        d
    }

    /// Warnings about what the waits of one operation (`op`: create, update, delete) sat out:
    /// an API server that did not answer for a while, a lost answer found to be a done write.
    pub(crate) fn waits_report(&self, notes: &k8s::retry::Notes, op: &str, state: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        let what = self.kind.kind;
        let label = self.label(state);
        for outage in notes
            .outages
            .iter()
            .filter(|o| o.lasted >= OUTAGE_WORTH_A_WARNING)
        {
            d.warning(
                "The Kubernetes API server did not answer for a while",
                format!(
                    "While the {op} of {what} {label} ran, the Kubernetes API server did not answer for {} (from {}). It \
                     had answered earlier in this run, so the provider waited and retried with backoff (up to \
                     timeouts.{op}), and the {op} went on once it answered again.",
                    k8s::error::humantime(outage.lasted),
                    k8s::error::utc_clock(outage.since)
                ),
            );
        }
        for recovered in &notes.recovered {
            d.warning(
                "An answer of the Kubernetes API server was lost",
                format!(
                    "{}. The provider recognised its own write by the token the create wrote on the object \
                     (annotation {}) and by its field manager, so the object is in the state and no import is needed.",
                    upper_first(recovered),
                    k8s::ownership::CREATE_TOKEN_ANNOTATION
                ),
            );
        }
        d
    }
}

/// Outages shorter than this are not worth a warning (a dropped connection retried at once).
const OUTAGE_WORTH_A_WARNING: Duration = Duration::from_secs(5);

fn upper_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
