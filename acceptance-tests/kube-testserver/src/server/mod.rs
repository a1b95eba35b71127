//! The HTTP side: TLS and plain listeners, authentication, latency and fault injection, the
//! request log, routing of discovery and resource paths, and the handlers for get, list,
//! watch, create, replace, patch (merge, JSON, apply) and delete.

use crate::admin;
use crate::faults::{self, FaultAction, LoggedRequest};
use crate::shared::*;
use crate::ssa;
use crate::store::{CRD_GROUP, ResourceType, Selectors, Sub, WriteCtx, type_from_crd};
use crate::table;
use crate::util::{ApiError, merge_patch, meta_str, parse_json_or_yaml, unix_micros, unix_millis};
use base64::Engine;
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

mod core;
mod discovery;
mod json_patch;
mod listen;
mod watch;
use discovery::{
    aggregated_discovery, group_json, openapi_doc, resource_entries, served_groups, version_info,
    wants_aggregated,
};
use json_patch::json_patch;
use watch::watch;

/// Accept TLS connections until shutdown. During an outage ([`Shared::begin_outage`]) the
/// listener is closed, so connections are refused, and opened again on the same port after.
pub async fn serve_tls(listener: TcpListener, acceptor: TlsAcceptor, shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.clone();
    let mut outage = shared.outage.subscribe();
    let Ok(addr) = listener.local_addr() else { return };
    let mut listener = listener;
    enum Next {
        Conn(std::io::Result<(tokio::net::TcpStream, std::net::SocketAddr)>),
        Down,
        Stop,
    }
    loop {
        let next = tokio::select! {
            r = listener.accept() => Next::Conn(r),
            down = outage.wait_for(Option::is_some) => {
                drop(down);
                Next::Down
            }
            _ = shutdown.changed() => Next::Stop,
        };
        match next {
            Next::Conn(r) => {
                let Ok((tcp, _)) = r else { continue };
                if shared.is_down() {
                    continue;
                }
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                let shared = shared.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let has_cert = tls.get_ref().1.peer_certificates().is_some_and(|c| !c.is_empty());
                    serve_conn(TokioIo::new(tls), shared, Some(has_cert)).await;
                });
            }
            Next::Down => {
                drop(listener);
                // Down until the outage ends (it may be extended meanwhile).
                loop {
                    let until = *outage.borrow();
                    let Some(until) = until.filter(|u| *u > std::time::Instant::now()) else {
                        break;
                    };
                    tokio::select! {
                        _ = tokio::time::sleep_until(until.into()) => {}
                        _ = shutdown.changed() => return,
                    }
                }
                listener = match listen::rebind(addr).await {
                    Some(l) => l,
                    None => return,
                };
                shared.outage.send_replace(None);
            }
            Next::Stop => break,
        }
    }
}

/// Accept plain-HTTP admin connections until shutdown.
pub async fn serve_admin(listener: TcpListener, shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.clone();
    loop {
        tokio::select! {
            r = listener.accept() => {
                let Ok((tcp, _)) = r else { continue };
                let shared = shared.clone();
                tokio::spawn(serve_conn(TokioIo::new(tcp), shared, None));
            }
            _ = shutdown.changed() => break,
        }
    }
}

async fn serve_conn<I>(io: TokioIo<I>, shared: Arc<Shared>, tls_cert: Option<bool>)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut shutdown = shared.shutdown.clone();
    // API connections die with an outage; admin ones do not.
    let mut outage = shared.outage.subscribe();
    let api = tls_cert.is_some();
    let svc = service_fn(move |req| {
        let shared = shared.clone();
        async move { handle(shared, req, tls_cert).await }
    });
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(io, svc);
    tokio::select! {
        _ = conn => {}
        _ = shutdown.changed() => {}
        _ = async { if api { let _ = outage.wait_for(Option::is_some).await; } else { std::future::pending::<()>().await } } => {}
    }
}

