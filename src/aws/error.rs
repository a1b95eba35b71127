//! AWS errors, classified: the SDK's `SdkError` becomes an [`AwsError`] with a kind the
//! resources act on (NotFound means "already gone" on delete and "drifted away" on read;
//! AlreadyExists means "adopt or converge" on create), and a [`Diagnostic`] that names the
//! AWS action and, where known, the attribute the failure is about.
//!
//! Classification uses the modeled error code (`ProvideErrorMetadata::code`) and the HTTP
//! status, never the message text. Service wrappers can override the kind with their typed
//! checks (e.g. `is_queue_does_not_exist()`), see [`AwsError::with_kind`].

use std::fmt;

use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};

use crate::terraform::framework::{Diagnostic, Diagnostics, Severity};
use crate::terraform::tfvalue::AttributePath;

/// What kind of failure an AWS call had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AwsErrorKind {
    /// The object does not exist (queue, rule, role, ...).
    NotFound,
    /// An object with this name already exists.
    AlreadyExists,
    /// The credentials are not allowed to make the call, or are invalid or expired.
    AccessDenied,
    /// Throttled, after the SDK's own retries.
    Throttled,
    /// AWS rejected the input (a value out of range, a malformed document, ...).
    Validation,
    /// The endpoint could not be reached (connection refused, DNS, timeout): a provider-level
    /// problem, never about an attribute.
    Connection,
    /// No credentials could be found (or the credential source failed): provider-level.
    Credentials,
    /// The TLS handshake with the endpoint failed (untrusted certificate, wrong name, ...).
    Tls,
    /// Anything else: server errors, unmodeled codes.
    Other,
}

impl AwsErrorKind {
    /// Connection, credentials and TLS failures are about the provider's setup.
    pub fn is_provider_level(self) -> bool {
        matches!(self, Self::Connection | Self::Credentials | Self::Tls)
    }
}

/// The credential sources the SDK's default chain tries, in order, for the diagnostic.
pub const CREDENTIAL_SOURCES: &str = "environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY), \
shared config and credentials files (~/.aws/config, ~/.aws/credentials; profile from AWS_PROFILE or `aws { profile }`), \
web identity (AWS_WEB_IDENTITY_TOKEN_FILE), ECS container metadata, EC2 instance metadata (IMDS)";

impl fmt::Display for AwsErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotFound => "not found",
            Self::AlreadyExists => "already exists",
            Self::AccessDenied => "access denied",
            Self::Throttled => "throttled",
            Self::Validation => "invalid request",
            Self::Connection => "could not connect",
            Self::Credentials => "found no credentials",
            Self::Tls => "TLS failure",
            Self::Other => "failed",
        })
    }
}

/// A failed AWS call: which action, what kind of failure, and AWS's code and message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{action} {kind}: {}", self.describe())]
pub struct AwsError {
    /// The IAM action name of the call, e.g. `sqs:CreateQueue`.
    pub action: String,
    pub kind: AwsErrorKind,
    /// AWS's error code, when the service sent one.
    pub code: Option<String>,
    /// AWS's message, or the transport error's text.
    pub message: String,
    /// The attribute the failure is about, when the caller knows it.
    pub path: Option<AttributePath>,
    /// The endpoint the call went to, when the caller knows it (named for provider-level
    /// failures: connection, TLS).
    pub endpoint: Option<String>,
}

