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

/// Which errors to retry besides the transient ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Also {
    Nothing,
    /// 404 too: right after a CRD is established, the API may not serve the kind yet.
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
        let retryable = err.is_transient() || (also == Also::NotFound && err.is_not_found());
        if !retryable {
            return Err(err);
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

    #[tokio::test(start_paused = true)]
    async fn not_found_is_retried_only_when_asked() {
        let deadline = Instant::now() + Duration::from_secs(60);
        let out: Result<(), _> = retry("get", deadline, Also::Nothing, || async { Err(status(404)) }).await;
        assert!(out.is_err_and(|e| e.is_not_found()));
    }
}
