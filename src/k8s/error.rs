//! Errors of the Kubernetes side, classified by what a caller should do about them: retry
//! (transient), stop and explain (permanent), or treat as "not there".

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum KubeError {
    /// The provider block does not say how to reach a cluster.
    #[error("no Kubernetes connection is configured: {0}")]
    NotConfigured(String),
    /// Part of the provider block is still unknown (it depends on something not yet created).
    #[error(
        "the provider's Kubernetes settings are not known yet ({0}); they must be known when a Kubernetes resource is created, read or deleted"
    )]
    ConfigUnknown(String),
    /// The client could not be built from the settings.
    #[error("could not set up the Kubernetes client: {0}")]
    Client(String),
    /// The API server answered with an error status.
    #[error("{}", api_message(.0))]
    Api(Box<kube::core::Status>),
    /// The request did not get an answer (a dropped or reset connection): transient.
    #[error("request to the Kubernetes API failed: {0}")]
    Transport(String),
    /// Nothing answers at the API server's address, or its name does not resolve. A server
    /// that never answered this provider process is retried for
    /// [`super::retry::UNREACHABLE_FOR`] at most (a wrong address fails fast); one that answered
    /// before and went away is waited for until the operation's deadline.
    #[error("{message}")]
    Unreachable {
        message: String,
        /// Whether the server answered an earlier request of this provider process.
        answered_before: bool,
        /// When it stopped answering (the first request without an answer since the last one).
        since: Option<SystemTime>,
    },
    /// A create's write failed without an answer, and when the server answered again an
    /// object of that name existed that this create did not write (another writer made it in
    /// the meantime): create never adopts, so the write is not repeated over it.
    #[error("{} {} was created by someone else while this create's write went unanswered", .kind, .object.metadata.name.as_deref().unwrap_or_default())]
    TakenMeanwhile {
        kind: &'static str,
        object: Box<kube::api::DynamicObject>,
    },
    /// The TLS handshake with the API server failed (its certificate is not trusted or does
    /// not match the name): a configuration error, reported at once.
    #[error("{0}")]
    Tls(String),
    /// A bounded wait ran out.
    #[error("timed out after {}: {what}", humantime(*waited))]
    Timeout { what: String, waited: Duration },
    /// A delete waits on Karpenter's finalizers, but no Karpenter controller is running
    /// ([`super::karpenter_liveness`]): `what` is the stuck object and its finalizers, `why`
    /// how Karpenter was seen to be gone.
    #[error(
        "{what}, but Karpenter is not running: {why} (noticed after {}). Only Karpenter's controller removes \
         those finalizers, so the delete cannot finish.",
        humantime(*waited)
    )]
    KarpenterGone {
        what: String,
        why: String,
        waited: Duration,
    },
    /// Terraform asked the provider to stop.
    #[error("cancelled")]
    Cancelled,
}

fn api_message(status: &kube::core::Status) -> String {
    if status.message.is_empty() {
        format!("the API server answered {} {}", status.code, status.reason)
    } else {
        format!(
            "the API server answered {} {}: {}",
            status.code, status.reason, status.message
        )
    }
}

/// `1m30s`-style rendering for messages.
pub fn humantime(d: Duration) -> String {
    let secs = d.as_secs();
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s}s"),
    }
}

/// `10:04:05 UTC`: the time of day of `t`, for "unreachable since" messages (an apply lasts
/// minutes, so the date adds nothing).
pub fn utc_clock(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0) % 86_400;
    format!("{:02}:{:02}:{:02} UTC", secs / 3600, secs / 60 % 60, secs % 60)
}

