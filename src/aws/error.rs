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

use crate::framework::{Diagnostic, Diagnostics, Severity};
use crate::tfvalue::AttributePath;

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
    /// Anything else: network failures, timeouts, server errors, unmodeled codes.
    Other,
}

impl fmt::Display for AwsErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotFound => "not found",
            Self::AlreadyExists => "already exists",
            Self::AccessDenied => "access denied",
            Self::Throttled => "throttled",
            Self::Validation => "invalid request",
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
                }
            }
            other => Self {
                action,
                kind: AwsErrorKind::Other,
                code: None,
                message: error_chain(other),
                path: None,
            },
        }
    }

    /// Overrides the kind when a typed check on the service error says so.
    pub fn with_kind(mut self, kind: AwsErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// Sets the attribute the failure is about.
    pub fn at(mut self, path: AttributePath) -> Self {
        self.path = Some(path);
        self
    }

    pub fn is_not_found(&self) -> bool {
        self.kind == AwsErrorKind::NotFound
    }

    pub fn is_already_exists(&self) -> bool {
        self.kind == AwsErrorKind::AlreadyExists
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
            AwsErrorKind::Other => (
                format!("{} failed", self.action),
                "Check connectivity to AWS (region, endpoints) and apply again.".to_string(),
            ),
        };
        Diagnostic {
            severity: Severity::Error,
            summary,
            detail: format!("{}. {advice}", self.describe()),
            path: self.path.clone().filter(|p| !p.is_root()),
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

/// The error and its sources, joined ("dispatch failure: io error: connection refused").
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
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
    fn typed_override_wins() {
        let e = AwsError::from_sdk("sqs:GetQueueUrl", &service_error(400, Some("Odd")))
            .with_kind(AwsErrorKind::NotFound);
        assert!(e.is_not_found());
    }
}
