//! The failures a [`crate::moto::FaultProxy`] can be armed with: an AWS error answer, a
//! dropped connection, or a late answer, for the next matching calls.

use std::time::Duration;

/// One armed failure: the next `count` requests whose `X-Amz-Target` header or form body
/// contains `matches` get this error instead of reaching moto.
#[derive(Debug, Clone)]
pub struct Fault {
    /// Substring of `X-Amz-Target` (e.g. `AWSEvents.PutTargets`) or of the body
    /// (e.g. `Action=CreateRole`).
    pub matches: String,
    pub count: usize,
    pub status: u16,
    /// The AWS error code, e.g. `ThrottlingException`.
    pub code: String,
    pub message: String,
    /// Matching requests let through before the fault starts firing.
    pub skip: usize,
    /// What the fault does instead of (or besides) the error answer.
    pub mode: FaultMode,
    /// Match the operation exactly (`Action=GetRole` then leaves `Action=GetRolePolicy` alone).
    pub exact: bool,
}

/// How an armed fault treats a matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMode {
    /// Answer with the AWS-shaped error (`status`, `code`); moto never sees the call.
    Error,
    /// Close the client connection without answering; moto never sees the call.
    Drop,
    /// Forward to moto (the call takes effect) and hold its answer back for this long.
    Slow(Duration),
}

impl Fault {
    /// `count` failures of calls matching `matches` with HTTP `status` and error `code`.
    pub fn new(matches: &str, count: usize, status: u16, code: &str) -> Fault {
        Fault {
            matches: matches.to_string(),
            count,
            status,
            code: code.to_string(),
            message: format!("injected by the acceptance tests' fault proxy ({code})"),
            skip: 0,
            mode: FaultMode::Error,
            exact: false,
        }
    }

    /// Matches only the operation named by `matches`, not others it is a prefix of.
    pub fn exact(mut self) -> Fault {
        self.exact = true;
        self
    }

    /// `count` matching calls whose connection is closed without an answer.
    pub fn drop_connection(matches: &str, count: usize) -> Fault {
        Fault {
            mode: FaultMode::Drop,
            ..Fault::new(matches, count, 0, "ConnectionDropped")
        }
    }

    /// `count` matching calls that reach moto but whose answer comes `delay` late.
    pub fn slow(matches: &str, count: usize, delay: Duration) -> Fault {
        Fault {
            mode: FaultMode::Slow(delay),
            ..Fault::new(matches, count, 200, "Slow")
        }
    }

    /// Lets the first `skip` matching requests through, then fails the next `count`.
    pub fn after(mut self, skip: usize) -> Fault {
        self.skip = skip;
        self
    }
}