/// `tls_cert`: `Some(has_client_cert)` on the TLS port, `None` on the plain admin port.
async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
    tls_cert: Option<bool>,
) -> Result<Response<Body>, DropConnection> {
    let started = Instant::now();
    let at = SystemTime::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let is_admin = path.starts_with("/__admin/") || path == "/__admin";
    let Some(has_cert) = tls_cert else {
        if !is_admin {
            return Ok(error_response(&ApiError::no_resource()));
        }
        return Ok(admin::handle(&shared, req).await);
    };
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    // A granted token is authenticated but restricted to its rules (client certificates and
    // the server's own token are not).
    let grant = if has_cert {
        None
    } else {
        bearer.and_then(|t| lock(&shared.grants).iter().find(|g| g.token == t).cloned())
    };
    let authorized = has_cert
        || grant.is_some()
        || bearer.is_some_and(|t| {
            t == shared.token
                || (shared.eks_tokens && crate::eks::check_token(t, std::time::SystemTime::now()).is_ok())
        });
    let mut entry = LoggedRequest {
        method: method.to_string(),
        path: path.clone(),
        query: query.clone(),
        status: 0,
        at_unix_ms: unix_millis(at),
        at_unix_us: unix_micros(at),
        duration: Duration::ZERO,
        user_agent,
        fault: None,
    };
    if !authorized {
        let r = error_response(&ApiError::unauthorized());
        entry.status = 401;
        entry.duration = started.elapsed();
        shared.log(entry);
        return Ok(r);
    }
    if let Some(g) = &grant {
        let denied = if is_admin {
            Err(crate::rbac::admin_forbidden(&g.user))
        } else {
            crate::rbac::authorize(g, method.as_str(), &path, &query)
        };
        if let Err(e) = denied {
            entry.status = e.code;
            entry.duration = started.elapsed();
            shared.log(entry);
            return Ok(error_response(&e));
        }
    }
    if is_admin {
        return Ok(admin::handle(&shared, req).await);
    }
    if method == Method::GET && !is_watch(&parse_query(&query)) {
        crate::controller::caught_up(&shared).await;
    }
    let latency = *lock(&shared.latency);
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let fault = faults::take(&mut lock(&shared.faults), method.as_str(), &path);
    let outage = fault.as_ref().and_then(|f| f.outage);
    let resp = match fault {
        Some(faults::Taken {
            kind,
            action: FaultAction::Drop,
            ..
        }) => {
            entry.fault = Some(kind);
            entry.duration = started.elapsed();
            if let Some(d) = outage {
                shared.begin_outage(d);
            }
            shared.log(entry);
            return Err(DropConnection);
        }
        Some(faults::Taken {
            kind,
            action: FaultAction::Hold(longest),
            ..
        }) => {
            // The request takes effect; its answer never comes: it waits for the outage
            // (begun by the last request this fault matches), which closes the connection.
            let _ = route(&shared, req, &path, &query).await;
            entry.fault = Some(kind);
            entry.duration = started.elapsed();
            if let Some(d) = outage {
                shared.begin_outage(d);
            }
            shared.log(entry);
            let mut down = shared.outage.subscribe();
            let _ = tokio::time::timeout(longest, down.wait_for(Option::is_some)).await;
            return Err(DropConnection);
        }
        Some(faults::Taken {
            kind,
            action: FaultAction::Respond(e),
            ..
        }) => {
            entry.fault = Some(kind);
            error_response(&e)
        }
        Some(faults::Taken {
            kind,
            action: FaultAction::Delay(delay),
            ..
        }) => {
            // The request takes effect at once; only the answer is late (as from a server
            // whose write went through but whose reply is stuck), so a client that gives up
            // has changed the store without knowing it.
            entry.fault = Some(kind);
            let resp = match route(&shared, req, &path, &query).await {
                Ok(r) => r,
                Err(e) => error_response(&e),
            };
            let _held = shared.hold_answer();
            tokio::time::sleep(delay).await;
            resp
        }
        None => match route(&shared, req, &path, &query).await {
            Ok(r) => r,
            Err(e) => error_response(&e),
        },
    };
    if let Some(d) = outage {
        shared.begin_outage(d);
    }
    entry.status = resp.status().as_u16();
    entry.duration = started.elapsed();
    shared.log(entry);
    Ok(resp)
}

async fn read_body(req: Request<Incoming>) -> Result<Bytes, ApiError> {
    Limited::new(req.into_body(), 8 << 20)
        .collect()
        .await
        .map(|c| c.to_bytes())
        .map_err(|e| ApiError::new(413, "RequestEntityTooLarge", format!("reading request body: {e}")))
}

