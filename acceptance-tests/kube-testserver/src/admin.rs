//! The admin endpoint (`/__admin/…`): fault injection, latency, the request log, the simulated
//! controller's settings, CRD installation and out-of-band inspection and mutation of objects.
//! It is served on the plain-HTTP admin port without authentication, and on the TLS port
//! behind the same authentication as the API. The library handle offers the same operations.

use crate::controller_config::ControllerConfig;
use crate::direct::{delete_object, install_crd_docs, object, patch_object};
use crate::faults::FaultSpec;
use crate::shared::{Body, Shared, error_response, json_response, lock, parse_query};

use crate::util::ApiError;
use http::{Method, Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn ok() -> Response<Body> {
    json_response(200, &json!({"ok": true}), &[])
}

fn millis(body: &[u8]) -> Result<Duration, ApiError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    v.get("millis")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .ok_or_else(|| ApiError::bad_request("expected {\"millis\": N}"))
}

/// Serve one admin request.
pub async fn handle(shared: &Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    match handle_inner(shared, req).await {
        Ok(r) => r,
        Err(e) => error_response(&e),
    }
}

async fn handle_inner(shared: &Arc<Shared>, req: Request<Incoming>) -> Result<Response<Body>, ApiError> {
    let method = req.method().clone();
    let path = req
        .uri()
        .path()
        .trim_start_matches("/__admin")
        .trim_matches('/')
        .to_string();
    let q = parse_query(req.uri().query().unwrap_or(""));
    let body = req
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let ns = q.get("namespace").cloned().unwrap_or_default();
    match (method, segs.as_slice()) {
        (Method::GET, ["healthz"]) => Ok(ok()),
        (Method::GET, ["requests"]) => Ok(json_response(200, &json!(*lock(&shared.log)), &[])),
        (Method::DELETE, ["requests"]) => {
            lock(&shared.log).clear();
            Ok(ok())
        }
        (Method::GET, ["faults"]) => Ok(json_response(200, &json!(*lock(&shared.faults)), &[])),
        (Method::POST, ["faults"]) => {
            let v: Value = serde_json::from_slice(&body).map_err(|e| ApiError::bad_request(e.to_string()))?;
            let specs: Vec<FaultSpec> = if v.is_array() {
                serde_json::from_value(v)
            } else {
                serde_json::from_value(v).map(|s| vec![s])
            }
            .map_err(|e| ApiError::bad_request(format!("invalid fault spec: {e}")))?;
            lock(&shared.faults).extend(specs);
            Ok(ok())
        }
        (Method::GET, ["rbac"]) => Ok(json_response(200, &json!(*lock(&shared.grants)), &[])),
        (Method::PUT, ["rbac"]) => {
            let g: crate::rbac::Grant = serde_json::from_slice(&body)
                .map_err(|e| ApiError::bad_request(format!("invalid grant: {e}")))?;
            let mut grants = lock(&shared.grants);
            grants.retain(|x| x.token != g.token);
            grants.push(g);
            Ok(ok())
        }
        (Method::DELETE, ["rbac"]) => {
            lock(&shared.grants).clear();
            Ok(ok())
        }
        (Method::DELETE, ["faults"]) => {
            lock(&shared.faults).clear();
            Ok(ok())
        }
        (Method::PUT, ["latency"]) => {
            *lock(&shared.latency) = millis(&body)?;
            Ok(ok())
        }
        (Method::POST, ["outage"]) => {
            shared.begin_outage(millis(&body)?);
            Ok(ok())
        }
        (Method::PUT, ["garbage-collector"]) => {
            let running = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("running").and_then(Value::as_bool))
                .ok_or_else(|| ApiError::bad_request("expected {\"running\": true|false}"))?;
            shared.with_state(|s| {
                s.gc_stopped = !running;
                if running {
                    s.gc();
                }
            });
            Ok(ok())
        }
        (Method::PUT, ["establish-delay"]) => {
            *lock(&shared.establish_delay) = millis(&body)?;
            Ok(ok())
        }
        (Method::PUT, ["legacy-webhook-defaults"]) => {
            let on: bool = serde_json::from_slice(&body)
                .map_err(|e| ApiError::bad_request(format!("expected true or false: {e}")))?;
            shared.with_state(|s| s.legacy_webhook_defaults = on);
            Ok(ok())
        }
        (Method::GET, ["controller"]) => Ok(json_response(200, &json!(*lock(&shared.controller)), &[])),
        (Method::PUT, ["controller"]) => {
            let c: ControllerConfig = serde_json::from_slice(&body)
                .map_err(|e| ApiError::bad_request(format!("invalid controller config: {e}")))?;
            *lock(&shared.controller) = c;
            Ok(ok())
        }
        // Stops the simulated Karpenter mid-life (`{"release": true}`: give up the Lease first).
        (Method::POST, ["controller", "stop"]) => {
            let release = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v.get("release").and_then(Value::as_bool))
                .unwrap_or(false);
            crate::controller::stop(shared, release);
            Ok(ok())
        }
        (Method::POST, ["crds"]) => {
            let text = std::str::from_utf8(&body).map_err(|e| ApiError::bad_request(e.to_string()))?;
            let names = install_crd_docs(shared, text, None)?;
            Ok(json_response(201, &json!({"installed": names}), &[]))
        }
        (m, ["objects", g, v, plural, name]) => match m {
            Method::GET => object(shared, g, v, plural, &ns, name)
                .map(|o| json_response(200, &o, &[]))
                .ok_or_else(|| ApiError::not_found(g, plural, name)),
            Method::PATCH => {
                let p: Value =
                    serde_json::from_slice(&body).map_err(|e| ApiError::bad_request(e.to_string()))?;
                if patch_object(shared, g, plural, &ns, name, &p) {
                    object(shared, g, v, plural, &ns, name)
                        .map(|o| json_response(200, &o, &[]))
                        .ok_or_else(|| ApiError::not_found(g, plural, name))
                } else {
                    Err(ApiError::not_found(g, plural, name))
                }
            }
            Method::DELETE => {
                if delete_object(shared, g, plural, &ns, name) {
                    Ok(ok())
                } else {
                    Err(ApiError::not_found(g, plural, name))
                }
            }
            _ => Err(ApiError::method_not_allowed()),
        },
        _ => Err(ApiError::no_resource()),
    }
}
