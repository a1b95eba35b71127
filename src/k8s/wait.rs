//! Deleting custom objects and waiting on them: deletion with foreground propagation that
//! waits until the object is gone (finalizers and dependents included, with progress lines
//! naming whose finalizers hold it, and a check that Karpenter is running while its finalizers
//! do), the texts those waits give (finalizer owners, the garbage collector, an unreadable
//! Lease), and the wait for `Ready`. Writes and reads are in [`super::apply`].

use kube::api::{DeleteParams, DynamicObject, PropagationPolicy};
use kube::runtime::wait::{await_condition, conditions};
use serde_json::Value as Json;
use tokio::time::Instant;

use super::apply::{api, object_label};
use super::error::{KubeError, humantime};
use super::karpenter_holds;
use super::karpenter_liveness::{self, Liveness, Watchdog};
use super::kinds::Kind;
use super::retry::{Also, retry};

/// Deletes with foreground propagation and waits until the object is gone. On timeout, the
/// error says what still holds it (finalizers, owned objects of `dependents`). While it waits
/// on Karpenter's finalizers, it checks that a Karpenter controller is running
/// ([`karpenter_liveness`]) and fails fast with [`KubeError::KarpenterGone`] when none is.
pub async fn delete_and_wait(
    client: &kube::Client,
    kind: &Kind,
    namespace: Option<&str>,
    name: &str,
    dependents: &[Kind],
    deadline: Instant,
) -> Result<Waited, KubeError> {
    let api = api(client, kind, namespace);
    let label = object_label(namespace, name);
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    let deleted = retry(
        &format!("deleting {} {label}", kind.kind),
        deadline,
        Also::Nothing,
        || async {
            match api.delete(name, &params).await {
                Ok(either) => Ok(Some(either)),
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
                Err(e) => Err(KubeError::from(e)),
            }
        },
    )
    .await?;
    let Some(deleted) = deleted else {
        return Ok(Waited::default());
    };
    let uid = deleted.either(
        |obj| obj.metadata.uid.unwrap_or_default(),
        |status| status.details.map(|d| d.uid).unwrap_or_default(),
    );
    if uid.is_empty() {
        // The server deleted it outright (the Status form of the answer).
        return Ok(Waited::default());
    }
    tracing::info!(
        kind = kind.kind,
        name,
        "waiting for {} {label} to be deleted",
        kind.kind
    );
    let object = Incarnation {
        namespace,
        name,
        uid: &uid,
    };
    wait_gone(client, kind, object, dependents, deadline, Waiting::Delete).await
}

/// What a wait that ended well has to tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Waited {
    /// Why whether Karpenter is running could not be checked while Karpenter's finalizers
    /// held the object (its Lease unreadable, e.g. RBAC): had Karpenter been gone, the wait
    /// would have lasted the whole timeout.
    pub liveness_unchecked: Option<String>,
    /// How long the object waited on the garbage collector alone (`foregroundDeletion`, and
    /// nothing it owns being deleted), when that lasted past [`COLLECTOR_WARN_AFTER`].
    pub collector: Option<std::time::Duration>,
}

/// How long a delete waits on the garbage collector alone before it warns that
/// kube-controller-manager may not be running.
pub const COLLECTOR_WARN_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether the only finalizer left is the garbage collector's `foregroundDeletion`.
pub fn waits_on_collector_alone(finalizers: &[String]) -> bool {
    !finalizers.is_empty() && finalizers.iter().all(|f| f == "foregroundDeletion")
}

/// For an object whose only finalizer is `foregroundDeletion`: the objects of `dependents` it
/// (of uid `uid`) owns that the garbage collector has not started deleting, as `Kind name`
/// (empty: it owns nothing any more). `None` when one of them is being deleted (the collector
/// did its part; what remains is their finalizers', e.g. Karpenter's) or they cannot be listed.
pub async fn collector_pending(client: &kube::Client, uid: &str, dependents: &[Kind]) -> Option<Vec<String>> {
    let mut pending = Vec::new();
    for dep in dependents {
        let owned = tokio::time::timeout(PROGRESS_READ, karpenter_holds::owned_by(client, dep, uid))
            .await
            .ok()?
            .ok()?;
        for o in owned {
            if o.metadata.deletion_timestamp.is_some() {
                return None;
            }
            pending.push(format!("{} {}", dep.kind, o.metadata.name.unwrap_or_default()));
        }
    }
    Some(pending)
}