/// Codes (as sent by the services this provider uses) and the kind they mean.
const CODES: &[(&str, AwsErrorKind)] = &[
    // not found
    ("NoSuchEntity", AwsErrorKind::NotFound),
    ("AWS.SimpleQueueService.NonExistentQueue", AwsErrorKind::NotFound),
    ("QueueDoesNotExist", AwsErrorKind::NotFound),
    ("ResourceNotFoundException", AwsErrorKind::NotFound),
    ("ResourceNotFound", AwsErrorKind::NotFound),
    // already exists
    ("EntityAlreadyExists", AwsErrorKind::AlreadyExists),
    ("QueueAlreadyExists", AwsErrorKind::AlreadyExists),
    ("QueueNameExists", AwsErrorKind::AlreadyExists),
    ("ResourceAlreadyExistsException", AwsErrorKind::AlreadyExists),
    // access
    ("AccessDenied", AwsErrorKind::AccessDenied),
    ("AccessDeniedException", AwsErrorKind::AccessDenied),
    ("AuthorizationError", AwsErrorKind::AccessDenied),
    ("UnauthorizedOperation", AwsErrorKind::AccessDenied),
    ("InvalidClientTokenId", AwsErrorKind::AccessDenied),
    ("InvalidSecurity", AwsErrorKind::AccessDenied),
    ("ExpiredToken", AwsErrorKind::AccessDenied),
    ("ExpiredTokenException", AwsErrorKind::AccessDenied),
    ("UnrecognizedClientException", AwsErrorKind::AccessDenied),
    ("SignatureDoesNotMatch", AwsErrorKind::AccessDenied),
    ("KMS.AccessDeniedException", AwsErrorKind::AccessDenied),
    // throttling
    ("Throttling", AwsErrorKind::Throttled),
    ("ThrottlingException", AwsErrorKind::Throttled),
    ("ThrottledException", AwsErrorKind::Throttled),
    ("RequestThrottled", AwsErrorKind::Throttled),
    ("RequestThrottledException", AwsErrorKind::Throttled),
    ("TooManyRequestsException", AwsErrorKind::Throttled),
    ("RequestLimitExceeded", AwsErrorKind::Throttled),
    ("SlowDown", AwsErrorKind::Throttled),
    ("AWS.SimpleQueueService.RequestThrottled", AwsErrorKind::Throttled),
    // validation
    ("ValidationError", AwsErrorKind::Validation),
    ("ValidationException", AwsErrorKind::Validation),
    ("InvalidInput", AwsErrorKind::Validation),
    ("InvalidParameterValue", AwsErrorKind::Validation),
    ("InvalidParameterException", AwsErrorKind::Validation),
    ("InvalidAttributeValue", AwsErrorKind::Validation),
    ("InvalidAttributeName", AwsErrorKind::Validation),
    ("MalformedPolicyDocument", AwsErrorKind::Validation),
    ("InvalidEventPatternException", AwsErrorKind::Validation),
    ("LimitExceeded", AwsErrorKind::Validation),
    ("LimitExceededException", AwsErrorKind::Validation),
    ("DeleteConflict", AwsErrorKind::Validation),
    ("ConcurrentModificationException", AwsErrorKind::Other),
];

/// The kind an AWS error code means ([`AwsErrorKind::Other`] for codes not listed).
pub fn kind_of_code(code: &str) -> AwsErrorKind {
    CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or(AwsErrorKind::Other, |(_, k)| *k)
}

impl AwsError {
    /// An error not coming from the SDK (e.g. a response missing a field AWS always sends).
    pub fn new(action: impl Into<String>, kind: AwsErrorKind, message: impl Into<String>) -> Self {
        Self {
            action: action.into(),
            kind,
            code: None,
            message: message.into(),
            path: None,
            endpoint: None,
        }
    }

