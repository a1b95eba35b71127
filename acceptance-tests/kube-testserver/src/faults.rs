//! Fault injection and the request log. Faults are queued specs that answer the next N
//! matching API requests with an error (or drop the connection); the log records every
//! request the server answered so tests can count what a client did.

use crate::util::ApiError;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::Duration;

/// What an injected fault answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// 429 TooManyRequests with `Retry-After` (see [`FaultSpec::retry_after_secs`]).
    TooManyRequests,
    /// 500 InternalError.
    InternalError,
    /// 503 ServiceUnavailable.
    ServiceUnavailable,
    /// 500 InternalError worded like an admission webhook that cannot be reached.
    WebhookRefused,
    /// Close the connection without answering.
    DropConnection,
    /// 403 Forbidden, worded like an RBAC denial for the request's verb and resource.
    Forbidden,
    /// 401 Unauthorized (as for an expired token).
    Unauthorized,
    /// 504 Timeout (`Timeout` reason, as when the server gives up on a request).
    GatewayTimeout,
    /// Serve the request at once but hold the answer back for [`FaultSpec::delay_ms`] (a
    /// slow server for one step: the change is made even if the client stops waiting).
    Slow,
    /// Serve the request (a write is committed) and never answer it: the answer is held until
    /// the server goes down ([`FaultSpec::outage_ms`]), which closes the connection, or is
    /// dropped after [`FaultSpec::delay_ms`] (30 s when 0). Every request this fault matches
    /// before its last use waits so, and the outage then loses all their answers at once: a
    /// kube-apiserver that died after etcd committed the writes in flight.
    LoseAnswer,
}

/// One queued fault: answers the next `count` matching requests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultSpec {
    pub kind: FaultKind,
    /// How many requests this fault answers before it is used up.
    #[serde(default = "one")]
    pub count: u32,
    /// Only requests with this HTTP method (case-insensitive), if set.
    #[serde(default)]
    pub method: Option<String>,
    /// Only requests whose path contains this string, if set.
    #[serde(default)]
    pub path_contains: Option<String>,
    /// Seconds sent in `Retry-After` and `details.retryAfterSeconds` for 429.
    #[serde(default = "one")]
    pub retry_after_secs: u32,
    /// Milliseconds a `slow` fault holds the request before serving it.
    #[serde(default)]
    pub delay_ms: u64,
    /// When the fault's last use is taken, the API port goes down for this many milliseconds
    /// (0: it stays up): every open API connection is closed, answered or not, and new ones are
    /// refused (nothing listens), as when kube-apiserver is killed; then it listens again on the
    /// same port. Meant for `drop_connection` (the server died before this request) and
    /// `lose_answer` (it died after committing it). The admin port stays up.
    #[serde(default)]
    pub outage_ms: u64,
}

fn one() -> u32 {
    1
}

impl FaultSpec {
    /// A fault of `kind` for the next `count` requests of any method and path.
    pub fn new(kind: FaultKind, count: u32) -> Self {
        Self {
            kind,
            count,
            method: None,
            path_contains: None,
            retry_after_secs: 1,
            delay_ms: 0,
            outage_ms: 0,
        }
    }
    /// A `lose_answer` fault: the next `count` matching requests are served and never answered;
    /// once the last of them is served, the server goes down for `outage`, losing their answers.
    pub fn lose_answer(count: u32, outage: Duration) -> Self {
        Self::new(FaultKind::LoseAnswer, count).outage(outage)
    }
    /// When this fault's last use is taken, the API port goes down for `d` (see
    /// [`FaultSpec::outage_ms`]).
    pub fn outage(mut self, d: Duration) -> Self {
        self.outage_ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        self
    }
    /// A `slow` fault: the next `count` matching requests are served, and answered `delay` later.
    pub fn slow(delay: Duration, count: u32) -> Self {
        Self {
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            ..Self::new(FaultKind::Slow, count)
        }
    }
    /// Restrict to one HTTP method.
    pub fn method(mut self, m: &str) -> Self {
        self.method = Some(m.to_string());
        self
    }
    /// Restrict to paths containing `p`.
    pub fn path_contains(mut self, p: &str) -> Self {
        self.path_contains = Some(p.to_string());
        self
    }
    fn matches(&self, method: &str, path: &str) -> bool {
        self.count > 0
            && self
                .method
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && self.path_contains.as_deref().is_none_or(|p| path.contains(p))
    }
}

/// What to do with a request after consulting the fault queue.
pub enum FaultAction {
    Respond(ApiError),
    Drop,
    /// Serve the request, and answer it after this delay.
    Delay(Duration),
    /// Serve the request, and hold its answer until the server goes down, or at most this long;
    /// then close the connection without answering.
    Hold(Duration),
}

/// One use of a fault: its kind, what to do, and the outage to begin once the request is
/// served (the fault's last use, with [`FaultSpec::outage_ms`] set).
pub struct Taken {
    pub kind: FaultKind,
    pub action: FaultAction,
    pub outage: Option<Duration>,
}

