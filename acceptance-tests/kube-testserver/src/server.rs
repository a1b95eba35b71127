//! The HTTP side: TLS and plain listeners, authentication, latency and fault injection, the
//! request log, routing of discovery and resource paths, and the handlers for get, list,
//! watch, create, replace, patch (merge, JSON, apply) and delete.

use crate::admin;
use crate::faults::{self, FaultAction, LoggedRequest};
use crate::shared::*;
use crate::ssa;
use crate::store::{CRD_GROUP, Event, ResourceType, Selectors, State, Sub, WriteCtx, type_from_crd};
use crate::table;
use crate::util::{ApiError, merge_patch, meta_str, parse_json_or_yaml, unix_micros, unix_millis};
use base64::Engine;
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, header};
use http_body_util::{BodyExt, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc};
use tokio_rustls::TlsAcceptor;

/// Accept TLS connections until shutdown.
pub async fn serve_tls(listener: TcpListener, acceptor: TlsAcceptor, shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.clone();
    loop {
        tokio::select! {
            r = listener.accept() => {
                let Ok((tcp, _)) = r else { continue };
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                let shared = shared.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let has_cert = tls.get_ref().1.peer_certificates().is_some_and(|c| !c.is_empty());
                    serve_conn(TokioIo::new(tls), shared, Some(has_cert)).await;
                });
            }
            _ = shutdown.changed() => break,
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
    let svc = service_fn(move |req| {
        let shared = shared.clone();
        async move { handle(shared, req, tls_cert).await }
    });
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(io, svc);
    tokio::select! {
        _ = conn => {}
        _ = shutdown.changed() => {}
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
    let resp = match fault {
        Some((kind, FaultAction::Drop)) => {
            entry.fault = Some(kind);
            entry.duration = started.elapsed();
            shared.log(entry);
            return Err(DropConnection);
        }
        Some((kind, FaultAction::Respond(e))) => {
            entry.fault = Some(kind);
            error_response(&e)
        }
        Some((kind, FaultAction::Delay(delay))) => {
            // The request takes effect at once; only the answer is late (as from a server
            // whose write went through but whose reply is stuck), so a client that gives up
            // has changed the store without knowing it.
            entry.fault = Some(kind);
            let resp = match route(&shared, req, &path, &query).await {
                Ok(r) => r,
                Err(e) => error_response(&e),
            };
            tokio::time::sleep(delay).await;
            resp
        }
        None => match route(&shared, req, &path, &query).await {
            Ok(r) => r,
            Err(e) => error_response(&e),
        },
    };
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

fn version_info() -> Value {
    json!({
        "major": "1", "minor": "32", "gitVersion": "v1.32.0", "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0",
        "compiler": "gc", "platform": "linux/amd64", "emulationMajor": "1", "emulationMinor": "32",
        "minCompatibilityMajor": "1", "minCompatibilityMinor": "31"
    })
}

/// Version priority as Kubernetes sorts versions (GA > beta > alpha, higher numbers first).
fn version_rank(v: &str) -> (u8, u32, u32) {
    let Some(rest) = v.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse().unwrap_or(0);
    let tail = &rest[digits.len()..];
    if tail.is_empty() {
        (3, major, 0)
    } else if let Some(n) = tail.strip_prefix("beta") {
        (2, major, n.parse().unwrap_or(0))
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (1, major, n.parse().unwrap_or(0))
    } else {
        (0, major, 0)
    }
}

/// Served group → versions (highest priority first), from established CRDs.
fn served_groups(st: &State) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in st.crds() {
        let Some(g) = c.pointer("/spec/group").and_then(Value::as_str) else {
            continue;
        };
        let versions = c
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for v in versions {
            let Some(name) = v.get("name").and_then(Value::as_str) else {
                continue;
            };
            if type_from_crd(c, name).is_some() {
                let e = groups.entry(g.to_string()).or_default();
                if !e.iter().any(|x| x == name) {
                    e.push(name.to_string());
                }
            }
        }
    }
    for vs in groups.values_mut() {
        vs.sort_by_key(|v| std::cmp::Reverse(version_rank(v)));
    }
    groups
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({"name": name, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or(Value::Null)})
}

fn resource_entries(rt: &ResourceType) -> Vec<Value> {
    let mut r = json!({
        "name": rt.plural, "singularName": rt.singular, "namespaced": rt.namespaced, "kind": rt.kind,
        "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
    });
    if let Some(o) = r.as_object_mut() {
        if !rt.short_names.is_empty() {
            o.insert("shortNames".into(), json!(rt.short_names));
        }
        if !rt.categories.is_empty() {
            o.insert("categories".into(), json!(rt.categories));
        }
    }
    let mut out = vec![r];
    if rt.status_subresource {
        out.push(
            json!({"name": format!("{}/status", rt.plural), "singularName": "", "namespaced": rt.namespaced,
            "kind": rt.kind, "verbs": ["get", "patch", "update"]}),
        );
    }
    out
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
        ["api", "v1"] if get => Ok(json_response(
            200,
            &json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "namespaces", "singularName": "namespace", "namespaced": false, "kind": "Namespace",
                 "verbs": ["get", "list"], "shortNames": ["ns"]}]}),
            &[],
        )),
        ["api", "v1", "namespaces"] if get => {
            let listed: Vec<String> = match &lock(&shared.state).namespaces {
                Some(known) => known.iter().cloned().collect(),
                None => vec!["default".into(), "kube-system".into()],
            };
            let items: Vec<Value> = listed.iter().map(|n| namespace(n)).collect();
            Ok(json_response(
                200,
                &json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items}),
                &[],
            ))
        }
        ["api", "v1", "namespaces", n] if get => {
            if !lock(&shared.state).namespace_exists(n) {
                return Err(crate::store::namespace_not_found(n));
            }
            Ok(json_response(200, &namespace(n), &[]))
        }
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

