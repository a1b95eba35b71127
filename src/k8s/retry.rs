//! Retrying transient Kubernetes refusals with capped exponential backoff, inside a deadline.
//!
//! Karpenter's own start-up produces exactly these: a just-established kind answering 404
//! for a moment, its webhook refusing connections, throttling (429, honouring the server's
//! `Retry-After`), 5xx, dropped connections. Errors that will not heal (422 Invalid, 403) are
//! returned at once. A single request that is still unanswered at the deadline is abandoned:
//! a slow server cannot hold an operation past its `timeouts {}` setting.
//!
//! An API server that does not answer at all (connection refused, DNS) is retried for
//! [`UNREACHABLE_FOR`] when this provider process has never reached it — a wrong address or a
//! deleted cluster fails fast — but until the operation's deadline when it answered before and
//! went away: a control-plane upgrade or an endpoint failover is waited out, each wait logged
//! at `warn` with since when the server is silent. What the waits of one operation saw (an
//! outage sat out, a lost answer recovered) is noted for the resource to report ([`noting`]).

use std::cell::RefCell;
use std::future::Future;
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use super::error::{KubeError, humantime, utc_clock};

/// First delay; doubled each attempt up to [`MAX_DELAY`].
pub const FIRST_DELAY: Duration = Duration::from_millis(50);
pub const MAX_DELAY: Duration = Duration::from_secs(5);

/// How long an API server that this provider process has never reached (connection refused,
/// DNS) is retried before the operation fails naming it, whatever its own timeout: long
/// enough for an EKS endpoint that is just being created to start answering, short enough that
/// a wrong host or a deleted cluster fails in seconds rather than after `timeouts.create`. A
/// server that answered earlier in the process and then stopped is waited for until the
/// operation's deadline instead.
pub const UNREACHABLE_FOR: Duration = Duration::from_secs(30);

/// Which errors to retry besides the transient ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Also {
    Nothing,
    /// 404 too: right after a CRD is established, the API may not serve the kind yet. Not the
    /// 404 of a namespace that does not exist ([`KubeError::missing_namespace`]).
    NotFound,
}

/// A time the API server did not answer that one operation sat out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    /// When the server stopped answering.
    pub since: SystemTime,
    /// How long it was silent, until it answered this operation again.
    pub lasted: Duration,
}

/// What the waits of one operation saw, for the resource to report once it is done.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notes {
    /// Outages sat out (one per outage, however many requests waited on it).
    pub outages: Vec<Outage>,
    /// Writes whose answer was lost and that were found done when the server answered again.
    pub recovered: Vec<String>,
}

tokio::task_local! {
    static NOTES: RefCell<Notes>;
}

/// Runs `operation`, collecting what its waits saw (see [`Notes`]).
pub async fn noting<F: Future>(operation: F) -> (F::Output, Notes) {
    NOTES
        .scope(RefCell::new(Notes::default()), async {
            let out = operation.await;
            let notes = NOTES.try_with(RefCell::take).unwrap_or_default();
            (out, notes)
        })
        .await
}

/// Adds to the notes of the operation this runs in, if it is [`noting`].
pub fn note(add: impl FnOnce(&mut Notes)) {
    let _ = NOTES.try_with(|notes| add(&mut notes.borrow_mut()));
}

fn note_outage(since: SystemTime) {
    let lasted = SystemTime::now().duration_since(since).unwrap_or_default();
    note(
        |notes| match notes.outages.iter_mut().find(|o| o.since == since) {
            Some(known) => known.lasted = known.lasted.max(lasted),
            None => notes.outages.push(Outage { since, lasted }),
        },
    );
}

