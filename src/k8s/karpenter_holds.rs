//! What of Karpenter's keeps an object that is being deleted from going away: its own
//! Karpenter finalizers, and, while the garbage collector's `foregroundDeletion` holds it, the
//! objects it owns that carry Karpenter's finalizers (a NodePool's NodeClaims and their
//! `karpenter.sh/termination`).
//!
//! `foregroundDeletion` alone is the garbage collector's: it waits for owned objects to go, and
//! an object that owns nothing of Karpenter's (a NodePool that never launched anything) is
//! finished by the collector alone, however long it takes to notice a freshly installed kind.
//! Only what this module finds is Karpenter's to finish, so only that may make a delete blame
//! Karpenter ([`super::karpenter_liveness`]).

use kube::api::{Api, DynamicObject, ListParams};

use super::kinds::Kind;

/// How long the list of one dependent kind may take.
const LIST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// Whether a finalizer is one only Karpenter's controller removes.
pub fn is_karpenter_finalizer(finalizer: &str) -> bool {
    finalizer.starts_with("karpenter.sh/") || finalizer.starts_with("karpenter.k8s.aws/")
}

/// One object that waits on Karpenter, with the Karpenter finalizers it carries.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Held {
    /// `NodeClaim default-abc12`, or `itself` for the deleted object.
    pub object: String,
    pub finalizers: Vec<String>,
}

/// What of Karpenter's holds an object being deleted (empty: nothing; the object is the
/// garbage collector's or the API server's to finish).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holds(pub Vec<Held>);

impl Holds {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A fingerprint of the holds: it changes when Karpenter makes progress (a finalizer
    /// removed, a NodeClaim gone).
    pub fn fingerprint(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|h| format!("{} {}", h.object, h.finalizers.join(",")))
            .collect()
    }

    /// "its finalizer karpenter.sh/termination; NodeClaims a, b (finalizer karpenter.sh/termination)".
    pub fn describe(&self, kind: &str) -> String {
        let mut own = Vec::new();
        let mut owned: std::collections::BTreeMap<(String, String), Vec<String>> = Default::default();
        for h in &self.0 {
            if h.object == "itself" {
                own.extend(h.finalizers.iter().cloned());
            } else if let Some((k, n)) = h.object.split_once(' ') {
                owned
                    .entry((k.to_string(), h.finalizers.join(", ")))
                    .or_default()
                    .push(n.to_string());
            }
        }
        let mut parts = Vec::new();
        if !own.is_empty() {
            parts.push(format!("the {kind}'s own finalizer(s) {}", own.join(", ")));
        }
        for ((k, finalizers), names) in owned {
            parts.push(format!(
                "the {k}(s) it owns, {} (finalizer {finalizers}), which Karpenter deletes after draining and \
                 terminating their nodes",
                names.join(", ")
            ));
        }
        parts.join("; and ")
    }
}

/// What of Karpenter's holds `obj` (of uid `uid`): its Karpenter finalizers, and, while it is
/// in foreground deletion, the objects of `dependents` it owns that carry Karpenter's
/// finalizers. A dependent list that fails is skipped (the next look tries again).
pub async fn holds(client: &kube::Client, obj: &DynamicObject, uid: &str, dependents: &[Kind]) -> Holds {
    let finalizers = obj.metadata.finalizers.clone().unwrap_or_default();
    let mut held = Vec::new();
    let own: Vec<String> = finalizers
        .iter()
        .filter(|f| is_karpenter_finalizer(f))
        .cloned()
        .collect();
    if !own.is_empty() {
        held.push(Held {
            object: "itself".into(),
            finalizers: own,
        });
    }
    if finalizers.iter().any(|f| f == "foregroundDeletion") {
        for dep in dependents {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &dep.api_resource());
            let Ok(Ok(list)) = tokio::time::timeout(LIST_TIMEOUT, api.list(&ListParams::default())).await
            else {
                continue;
            };
            for o in &list.items {
                let owned = o
                    .metadata
                    .owner_references
                    .as_ref()
                    .is_some_and(|refs| refs.iter().any(|r| r.uid == uid));
                let theirs: Vec<String> = o
                    .metadata
                    .finalizers
                    .iter()
                    .flatten()
                    .filter(|f| is_karpenter_finalizer(f))
                    .cloned()
                    .collect();
                if owned && !theirs.is_empty() {
                    held.push(Held {
                        object: format!("{} {}", dep.kind, o.metadata.name.clone().unwrap_or_default()),
                        finalizers: theirs,
                    });
                }
            }
        }
    }
    held.sort();
    Holds(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_own_finalizers_and_owned_objects() {
        let holds = Holds(vec![
            Held {
                object: "NodeClaim a".into(),
                finalizers: vec!["karpenter.sh/termination".into()],
            },
            Held {
                object: "NodeClaim b".into(),
                finalizers: vec!["karpenter.sh/termination".into()],
            },
        ]);
        let text = holds.describe("NodePool");
        assert!(
            text.contains("NodeClaim(s) it owns, a, b (finalizer karpenter.sh/termination)"),
            "{text}"
        );
        assert!(!text.contains("foregroundDeletion"), "{text}");
        let own = Holds(vec![Held {
            object: "itself".into(),
            finalizers: vec!["karpenter.k8s.aws/termination".into()],
        }]);
        assert_eq!(
            own.describe("EC2NodeClass"),
            "the EC2NodeClass's own finalizer(s) karpenter.k8s.aws/termination"
        );
        assert!(is_karpenter_finalizer("karpenter.sh/termination"));
        assert!(!is_karpenter_finalizer("foregroundDeletion"));
    }
}