    /// Classifies an SDK error from the call `action` (an IAM action name, `service:Operation`).
    pub fn from_sdk<E>(action: impl Into<String>, err: &SdkError<E, HttpResponse>) -> Self
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        let action = action.into();
        match err {
            SdkError::ServiceError(service) => {
                let e = service.err();
                let code = e.code().map(str::to_string);
                let status = service.raw().status().as_u16();
                let kind = match code.as_deref() {
                    Some(c) => match kind_of_code(c) {
                        AwsErrorKind::Other => kind_of_status(status),
                        k => k,
                    },
                    None => kind_of_status(status),
                };
                let message = e
                    .message()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("HTTP {status}, no message"));
                Self {
                    action,
                    kind,
                    code,
                    message,
                    path: None,
                    endpoint: None,
                }
            }
            other => Self {
                action,
                kind: transport_kind(other),
                code: None,
                message: error_chain(other),
                path: None,
                endpoint: None,
            },
        }
    }

    /// Overrides the kind when a typed check on the service error says so.
    pub fn with_kind(mut self, kind: AwsErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// Records the endpoint the call went to.
    pub fn via(mut self, endpoint: &str) -> Self {
        self.endpoint = Some(endpoint.to_string());
        self
    }

    /// Sets the attribute the failure is about.
    pub fn at(mut self, path: AttributePath) -> Self {
        self.path = Some(path);
        self
    }

    /// Whether the failure is about the provider's AWS setup (endpoint, credentials, TLS)
    /// rather than about a resource's attribute: such errors carry no attribute path.
    pub fn is_provider_level(&self) -> bool {
        self.kind.is_provider_level()
    }

    pub fn is_not_found(&self) -> bool {
        self.kind == AwsErrorKind::NotFound
    }

    pub fn is_already_exists(&self) -> bool {
        self.kind == AwsErrorKind::AlreadyExists
    }

    fn endpoint_name(&self) -> String {
        self.endpoint
            .as_deref()
            .map(|e| format!(" {e}"))
            .unwrap_or_default()
    }

    fn describe(&self) -> String {
        match &self.code {
            Some(code) => format!("{code}: {}", self.message),
            None => self.message.clone(),
        }
    }

    /// The diagnostic a user sees: the action and what to do about this kind of failure.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let (summary, advice) = match self.kind {
            AwsErrorKind::AccessDenied => (
                format!("AWS denied {}", self.action),
                format!(
                    "Allow {} for the provider's credentials (or fix the credentials in the `aws {{}}` block / environment).",
                    self.action
                ),
            ),
            AwsErrorKind::Validation => (
                format!("AWS rejected {}", self.action),
                "Check the value of the attribute named here against AWS's limits.".to_string(),
            ),
            AwsErrorKind::Throttled => (
                format!("AWS throttled {}", self.action),
                "The SDK retried and gave up; apply again later or raise the account's API limits."
                    .to_string(),
            ),
            AwsErrorKind::NotFound => (
                format!("{}: the object does not exist", self.action),
                "It may have been deleted outside Terraform; refresh and apply again.".to_string(),
            ),
            AwsErrorKind::AlreadyExists => (
                format!("{}: the object already exists", self.action),
                "Another object has this name: import it, or choose another name.".to_string(),
            ),
            AwsErrorKind::Connection => (
                format!("{}: could not connect to the AWS endpoint{}", self.action, self.endpoint_name()),
                "Check the provider's `aws { region }` and `endpoints { ... }` settings and that the endpoint is reachable (proxy, firewall, VPC endpoint)."
                    .to_string(),
            ),
            AwsErrorKind::Credentials => (
                "no AWS credentials found".to_string(),
                format!(
                    "{} was not sent. Sources tried: {CREDENTIAL_SOURCES}. Set credentials in one of them, or `aws {{ profile }}` / `assume_role` in the provider block.",
                    self.action
                ),
            ),
            AwsErrorKind::Tls => (
                format!("{}: TLS handshake with the AWS endpoint{} failed", self.action, self.endpoint_name()),
                "The endpoint's certificate is not trusted for this host name: check the `endpoints { ... }` URL, or add its CA to the system trust store."
                    .to_string(),
            ),
            AwsErrorKind::Other => (
                format!("{} failed", self.action),
                "Check connectivity to AWS (region, endpoints) and apply again.".to_string(),
            ),
        };
        Diagnostic {
            severity: Severity::Error,
            summary,
            detail: format!("{}. {advice}", self.describe()),
            path: if self.is_provider_level() {
                None
            } else {
                self.path.clone().filter(|p| !p.is_root())
            },
        }
    }

    /// The error as a one-element [`Diagnostics`].
    pub fn to_diagnostics(&self) -> Diagnostics {
        let d = self.to_diagnostic();
        let mut out = Diagnostics::new();
        match &d.path {
            Some(p) => out.error_at(p, d.summary, d.detail),
            None => out.error(d.summary, d.detail),
        }
        out
    }
}

impl From<AwsError> for Diagnostics {
    fn from(e: AwsError) -> Self {
        e.to_diagnostics()
    }
}

fn kind_of_status(status: u16) -> AwsErrorKind {
    match status {
        403 => AwsErrorKind::AccessDenied,
        404 => AwsErrorKind::NotFound,
        429 => AwsErrorKind::Throttled,
        _ => AwsErrorKind::Other,
    }
}

