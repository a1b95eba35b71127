//! Retrying transient Kubernetes refusals with capped exponential backoff, inside a deadline.
//!
//! Karpenter's own start-up produces exactly these: a just-established kind answering 404
//! for a moment, its webhook refusing connections, throttling (429, honouring the server's
//! `Retry-After`), 5xx, dropped connections. Errors that will not heal (422 Invalid, 403) are
//! returned at once. A single request that is still unanswered at the deadline is abandoned:
//! a slow server cannot hold an operation past its `timeouts {}` setting.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use super::error::KubeError;

/// First delay; doubled each attempt up to [`MAX_DELAY`].
pub const FIRST_DELAY: Duration = Duration::from_millis(50);
pub const MAX_DELAY: Duration = Duration::from_secs(5);

/// How long an API server that cannot be reached at all (connection refused, DNS) is retried
/// before the operation fails naming it, whatever its own timeout: long enough for an EKS
/// endpoint that is just being created to start answering, short enough that a wrong host or a
/// deleted cluster fails in seconds rather than after `timeouts.create`.
pub const UNREACHABLE_FOR: Duration = Duration::from_secs(30);

/// Which errors to retry besides the transient ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Also {
    Nothing,
    /// 404 too: right after a CRD is established, the API may not serve the kind yet. Not the
    /// 404 of a namespace that does not exist ([`KubeError::missing_namespace`]).
    NotFound,
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
    let mut unreachable_since: Option<Instant> = None;
    loop {
        let err = match tokio::time::timeout_at(deadline, op()).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => e,
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
        if let KubeError::Unreachable(cause) = &err {
            let since = *unreachable_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= UNREACHABLE_FOR {
                return Err(KubeError::Unreachable(format!(
                    "{cause} (still unreachable after {attempt} attempts over {})",
                    super::error::humantime(started.elapsed())
                )));
            }
        } else {
            unreachable_since = None;
        }
        // The server's Retry-After wins over our own schedule.
        let wait = err.retry_after().unwrap_or(delay);
        if Instant::now() + wait >= deadline {
            return Err(KubeError::Timeout {
                what: format!("{what}: still failing after {attempt} attempts; last error: {err}"),
                waited: started.elapsed(),
            });
        }
        tracing::debug!(attempt, delay_ms = wait.as_millis() as u64, error = %err, "{what}: transient failure, retrying");
        tokio::time::sleep(wait).await;
        delay = (delay * 2).min(MAX_DELAY);
        attempt += 1;
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

    /// #18: connection refused / DNS is retried for [`UNREACHABLE_FOR`], not for the whole
    /// deadline, and the error keeps its cause.
    #[tokio::test(start_paused = true)]
    async fn an_unreachable_server_is_given_up_on_well_before_the_deadline() {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(600);
        let calls = AtomicU32::new(0);
        let out: Result<(), _> = retry("get", deadline, Also::Nothing, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(KubeError::Unreachable(
                "request to the Kubernetes API server at https://10.0.0.1/ failed: Connection refused".into(),
            ))
        })
        .await;
        let waited = started.elapsed();
        assert!(
            waited >= UNREACHABLE_FOR && waited < UNREACHABLE_FOR + MAX_DELAY * 2,
            "{waited:?}"
        );
        assert!(calls.load(Ordering::SeqCst) > 1);
        match out {
            Err(KubeError::Unreachable(m)) => {
                assert!(
                    m.contains("https://10.0.0.1/") && m.contains("still unreachable"),
                    "{m}"
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
