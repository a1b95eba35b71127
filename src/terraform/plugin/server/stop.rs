//! Cancellation of in-flight calls: `StopProvider` triggers the [`Stop`] every long call runs
//! under ([`Stop::guard`]), so a Ctrl-C during a long wait returns promptly with the
//! diagnostic of [`stopped_diagnostics`].

use std::sync::Arc;

use crate::terraform::framework::Diagnostics;

/// Cancellation for in-flight calls, triggered by `StopProvider`.
#[derive(Clone)]
pub struct Stop {
    tx: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Stop {
    pub(super) fn new() -> Self {
        Self {
            tx: Arc::new(tokio::sync::watch::channel(false).0),
        }
    }

    pub(super) fn trigger(&self) {
        self.tx.send_replace(true);
    }

    /// Runs `work` unless and until the provider is asked to stop.
    pub async fn guard<T>(&self, work: impl Future<Output = T>, stopped: impl FnOnce() -> T) -> T {
        let mut rx = self.tx.subscribe();
        tokio::select! {
            out = work => out,
            _ = rx.wait_for(|stopped| *stopped) => stopped(),
        }
    }
}

/// What a call interrupted by `StopProvider` answers.
pub(super) fn stopped_diagnostics() -> Diagnostics {
    Diagnostics::from_error(
        "Interrupted",
        "Terraform asked the provider to stop (e.g. Ctrl-C) before this operation finished. \
         Whatever was already created is recorded; run the command again to finish.",
    )
}