/// The kind of a failure that is not a service response: walks the source chain for a
/// credentials failure, a TLS error (also inside an `io::Error`) or a connection error.
pub fn transport_kind(err: &(dyn std::error::Error + 'static)) -> AwsErrorKind {
    let mut connection = false;
    let mut node: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = node {
        if e.downcast_ref::<aws_credential_types::provider::error::CredentialsError>()
            .is_some()
        {
            return AwsErrorKind::Credentials;
        }
        if e.downcast_ref::<rustls::Error>().is_some() {
            return AwsErrorKind::Tls;
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
            {
                return AwsErrorKind::Tls;
            }
            connection = true;
            if let Some(inner) = io.get_ref() {
                node = Some(inner);
                continue;
            }
        }
        if e.downcast_ref::<aws_smithy_runtime_api::client::result::ConnectorError>()
            .is_some_and(|c| c.is_io() || c.is_timeout())
        {
            connection = true;
        }
        node = e.source();
    }
    if connection {
        AwsErrorKind::Connection
    } else {
        AwsErrorKind::Other
    }
}

/// The error and its sources, joined: their `Display` texts only, never the SDK's `Debug` dump
/// of the error (what the SDK's `DisplayErrorContext` appends), which no user can act on; and
/// without the layers' own wrapper texts (`dispatch failure`, `other`, `io error`, hyper's
/// `client error (SendRequest)`, `tcp connect error`) and OS error numbers, which name
/// library internals rather than what failed (#41): `dispatch failure: io error: client error
/// (Connect): tcp connect error: Connection refused (os error 111)` reads `Connection refused`.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut node = Some(err);
    while let Some(e) = node {
        let text = without_os_error(&e.to_string());
        if !is_library_wrapper(&text) && !text.is_empty() && !words.iter().any(|w| w.contains(&text)) {
            words.push(text);
        }
        node = next_source(e);
    }
    if words.is_empty() {
        "the request could not be sent (no further detail)".to_string()
    } else {
        words.join(": ")
    }
}

/// Whether `text` is one of the SDK's or the HTTP connector's own wrappers, which say nothing
/// a user can act on.
fn is_library_wrapper(text: &str) -> bool {
    text.starts_with("client error (")
        || matches!(
            text,
            "dispatch failure"
                | "other"
                | "io error"
                | "user error"
                | "tcp connect error"
                | "dns error"
                | "error trying to connect"
                | "connection error"
        )
}

/// `text` without a trailing ` (os error N)`.
fn without_os_error(text: &str) -> String {
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text.to_string(),
    }
}