/// Runs `op` until it succeeds, fails permanently, or the deadline would pass.
pub async fn retry<T, F, Fut>(what: &str, deadline: Instant, also: Also, mut op: F) -> Result<T, KubeError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, KubeError>>,
{
    let mut delay = FIRST_DELAY;
    let started = Instant::now();
    let mut attempt = 1u32;
    // When this call first found the server unreachable, and since when the server says it
    // has been silent (the first failed request of any operation after its last answer).
    let mut unreachable_since: Option<Instant> = None;
    let mut silent_since: Option<SystemTime> = None;
    loop {
        let err = match tokio::time::timeout_at(deadline, op()).await {
            Ok(result) => {
                let answered = !matches!(
                    result,
                    Err(KubeError::Unreachable { .. } | KubeError::Transport(_))
                );
                if answered && let Some(since) = silent_since.take() {
                    let lasted = SystemTime::now().duration_since(since).unwrap_or_default();
                    tracing::warn!(
                        attempt,
                        "{what}: the Kubernetes API server answers again, after {} without an answer (since {})",
                        humantime(lasted),
                        utc_clock(since)
                    );
                    note_outage(since);
                }
                match result {
                    Ok(v) => return Ok(v),
                    Err(e) => e,
                }
            }
            Err(_) => {
                return Err(KubeError::Timeout {
                    what: format!("{what}: the API server did not answer attempt {attempt} in time"),
                    waited: started.elapsed(),
                });
            }
        };
        let retryable = err.is_transient()
            || (also == Also::NotFound && err.is_not_found() && err.missing_namespace().is_none());
        if !retryable {
            return Err(err);
        }
        // The server's Retry-After wins over our own schedule.
        let wait = err.retry_after().unwrap_or(delay);
        if let KubeError::Unreachable {
            message,
            answered_before,
            since,
        } = &err
        {
            let first = *unreachable_since.get_or_insert_with(Instant::now);
            let since = since.or(silent_since).unwrap_or_else(SystemTime::now);
            silent_since = Some(since);
            let silent_for = SystemTime::now().duration_since(since).unwrap_or_default();
            if !answered_before && first.elapsed() >= UNREACHABLE_FOR {
                return Err(KubeError::Unreachable {
                    message: format!(
                        "{message} (still unreachable after {attempt} attempts over {})",
                        humantime(started.elapsed())
                    ),
                    answered_before: false,
                    since: Some(since),
                });
            }
            if Instant::now() + wait >= deadline {
                return Err(KubeError::Unreachable {
                    message: format!(
                        "{message}; it has not answered since {} ({}), and the operation's timeout ran out after {} \
                         ({attempt} attempts)",
                        utc_clock(since),
                        humantime(silent_for),
                        humantime(started.elapsed())
                    ),
                    answered_before: *answered_before,
                    since: Some(since),
                });
            }
            let (until, why) = if *answered_before {
                (deadline, "until the operation's timeout".to_string())
            } else {
                (
                    deadline.min(first + UNREACHABLE_FOR),
                    format!(
                        "a server this provider has not reached yet is given {}",
                        humantime(UNREACHABLE_FOR)
                    ),
                )
            };
            tracing::warn!(
                attempt,
                "{what}: the Kubernetes API server has not answered since {} ({}): {message}; trying again in {}, \
                 for {} more ({why})",
                utc_clock(since),
                humantime(silent_for),
                humantime_ms(wait),
                humantime(until.saturating_duration_since(Instant::now())),
            );
        } else {
            unreachable_since = None;
            if Instant::now() + wait >= deadline {
                return Err(KubeError::Timeout {
                    what: format!("{what}: still failing after {attempt} attempts; last error: {err}"),
                    waited: started.elapsed(),
                });
            }
            tracing::debug!(attempt, delay_ms = wait.as_millis() as u64, error = %err, "{what}: transient failure, retrying");
        }
        tokio::time::sleep(wait).await;
        delay = (delay * 2).min(MAX_DELAY);
        attempt += 1;
    }
}

