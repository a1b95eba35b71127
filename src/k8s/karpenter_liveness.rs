//! Is a Karpenter controller making progress? Asked while a delete waits on Karpenter's
//! finalizers, so that a destroy after Karpenter is gone (its Helm release, IAM role or nodes
//! deleted first) fails in seconds with what to do, instead of waiting out `timeouts.delete`.
//!
//! The signal is Karpenter's leader-election Lease (`coordination.k8s.io/v1`): every v1 minor
//! runs controller-runtime leader election on a Lease named `karpenter-leader-election` in the
//! namespace Karpenter runs in (the Helm release's namespace, often `kube-system`; the name and
//! namespace are configurable in Karpenter, the name default is what is looked for), renewed
//! every few seconds by the leader. The Lease is looked for in every namespace. Verdicts use
//! only what this process observes over time (a Lease's `resourceVersion` that does not change,
//! a holder that gave it up, no Lease at all), never the cluster's clock against ours:
//!
//! - held and renewed (its `resourceVersion` moved) → running;
//! - held, not renewed for `max(2 × leaseDurationSeconds, 10 s)` → gone (pods killed, nodes gone);
//! - released (empty `holderIdentity`: a graceful shutdown, e.g. `helm uninstall`) for 10 s → gone;
//! - no Lease anywhere for 30 s while the object's finalizers do not change → gone (Karpenter
//!   uninstalled with its namespace; a Karpenter running without leader election still makes
//!   the finalizers change as it works);
//! - the Lease cannot be read (RBAC) → unknown: the delete waits as before, and warns once
//!   what that costs ([`super::wait::liveness_unchecked_cost`]).
//!
//! On an EKS Auto Mode cluster AWS runs Karpenter outside the cluster: there is no Lease, and no
//! Lease never means "gone". Such a cluster serves the `nodeclasses.eks.amazonaws.com` CRD; when
//! no Lease is found and that CRD exists, Karpenter counts as running ([`Seen::AwsManaged`]), so
//! a delete waits for the finalizers and `force_destroy` never races AWS's controller.
//!
//! A verdict is shared within the provider process ([`Watchdog::shared`]): once one delete
//! found Karpenter gone, the next delete of the same run that sees the same Leases (still
//! absent, still released, still not renewed) concludes at once instead of waiting its own
//! 30 seconds.

use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams};
use tokio::time::Instant;

/// The name of Karpenter's leader-election Lease (Karpenter's default in every v1 minor).
pub const LEASE_NAME: &str = "karpenter-leader-election";
/// How long a released Lease must stay released before Karpenter counts as gone.
pub const RELEASED_FOR: Duration = Duration::from_secs(10);
/// How long no Lease may exist (with no finalizer progress) before Karpenter counts as gone.
pub const ABSENT_FOR: Duration = Duration::from_secs(30);
/// The least time a held Lease must go unrenewed before Karpenter counts as gone.
pub const MIN_STALE_FOR: Duration = Duration::from_secs(10);
/// How long one read of the Leases may take.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// One look at the Leases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// No Lease named [`LEASE_NAME`] in any namespace (or the Lease kind is not served).
    Absent,
    /// Every such Lease has no holder.
    Released { namespaces: Vec<String> },
    /// At least one is held: `versions` identifies the renewals (namespace/resourceVersion);
    /// `renewed` is the latest `renewTime` (RFC 3339, by the cluster's clock), when written.
    Held {
        namespaces: Vec<String>,
        holder: String,
        versions: String,
        duration: Duration,
        renewed: Option<String>,
    },
    /// The Leases could not be read.
    Unreadable(String),
    /// No Lease, on an EKS Auto Mode cluster: Karpenter is AWS's, run outside the cluster.
    AwsManaged,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Running,
    /// Karpenter is not running; the text says how that was seen.
    Gone(String),
    /// Not known (yet); keep waiting.
    Unknown,
}

/// The last "gone" verdict of this process, and the observation it was made on.
static LAST_GONE: Mutex<Option<(Seen, String)>> = Mutex::new(None);

/// Turns observations over time into a verdict.
#[derive(Debug, Default)]
pub struct Watchdog {
    /// The last observation that changed something, and when it was first seen.
    last: Option<(Seen, Instant)>,
    /// The object's finalizers at the last look, and when they last changed.
    finalizers: Option<(Vec<String>, Instant)>,
    /// Whether verdicts are shared with the other watchdogs of the process.
    shared: bool,
}