/// Whether the client prefers aggregated discovery (`apidiscovery.k8s.io/v2`).
fn wants_aggregated(req: &Request<Incoming>) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .and_then(|a| a.split(',').next())
        .is_some_and(|first| {
            first.contains("as=APIGroupDiscoveryList")
                && first.contains("g=apidiscovery.k8s.io")
                && first.contains("v=v2")
                && !first.contains("v=v2beta1")
        })
}

fn resource_discovery(rt: &ResourceType) -> Value {
    let gvk = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let mut subs = Vec::new();
    if rt.status_subresource {
        subs.push(json!({"subresource": "status", "responseKind": gvk, "verbs": ["get", "patch", "update"]}));
    }
    json!({
        "resource": rt.plural, "responseKind": gvk, "scope": if rt.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": rt.singular,
        "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
        "shortNames": rt.short_names, "categories": rt.categories, "subresources": subs,
    })
}

/// The aggregated discovery document for `/api` (core) or `/apis`.
fn aggregated_discovery(st: &State, core: bool) -> Value {
    let items: Vec<Value> = if core {
        vec![
            json!({"metadata": {"name": ""}, "versions": [{"version": "v1", "freshness": "Current", "resources": [
            {"resource": "namespaces", "responseKind": {"group": "", "version": "v1", "kind": "Namespace"}, "scope": "Cluster",
             "singularResource": "namespace", "verbs": ["get", "list"], "shortNames": ["ns"]}]}]}),
        ]
    } else {
        let mut groups = vec![
            json!({"metadata": {"name": CRD_GROUP}, "versions": [{"version": "v1", "freshness": "Current",
            "resources": [resource_discovery(&ResourceType::crd())]}]}),
        ];
        for (g, versions) in served_groups(st) {
            let vs: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = st
                        .crds()
                        .into_iter()
                        .filter(|c| c.pointer("/spec/group").and_then(Value::as_str) == Some(g.as_str()))
                        .filter_map(|c| type_from_crd(c, v))
                        .map(|rt| resource_discovery(&rt))
                        .collect();
                    json!({"version": v, "freshness": "Current", "resources": resources})
                })
                .collect();
            groups.push(json!({"metadata": {"name": g}, "versions": vs}));
        }
        groups
    };
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items})
}

