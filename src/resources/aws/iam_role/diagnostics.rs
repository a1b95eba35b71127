//! How IAM failures reach the user.

use crate::aws::iam::IamError;
use crate::terraform::framework::Diagnostics;

/// An IAM error as a diagnostic a user can act on.
pub fn diagnostics(what: &str, e: &IamError) -> Diagnostics {
    Diagnostics::from_error(format!("Could not {what}"), e.to_string())
}
