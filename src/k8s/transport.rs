//! What every Kubernetes request carries and what a failed one says: the provider's
//! `User-Agent` (so audit logs can attribute requests), and transport errors that name the API
//! server's URL and are sorted into unreachable (connection refused, DNS), TLS (the
//! certificate or handshake, permanent) and other (a dropped connection, transient).

use std::fmt;

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

/// A request to the API server at `url` got no HTTP answer.
#[derive(Debug, thiserror::Error)]
#[error("request to the Kubernetes API server at {url} failed")]
pub struct AtServer {
    pub url: String,
    #[source]
    pub source: BoxError,
}

/// The error mapper for the client's service stack: wraps transport errors in [`AtServer`].
/// kube's own errors (credential plugin failures) pass through untouched, so they keep their
/// own handling (and redaction).
pub fn naming(url: String) -> impl Fn(BoxError) -> BoxError + Clone + Send + Sync + 'static {
    move |e: BoxError| -> BoxError {
        if e.is::<kube::Error>() {
            e
        } else {
            Box::new(AtServer {
                url: url.clone(),
                source: e,
            })
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
        let wrap = naming("https://10.0.0.1:6443/".into());
        let e = wrap(Box::new(std::io::Error::other("tcp connect error")));
        assert!(e.to_string().contains("https://10.0.0.1:6443/"), "{e}");
        let own = wrap(Box::new(kube::Error::LinesCodecMaxLineLengthExceeded));
        assert!(own.is::<kube::Error>());
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