async fn route(
    shared: &Arc<Shared>,
    req: Request<Incoming>,
    path: &str,
    query: &str,
) -> Result<Response<Body>, ApiError> {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let get = req.method() == Method::GET;
    match segs.as_slice() {
        ["version"] if get => Ok(json_response(200, &version_info(), &[])),
        ["healthz"] | ["readyz"] | ["livez"] if get => {
            let mut r = Response::new(full("ok"));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            Ok(r)
        }
        ["api"] | ["apis"] if get && wants_aggregated(&req) => {
            let body = aggregated_discovery(&lock(&shared.state), segs[0] == "api");
            let mut r = json_response(200, &body, &[]);
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(
                    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
                ),
            );
            Ok(r)
        }
        ["api"] if get => {
            let addr = lock(&shared.addr).map(|a| a.to_string()).unwrap_or_default();
            Ok(json_response(
                200,
                &json!({"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}]}),
                &[],
            ))
        }
        ["api", "v1", "nodes", rest @ ..] if rest.len() <= 2 => {
            let sub = match rest.get(1).copied() {
                None => Sub::Main,
                Some("status") => Sub::Status,
                Some(_) => return Err(ApiError::no_resource()),
            };
            let name = rest.first().map(|n| n.to_string());
            resource(
                shared,
                req,
                ResourceType::node(),
                None,
                name,
                sub,
                parse_query(query),
            )
            .await
        }
        ["api", "v1", rest @ ..] if get => core::read(&lock(&shared.state), rest),
        ["apis"] if get => {
            let groups = served_groups(&lock(&shared.state));
            let mut list = vec![group_json(CRD_GROUP, &["v1".to_string()])];
            list.extend(
                groups
                    .iter()
                    .filter(|(g, _)| g.as_str() != CRD_GROUP)
                    .map(|(g, vs)| group_json(g, vs)),
            );
            Ok(json_response(
                200,
                &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": list}),
                &[],
            ))
        }
        ["apis", g] if get => {
            let versions = if *g == CRD_GROUP {
                vec!["v1".to_string()]
            } else {
                served_groups(&lock(&shared.state))
                    .remove(*g)
                    .ok_or_else(ApiError::no_resource)?
            };
            let mut v = group_json(g, &versions);
            if let Some(o) = v.as_object_mut() {
                o.insert("kind".into(), json!("APIGroup"));
                o.insert("apiVersion".into(), json!("v1"));
            }
            Ok(json_response(200, &v, &[]))
        }
        ["apis", g, v] if get => {
            let st = lock(&shared.state);
            let mut resources = Vec::new();
            if *g == CRD_GROUP && *v == "v1" {
                resources.extend(resource_entries(&ResourceType::crd()));
            }
            for c in st.crds() {
                if c.pointer("/spec/group").and_then(Value::as_str) == Some(*g)
                    && let Some(rt) = type_from_crd(c, v)
                {
                    resources.extend(resource_entries(&rt));
                }
            }
            if resources.is_empty() {
                return Err(ApiError::no_resource());
            }
            Ok(json_response(
                200,
                &json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{g}/{v}"), "resources": resources}),
                &[],
            ))
        }
        ["openapi", "v3"] if get => {
            let st = lock(&shared.state);
            let mut paths = serde_json::Map::new();
            let mut gvs = vec![(CRD_GROUP.to_string(), "v1".to_string())];
            for (g, vs) in served_groups(&st) {
                gvs.extend(vs.into_iter().map(|v| (g.clone(), v)));
            }
            for (g, v) in gvs {
                paths.insert(
                    format!("apis/{g}/{v}"),
                    json!({"serverRelativeURL": format!("/openapi/v3/apis/{g}/{v}?hash={}", st.rv)}),
                );
            }
            Ok(json_response(200, &json!({"paths": paths}), &[]))
        }
        ["openapi", "v3", "apis", g, v] if get => {
            let st = lock(&shared.state);
            let mut types = Vec::new();
            if *g == CRD_GROUP && *v == "v1" {
                types.push(ResourceType::crd());
            }
            for c in st.crds() {
                if c.pointer("/spec/group").and_then(Value::as_str) == Some(*g) {
                    types.extend(type_from_crd(c, v));
                }
            }
            if types.is_empty() {
                return Err(ApiError::no_resource());
            }
            Ok(json_response(200, &openapi_doc(&types), &[]))
        }
        ["apis", g, v, rest @ ..] => {
            let (ns, rest): (Option<String>, Vec<String>) = match rest {
                ["namespaces", ns, tail @ ..] if !tail.is_empty() => {
                    (Some(ns.to_string()), tail.iter().map(|s| s.to_string()).collect())
                }
                other => (None, other.iter().map(|s| s.to_string()).collect()),
            };
            let rt = lock(&shared.state)
                .resolve(g, v, &rest[0])
                .ok_or_else(ApiError::no_resource)?;
            if ns.is_some() && !rt.namespaced {
                return Err(ApiError::no_resource());
            }
            let name = rest.get(1).cloned();
            let sub = match rest.get(2).map(String::as_str) {
                None => Sub::Main,
                Some("status") if rt.status_subresource => Sub::Status,
                Some(_) => return Err(ApiError::no_resource()),
            };
            if rest.len() > 3 || (rt.namespaced && name.is_some() && ns.is_none()) {
                return Err(ApiError::no_resource());
            }
            // NamespaceLifecycle: no writes into a namespace that does not exist.
            let writes = matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH);
            if let Some(n) = ns.as_deref().filter(|_| writes)
                && !lock(&shared.state).namespace_exists(n)
            {
                return Err(crate::store::namespace_not_found(n));
            }
            resource(shared, req, rt, ns, name, sub, parse_query(query)).await
        }
        _ => Err(ApiError::no_resource()),
    }
}