/// What a delete that has waited `waited` on the garbage collector alone says: whose job it
/// is (`pending`: what the object owns that the collector has not deleted), why it may not
/// happen, and how to check.
pub fn collector_stuck(kind: &str, label: &str, waited: std::time::Duration, pending: &[String]) -> String {
    let owned = if pending.is_empty() {
        "and nothing the object owns remains".to_string()
    } else {
        format!(
            "and the collector has not yet started deleting what the object owns ({})",
            pending.join(", ")
        )
    };
    format!(
        "{kind} {label} has waited {} for the Kubernetes garbage collector alone: its one remaining finalizer is \
         foregroundDeletion, which the garbage collector (part of kube-controller-manager) removes once it has \
         deleted what the object owns, {owned}. kube-controller-manager may not be running (it notices a freshly \
         installed kind within about 30 s; much longer means it is down). Check its leader-election Lease: `kubectl -n \
         kube-system get lease kube-controller-manager -o jsonpath='{{.spec.renewTime}}'` should be seconds ago (on \
         EKS the controller manager is part of the managed control plane: check the cluster's health with `aws eks \
         describe-cluster` or in the EKS console). The delete finishes as soon as the garbage collector runs again",
        humantime(waited)
    )
}

/// The sentence that says what an unreadable Lease costs.
pub fn liveness_unchecked_cost(reason: &str) -> String {
    format!(
        "Whether Karpenter is running could not be checked ({reason}). Had Karpenter not been running, the delete \
         would have waited its whole timeouts.delete instead of failing within about half a minute. Grant list \
         on leases in coordination.k8s.io (see the least-privilege ClusterRole in the docs)."
    )
}

/// Why [`wait_gone`] waits, for its progress lines and its timeout message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// This provider deletes the object (destroy, or the delete half of a replacement).
    Delete,
    /// The object was already being deleted when this provider came to write it: it is
    /// created again once it is gone (bounded by `timeouts.create`).
    Recreate,
}

/// One incarnation of an object: its address and its uid (an object of the same name with
/// another uid is another incarnation).
#[derive(Debug, Clone, Copy)]
pub struct Incarnation<'a> {
    pub namespace: Option<&'a str>,
    pub name: &'a str,
    pub uid: &'a str,
}

