//! A one-way "stop now" signal shared by the Shutdown RPC, Ctrl-C in debug mode, the server's
//! graceful stop and the long-lived go-plugin streams.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::watch;

/// Cloneable handle: any clone can trigger, every clone can wait.
#[derive(Debug, Clone)]
pub struct ShutdownSignal {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for ShutdownSignal {
    fn default() -> Self {
        Self::new()
    }
}

impl ShutdownSignal {
    /// A signal that has not fired yet.
    pub fn new() -> Self {
        Self {
            tx: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Fires the signal (idempotent).
    pub fn trigger(&self) {
        self.tx.send_replace(true);
    }

    /// Whether the signal has fired.
    pub fn is_triggered(&self) -> bool {
        *self.tx.borrow()
    }

    /// Resolves once the signal has fired (immediately if it already has).
    pub fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.tx.subscribe();
        async move {
            // An error means every sender is gone, which also means "stop".
            let _ = rx.wait_for(|fired| *fired).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waiters_wake_after_trigger() {
        let s = ShutdownSignal::new();
        let early = tokio::spawn(s.wait());
        assert!(!s.is_triggered());
        s.clone().trigger();
        tokio::time::timeout(std::time::Duration::from_secs(5), early)
            .await
            .unwrap()
            .unwrap();
        // A waiter created after the trigger returns at once.
        tokio::time::timeout(std::time::Duration::from_secs(5), s.wait())
            .await
            .unwrap();
        assert!(s.is_triggered());
    }
}