/// A minimal OpenAPI v3 document for one group/version: the object schemas and, per path, the
/// operations with their `x-kubernetes-group-version-kind` and query parameters. kubectl reads it
/// to learn that the server validates fields itself (`fieldValidation`).
fn openapi_doc(types: &[ResourceType]) -> Value {
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    let param =
        |n: &str| json!({"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
    for rt in types {
        let gvk = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
        let rev: Vec<&str> = rt.group.split('.').rev().collect();
        let schema_name = format!("{}.{}.{}", rev.join("."), rt.version, rt.kind);
        let mut schema = rt
            .schema
            .as_deref()
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
        if let Some(o) = schema.as_object_mut() {
            o.insert("x-kubernetes-group-version-kind".into(), json!([gvk]));
        }
        schemas.insert(schema_name.clone(), schema);
        let body_ref = json!({"content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema_name}")}}}});
        let op = |verb: &str, params: Vec<Value>| {
            json!({"operationId": format!("{verb}{}", rt.kind), "x-kubernetes-action": verb, "x-kubernetes-group-version-kind": gvk,
                "parameters": params, "responses": {"200": {"description": "OK", "content": body_ref["content"].clone()}}})
        };
        let write = || vec![param("dryRun"), param("fieldManager"), param("fieldValidation")];
        let mut patch_params = write();
        patch_params.push(param("force"));
        let base = if rt.namespaced {
            format!(
                "/apis/{}/{}/namespaces/{{namespace}}/{}",
                rt.group, rt.version, rt.plural
            )
        } else {
            format!("/apis/{}/{}/{}", rt.group, rt.version, rt.plural)
        };
        paths.insert(
            base.clone(),
            json!({"get": op("list", vec![param("labelSelector"), param("fieldSelector"), param("watch")]),
            "post": op("post", write())}),
        );
        paths.insert(
            format!("{base}/{{name}}"),
            json!({"get": op("get", vec![]), "put": op("put", write()),
            "patch": op("patch", patch_params.clone()), "delete": op("delete", vec![param("dryRun")])}),
        );
        if rt.status_subresource {
            paths.insert(
                format!("{base}/{{name}}/status"),
                json!({"get": op("get", vec![]), "put": op("put", write()),
                "patch": op("patch", patch_params)}),
            );
        }
    }
    json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": paths,
        "components": {"schemas": schemas}})
}

/// Every namespace exists and is Active (namespaces are not stored; see README).
fn namespace(name: &str) -> Value {
    json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": name, "uid": format!("00000000-0000-0000-0000-{:012x}", name.len()),
        "resourceVersion": "1", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
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

fn unescape(t: &str) -> String {
    t.replace("~1", "/").replace("~0", "~")
}

fn split_pointer(p: &str) -> Result<(String, String), ApiError> {
    let i = p
        .rfind('/')
        .ok_or_else(|| invalid_patch(&format!("invalid path {p}")))?;
    Ok((p[..i].to_string(), unescape(&p[i + 1..])))
}

fn invalid_patch(m: &str) -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        format!("the server rejected our request due to an error in our request: {m}"),
    )
}

fn add_at(doc: &mut Value, path: &str, v: Value) -> Result<(), ApiError> {
    if path.is_empty() {
        *doc = v;
        return Ok(());
    }
    let (parent, last) = split_pointer(path)?;
    match doc.pointer_mut(&parent) {
        Some(Value::Object(o)) => {
            o.insert(last, v);
            Ok(())
        }
        Some(Value::Array(a)) => {
            if last == "-" {
                a.push(v);
                return Ok(());
            }
            let i: usize = last
                .parse()
                .map_err(|_| invalid_patch(&format!("invalid array index {last}")))?;
            if i > a.len() {
                return Err(invalid_patch(&format!("array index {i} out of bounds")));
            }
            a.insert(i, v);
            Ok(())
        }
        _ => Err(invalid_patch(&format!("doc is missing path: \"{path}\""))),
    }
}

fn remove_at(doc: &mut Value, path: &str) -> Result<Value, ApiError> {
    let (parent, last) = split_pointer(path)?;
    let missing = || invalid_patch(&format!("doc is missing path: \"{path}\""));
    match doc.pointer_mut(&parent) {
        Some(Value::Object(o)) => o.remove(&last).ok_or_else(missing),
        Some(Value::Array(a)) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i < a.len() {
                Ok(a.remove(i))
            } else {
                Err(missing())
            }
        }
        _ => Err(missing()),
    }
}

/// RFC 6902 JSON patch.
pub fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), ApiError> {
    let ops = ops
        .as_array()
        .ok_or_else(|| ApiError::bad_request("a JSON patch must be an array"))?;
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = op.get("path").and_then(Value::as_str).unwrap_or("").to_string();
        let value = op.get("value").cloned();
        match kind {
            "add" => add_at(doc, &path, value.unwrap_or(Value::Null))?,
            "remove" => {
                remove_at(doc, &path)?;
            }
            "replace" => {
                remove_at(doc, &path)?;
                add_at(doc, &path, value.unwrap_or(Value::Null))?;
            }
            "move" | "copy" => {
                let from = op.get("from").and_then(Value::as_str).unwrap_or("");
                let v = if kind == "move" {
                    remove_at(doc, from)?
                } else {
                    doc.pointer(from)
                        .cloned()
                        .ok_or_else(|| invalid_patch(&format!("doc is missing from path: \"{from}\"")))?
                };
                add_at(doc, &path, v)?;
            }
            "test" => {
                if doc.pointer(&path) != value.as_ref() {
                    return Err(invalid_patch(&format!("testing value {path} failed")));
                }
            }
            other => return Err(invalid_patch(&format!("Unexpected kind: {other}"))),
        }
    }
    Ok(())
}