/// Waits until the incarnation `object` is gone (an object of that name with another uid
/// counts as gone). Says every [`PROGRESS_EVERY`] which finalizers it waits for and whose they are;
/// while Karpenter's finalizers hold it, checks that a Karpenter controller is running and
/// fails fast with [`KubeError::KarpenterGone`] when none is. On timeout, the error says what
/// still holds it (finalizers, owned objects of `dependents`).
pub async fn wait_gone(
    client: &kube::Client,
    kind: &Kind,
    object: Incarnation<'_>,
    dependents: &[Kind],
    deadline: Instant,
    why: Waiting,
) -> Result<Waited, KubeError> {
    let Incarnation { namespace, name, uid } = object;
    let api = api(client, kind, namespace);
    let label = object_label(namespace, name);
    let started = Instant::now();
    let mut delay = super::retry::FIRST_DELAY;
    let mut ticker = tokio::time::interval_at(Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
    let mut probe = tokio::time::interval_at(Instant::now() + PROBE_EVERY, PROBE_EVERY);
    let mut watchdog = Watchdog::shared();
    let mut unchecked: Option<String> = None;
    // Since when the object waits on the garbage collector alone, and how long it had when
    // that was worth a warning.
    let mut collector_since: Option<Instant> = None;
    let mut collector_warned: Option<Instant> = None;
    loop {
        let wait = tokio::time::timeout_at(
            deadline,
            await_condition(api.clone(), name, conditions::is_deleted(uid)),
        );
        let mut wait = std::pin::pin!(wait);
        let outcome = loop {
            tokio::select! {
                done = &mut wait => break done,
                _ = probe.tick() => {
                    let Ok(Ok(Some(obj))) = tokio::time::timeout(PROGRESS_READ, api.get_opt(name)).await else {
                        continue;
                    };
                    // Only Karpenter's own finalizers (on the object, or on what it owns) are
                    // Karpenter's to finish; `foregroundDeletion` alone is the collector's.
                    // `foregroundDeletion` alone, with nothing owned being deleted yet: the garbage
                    // collector's to finish, not Karpenter's (even where what it owns carries
                    // Karpenter's finalizers: nothing is deleting it).
                    let pending = if waits_on_collector_alone(obj.metadata.finalizers.as_deref().unwrap_or_default()) {
                        collector_pending(client, uid, dependents).await
                    } else {
                        None
                    };
                    if let Some(pending) = pending {
                        let since = *collector_since.get_or_insert_with(Instant::now);
                        if collector_warned.is_none() && since.elapsed() >= COLLECTOR_WARN_AFTER {
                            collector_warned = Some(since);
                            tracing::warn!(
                                kind = kind.kind,
                                name,
                                "{}",
                                collector_stuck(kind.kind, &label, since.elapsed(), &pending)
                            );
                        }
                        continue;
                    }
                    collector_since = None;
                    let holds = karpenter_holds::holds(client, &obj, uid, dependents).await;
                    if holds.is_empty() {
                        continue;
                    }
                    let seen = karpenter_liveness::look(client).await;
                    if let karpenter_liveness::Seen::Unreadable(reason) = &seen {
                        if unchecked.is_none() {
                            tracing::warn!(kind = kind.kind, name, "{}", liveness_unchecked_cost(reason));
                        }
                        unchecked = Some(reason.clone());
                    }
                    if let Liveness::Gone(why) = watchdog.observe(seen, &holds.fingerprint(), Instant::now()) {
                        let what = format!(
                            "{} {label} is being deleted and waits for {}",
                            kind.kind,
                            holds.describe(kind.kind)
                        );
                        tracing::warn!(kind = kind.kind, name, "{what}, but Karpenter is not running: {why}");
                        return Err(KubeError::KarpenterGone { what, why, waited: started.elapsed() });
                    }
                }
                _ = ticker.tick() => {
                    // Bounded, so a server that hangs cannot hold the wait past its deadline.
                    let blocking = match tokio::time::timeout(PROGRESS_READ, api.get_opt(name)).await {
                        Ok(Ok(Some(obj))) => waiting_for(obj.metadata.finalizers.as_deref().unwrap_or_default()),
                        Ok(Ok(None)) => "it is gone".to_string(),
                        Ok(Err(e)) => format!("its state could not be read ({})", KubeError::from(e)),
                        Err(_) => "its state could not be read in time".to_string(),
                    };
                    let waited = humantime(started.elapsed());
                    match why {
                        Waiting::Delete => tracing::info!(
                            kind = kind.kind,
                            name,
                            "still deleting {} {label} after {waited}: {blocking}",
                            kind.kind
                        ),
                        Waiting::Recreate => tracing::info!(
                            kind = kind.kind,
                            name,
                            "{} {label} is still being deleted after {waited} (it is created again once it is gone): {blocking}",
                            kind.kind
                        ),
                    }
                }
            }
        };
        match outcome {
            Ok(Ok(_)) => {
                return Ok(Waited {
                    liveness_unchecked: unchecked,
                    collector: collector_warned.map(|since| since.elapsed()),
                });
            }
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "watch while deleting failed; watching again");
                if Instant::now() + delay >= deadline {
                    break;
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(super::retry::MAX_DELAY);
            }
            Err(_) => break,
        }
    }
    let mut what = holders(client, kind, object, dependents, why, started.elapsed()).await;
    if let Some(reason) = &unchecked {
        what = format!("{what}. {}", liveness_unchecked_cost(reason));
    }
    Err(KubeError::Timeout {
        what,
        waited: started.elapsed(),
    })
}

