//! The API listener's part in an outage (`Shared::begin_outage`): listening again on the same
//! port once the outage is over.

use std::time::Duration;

use tokio::net::TcpListener;

/// Listens on `addr` again after an outage (retried briefly: the port was just closed).
pub(super) async fn rebind(addr: std::net::SocketAddr) -> Option<TcpListener> {
    for _ in 0..100 {
        if let Ok(l) = TcpListener::bind(addr).await {
            return Some(l);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}