impl Watchdog {
    /// A watchdog on its own: its verdicts use only its own observations.
    pub fn new() -> Self {
        Self::default()
    }

    /// A watchdog that shares "gone" verdicts within the process: it concludes at once when
    /// it sees what an earlier verdict was made on, and records its own.
    pub fn shared() -> Self {
        Self {
            shared: true,
            ..Self::default()
        }
    }

    /// Records what was seen at `now` (and what of Karpenter's holds the waited-on object) and
    /// says whether Karpenter is running.
    pub fn observe(&mut self, seen: Seen, finalizers: &[String], now: Instant) -> Liveness {
        if self.shared
            && let Ok(last) = LAST_GONE.lock()
            && let Some((earlier, why)) = last.as_ref()
            && *earlier == seen
        {
            return Liveness::Gone(format!(
                "{why}; found earlier in this run, and the Lease has not changed since"
            ));
        }
        let verdict = self.judge(seen.clone(), finalizers, now);
        if self.shared
            && let Liveness::Gone(why) = &verdict
            && let Ok(mut last) = LAST_GONE.lock()
        {
            *last = Some((seen, why.clone()));
        }
        verdict
    }

    fn judge(&mut self, seen: Seen, finalizers: &[String], now: Instant) -> Liveness {
        let finalizers_since = match &self.finalizers {
            Some((f, since)) if f.as_slice() == finalizers => *since,
            _ => {
                self.finalizers = Some((finalizers.to_vec(), now));
                now
            }
        };
        let since = match &self.last {
            Some((prev, since)) if *prev == seen => *since,
            _ => {
                self.last = Some((seen.clone(), now));
                now
            }
        };
        let unchanged = now.saturating_duration_since(since);
        match &seen {
            Seen::Unreadable(_) => Liveness::Unknown,
            Seen::AwsManaged => Liveness::Running,
            Seen::Held {
                namespaces,
                holder,
                duration,
                ..
            } => {
                let stale_for = (*duration * 2).max(MIN_STALE_FOR);
                if unchanged >= stale_for {
                    Liveness::Gone(format!(
                        "its leader-election Lease {} (held by {holder}) has not been renewed for {}; a running \
                         Karpenter renews it every few seconds",
                        lease_names(namespaces),
                        super::error::humantime(unchanged)
                    ))
                } else {
                    Liveness::Running
                }
            }
            Seen::Released { namespaces } => {
                if unchanged >= RELEASED_FOR {
                    Liveness::Gone(format!(
                        "its leader-election Lease {} was released (Karpenter shut down) and no controller has \
                         taken it over for {}",
                        lease_names(namespaces),
                        super::error::humantime(unchanged)
                    ))
                } else {
                    Liveness::Unknown
                }
            }
            Seen::Absent => {
                let quiet = now.saturating_duration_since(finalizers_since);
                if unchanged >= ABSENT_FOR && quiet >= ABSENT_FOR {
                    Liveness::Gone(format!(
                        "no leader-election Lease named {LEASE_NAME} exists in any namespace (Karpenter is not \
                         installed, or was uninstalled) and the finalizers have not changed for {}",
                        super::error::humantime(unchanged.min(quiet))
                    ))
                } else {
                    Liveness::Unknown
                }
            }
        }
    }
}

