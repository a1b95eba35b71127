//! What every handler answers with: the [`Rpc`] result, [`respond`] (a handler body's
//! diagnostics become its response's), and the diagnostics of failures the server finds itself
//! (an internal error, a type the provider lacks, a value Terraform sent that does not decode).

use tonic::{Response, Status};

use crate::terraform::framework::Diagnostics;

/// The result of every tfplugin6 handler.
pub(super) type Rpc<T> = Result<Response<T>, Status>;

/// Turns a fallible handler body into its response: the body's answer, or `on_error`'s
/// answer carrying the diagnostics.
pub(super) fn respond<T>(result: Result<T, Diagnostics>, on_error: impl FnOnce(Diagnostics) -> T) -> Rpc<T> {
    Ok(Response::new(match result {
        Ok(response) => response,
        Err(d) => on_error(d),
    }))
}

pub(super) fn internal(what: &str) -> Diagnostics {
    Diagnostics::from_error("Internal provider error", what.to_string())
}

pub(super) fn unknown_type(kind: &str, type_name: &str) -> Diagnostics {
    Diagnostics::from_error(
        format!("Unknown {kind} type"),
        format!(
            "This provider has no {kind} type {type_name:?}. Check the spelling, or upgrade the provider."
        ),
    )
}

pub(super) fn malformed(what: &str, why: &str) -> Diagnostics {
    Diagnostics::from_error(
        format!("Malformed {what}"),
        format!(
            "Terraform sent a {what} the provider could not decode: {why}. This is a bug in Terraform or the provider."
        ),
    )
}