impl From<kube::Error> for KubeError {
    fn from(e: kube::Error) -> Self {
        use super::transport::{AtServer, Failure, plain_reason};
        match e {
            kube::Error::Api(status) => KubeError::Api(status),
            kube::Error::Service(boxed) if boxed.is::<AtServer>() => {
                let Some(at) = boxed.downcast_ref::<AtServer>() else {
                    return KubeError::Transport("request to the Kubernetes API server failed".into());
                };
                let (failure, reason) = plain_reason(&*at.source);
                let message = format!("{at}: {reason}");
                match failure {
                    Failure::Unreachable => KubeError::Unreachable {
                        message,
                        answered_before: at.answered_before,
                        since: at.silent_since,
                    },
                    Failure::Tls => KubeError::Tls(message),
                    Failure::Other => KubeError::Transport(message),
                }
            }
            kube::Error::Service(boxed) => {
                let (failure, reason) = plain_reason(&*boxed);
                let message = format!("request to the Kubernetes API server failed: {reason}");
                match failure {
                    Failure::Unreachable => KubeError::Unreachable {
                        message,
                        answered_before: false,
                        since: None,
                    },
                    Failure::Tls => KubeError::Tls(message),
                    Failure::Other => KubeError::Transport(message),
                }
            }
            kube::Error::HyperError(h) => {
                let (_, reason) = plain_reason(&h);
                KubeError::Transport(format!("request to the Kubernetes API server failed: {reason}"))
            }
            other => KubeError::Transport(redacted(&other)),
        }
    }
}

/// Where a YAML/JSON parse error is, without the text around it.
fn parse_location(e: &serde_saphyr::Error) -> String {
    match e.location() {
        Some(l) => format!(" (line {}, column {})", l.line(), l.column()),
        None => String::new(),
    }
}

/// kube's message for `e`, minus what could hold a credential. kube quotes the exec plugin's
/// output when it cannot parse it (a source snippet) and its stdout when it exits non-zero,
/// and that output is the token or the client key.
pub fn redacted(e: &kube::Error) -> String {
    use kube::client::AuthError;
    match e {
        kube::Error::Auth(AuthError::AuthExecParse(p)) => format!(
            "auth error: the exec credential plugin printed something that is not an ExecCredential{};              its output is not shown because it may contain credentials",
            parse_location(p)
        ),
        kube::Error::Auth(AuthError::AuthExecRun { cmd, out }) => format!(
            "auth error: the exec credential plugin '{cmd}' failed ({}); its stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        other => with_causes(other),
    }
}

/// `e`'s message followed by each of its causes, so that "client error (Connect)" goes on to
/// say which: connection refused, a DNS failure, the TLS certificate not matching the name.
/// Only for errors that carry no credential (the exec plugin's are handled above).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let line = c.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        cause = c.source();
    }
    text
}

/// The kubeconfig error's message, minus quoted file content (the file holds credentials).
pub fn redacted_kubeconfig(e: &kube::config::KubeconfigError) -> String {
    match e {
        kube::config::KubeconfigError::Parse(p) => format!(
            "failed to parse kubeconfig YAML{}; the file's content is not shown because it may contain credentials",
            parse_location(p)
        ),
        other => other.to_string(),
    }
}

/// The verb and resource a 403's message names ("… User \"u\" cannot patch resource
/// \"nodepools\" in API group \"karpenter.sh\" …"), as `("patch", "nodepools.karpenter.sh")`.
pub fn forbidden_action(message: &str) -> Option<(String, String)> {
    let rest = &message[message.find(" cannot ")? + " cannot ".len()..];
    let (verb, rest) = rest.split_once(' ')?;
    let rest = rest.strip_prefix("resource \"")?;
    let (resource, rest) = rest.split_once('"')?;
    let group = rest
        .strip_prefix(" in API group \"")
        .and_then(|g| g.split_once('"'))
        .map(|(g, _)| g)
        .unwrap_or_default();
    let qualified = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    Some((verb.to_string(), qualified))
}

