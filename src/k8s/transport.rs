//! What every Kubernetes request carries and what a failed one says: the provider's
//! `User-Agent` (so audit logs can attribute requests), and transport errors that name the API
//! server's URL, say in plain words what failed (never the connector's own texts), are sorted
//! into unreachable (connection refused, DNS), TLS (the certificate or handshake, permanent)
//! and other (a dropped connection, transient), and tell whether this server answered earlier
//! in this provider process and since when it has not ([`Reachability`]).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderName, HeaderValue};
use tower::BoxError;

/// `terraform-provider-karpenter/<version>`, sent on every request.
pub const USER_AGENT: &str = concat!("terraform-provider-karpenter/", env!("CARGO_PKG_VERSION"));

/// Adds the provider's `User-Agent` to `config`'s headers (replacing one set before).
pub fn set_user_agent(config: &mut kube::Config) {
    config
        .headers
        .retain(|(name, _)| name != http::header::USER_AGENT);
    config.headers.push((
        HeaderName::from_static("user-agent"),
        HeaderValue::from_static(USER_AGENT),
    ));
}

/// What this provider process has seen of its API server: whether it ever answered, and since
/// when it has not (unset while it answers). Shared by every request of one client.
#[derive(Debug, Default)]
pub struct Reachability {
    answered: AtomicBool,
    /// Milliseconds since the Unix epoch of the first failed request after the last answer;
    /// 0 while the server answers.
    silent_since_ms: AtomicU64,
}

impl Reachability {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn answer(&self) {
        self.answered.store(true, Ordering::Relaxed);
        self.silent_since_ms.store(0, Ordering::Relaxed);
    }

    /// Notes a request that got no answer; returns whether the server answered before and
    /// since when it has not.
    fn no_answer(&self) -> (bool, Option<SystemTime>) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(1)
            .max(1);
        let since = match self
            .silent_since_ms
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => now,
            Err(earlier) => earlier,
        };
        (
            self.answered.load(Ordering::Relaxed),
            UNIX_EPOCH.checked_add(Duration::from_millis(since)),
        )
    }
}

/// A request to the API server at `url` got no HTTP answer.
#[derive(Debug, thiserror::Error)]
#[error("request to the Kubernetes API server at {url} failed")]
pub struct AtServer {
    pub url: String,
    /// Whether this server answered an earlier request of this provider process: a server that
    /// never did may be a wrong address; one that did and stopped is having an outage.
    pub answered_before: bool,
    /// When the server stopped answering (the first request without an answer since its last
    /// answer).
    pub silent_since: Option<SystemTime>,
    #[source]
    pub source: BoxError,
}

/// The result mapper for the client's service stack: notes every answer in `reach`, and wraps
/// transport errors in [`AtServer`]. kube's own errors (credential plugin failures) pass through
/// untouched, so they keep their own handling (and redaction).
pub fn observing<R>(
    url: String,
    reach: Arc<Reachability>,
) -> impl FnOnce(Result<R, BoxError>) -> Result<R, BoxError> + Clone + Send + Sync + 'static {
    move |result: Result<R, BoxError>| match result {
        Ok(answer) => {
            reach.answer();
            Ok(answer)
        }
        Err(e) if e.is::<kube::Error>() => Err(e),
        Err(e) => {
            let (answered_before, silent_since) = reach.no_answer();
            Err(Box::new(AtServer {
                url,
                answered_before,
                silent_since,
                source: e,
            }))
        }
    }
}

/// Which kind of transport failure a rendered error chain is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Nothing answers at the address, or the name does not resolve: retried briefly (an EKS
    /// endpoint that is just being created), then reported.
    Unreachable,
    /// The TLS handshake or the server's certificate failed: a configuration error, not retried.
    Tls,
    /// Anything else (a reset or dropped connection): transient.
    Other,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Failure::Unreachable => "unreachable",
            Failure::Tls => "TLS",
            Failure::Other => "transport",
        })
    }
}

/// Classifies an error from its message with causes (see [`super::error::redacted`]): the
/// connector's errors are only available as text once boxed.
pub fn classify(text: &str) -> Failure {
    let t = text.to_ascii_lowercase();
    const TLS: &[&str] = &[
        "certificate",
        "invalid peer",
        "tls handshake",
        "handshake failure",
        "unknownissuer",
        "notvalidforname",
        "received corrupt message",
        "invalid dns name",
    ];
    const UNREACHABLE: &[&str] = &[
        "connection refused",
        "dns error",
        "failed to lookup address",
        "name or service not known",
        "no route to host",
        "network is unreachable",
        "host is unreachable",
        "temporary failure in name resolution",
    ];
    if TLS.iter().any(|m| t.contains(m)) {
        Failure::Tls
    } else if UNREACHABLE.iter().any(|m| t.contains(m)) {
        Failure::Unreachable
    } else {
        Failure::Other
    }
}

