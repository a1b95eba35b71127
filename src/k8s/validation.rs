//! Karpenter's verdict on an object it validates (its `ValidationSucceeded` status condition),
//! waited for after a write. Karpenter checks an EC2NodeClass after the apply — from v1.15 on,
//! the whole open `spec.kubelet` and its CEL expressions — and a refused one never becomes
//! Ready: no node launches from it, while the write itself succeeded. [`wait_verdict`] watches
//! the object until Karpenter has reconciled the generation just written and returns what it
//! said.

use kube::api::DynamicObject;
use kube::runtime::wait::await_condition;
use serde_json::Value as Json;
use tokio::time::Instant;

use super::apply::{api, object_label};
use super::error::KubeError;
use super::kinds::Kind;

/// The reason Karpenter gives while it cannot judge yet (subnets, security groups, AMIs or the
/// instance profile are not resolved): no verdict, only a wait.
pub const DEPENDENCIES_NOT_READY: &str = "DependenciesNotReady";

/// What Karpenter said about one generation of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// `ValidationSucceeded=True`.
    Succeeded,
    /// `ValidationSucceeded=False` with a reason other than [`DEPENDENCIES_NOT_READY`].
    Refused { reason: String, message: String },
    /// Karpenter reconciled the generation but wrote no `ValidationSucceeded` (a release before
    /// v1.2, which has no such condition).
    NotValidated,
    /// No verdict by the deadline: Karpenter had not reconciled the generation, or was still
    /// waiting for the resources it resolves (`reason` then says which wait).
    Pending {
        reason: Option<String>,
        message: Option<String>,
    },
}

/// The verdict in `obj`'s status on `generation`, if Karpenter has given one.
pub fn verdict(obj: &Json, generation: i64) -> Option<Verdict> {
    let conditions = obj.pointer("/status/conditions")?.as_array()?;
    let reconciled = conditions
        .iter()
        .any(|c| c["observedGeneration"].as_i64().is_some_and(|g| g >= generation));
    if !reconciled {
        return None;
    }
    let Some(validation) = conditions.iter().find(|c| c["type"] == "ValidationSucceeded") else {
        return Some(Verdict::NotValidated);
    };
    if validation["observedGeneration"]
        .as_i64()
        .is_some_and(|g| g < generation)
    {
        return None;
    }
    let text = |key: &str| validation[key].as_str().unwrap_or_default().to_string();
    match validation["status"].as_str() {
        Some("True") => Some(Verdict::Succeeded),
        Some("False") if text("reason") != DEPENDENCIES_NOT_READY => Some(Verdict::Refused {
            reason: text("reason"),
            message: text("message"),
        }),
        _ => None,
    }
}

/// Watches `name` until Karpenter gives its verdict on `generation`, or `deadline` passes.
pub async fn wait_verdict(
    client: &kube::Client,
    kind: &Kind,
    namespace: Option<&str>,
    name: &str,
    generation: i64,
    deadline: Instant,
) -> Result<Verdict, KubeError> {
    let api = api(client, kind, namespace);
    let judged =
        move |obj: Option<&DynamicObject>| obj.is_some_and(|o| verdict(&o.data, generation).is_some());
    let watched = tokio::time::timeout_at(deadline, await_condition(api.clone(), name, judged)).await;
    match watched {
        Ok(Ok(Some(obj))) => Ok(verdict(&obj.data, generation).unwrap_or(Verdict::Pending {
            reason: None,
            message: None,
        })),
        Ok(Ok(None)) => Err(KubeError::Client(format!(
            "{} {} disappeared while waiting for Karpenter's validation",
            kind.kind,
            object_label(namespace, name)
        ))),
        // The watch failed or the time is up: what the object says now.
        Ok(Err(_)) | Err(_) => {
            let now = api.get_opt(name).await.ok().flatten();
            let pending = now
                .as_ref()
                .and_then(|o| {
                    o.data
                        .pointer("/status/conditions")?
                        .as_array()?
                        .iter()
                        .find(|c| c["type"] == "ValidationSucceeded")
                        .cloned()
                })
                .map(|c| Verdict::Pending {
                    reason: c["reason"].as_str().map(String::from),
                    message: c["message"].as_str().map(String::from),
                })
                .unwrap_or(Verdict::Pending {
                    reason: None,
                    message: None,
                });
            Ok(now.and_then(|o| verdict(&o.data, generation)).unwrap_or(pending))
        }
    }
}

/// The `spec.kubelet…` path a Karpenter validation message names first, as a wire path
/// (`spec.kubelet.maxPods`, `spec.kubelet.kubeReserved[cpu]`), for the attribute to point at.
pub fn named_path(message: &str) -> Option<String> {
    let start = message.find("spec.")?;
    let rest = &message[start..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '[' | ']' | '-' | '_' | '/')))
        .unwrap_or(rest.len());
    let path = rest[..end].trim_end_matches(['.', ':']);
    // A path that stops inside brackets (`spec.kubelet.kubeReserved[` and a quoted key) is cut
    // at the bracket.
    let path = match path.find('[') {
        Some(i) if !path[i..].contains(']') => &path[..i],
        _ => path,
    };
    (path.len() > "spec.".len()).then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(conditions: Json) -> Json {
        json!({"metadata": {"generation": 2}, "status": {"conditions": conditions}})
    }

    #[test]
    fn the_verdict_is_the_one_on_the_generation_written() {
        let old = object(json!([{"type": "ValidationSucceeded", "status": "True", "observedGeneration": 1}]));
        assert_eq!(verdict(&old, 2), None);
        let ok = object(json!([{"type": "ValidationSucceeded", "status": "True", "observedGeneration": 2}]));
        assert_eq!(verdict(&ok, 2), Some(Verdict::Succeeded));
        let refused = object(
            json!([{"type": "ValidationSucceeded", "status": "False", "observedGeneration": 2,
            "reason": "KubeletExpressionsDisabled", "message": "spec.kubelet contains a CEL expression"}]),
        );
        assert_eq!(
            verdict(&refused, 2),
            Some(Verdict::Refused {
                reason: "KubeletExpressionsDisabled".into(),
                message: "spec.kubelet contains a CEL expression".into()
            })
        );
    }

    #[test]
    fn waiting_for_dependencies_is_no_verdict_and_no_condition_is_an_older_karpenter() {
        let waiting = object(
            json!([{"type": "ValidationSucceeded", "status": "False", "observedGeneration": 2,
            "reason": "DependenciesNotReady", "message": "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"}]),
        );
        assert_eq!(verdict(&waiting, 2), None);
        let older = object(json!([{"type": "Ready", "status": "True", "observedGeneration": 2}]));
        assert_eq!(verdict(&older, 2), Some(Verdict::NotValidated));
        assert_eq!(verdict(&json!({}), 2), None);
    }

    #[test]
    fn the_path_a_message_names_is_found() {
        assert_eq!(
            named_path("spec.kubelet.maxPods: -1 can't be negative").as_deref(),
            Some("spec.kubelet.maxPods")
        );
        assert_eq!(
            named_path("spec.kubelet: unknown field \"maxPod\"").as_deref(),
            Some("spec.kubelet")
        );
        assert_eq!(
            named_path("spec.kubelet.kubeReserved[cpu]: \"x\" isn't valid").as_deref(),
            Some("spec.kubelet.kubeReserved[cpu]")
        );
        assert_eq!(named_path("no path here"), None);
    }
}