/// Take one use of the first matching fault, if any.
pub fn take(queue: &mut Vec<FaultSpec>, method: &str, path: &str) -> Option<Taken> {
    let f = queue.iter_mut().find(|f| f.matches(method, path))?;
    f.count -= 1;
    let kind = f.kind;
    let retry = f.retry_after_secs;
    let delay = Duration::from_millis(f.delay_ms);
    let outage = (f.count == 0 && f.outage_ms > 0).then(|| Duration::from_millis(f.outage_ms));
    queue.retain(|f| f.count > 0);
    let action = match kind {
        FaultKind::TooManyRequests => {
            let mut e = ApiError::new(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
            )
            .with_details(json!({"retryAfterSeconds": retry}));
            e.headers.push(("retry-after", retry.to_string()));
            FaultAction::Respond(e)
        }
        FaultKind::InternalError => FaultAction::Respond(ApiError::internal("injected fault")),
        FaultKind::ServiceUnavailable => FaultAction::Respond(ApiError::new(
            503,
            "ServiceUnavailable",
            "the server is currently unable to handle the request",
        )),
        FaultKind::WebhookRefused => {
            let cause = "failed calling webhook \"validation.webhook.karpenter.sh\": failed to call webhook: Post \"https://karpenter.kube-system.svc:8443/validate/karpenter.sh?timeout=10s\": dial tcp 10.100.0.17:8443: connect: connection refused";
            FaultAction::Respond(
                ApiError::new(500, "InternalError", format!("Internal error occurred: {cause}"))
                    .with_details(json!({"causes": [{"message": cause}]})),
            )
        }
        FaultKind::DropConnection => FaultAction::Drop,
        FaultKind::Slow => FaultAction::Delay(delay),
        FaultKind::LoseAnswer => FaultAction::Hold(if delay.is_zero() {
            Duration::from_secs(30)
        } else {
            delay
        }),
        FaultKind::Forbidden => FaultAction::Respond(forbidden(method, path)),
        FaultKind::Unauthorized => FaultAction::Respond(ApiError::unauthorized()),
        FaultKind::GatewayTimeout => FaultAction::Respond(
            ApiError::new(
                504,
                "Timeout",
                "Timeout: request did not complete within requested timeout - context deadline exceeded",
            )
            .with_details(json!({})),
        ),
    };
    Some(Taken { kind, action, outage })
}

/// An RBAC-style 403 for `method` on `path` (`/apis/<group>/<version>/[namespaces/<ns>/]<plural>[/<name>]`).
fn forbidden(method: &str, path: &str) -> ApiError {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest): (&str, &[&str]) = match segs.as_slice() {
        ["apis", g, _v, rest @ ..] => (g, rest),
        ["api", _v, rest @ ..] => ("", rest),
        _ => ("", &[]),
    };
    let (ns, rest) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some(*ns), tail),
        other => (None, other),
    };
    let plural = rest.first().copied().unwrap_or("");
    let name = rest.get(1).copied();
    let verb = match (method, name) {
        ("GET", None) => "list",
        ("GET", Some(_)) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", None) => "deletecollection",
        ("DELETE", Some(_)) => "delete",
        _ => "access",
    };
    let scope = match ns {
        Some(n) => format!("in the namespace \"{n}\""),
        None => "at the cluster scope".to_string(),
    };
    let subject = match name {
        Some(n) => format!("{} \"{n}\" is forbidden", crate::util::qualified(plural, group)),
        None => format!("{} is forbidden", crate::util::qualified(plural, group)),
    };
    ApiError::new(
        403,
        "Forbidden",
        format!(
            "{subject}: User \"system:serviceaccount:kube-system:terraform\" cannot {verb} resource \"{plural}\" in API group \"{group}\" {scope}"
        ),
    )
    .with_details(json!({"name": name.unwrap_or(""), "group": group, "kind": plural}))
}

/// One answered request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedRequest {
    pub method: String,
    /// The path without the query.
    pub path: String,
    /// The raw query string ("" if none).
    pub query: String,
    /// HTTP status answered (0 for a dropped connection).
    pub status: u16,
    /// When the request arrived, in milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// The same moment in microseconds since the Unix epoch (for timing reactions precisely).
    #[serde(default)]
    pub at_unix_us: u64,
    /// Time to the response head (for watches: to the start of the stream).
    #[serde(with = "crate::millis")]
    pub duration: Duration,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The injected fault that answered it, if any.
    pub fault: Option<FaultKind>,
}

impl LoggedRequest {
    /// Whether the query string has `watch=true` or `watch=1`.
    pub fn is_watch(&self) -> bool {
        self.query
            .split('&')
            .any(|kv| kv == "watch=true" || kv == "watch=1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_used_up_in_order() {
        let mut q = vec![
            FaultSpec::new(FaultKind::InternalError, 1).method("PATCH"),
            FaultSpec::new(FaultKind::TooManyRequests, 2),
        ];
        let kind = |t: Option<Taken>| t.map(|t| t.kind);
        assert_eq!(kind(take(&mut q, "GET", "/x")), Some(FaultKind::TooManyRequests));
        assert_eq!(kind(take(&mut q, "PATCH", "/x")), Some(FaultKind::InternalError));
        assert_eq!(
            kind(take(&mut q, "PATCH", "/x")),
            Some(FaultKind::TooManyRequests)
        );
        assert!(take(&mut q, "PATCH", "/x").is_none());
        assert!(q.is_empty());
    }

    /// The outage comes with the last use of a fault, not before.
    #[test]
    fn the_outage_begins_with_the_last_use() {
        let mut q = vec![FaultSpec::lose_answer(2, Duration::from_secs(40)).method("PATCH")];
        let first = take(&mut q, "PATCH", "/x").expect("first");
        assert!(first.outage.is_none());
        assert!(matches!(first.action, FaultAction::Hold(_)));
        let last = take(&mut q, "PATCH", "/x").expect("last");
        assert_eq!(last.outage, Some(Duration::from_secs(40)));
        assert!(q.is_empty());
    }

    #[test]
    fn forbidden_names_verb_and_resource() {
        let e = forbidden("PATCH", "/apis/karpenter.sh/v1/nodepools/default");
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "nodepools.karpenter.sh \"default\" is forbidden: User \"system:serviceaccount:kube-system:terraform\" cannot patch resource \"nodepools\" in API group \"karpenter.sh\" at the cluster scope"
        );
    }
}