/// Why a request got no answer, in words a user can act on, and which kind of failure that is.
/// The connector's own texts (`client error (Connect)`, `tcp connect error`, `os error 111`)
/// are never shown: they name library internals, not the problem.
pub fn plain_reason(e: &(dyn std::error::Error + 'static)) -> (Failure, String) {
    let mut chain = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        chain.push(err);
        next = err.source();
    }
    let text: String = chain.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(": ");
    let failure = classify(&text);
    let lower = text.to_ascii_lowercase();
    let io_kind = chain
        .iter()
        .find_map(|e| e.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    let has = |markers: &[&str]| markers.iter().any(|m| lower.contains(m));
    let reason = if failure == Failure::Tls {
        match certificate_problem(&text) {
            Some(problem) => {
                format!("the TLS handshake failed: the server's certificate was refused ({problem})")
            }
            None => "the TLS handshake failed".to_string(),
        }
    } else if io_kind == Some(std::io::ErrorKind::ConnectionRefused) || has(&["connection refused"]) {
        "connection refused (nothing accepts connections at that address and port)".to_string()
    } else if has(&[
        "dns error",
        "failed to lookup address",
        "name or service not known",
        "temporary failure in name resolution",
    ]) {
        "the host name does not resolve (DNS lookup failed)".to_string()
    } else if has(&["no route to host", "host is unreachable"]) {
        "there is no route to the host".to_string()
    } else if has(&["network is unreachable"]) {
        "the network is unreachable".to_string()
    } else if io_kind == Some(std::io::ErrorKind::ConnectionReset) || has(&["connection reset"]) {
        "the connection was reset before the server answered".to_string()
    } else if has(&["connection closed before message completed", "incomplete message"])
        || io_kind == Some(std::io::ErrorKind::UnexpectedEof)
    {
        "the server closed the connection before answering".to_string()
    } else if io_kind == Some(std::io::ErrorKind::TimedOut) || has(&["timed out", "deadline has elapsed"]) {
        "the connection timed out".to_string()
    } else if io_kind == Some(std::io::ErrorKind::BrokenPipe) || has(&["broken pipe"]) {
        "the connection broke while the request was sent".to_string()
    } else {
        // Something else (a failure of a layer of ours, such as the EKS token): its own words,
        // without the connector's wrappers and the OS error number.
        let own: Vec<String> = chain
            .iter()
            .map(|e| without_os_error(&e.to_string()))
            .filter(|t| !is_library_wrapper(t))
            .collect();
        let mut words: Vec<String> = Vec::new();
        for text in own {
            if !words.iter().any(|w| w.contains(&text)) {
                words.push(text);
            }
        }
        if words.is_empty() {
            "the connection failed".to_string()
        } else {
            words.join(": ")
        }
    };
    (failure, reason)
}

/// What the TLS library says about the server's certificate (`UnknownIssuer`,
/// `NotValidForName`, …), when it says something.
fn certificate_problem(text: &str) -> Option<String> {
    let at = text.find("invalid peer certificate: ")? + "invalid peer certificate: ".len();
    let rest = &text[at..];
    let end = rest.find([':', '\n']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_string()).filter(|p| !p.is_empty())
}

/// Whether `text` is one of the connector's own wrappers, which say nothing a user can act on.
fn is_library_wrapper(text: &str) -> bool {
    text.starts_with("client error (")
        || matches!(
            text,
            "tcp connect error" | "dns error" | "error trying to connect" | "connection error"
        )
}

/// `text` without a trailing ` (os error N)`.
fn without_os_error(text: &str) -> String {
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_connector_errors() {
        assert_eq!(
            classify("client error (Connect): tcp connect error: Connection refused (os error 111)"),
            Failure::Unreachable
        );
        assert_eq!(
            classify(
                "client error (Connect): dns error: failed to lookup address information: Name or service not known"
            ),
            Failure::Unreachable
        );
        assert_eq!(
            classify("client error (Connect): invalid peer certificate: UnknownIssuer"),
            Failure::Tls
        );
        assert_eq!(classify("connection reset by peer"), Failure::Other);
    }

    #[test]
    fn wraps_transport_errors_but_not_kube_errors() {
        let reach = Reachability::new();
        let wrap = observing::<()>("https://10.0.0.1:6443/".into(), reach.clone());
        let e = wrap(Err(Box::new(std::io::Error::other("tcp connect error")))).expect_err("error");
        assert!(e.to_string().contains("https://10.0.0.1:6443/"), "{e}");
        let at = e.downcast_ref::<AtServer>().expect("wrapped");
        assert!(!at.answered_before);
        let wrap = observing::<()>("https://10.0.0.1:6443/".into(), reach.clone());
        let own = wrap(Err(Box::new(kube::Error::LinesCodecMaxLineLengthExceeded))).expect_err("error");
        assert!(own.is::<kube::Error>());
    }

    /// A server that answered once and then stopped is told apart from one that never
    /// answered, and the first failure after the last answer is when it went silent.
    #[test]
    fn remembers_whether_the_server_answered_and_since_when_it_does_not() {
        let reach = Reachability::new();
        let call = |r: Result<(), BoxError>| observing::<()>("https://h/".into(), reach.clone())(r);
        let refused =
            || -> BoxError { Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)) };
        let first = call(Err(refused())).expect_err("error");
        assert!(!first.downcast_ref::<AtServer>().expect("wrapped").answered_before);
        call(Ok(())).expect("answer");
        let a = call(Err(refused())).expect_err("error");
        let a = a.downcast_ref::<AtServer>().expect("wrapped");
        assert!(a.answered_before);
        let since = a.silent_since.expect("since");
        std::thread::sleep(Duration::from_millis(5));
        let b = call(Err(refused())).expect_err("error");
        assert_eq!(
            b.downcast_ref::<AtServer>().expect("wrapped").silent_since,
            Some(since)
        );
        call(Ok(())).expect("answer");
        std::thread::sleep(Duration::from_millis(5));
        let c = call(Err(refused())).expect_err("error");
        assert!(c.downcast_ref::<AtServer>().expect("wrapped").silent_since > Some(since));
    }

    /// The connector's texts never reach the message: what failed is said in plain words.
    #[test]
    fn reasons_are_plain() {
        #[derive(Debug, thiserror::Error)]
        #[error("client error (Connect)")]
        struct Client(#[source] Connect);
        #[derive(Debug, thiserror::Error)]
        #[error("{0}")]
        struct Connect(&'static str, #[source] std::io::Error);
        let cases = [
            (
                Client(Connect(
                    "tcp connect error",
                    std::io::Error::from_raw_os_error(111),
                )),
                Failure::Unreachable,
                "connection refused (nothing accepts",
            ),
            (
                Client(Connect(
                    "dns error",
                    std::io::Error::other("failed to lookup address information: Name or service not known"),
                )),
                Failure::Unreachable,
                "the host name does not resolve",
            ),
            (
                Client(Connect(
                    "tcp connect error",
                    std::io::Error::other("invalid peer certificate: UnknownIssuer"),
                )),
                Failure::Tls,
                "certificate was refused (UnknownIssuer)",
            ),
            (
                Client(Connect(
                    "connection error",
                    std::io::Error::from_raw_os_error(104),
                )),
                Failure::Other,
                "the connection was reset",
            ),
            (
                Client(Connect(
                    "weird",
                    std::io::Error::other("something odd (os error 99)"),
                )),
                Failure::Other,
                "weird: something odd",
            ),
        ];
        for (err, failure, reason) in cases {
            let (got, text) = plain_reason(&err);
            assert_eq!(got, failure, "{text}");
            assert!(text.contains(reason), "{text}");
            for library in [
                "client error",
                "tcp connect error",
                "os error",
                "Connect)",
                "dns error",
            ] {
                assert!(!text.contains(library), "{library} in {text}");
            }
        }
        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        assert_eq!(
            plain_reason(&eof).1,
            "the server closed the connection before answering"
        );
    }

    #[test]
    fn user_agent_names_the_provider_and_version() {
        let mut config = kube::Config::new("https://127.0.0.1:6443".parse().expect("uri"));
        set_user_agent(&mut config);
        set_user_agent(&mut config);
        let ua: Vec<_> = config
            .headers
            .iter()
            .filter(|(n, _)| n == http::header::USER_AGENT)
            .collect();
        assert_eq!(ua.len(), 1);
        assert_eq!(ua[0].1, USER_AGENT);
        assert!(USER_AGENT.starts_with("terraform-provider-karpenter/0."));
    }
}