fn event_line(etype: &str, object: &Value) -> Bytes {
    let mut v = serde_json::to_vec(&json!({"type": etype, "object": object})).unwrap_or_default();
    v.push(b'\n');
    Bytes::from(v)
}

fn watch(
    shared: &Arc<Shared>,
    rt: ResourceType,
    ns: Option<String>,
    sel: Selectors,
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let rv_param = q.get("resourceVersion").cloned().unwrap_or_default();
    let send_initial = q.get("sendInitialEvents").is_some_and(|s| s == "true");
    let bookmarks = q.get("allowWatchBookmarks").is_some_and(|s| s == "true");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(1800));
    let matches = {
        let rt = rt.clone();
        let ns = ns.clone();
        move |ev: &Event| -> bool {
            ev.group == rt.group
                && ev.plural == rt.plural
                && ns
                    .as_deref()
                    .is_none_or(|n| meta_str(&ev.object, "namespace") == Some(n))
                && sel.matches(&ev.object)
        }
    };
    let api_version = rt.api_version();
    let with_version = move |o: &Value| {
        let mut o = o.clone();
        if let Some(m) = o.as_object_mut() {
            m.insert("apiVersion".into(), json!(api_version));
        }
        o
    };
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let mut initial: Vec<Bytes> = Vec::new();
    let sub: Option<broadcast::Receiver<Arc<Event>>>;
    let start_rv;
    {
        let st = lock(&shared.state);
        start_rv = st.rv;
        if rv_param.is_empty() || rv_param == "0" || send_initial {
            for o in st.list(&rt, ns.as_deref(), &Selectors::default()) {
                let ev = Event {
                    rv: 0,
                    group: rt.group.clone(),
                    plural: rt.plural.clone(),
                    etype: "ADDED",
                    object: o,
                };
                if matches(&ev) {
                    initial.push(event_line("ADDED", &with_version(&ev.object)));
                }
            }
            if send_initial {
                let bm = json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": {"resourceVersion": st.rv.to_string(),
                    "annotations": {"k8s.io/initial-events-end": "true"}}});
                initial.push(event_line("BOOKMARK", &bm));
            }
            sub = Some(st.subscribe());
        } else {
            let rv: u64 = rv_param
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv_param}")))?;
            match st.watch_from(rv) {
                Ok((past, r)) => {
                    for ev in past.iter().filter(|e| matches(e)) {
                        initial.push(event_line(ev.etype, &with_version(&ev.object)));
                    }
                    sub = Some(r);
                }
                Err(oldest) => {
                    let e = ApiError::new(
                        410,
                        "Expired",
                        format!("too old resource version: {rv} ({oldest})"),
                    );
                    initial.push(event_line("ERROR", &e.body()));
                    sub = None;
                }
            }
        }
    }
    let mut shutdown = shared.shutdown.clone();
    let kind = rt.kind.clone();
    let av = rt.api_version();
    tokio::spawn(async move {
        for line in initial {
            if tx.send(line).await.is_err() {
                return;
            }
        }
        let Some(mut sub) = sub else { return };
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        let mut last_rv = start_rv;
        loop {
            tokio::select! {
                ev = sub.recv() => match ev {
                    Ok(ev) => {
                        last_rv = ev.rv;
                        if matches(&ev) && tx.send(event_line(ev.etype, &with_version(&ev.object))).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let e = ApiError::new(410, "Expired", "too old resource version: watch fell behind");
                        let _ = tx.send(event_line("ERROR", &e.body())).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = tick.tick(), if bookmarks => {
                    let bm = json!({"kind": kind, "apiVersion": av, "metadata": {"resourceVersion": last_rv.to_string()}});
                    if tx.send(event_line("BOOKMARK", &bm)).await.is_err() {
                        return;
                    }
                }
                _ = &mut deadline => return,
                _ = shutdown.changed() => return,
                _ = tx.closed() => return,
            }
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    let mut r = Response::new(StreamBody::new(stream).boxed_unsync());
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(r)
}

#[cfg(test)]
mod tests {
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
