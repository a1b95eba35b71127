//! The RPCs of what this provider declares none of: ephemeral resources and functions (an
//! answer with a diagnostic or an error, as Terraform expects for an unknown name), state stores
//! and actions (`UNIMPLEMENTED`: Terraform never calls them on a provider that declares none).

use tonic::{Response, Status};

use super::reply::{Rpc, unknown_type};
use crate::terraform::plugin::proto::tfplugin6 as pb;
use crate::terraform::plugin::schema_proto::diagnostics as pb_diags;

/// `GetFunctions`: none.
pub(super) fn get_functions() -> Rpc<pb::get_functions::Response> {
    Ok(Response::new(Default::default()))
}

/// `CallFunction`: there is no function to call.
pub(super) fn call_function(req: pb::call_function::Request) -> Rpc<pb::call_function::Response> {
    let name = req.name;
    Ok(Response::new(pb::call_function::Response {
        error: Some(pb::FunctionError {
            text: format!("this provider has no function {name:?}"),
            function_argument: None,
        }),
        ..Default::default()
    }))
}

/// `ValidateEphemeralResourceConfig`: an unknown type.
pub(super) fn validate_ephemeral_resource_config(
    req: pb::validate_ephemeral_resource_config::Request,
) -> Rpc<pb::validate_ephemeral_resource_config::Response> {
    let d = unknown_type("ephemeral resource", &req.type_name);
    Ok(Response::new(pb::validate_ephemeral_resource_config::Response {
        diagnostics: pb_diags(&d),
    }))
}

/// `OpenEphemeralResource`: an unknown type.
pub(super) fn open_ephemeral_resource(
    req: pb::open_ephemeral_resource::Request,
) -> Rpc<pb::open_ephemeral_resource::Response> {
    let d = unknown_type("ephemeral resource", &req.type_name);
    Ok(Response::new(pb::open_ephemeral_resource::Response {
        diagnostics: pb_diags(&d),
        ..Default::default()
    }))
}

/// `RenewEphemeralResource`: an unknown type.
pub(super) fn renew_ephemeral_resource(
    req: pb::renew_ephemeral_resource::Request,
) -> Rpc<pb::renew_ephemeral_resource::Response> {
    let d = unknown_type("ephemeral resource", &req.type_name);
    Ok(Response::new(pb::renew_ephemeral_resource::Response {
        diagnostics: pb_diags(&d),
        ..Default::default()
    }))
}

/// `CloseEphemeralResource`: an unknown type.
pub(super) fn close_ephemeral_resource(
    req: pb::close_ephemeral_resource::Request,
) -> Rpc<pb::close_ephemeral_resource::Response> {
    let d = unknown_type("ephemeral resource", &req.type_name);
    Ok(Response::new(pb::close_ephemeral_resource::Response {
        diagnostics: pb_diags(&d),
    }))
}

/// Every state store RPC.
pub(super) fn no_state_stores<T>() -> Rpc<T> {
    Err(Status::unimplemented("this provider declares no state stores"))
}

/// Every action RPC.
pub(super) fn no_actions<T>() -> Rpc<T> {
    Err(Status::unimplemented("this provider declares no actions"))
}