/// `250ms` below a second, else as [`humantime`].
fn humantime_ms(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        humantime(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn status(code: u16) -> KubeError {
        KubeError::Api(Box::new(kube::core::Status {
            code,
            ..Default::default()
        }))
    }

    #[tokio::test(start_paused = true)]
    async fn retries_transient_errors_until_success() {
        let calls = AtomicU32::new(0);
        let deadline = Instant::now() + Duration::from_secs(60);
        let out = retry("apply", deadline, Also::Nothing, || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0 => Err(status(429)),
                1 => Err(status(503)),
                _ => Ok(7),
            }
        })
        .await;
        assert_eq!(out.ok(), Some(7));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn permanent_errors_fail_at_once() {
        let calls = AtomicU32::new(0);
        let deadline = Instant::now() + Duration::from_secs(60);
        let out: Result<(), _> = retry("apply", deadline, Also::NotFound, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(status(422))
        })
        .await;
        assert_eq!(out.err().and_then(|e| e.code()), Some(422));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    /// A write into a namespace that does not exist fails at once, even where 404 is retried.
    #[tokio::test(start_paused = true)]
    async fn a_missing_namespace_is_not_retried() {
        let calls = AtomicU32::new(0);
        let deadline = Instant::now() + Duration::from_secs(60);
        let out: Result<(), _> = retry("apply", deadline, Also::NotFound, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(KubeError::Api(Box::new(kube::core::Status {
                code: 404,
                message: "namespaces \"team-a\" not found".into(),
                details: Some(kube::core::response::StatusDetails {
                    name: "team-a".into(),
                    group: String::new(),
                    kind: "namespaces".into(),
                    uid: String::new(),
                    causes: Vec::new(),
                    retry_after_seconds: 0,
                }),
                ..Default::default()
            })))
        })
        .await;
        let err = out.expect_err("fails");
        assert_eq!(err.missing_namespace(), Some("team-a"));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(status(404).missing_namespace(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_at_the_deadline_with_the_last_error() {
        let deadline = Instant::now() + Duration::from_secs(2);
        let out: Result<(), _> = retry("apply", deadline, Also::Nothing, || async { Err(status(500)) }).await;
        match out {
            Err(KubeError::Timeout { what, .. }) => assert!(what.contains("500"), "{what}"),
            other => panic!("expected a timeout, got {other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_request_is_abandoned_at_the_deadline() {
        let deadline = Instant::now() + Duration::from_secs(2);
        let out: Result<(), _> = retry("apply", deadline, Also::Nothing, || async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        })
        .await;
        match out {
            Err(KubeError::Timeout { what, waited }) => {
                assert!(what.contains("did not answer"), "{what}");
                assert!(waited <= Duration::from_secs(3), "{waited:?}");
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
    }

    fn refused(answered_before: bool) -> KubeError {
        static SINCE: std::sync::OnceLock<SystemTime> = std::sync::OnceLock::new();
        KubeError::Unreachable {
            message: "request to the Kubernetes API server at https://10.0.0.1/ failed: connection refused"
                .into(),
            answered_before,
            since: Some(*SINCE.get_or_init(SystemTime::now)),
        }
    }

    /// #18: connection refused / DNS from a server this process never reached is retried for
    /// [`UNREACHABLE_FOR`], not for the whole deadline, and the error keeps its cause.
    #[tokio::test(start_paused = true)]
    async fn an_unreachable_server_is_given_up_on_well_before_the_deadline() {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(600);
        let calls = AtomicU32::new(0);
        let out: Result<(), _> = retry("get", deadline, Also::Nothing, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(refused(false))
        })
        .await;
        let waited = started.elapsed();
        assert!(
            waited >= UNREACHABLE_FOR && waited < UNREACHABLE_FOR + MAX_DELAY * 2,
            "{waited:?}"
        );
        assert!(calls.load(Ordering::SeqCst) > 1);
        match out {
            Err(KubeError::Unreachable { message: m, .. }) => {
                assert!(
                    m.contains("https://10.0.0.1/") && m.contains("still unreachable"),
                    "{m}"
                )
            }
            other => panic!("expected Unreachable, got {other:?}"),
        }
    }

    /// #41: a server that answered before and went away is waited for until the deadline, not
    /// for [`UNREACHABLE_FOR`]: an outage of 40 s inside a 2-minute timeout is sat out, and
    /// noted for the resource's report.
    #[tokio::test(start_paused = true)]
    async fn an_outage_of_a_server_that_answered_before_is_waited_out() {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(120);
        let calls = AtomicU32::new(0);
        let (out, notes) = noting(retry("apply", deadline, Also::Nothing, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            if started.elapsed() < Duration::from_secs(40) {
                Err(refused(true))
            } else {
                Ok(7)
            }
        }))
        .await;
        assert_eq!(out.ok(), Some(7));
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_secs(40) && waited <= Duration::from_secs(40) + MAX_DELAY,
            "{waited:?}"
        );
        assert!(calls.load(Ordering::SeqCst) > 5);
        assert_eq!(notes.outages.len(), 1, "{notes:?}");
    }

    /// #41: an outage longer than the operation's timeout fails at the timeout (not after 30 s),
    /// saying since when the server is silent and that the timeout ran out.
    #[tokio::test(start_paused = true)]
    async fn an_outage_longer_than_the_timeout_fails_at_the_timeout() {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(300);
        let out: Result<(), _> =
            retry("apply", deadline, Also::Nothing, || async { Err(refused(true)) }).await;
        let waited = started.elapsed();
        assert!(
            waited > Duration::from_secs(300) - MAX_DELAY * 2 && waited <= Duration::from_secs(300),
            "{waited:?}"
        );
        match out {
            Err(KubeError::Unreachable {
                message,
                answered_before: true,
                since: Some(_),
            }) => {
                assert!(
                    message.contains("has not answered since") && message.contains("timeout ran out"),
                    "{message}"
                )
            }
            other => panic!("expected Unreachable, got {other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_tls_error_is_not_retried() {
        let calls = AtomicU32::new(0);
        let deadline = Instant::now() + Duration::from_secs(600);
        let out: Result<(), _> = retry("get", deadline, Also::NotFound, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(KubeError::Tls("invalid peer certificate: UnknownIssuer".into()))
        })
        .await;
        assert!(matches!(out, Err(KubeError::Tls(_))));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn not_found_is_retried_only_when_asked() {
        let deadline = Instant::now() + Duration::from_secs(60);
        let out: Result<(), _> = retry("get", deadline, Also::Nothing, || async { Err(status(404)) }).await;
        assert!(out.is_err_and(|e| e.is_not_found()));
    }
}