/// How often a delete that waits on Karpenter checks that Karpenter is running.
const PROBE_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether one of Karpenter's own finalizers holds the object (`foregroundDeletion` is the
/// garbage collector's: what it waits for is checked by [`karpenter_holds::holds`]).
pub fn waits_on_karpenter(finalizers: &[String]) -> bool {
    finalizers
        .iter()
        .any(|f| karpenter_holds::is_karpenter_finalizer(f))
}

/// How often a delete that waits says what it waits for.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);
/// How long the progress line waits for its read of the object.
const PROGRESS_READ: std::time::Duration = std::time::Duration::from_secs(3);

/// Who removes a finalizer, for the finalizers Karpenter objects carry.
pub fn finalizer_owner(finalizer: &str) -> &'static str {
    match finalizer {
        "karpenter.sh/termination" => {
            "Karpenter's controller, after draining and terminating the nodes it launched"
        }
        "karpenter.k8s.aws/termination" => {
            "Karpenter's controller, once no NodeClaim uses this node class and its instance profile is deleted"
        }
        "foregroundDeletion" => {
            "the Kubernetes garbage collector, once the objects this one owns are deleted"
        }
        "orphan" => "the Kubernetes garbage collector, after orphaning the objects this one owns",
        f if karpenter_holds::is_karpenter_finalizer(f) => "Karpenter's controller",
        _ => "another controller (not this provider)",
    }
}

/// "waiting for finalizer karpenter.sh/termination (removed by …)" for the progress log.
pub fn waiting_for(finalizers: &[String]) -> String {
    if finalizers.is_empty() {
        return "no finalizers remain; waiting for the API server to remove it".into();
    }
    let each: Vec<String> = finalizers
        .iter()
        .map(|f| format!("{f} (removed by {})", finalizer_owner(f)))
        .collect();
    format!("waiting for finalizer(s) {}", each.join(", "))
}

/// Describes what keeps an object from disappearing, for the timeout message (`waited`: how
/// long the delete waited).
async fn holders(
    client: &kube::Client,
    kind: &Kind,
    object: Incarnation<'_>,
    dependents: &[Kind],
    why: Waiting,
    waited: std::time::Duration,
) -> String {
    let Incarnation { namespace, name, uid } = object;
    let api = api(client, kind, namespace);
    let mut parts = Vec::new();
    let finalizers = match api.get_opt(name).await {
        Ok(Some(obj)) => obj.metadata.finalizers.filter(|f| !f.is_empty()),
        _ => None,
    };
    if let Some(f) = &finalizers {
        parts.push(format!("finalizers remain: {}", waiting_for(f)));
    }
    for dep in dependents {
        let Ok(owned) = karpenter_holds::owned_by(client, dep, uid).await else {
            continue;
        };
        let owned: Vec<String> = owned.into_iter().filter_map(|o| o.metadata.name).collect();
        if !owned.is_empty() {
            parts.push(format!(
                "{} {} owned by it still exist ({})",
                owned.len(),
                dep.plural,
                owned.join(", ")
            ));
        }
    }
    let collector = match &finalizers {
        Some(f) if waits_on_collector_alone(f) => collector_pending(client, uid, dependents).await,
        _ => None,
    };
    let holding = if parts.is_empty() {
        "it still exists".to_string()
    } else {
        parts.join("; ")
    };
    let (then, timeout) = match why {
        Waiting::Delete => ("", "timeouts.delete"),
        Waiting::Recreate => (
            " (it was being deleted before this apply, and is created again once it is gone)",
            "timeouts.create",
        ),
    };
    let label = object_label(namespace, name);
    if let Some(pending) = collector {
        return format!(
            "{} {label} is still being deleted{then}. {}; or raise {timeout}",
            kind.kind,
            collector_stuck(kind.kind, &label, waited, &pending)
        );
    }
    format!(
        "{} {label} is still being deleted{then}: {holding}. Karpenter removes its finalizer after draining and \
         terminating the nodes; check the Karpenter controller's logs, or raise {timeout}",
        kind.kind,
    )
}