fn lease_names(namespaces: &[String]) -> String {
    namespaces
        .iter()
        .map(|ns| format!("{ns}/{LEASE_NAME}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The CRD only EKS Auto Mode clusters serve.
pub const AUTO_MODE_CRD: &str = "nodeclasses.eks.amazonaws.com";

/// Whether the cluster is an EKS Auto Mode cluster (it serves [`AUTO_MODE_CRD`]), asked once per
/// process; a read that fails counts as "no" and is asked again next time.
async fn is_auto_mode(client: &kube::Client) -> bool {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    static AUTO_MODE: tokio::sync::OnceCell<bool> = tokio::sync::OnceCell::const_new();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let answer = AUTO_MODE
        .get_or_try_init(|| async {
            match tokio::time::timeout(READ_TIMEOUT, crds.get_opt(AUTO_MODE_CRD)).await {
                Ok(Ok(found)) => Ok(found.is_some()),
                _ => Err(()),
            }
        })
        .await;
    answer.copied().unwrap_or(false)
}

/// How far the cluster's clock may be from this machine's before a Lease not renewed by our
/// clock counts against Karpenter, for a verdict from one look ([`at_a_glance`]).
pub const CLOCK_SKEW: Duration = Duration::from_secs(60);

/// The verdict of one look at `now` (a plan cannot watch a Lease for half a minute): absent or
/// released → not running; held but not renewed for `max(2 × leaseDurationSeconds, 10 s)` and
/// [`CLOCK_SKEW`] more, by the Lease's `renewTime` against this machine's clock → not running;
/// held and renewed → running; on EKS Auto Mode → running; unreadable → unknown.
pub fn at_a_glance(seen: &Seen, now: k8s_openapi::jiff::Timestamp) -> Liveness {
    match seen {
        Seen::AwsManaged => Liveness::Running,
        Seen::Unreadable(_) => Liveness::Unknown,
        Seen::Absent => Liveness::Gone(format!(
            "no leader-election Lease {LEASE_NAME} exists in any namespace: no Karpenter controller runs in this \
             cluster (or it runs with leader election off)"
        )),
        Seen::Released { namespaces } => Liveness::Gone(format!(
            "its leader-election Lease {} has no holder: Karpenter shut down (uninstalled, or scaled to zero)",
            lease_names(namespaces)
        )),
        Seen::Held {
            namespaces,
            holder,
            duration,
            renewed,
            ..
        } => {
            let Some(renewed) = renewed
                .as_deref()
                .and_then(|r| r.parse::<k8s_openapi::jiff::Timestamp>().ok())
            else {
                return Liveness::Running;
            };
            let ago = now.duration_since(renewed);
            let stale_for = (*duration * 2).max(MIN_STALE_FOR) + CLOCK_SKEW;
            match Duration::try_from(ago) {
                Ok(ago) if ago >= stale_for => Liveness::Gone(format!(
                    "its leader-election Lease {} (held by {holder}) was last renewed {} ago; a running Karpenter \
                     renews it every few seconds",
                    lease_names(namespaces),
                    super::error::humantime(ago)
                )),
                _ => Liveness::Running,
            }
        }
    }
}

/// Reads Karpenter's Leases, in every namespace; on an Auto Mode cluster without them,
/// [`Seen::AwsManaged`].
pub async fn look(client: &kube::Client) -> Seen {
    match look_for_leases(client).await {
        Seen::Absent if is_auto_mode(client).await => Seen::AwsManaged,
        seen => seen,
    }
}

async fn look_for_leases(client: &kube::Client) -> Seen {
    let api: Api<Lease> = Api::all(client.clone());
    let params = ListParams::default().fields(&format!("metadata.name={LEASE_NAME}"));
    let list = match tokio::time::timeout(READ_TIMEOUT, api.list(&params)).await {
        Err(_) => return Seen::Unreadable("the Lease list took too long".into()),
        // The Lease kind is not served: nothing holds a Lease.
        Ok(Err(kube::Error::Api(s))) if s.code == 404 => return Seen::Absent,
        Ok(Err(e)) => return Seen::Unreadable(super::error::KubeError::from(e).to_string()),
        Ok(Ok(list)) => list,
    };
    let mut held = Vec::new();
    let mut released = Vec::new();
    for lease in list
        .items
        .iter()
        .filter(|l| l.metadata.name.as_deref() == Some(LEASE_NAME))
    {
        let ns = lease.metadata.namespace.clone().unwrap_or_default();
        let spec = lease.spec.as_ref();
        let holder = spec.and_then(|s| s.holder_identity.clone()).unwrap_or_default();
        let duration = spec
            .and_then(|s| s.lease_duration_seconds)
            .and_then(|d| u64::try_from(d).ok())
            .unwrap_or(15);
        if holder.is_empty() {
            released.push(ns);
        } else {
            let version = lease.metadata.resource_version.clone().unwrap_or_default();
            let renewed = spec.and_then(|s| s.renew_time.as_ref()).map(|t| t.0);
            held.push((ns, holder, version, Duration::from_secs(duration), renewed));
        }
    }
    if held.is_empty() {
        return if released.is_empty() {
            Seen::Absent
        } else {
            released.sort();
            Seen::Released { namespaces: released }
        };
    }
    held.sort();
    Seen::Held {
        namespaces: held.iter().map(|h| h.0.clone()).collect(),
        holder: held[0].1.clone(),
        versions: held
            .iter()
            .map(|h| format!("{}/{}", h.0, h.2))
            .collect::<Vec<_>>()
            .join(","),
        duration: held.iter().map(|h| h.3).max().unwrap_or(Duration::from_secs(15)),
        renewed: held.iter().filter_map(|h| h.4).max().map(|t| t.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(version: &str) -> Seen {
        Seen::Held {
            namespaces: vec!["kube-system".into()],
            holder: "karpenter-abc_1".into(),
            versions: format!("kube-system/{version}"),
            duration: Duration::from_secs(15),
            renewed: None,
        }
    }

    #[test]
    fn one_look_judges_by_the_renew_time_with_a_minute_for_clocks() {
        let now: k8s_openapi::jiff::Timestamp = "2026-11-28T12:00:00Z".parse().expect("time");
        let renewed_at = |at: &str| Seen::Held {
            namespaces: vec!["kube-system".into()],
            holder: "karpenter-abc_1".into(),
            versions: "kube-system/1".into(),
            duration: Duration::from_secs(15),
            renewed: Some(at.to_string()),
        };
        assert_eq!(
            at_a_glance(&renewed_at("2026-11-28T11:59:58Z"), now),
            Liveness::Running
        );
        // 30 s (2 × 15 s) and the minute of clock skew: 90 s
        assert_eq!(
            at_a_glance(&renewed_at("2026-11-28T11:58:31Z"), now),
            Liveness::Running
        );
        let Liveness::Gone(why) = at_a_glance(&renewed_at("2026-11-28T11:50:00Z"), now) else {
            panic!("a Lease not renewed for 10 minutes is gone");
        };
        assert!(why.contains("last renewed 10m ago"), "{why}");
        assert_eq!(
            at_a_glance(&held("1"), now),
            Liveness::Running,
            "no renewTime: not judged"
        );
        assert!(matches!(at_a_glance(&Seen::Absent, now), Liveness::Gone(_)));
        assert!(matches!(
            at_a_glance(
                &Seen::Released {
                    namespaces: vec!["kube-system".into()]
                },
                now
            ),
            Liveness::Gone(_)
        ));
        assert_eq!(at_a_glance(&Seen::AwsManaged, now), Liveness::Running);
        assert_eq!(
            at_a_glance(&Seen::Unreadable("403".into()), now),
            Liveness::Unknown
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_renewed_lease_is_running_and_a_stale_one_is_gone() {
        let mut w = Watchdog::new();
        let t0 = Instant::now();
        let f = vec!["karpenter.sh/termination".to_string()];
        assert_eq!(w.observe(held("1"), &f, t0), Liveness::Running);
        assert_eq!(
            w.observe(held("2"), &f, t0 + Duration::from_secs(20)),
            Liveness::Running
        );
        assert_eq!(
            w.observe(held("2"), &f, t0 + Duration::from_secs(49)),
            Liveness::Running
        );
        match w.observe(held("2"), &f, t0 + Duration::from_secs(50)) {
            Liveness::Gone(why) => assert!(why.contains("kube-system/karpenter-leader-election"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn released_and_absent_leases() {
        let t0 = Instant::now();
        let f = vec!["karpenter.sh/termination".to_string()];
        let mut w = Watchdog::new();
        let released = Seen::Released {
            namespaces: vec!["karpenter".into()],
        };
        assert_eq!(w.observe(released.clone(), &f, t0), Liveness::Unknown);
        assert!(matches!(
            w.observe(released, &f, t0 + RELEASED_FOR),
            Liveness::Gone(_)
        ));

        let mut w = Watchdog::new();
        assert_eq!(w.observe(Seen::Absent, &f, t0), Liveness::Unknown);
        // Finalizer progress (a Karpenter without leader election at work) resets the wait.
        assert_eq!(
            w.observe(Seen::Absent, &[], t0 + Duration::from_secs(20)),
            Liveness::Unknown
        );
        assert_eq!(
            w.observe(Seen::Absent, &[], t0 + Duration::from_secs(31)),
            Liveness::Unknown
        );
        assert!(matches!(
            w.observe(Seen::Absent, &[], t0 + Duration::from_secs(50)),
            Liveness::Gone(_)
        ));

        let mut w = Watchdog::new();
        let unreadable = Seen::Unreadable("forbidden".into());
        assert_eq!(w.observe(unreadable.clone(), &f, t0), Liveness::Unknown);
        assert_eq!(
            w.observe(unreadable, &f, t0 + Duration::from_secs(3600)),
            Liveness::Unknown
        );
    }
}