fn manager_for(q: &HashMap<String, String>, req: &Request<Incoming>) -> String {
    if let Some(m) = q.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.clone();
    }
    let ua = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown");
    ua.split('/').next().unwrap_or("unknown").to_string()
}

async fn resource(
    shared: &Arc<Shared>,
    req: Request<Incoming>,
    rt: ResourceType,
    ns: Option<String>,
    name: Option<String>,
    sub: Sub,
    q: HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let nsv = ns.clone().unwrap_or_default();
    let ctx = WriteCtx {
        manager: manager_for(&q, &req),
        dry_run: q.get("dryRun").is_some_and(|d| d == "All"),
        strict: q.get("fieldValidation").is_some_and(|f| f == "Strict"),
        ignore_unknown: q.get("fieldValidation").is_some_and(|f| f == "Ignore"),
    };
    let method = req.method().clone();
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    match (method, name) {
        (Method::GET, None) => {
            let sel = Selectors::parse(
                q.get("labelSelector").map(String::as_str),
                q.get("fieldSelector").map(String::as_str),
            )?;
            if is_watch(&q) {
                return watch(shared, rt, ns, sel, &q);
            }
            let st = lock(&shared.state);
            let mut items = st.list(&rt, ns.as_deref(), &sel);
            // Pagination: items are in (namespace, name) order; the continue token names the
            // last item returned.
            let key = |o: &Value| {
                format!(
                    "{}/{}",
                    meta_str(o, "namespace").unwrap_or(""),
                    meta_str(o, "name").unwrap_or("")
                )
            };
            if let Some(token) = q.get("continue").filter(|c| !c.is_empty()) {
                let after = base64::engine::general_purpose::STANDARD
                    .decode(token)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .ok_or_else(|| ApiError::bad_request(format!("continue key is not valid: {token}")))?;
                items.retain(|o| key(o) > after);
            }
            let mut list_meta = json!({"resourceVersion": st.rv.to_string()});
            if let Some(limit) = q
                .get("limit")
                .and_then(|l| l.parse::<usize>().ok())
                .filter(|l| *l > 0)
                && items.len() > limit
            {
                let remaining = items.len() - limit;
                items.truncate(limit);
                if let (Some(last), Some(m)) = (items.last(), list_meta.as_object_mut()) {
                    m.insert(
                        "continue".into(),
                        json!(base64::engine::general_purpose::STANDARD.encode(key(last))),
                    );
                    m.insert("remainingItemCount".into(), json!(remaining));
                }
            }
            if table::wants_table(&accept) {
                let mut t = table::table(&rt, &items, st.rv);
                t["metadata"] = list_meta;
                return Ok(json_response(200, &t, &[]));
            }
            Ok(json_response(
                200,
                &json!({"apiVersion": rt.api_version(), "kind": rt.list_kind,
                    "metadata": list_meta, "items": items}),
                &[],
            ))
        }
        (Method::GET, Some(n)) => {
            let st = lock(&shared.state);
            let obj = st.get(&rt, &nsv, &n)?;
            if table::wants_table(&accept) && sub == Sub::Main {
                return Ok(json_response(200, &table::table(&rt, &[obj], st.rv), &[]));
            }
            Ok(json_response(200, &obj, &[]))
        }
        (Method::POST, None) => {
            let body = parse_json_or_yaml(&read_body(req).await?)?;
            let w = shared.with_state(|st| st.create(&rt, &nsv, body, &ctx, false))?;
            Ok(json_response(201, &w.object, &w.warnings))
        }
        (Method::PUT, Some(n)) => {
            let body = parse_json_or_yaml(&read_body(req).await?)?;
            // Custom resources do not allow unconditional updates.
            if meta_str(&body, "resourceVersion").is_none_or(str::is_empty) && !rt.is_crd() {
                return Err(crate::store::invalid(
                    &rt.kind,
                    &rt.group,
                    &n,
                    &[crate::schema::FieldError {
                        reason: "FieldValueInvalid",
                        field: "metadata.resourceVersion".into(),
                        message: "Invalid value: 0x0: must be specified for an update".into(),
                    }],
                ));
            }
            let w = shared.with_state(|st| st.update(&rt, &nsv, &n, body, sub, &ctx, true))?;
            Ok(json_response(200, &w.object, &w.warnings))
        }
        (Method::PATCH, Some(n)) => {
            let raw = read_body(req).await?;
            patch(shared, &rt, &nsv, &n, sub, &ctx, &content_type, &raw, &q)
        }
        (Method::DELETE, Some(n)) => {
            let raw = read_body(req).await?;
            let opts: Value = if raw.is_empty() {
                json!({})
            } else {
                parse_json_or_yaml(&raw)?
            };
            let prop = q.get("propagationPolicy").cloned().or_else(|| {
                opts.get("propagationPolicy")
                    .and_then(Value::as_str)
                    .map(String::from)
            });
            if let Some(p) = &prop
                && !matches!(p.as_str(), "Foreground" | "Background" | "Orphan")
            {
                return Err(ApiError::bad_request(format!(
                    "propagationPolicy: Unsupported value: \"{p}\""
                )));
            }
            let uid = opts
                .pointer("/preconditions/uid")
                .and_then(Value::as_str)
                .map(String::from);
            let rv = opts
                .pointer("/preconditions/resourceVersion")
                .and_then(Value::as_str)
                .map(String::from);
            let dry = ctx.dry_run
                || opts
                    .get("dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|x| x == "All"));
            let w = shared.with_state(|st| {
                st.delete(&rt, &nsv, &n, prop.as_deref(), uid.as_deref(), rv.as_deref(), dry)
            })?;
            if w.gone {
                // Custom-resource storage answers an immediate deletion with a success Status.
                let details = json!({"name": n, "group": rt.group, "kind": rt.plural,
                    "uid": meta_str(&w.object, "uid").unwrap_or("")});
                return Ok(json_response(
                    200,
                    &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}),
                    &[],
                ));
            }
            Ok(json_response(200, &w.object, &[]))
        }
        (Method::DELETE, None) => {
            let sel = Selectors::parse(
                q.get("labelSelector").map(String::as_str),
                q.get("fieldSelector").map(String::as_str),
            )?;
            let items = shared.with_state(|st| {
                let names: Vec<(String, String)> = st
                    .list(&rt, ns.as_deref(), &sel)
                    .iter()
                    .map(|o| {
                        (
                            meta_str(o, "namespace").unwrap_or("").to_string(),
                            meta_str(o, "name").unwrap_or("").to_string(),
                        )
                    })
                    .collect();
                names
                    .iter()
                    .filter_map(|(ons, n)| st.delete(&rt, ons, n, None, None, None, ctx.dry_run).ok())
                    .map(|w| w.object)
                    .collect::<Vec<_>>()
            });
            let rv = lock(&shared.state).rv;
            Ok(json_response(
                200,
                &json!({"apiVersion": rt.api_version(), "kind": rt.list_kind, "metadata": {"resourceVersion": rv.to_string()}, "items": items}),
                &[],
            ))
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

#[allow(clippy::too_many_arguments)]
fn patch(
    shared: &Arc<Shared>,
    rt: &ResourceType,
    ns: &str,
    name: &str,
    sub: Sub,
    ctx: &WriteCtx,
    content_type: &str,
    raw: &[u8],
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    match content_type {
        "application/merge-patch+json" | "application/json-patch+json" => {
            let p: Value = serde_json::from_slice(raw)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            let w = shared.with_state(|st| {
                let mut cur = st.get(rt, ns, name)?;
                if content_type == "application/merge-patch+json" {
                    merge_patch(&mut cur, &p);
                } else {
                    json_patch(&mut cur, &p)?;
                }
                st.update(rt, ns, name, cur, sub, ctx, true)
            })?;
            Ok(json_response(200, &w.object, &w.warnings))
        }
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
            if q.get("fieldManager").is_none_or(|m| m.is_empty()) {
                return Err(ApiError::bad_request(
                    "PATCH /apply: fieldManager must be set for apply requests",
                ));
            }
            let cfg = parse_json_or_yaml(raw)?;
            if let Some(n) = meta_str(&cfg, "name")
                && n != name {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({n}) does not match the name on the URL ({name})"
                    )));
                }
            // Real SSA converts the configuration to the CRD's typed schema first; a field the
            // schema does not declare fails there, whatever `fieldValidation` says.
            if let Some(schema) = &rt.schema
                && let Some(e) = ssa::undeclared_fields_error(schema, &cfg, ns, name, &rt.api_version(), &rt.kind)
            {
                return Err(e);
            }
            let force = q.get("force").is_some_and(|f| f == "true");
            let (code, w) = shared.with_state(|st| -> Result<(u16, crate::store::Written), ApiError> {
                match st.get(rt, ns, name) {
                    Err(e) if e.code == 404 && sub == Sub::Main => {
                        let mut obj = cfg.clone();
                        if let Some(m) = crate::util::meta_mut(&mut obj) {
                            m.insert("name".into(), json!(name));
                        }
                        let mgr = ssa::Manager {
                            manager: ctx.manager.clone(),
                            operation: "Apply".into(),
                            subresource: String::new(),
                            fields: ssa::fieldset_of(&cfg),
                            api_version: rt.api_version(),
                            time: None,
                        };
                        ssa::write_managers(&mut obj, &[mgr], &crate::util::now_rfc3339());
                        Ok((201, st.create(rt, ns, obj, ctx, true)?))
                    }
                    Err(e) => Err(e),
                    Ok(cur) => {
                        let merged = ssa::apply(&cur, &cfg, &ctx.manager, if sub == Sub::Status { "status" } else { "" }, force, &rt.api_version(), |m, causes| {
                            // An apply conflict's Status names no object, only the causes.
                            ApiError::new(409, "Conflict", m).with_details(json!({"causes": causes}))
                        })?;
                        Ok((200, st.update(rt, ns, name, merged, sub, ctx, false)?))
                    }
                }
            })?;
            Ok(json_response(code, &w.object, &w.warnings))
        }
        "application/strategic-merge-patch+json" => Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml".to_string(),
        )),
        other => Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!("the body of the request was in an unknown format - {other}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::discovery::version_rank;
    use super::*;

    #[test]
    fn decodes_queries() {
        let q = parse_query("fieldSelector=metadata.name%3Dfoo&watch=true&x");
        assert_eq!(q["fieldSelector"], "metadata.name=foo");
        assert_eq!(q["watch"], "true");
        assert_eq!(q["x"], "");
    }

    #[test]
    fn json_patch_ops() {
        let mut d = json!({"a": [1, 2], "b": {"c": 1}});
        json_patch(
            &mut d,
            &json!([{"op": "add", "path": "/a/-", "value": 3}, {"op": "remove", "path": "/b/c"},
            {"op": "replace", "path": "/a/0", "value": 9}, {"op": "test", "path": "/a/1", "value": 2}]),
        )
        .unwrap();
        assert_eq!(d, json!({"a": [9, 2, 3], "b": {}}));
        assert!(json_patch(&mut d, &json!([{"op": "test", "path": "/a/0", "value": 1}])).is_err());
    }

    #[test]
    fn ranks_versions() {
        let mut v = vec!["v1alpha1".to_string(), "v1".into(), "v1beta2".into(), "v2".into()];
        v.sort_by_key(|x| std::cmp::Reverse(version_rank(x)));
        assert_eq!(v, vec!["v2", "v1", "v1beta2", "v1alpha1"]);
    }
}
