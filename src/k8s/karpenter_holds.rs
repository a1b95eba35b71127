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
    /// The kind and name of an object the deleted one owns; `None` for the deleted object.
    pub owned: Option<(&'static str, String)>,
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
            .map(|h| match &h.owned {
                Some((kind, name)) => format!("{kind} {name} {}", h.finalizers.join(",")),
                None => format!("itself {}", h.finalizers.join(",")),
            })
            .collect()
    }

    /// "its finalizer karpenter.sh/termination; NodeClaims a, b (finalizer karpenter.sh/termination)".
    pub fn describe(&self, kind: &str) -> String {
        let mut own = Vec::new();
        let mut owned: std::collections::BTreeMap<(&str, String), Vec<&str>> = Default::default();
        for h in &self.0 {
            match &h.owned {
                None => own.extend(h.finalizers.iter().cloned()),
                Some((k, n)) => owned.entry((*k, h.finalizers.join(", "))).or_default().push(n),
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

/// The objects of `kind`, in every namespace, that the object of uid `owner` owns (by owner
/// reference).
pub async fn owned_by(
    client: &kube::Client,
    kind: &Kind,
    owner: &str,
) -> Result<Vec<DynamicObject>, kube::Error> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &kind.api_resource());
    let list = api.list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .filter(|o| {
            o.metadata
                .owner_references
                .as_ref()
                .is_some_and(|refs| refs.iter().any(|r| r.uid == owner))
        })
        .collect())
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
            owned: None,
            finalizers: own,
        });
    }
    if finalizers.iter().any(|f| f == "foregroundDeletion") {
        for dep in dependents {
            let Ok(Ok(owned)) = tokio::time::timeout(LIST_TIMEOUT, owned_by(client, dep, uid)).await else {
                continue;
            };
            for o in owned {
                let theirs: Vec<String> = o
                    .metadata
                    .finalizers
                    .iter()
                    .flatten()
                    .filter(|f| is_karpenter_finalizer(f))
                    .cloned()
                    .collect();
                if !theirs.is_empty() {
                    held.push(Held {
                        owned: Some((dep.kind, o.metadata.name.unwrap_or_default())),
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
                owned: Some(("NodeClaim", "a".into())),
                finalizers: vec!["karpenter.sh/termination".into()],
            },
            Held {
                owned: Some(("NodeClaim", "b".into())),
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
            owned: None,
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