impl KubeError {
    /// The HTTP status of an API error.
    pub fn code(&self) -> Option<u16> {
        match self {
            KubeError::Api(s) => Some(s.code),
            _ => None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.code() == Some(404)
    }

    /// The namespace of a namespaced object does not exist: the 404 that kube-apiserver's
    /// NamespaceLifecycle admission gives a write into it (`namespaces "x" not found`, details
    /// kind `namespaces`). Unlike a just-registered kind's 404 it does not heal by waiting.
    /// Returns the namespace.
    pub fn missing_namespace(&self) -> Option<&str> {
        match self {
            KubeError::Api(s) if s.code == 404 => s
                .details
                .as_ref()
                .filter(|d| d.kind == "namespaces")
                .map(|d| d.name.as_str()),
            _ => None,
        }
    }

    /// Worth retrying within the operation's deadline: throttling, server errors, refused or
    /// dropped connections, and admission webhooks that are not reachable yet (Karpenter's
    /// webhook starting up answers 500 "failed calling webhook … connection refused").
    ///
    /// Not a 500 that server-side apply gives when the object does not fit the CRD's schema
    /// ("failed to create typed patch object … field not declared in schema"): it comes from
    /// the installed CRDs, and only installing other CRDs changes it, so it is permanent.
    pub fn is_transient(&self) -> bool {
        match self {
            KubeError::Transport(_) | KubeError::Unreachable { .. } => true,
            KubeError::Api(_) if self.is_schema_refusal() => false,
            KubeError::Api(s) => {
                matches!(s.code, 429 | 500 | 502 | 503 | 504) || s.message.contains("failed calling webhook")
            }
            _ => false,
        }
    }

    /// The server refused the object because its CRD's schema does not declare a field (see
    /// [`super::skew::undeclared_in_error`] for which).
    pub fn is_schema_refusal(&self) -> bool {
        match self {
            KubeError::Api(s) => s.code == 500 && super::skew::is_schema_refusal(&s.message),
            _ => false,
        }
    }

    /// The delay the server asked for (429 `Retry-After`), when it asked.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            KubeError::Api(s) => s
                .details
                .as_ref()
                .map(|d| d.retry_after_seconds)
                .filter(|s| *s > 0)
                .map(|s| Duration::from_secs(u64::from(s))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, message: &str) -> KubeError {
        KubeError::Api(Box::new(kube::core::Status {
            code,
            message: message.into(),
            ..Default::default()
        }))
    }

    #[test]
    fn classifies_transient_and_permanent_errors() {
        assert!(status(429, "slow down").is_transient());
        assert!(status(503, "").is_transient());
        assert!(
            status(
                500,
                "Internal error occurred: failed calling webhook \"x\": connection refused"
            )
            .is_transient()
        );
        assert!(!status(422, "invalid").is_transient());
        assert!(!status(403, "forbidden").is_transient());
        assert!(KubeError::Transport("connection reset".into()).is_transient());
        assert!(!KubeError::Tls("invalid peer certificate: UnknownIssuer".into()).is_transient());
        assert!(status(404, "").is_not_found());
        // Server-side apply of a field the installed CRD does not have: retrying cannot help.
        let refusal = status(
            500,
            "failed to create typed patch object (/static; karpenter.sh/v1, Kind=NodePool): .spec.replicas: field not declared in schema",
        );
        assert!(!refusal.is_transient() && refusal.is_schema_refusal());
        assert!(!status(500, "etcdserver: leader changed").is_schema_refusal());
    }

    #[test]
    fn reads_the_denied_verb_and_resource_of_a_403() {
        let m = "nodepools.karpenter.sh \"a\" is forbidden: User \"system:serviceaccount:kube-system:terraform\" cannot patch resource \"nodepools\" in API group \"karpenter.sh\" at the cluster scope";
        assert_eq!(
            forbidden_action(m),
            Some(("patch".into(), "nodepools.karpenter.sh".into()))
        );
        assert_eq!(forbidden_action("forbidden"), None);
    }

    #[test]
    fn renders_the_time_of_day() {
        let t = UNIX_EPOCH + Duration::from_secs(86_400 * 3 + 3600 * 10 + 60 * 4 + 5);
        assert_eq!(utc_clock(t), "10:04:05 UTC");
    }

    /// A transport error of the client names the server and says plainly what failed.
    #[test]
    fn transport_errors_have_no_library_text() {
        let at = crate::k8s::transport::AtServer {
            url: "https://10.0.0.1:6443/".into(),
            answered_before: true,
            silent_since: Some(UNIX_EPOCH),
            source: Box::new(std::io::Error::from_raw_os_error(111)),
        };
        let e = KubeError::from(kube::Error::Service(Box::new(at)));
        match &e {
            KubeError::Unreachable {
                answered_before: true,
                since: Some(_),
                ..
            } => {}
            other => panic!("expected Unreachable, got {other:?}"),
        }
        let text = e.to_string();
        assert_eq!(
            text,
            "request to the Kubernetes API server at https://10.0.0.1:6443/ failed: connection refused (nothing \
             accepts connections at that address and port)"
        );
    }

    #[test]
    fn renders_durations() {
        assert_eq!(humantime(Duration::from_secs(12)), "12s");
        assert_eq!(humantime(Duration::from_secs(600)), "10m");
        assert_eq!(humantime(Duration::from_secs(90)), "1m30s");
    }
}