/// The next error in the chain; an `io::Error`'s payload counts (its `source()` skips it).
fn next_source<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    match e
        .downcast_ref::<std::io::Error>()
        .and_then(std::io::Error::get_ref)
    {
        Some(inner) => Some(inner),
        None => e.source(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_sqs::error::ErrorMetadata;
    use aws_sdk_sqs::operation::get_queue_url::GetQueueUrlError;
    use aws_smithy_runtime_api::http::StatusCode;
    use aws_smithy_types::body::SdkBody;

    fn service_error(status: u16, code: Option<&str>) -> SdkError<GetQueueUrlError, HttpResponse> {
        let mut meta = ErrorMetadata::builder().message("the message");
        if let Some(code) = code {
            meta = meta.code(code);
        }
        let status = StatusCode::try_from(status).unwrap();
        SdkError::service_error(
            GetQueueUrlError::generic(meta.build()),
            HttpResponse::new(status, SdkBody::empty()),
        )
    }

    #[test]
    fn codes_classify() {
        let cases = [
            (
                400,
                Some("AWS.SimpleQueueService.NonExistentQueue"),
                AwsErrorKind::NotFound,
            ),
            (404, Some("NoSuchEntity"), AwsErrorKind::NotFound),
            (400, Some("ResourceNotFoundException"), AwsErrorKind::NotFound),
            (409, Some("EntityAlreadyExists"), AwsErrorKind::AlreadyExists),
            (400, Some("QueueAlreadyExists"), AwsErrorKind::AlreadyExists),
            (403, Some("AccessDenied"), AwsErrorKind::AccessDenied),
            (400, Some("AccessDeniedException"), AwsErrorKind::AccessDenied),
            (400, Some("ThrottlingException"), AwsErrorKind::Throttled),
            (400, Some("Throttling"), AwsErrorKind::Throttled),
            (400, Some("InvalidAttributeValue"), AwsErrorKind::Validation),
            (400, Some("ValidationException"), AwsErrorKind::Validation),
            (500, Some("InternalFailure"), AwsErrorKind::Other),
            (403, None, AwsErrorKind::AccessDenied),
            (429, None, AwsErrorKind::Throttled),
            (500, None, AwsErrorKind::Other),
        ];
        for (status, code, kind) in cases {
            let e = AwsError::from_sdk("sqs:GetQueueUrl", &service_error(status, code));
            assert_eq!(e.kind, kind, "{status} {code:?}");
            assert_eq!(e.code.as_deref(), code);
        }
    }

    #[test]
    fn diagnostic_names_action_and_attribute() {
        let e = AwsError::from_sdk("sqs:CreateQueue", &service_error(403, Some("AccessDenied")))
            .at(AttributePath::root().attr("name"));
        let d = e.to_diagnostic();
        assert!(d.summary.contains("sqs:CreateQueue"), "{}", d.summary);
        assert!(d.detail.contains("AccessDenied: the message"), "{}", d.detail);
        assert_eq!(d.path, Some(AttributePath::root().attr("name")));
        let diags: Diagnostics = e.into();
        assert!(diags.has_errors());
    }

    #[test]
    fn transport_failures_are_provider_level() {
        use aws_credential_types::provider::error::CredentialsError;
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(transport_kind(&refused), AwsErrorKind::Connection);
        // hyper-rustls nests the rustls error two io::Errors deep
        let tls = std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        ));
        assert_eq!(transport_kind(&tls), AwsErrorKind::Tls);
        assert!(
            error_chain(&tls).contains("UnknownIssuer"),
            "{}",
            error_chain(&tls)
        );
        let creds = CredentialsError::not_loaded("no source");
        assert_eq!(transport_kind(&creds), AwsErrorKind::Credentials);
        let e = AwsError::new("sqs:GetQueueUrl", AwsErrorKind::Connection, "refused")
            .via("http://127.0.0.1:1")
            .at(AttributePath::root().attr("queue_name"));
        let d = e.to_diagnostic();
        assert_eq!(d.path, None);
        assert!(d.summary.contains("http://127.0.0.1:1"), "{}", d.summary);
        let d = AwsError::new("sqs:GetQueueUrl", AwsErrorKind::Credentials, "x").to_diagnostic();
        assert_eq!(d.summary, "no AWS credentials found");
        assert!(d.detail.contains("instance metadata"), "{}", d.detail);
    }

    /// #41: the layers' wrapper texts and OS error numbers never reach the message.
    #[test]
    fn transport_chains_have_no_library_text() {
        #[derive(Debug, thiserror::Error)]
        #[error("{0}")]
        struct Layer(&'static str, #[source] Box<dyn std::error::Error + Send + Sync>);
        let refused = Layer(
            "dispatch failure",
            Box::new(Layer(
                "io error",
                Box::new(Layer(
                    "client error (Connect)",
                    Box::new(Layer(
                        "tcp connect error",
                        Box::new(std::io::Error::from_raw_os_error(111)),
                    )),
                )),
            )),
        );
        let text = error_chain(&refused);
        assert!(text.starts_with("Connection refused"), "{text}");
        let closed = Layer(
            "dispatch failure",
            Box::new(Layer(
                "other",
                Box::new(Layer(
                    "client error (SendRequest)",
                    Box::new(std::io::Error::other(
                        "connection closed before message completed",
                    )),
                )),
            )),
        );
        assert_eq!(error_chain(&closed), "connection closed before message completed");
        for text in [error_chain(&refused), error_chain(&closed)] {
            for library in [
                "dispatch failure",
                "client error",
                "tcp connect",
                "os error",
                "io error",
                "other:",
            ] {
                assert!(!text.contains(library), "{library} in {text}");
            }
        }
    }

    #[test]
    fn typed_override_wins() {
        let e = AwsError::from_sdk("sqs:GetQueueUrl", &service_error(400, Some("Odd")))
            .with_kind(AwsErrorKind::NotFound);
        assert!(e.is_not_found());
    }
}
