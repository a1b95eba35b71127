//! What every part of the test server shares: the [`Shared`] state behind one lock (the store,
//! the settings, the request log, the shutdown signal), and the HTTP plumbing the API, the admin
//! endpoint and the controller answer with (bodies, JSON and error responses, query strings).

use crate::controller_config::ControllerConfig;
use crate::faults::{FaultSpec, LoggedRequest};
use crate::store::State;
use crate::util::ApiError;
use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Returned by the service to make hyper close the connection without an answer.
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by fault injection")]
pub struct DropConnection;

/// Lock a mutex, recovering from poisoning (a panicking test thread must not wedge the server).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Everything the handlers share.
pub struct Shared {
    pub state: Mutex<State>,
    pub establish_delay: Mutex<Duration>,
    pub faults: Mutex<Vec<FaultSpec>>,
    pub latency: Mutex<Duration>,
    pub log: Mutex<Vec<LoggedRequest>>,
    pub controller: Mutex<ControllerConfig>,
    /// The resourceVersion of the newest event the simulated controller has handled
    /// ([`crate::controller::caught_up`]).
    pub controller_progress: watch::Sender<u64>,
    /// Controller bookkeeping: uids with a scheduled action, by action name.
    pub scheduled: Mutex<HashSet<(String, String)>>,
    pub token: String,
    /// Accept well-formed EKS tokens too (`Config::eks_tokens`).
    pub eks_tokens: bool,
    /// Restricted tokens (`rbac::Grant`); empty means only the unrestricted credentials.
    pub grants: Mutex<Vec<crate::rbac::Grant>>,
    pub addr: Mutex<Option<SocketAddr>>,
    /// While the API port is down ([`Shared::begin_outage`]): until when. `None` while it is up.
    pub outage: watch::Sender<Option<std::time::Instant>>,
    /// Requests served whose answer a `slow` fault is holding back right now.
    pub held_answers: AtomicU32,
    pub shutdown: watch::Receiver<bool>,
    /// The runtime the server runs on (timers are spawned here, also from non-async callers).
    pub rt: tokio::runtime::Handle,
}

impl Shared {
    /// Takes the API port down for `d` (or longer, if an outage already lasts longer): every
    /// open API connection is closed, answered or not, and nothing listens on the port until
    /// the outage ends (connections are refused). The admin port stays up.
    pub fn begin_outage(&self, d: Duration) {
        let until = std::time::Instant::now() + d;
        self.outage.send_modify(|current| {
            *current = Some(current.map_or(until, |c| c.max(until)));
        });
    }

    /// Whether the API port is down.
    pub fn is_down(&self) -> bool {
        self.outage.borrow().is_some()
    }

    /// Run `f` on the store, then establish (now or after the configured delay) any CRDs it created.
    pub fn with_state<R>(self: &Arc<Self>, f: impl FnOnce(&mut State) -> R) -> R {
        self.with_state_delay(None, f)
    }

    /// As [`with_state`](Self::with_state), with an explicit establish delay.
    pub fn with_state_delay<R>(
        self: &Arc<Self>,
        delay: Option<Duration>,
        f: impl FnOnce(&mut State) -> R,
    ) -> R {
        let delay = delay.unwrap_or_else(|| *lock(&self.establish_delay));
        let (r, later) = {
            let mut st = lock(&self.state);
            let r = f(&mut st);
            let pending = std::mem::take(&mut st.pending_establish);
            if delay.is_zero() {
                for (n, u) in &pending {
                    st.establish(n, u);
                }
                (r, Vec::new())
            } else {
                (r, pending)
            }
        };
        for (name, uid) in later {
            let me = self.clone();
            self.rt.spawn(async move {
                tokio::time::sleep(delay).await;
                lock(&me.state).establish(&name, &uid);
            });
        }
        r
    }

    pub fn log(&self, e: LoggedRequest) {
        lock(&self.log).push(e);
    }

    /// Counts one answer a `slow` fault holds back in [`Shared::held_answers`], for as long as
    /// the returned guard lives.
    pub fn hold_answer(&self) -> HeldAnswer<'_> {
        self.held_answers.fetch_add(1, Ordering::SeqCst);
        HeldAnswer(self)
    }
}

/// One answer a `slow` fault holds back: uncounted when dropped, after the delay or when the
/// client gives up and the request's future is dropped.
pub struct HeldAnswer<'a>(&'a Shared);

impl Drop for HeldAnswer<'_> {
    fn drop(&mut self) {
        self.0.held_answers.fetch_sub(1, Ordering::SeqCst);
    }
}

pub fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).map_err(|never| match never {}).boxed_unsync()
}

/// A JSON response.
pub fn json_response(code: u16, v: &Value, warnings: &[String]) -> Response<Body> {
    let body = serde_json::to_vec(v).unwrap_or_default();
    let mut r = Response::new(full(body));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for w in warnings {
        let text = format!("299 - {}", serde_json::to_string(w).unwrap_or_default());
        if let Ok(hv) = HeaderValue::from_str(&text) {
            r.headers_mut().append(header::WARNING, hv);
        }
    }
    r
}

/// A `Status` error response.
pub fn error_response(e: &ApiError) -> Response<Body> {
    let mut r = json_response(e.code, &e.body(), &[]);
    for (k, v) in &e.headers {
        if let Ok(hv) = HeaderValue::from_str(v) {
            r.headers_mut().insert(*k, hv);
        }
    }
    r
}

/// Percent-decode a query component.
pub fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let h = std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match h {
                    Some(x) => {
                        out.push(x);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether a request's (parsed) query asks for a watch (`watch=true` or `watch=1`).
pub fn is_watch(q: &HashMap<String, String>) -> bool {
    q.get("watch").is_some_and(|w| w == "true" || w == "1")
}

pub fn parse_query(q: &str) -> HashMap<String, String> {
    q.split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(kv), String::new()),
        })
        .collect()
}