/// Waits until the object's `status.conditions` has `Ready=True`. On timeout, the error lists
/// the conditions that are not true, with their messages.
pub async fn wait_ready(
    client: &kube::Client,
    kind: &Kind,
    namespace: Option<&str>,
    name: &str,
    deadline: Instant,
) -> Result<DynamicObject, KubeError> {
    let api = api(client, kind, namespace);
    let label = object_label(namespace, name);
    let started = Instant::now();
    let is_ready =
        |obj: Option<&DynamicObject>| obj.is_some_and(|o| condition_status(&o.data, "Ready") == Some("True"));
    let mut delay = super::retry::FIRST_DELAY;
    loop {
        match tokio::time::timeout_at(deadline, await_condition(api.clone(), name, is_ready)).await {
            Ok(Ok(Some(obj))) => return Ok(obj),
            Ok(Ok(None)) => {
                return Err(KubeError::Client(format!(
                    "{} {label} disappeared while waiting for Ready",
                    kind.kind
                )));
            }
            Ok(Err(e)) => {
                if Instant::now() + delay >= deadline {
                    tracing::debug!(error = %e, "watch failed near the deadline");
                    break;
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(super::retry::MAX_DELAY);
            }
            Err(_) => break,
        }
    }
    let detail = match api.get_opt(name).await {
        Ok(Some(obj)) => not_ready_conditions(&obj.data),
        _ => "its status could not be read".to_string(),
    };
    Err(KubeError::Timeout {
        what: format!(
            "{} {label} did not become Ready within {}: {detail}",
            kind.kind,
            humantime(started.elapsed())
        ),
        waited: started.elapsed(),
    })
}

fn condition_status<'a>(data: &'a Json, type_: &str) -> Option<&'a str> {
    data.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?
        .get("status")?
        .as_str()
}

fn not_ready_conditions(data: &Json) -> String {
    let conditions = data.pointer("/status/conditions").and_then(Json::as_array);
    let parts: Vec<String> = conditions
        .into_iter()
        .flatten()
        .filter(|c| c["status"] != "True")
        .map(|c| {
            format!(
                "{}={} ({})",
                c["type"].as_str().unwrap_or("?"),
                c["status"].as_str().unwrap_or("?"),
                c["message"]
                    .as_str()
                    .filter(|m| !m.is_empty())
                    .or(c["reason"].as_str())
                    .unwrap_or("no message")
            )
        })
        .collect();
    if parts.is_empty() {
        "no conditions reported yet (is the Karpenter controller running?)".into()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_whose_finalizers_block_a_delete() {
        let text = waiting_for(&["karpenter.sh/termination".into(), "example.com/hold".into()]);
        assert!(
            text.contains("karpenter.sh/termination (removed by Karpenter's controller"),
            "{text}"
        );
        assert!(
            text.contains("example.com/hold (removed by another controller"),
            "{text}"
        );
        assert!(waiting_for(&[]).contains("no finalizers"));
    }

    #[test]
    fn lists_conditions_that_are_not_true() {
        let data = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "NotReady", "message": "SubnetsReady=False"},
            {"type": "SubnetsReady", "status": "False", "message": "no subnets found for selector"},
            {"type": "AMIsReady", "status": "True"}
        ]}});
        let text = not_ready_conditions(&data);
        assert!(
            text.contains("SubnetsReady=False (no subnets found for selector)"),
            "{text}"
        );
        assert!(!text.contains("AMIsReady"), "{text}");
        assert_eq!(condition_status(&data, "Ready"), Some("False"));
        assert!(not_ready_conditions(&json!({})).contains("no conditions"));
    }
}
