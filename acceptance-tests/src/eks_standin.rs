//! A stand-in for the EKS access-entry API, answered by the fault proxy in front of moto.
//!
//! moto 5.2.1's EKS backend answers every access-entry and access-policy call with HTTP 404 (it
//! implements clusters, node groups, Fargate profiles and tags only), so the proxy answers the
//! six calls `karpenter_node_role` makes itself, from memory, in the REST-JSON shape of the EKS
//! API: CreateAccessEntry, DescribeAccessEntry, DeleteAccessEntry, AssociateAccessPolicy,
//! ListAssociatedAccessPolicies, DisassociateAccessPolicy. Everything else still goes to moto,
//! including the cluster itself: an access-entry call for a cluster moto does not know answers
//! `ResourceNotFoundException`, as EKS does. What this models and what it does not:
//! - one entry per (cluster, principal); creating a second is `ResourceInUseException` (409);
//! - `type` is kept as sent (`EC2`, `EC2_LINUX`, `STANDARD`), tags too;
//! - associated policies are kept per entry, with their access scope; associating the same
//!   policy again replaces it, as EKS does;
//! - no authentication-mode check (EKS refuses entries on `CONFIG_MAP` clusters) and no check
//!   that the principal exists.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{Value as Json, json};

/// One access entry of the stand-in.
#[derive(Debug, Clone)]
struct Entry {
    kind: String,
    tags: Json,
    policies: BTreeMap<String, Json>,
}

/// The stand-in's entries, by (cluster, principal ARN).
#[derive(Debug, Default)]
pub struct AccessEntries(Mutex<BTreeMap<(String, String), Entry>>);

impl AccessEntries {
    /// The (cluster, principal, type, policy ARNs) of every entry, for test checks.
    pub fn list(&self) -> Vec<(String, String, String, Vec<String>)> {
        self.lock()
            .iter()
            .map(|((c, p), e)| {
                (
                    c.clone(),
                    p.clone(),
                    e.kind.clone(),
                    e.policies.keys().cloned().collect(),
                )
            })
            .collect()
    }

    /// Removes an access policy from an entry, as a change made outside Terraform would.
    pub fn disassociate(&self, cluster: &str, principal: &str, policy: &str) -> bool {
        self.lock()
            .get_mut(&(cluster.to_string(), principal.to_string()))
            .is_some_and(|e| e.policies.remove(policy).is_some())
    }

    /// Deletes an entry, as a change made outside Terraform would.
    pub fn delete(&self, cluster: &str, principal: &str) -> bool {
        self.lock()
            .remove(&(cluster.to_string(), principal.to_string()))
            .is_some()
    }

    /// Adds an entry, as another tool would (type `kind`, no tags, no policies).
    pub fn insert(&self, cluster: &str, principal: &str, kind: &str) {
        self.lock().insert(
            (cluster.to_string(), principal.to_string()),
            Entry {
                kind: kind.to_string(),
                tags: json!({}),
                policies: BTreeMap::new(),
            },
        );
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Entry>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether a request line is an EKS access-entry call (`… /clusters/<name>/access-entries…`).
pub fn is_access_entry_call(request_line: &str) -> bool {
    request_line
        .split_whitespace()
        .nth(1)
        .is_some_and(|path| path.starts_with("/clusters/") && path.contains("/access-entries"))
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An HTTP response in the EKS REST-JSON shape.
pub fn response(status: u16, body: &Json, error_type: Option<&str>) -> Vec<u8> {
    let body = body.to_string();
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        409 => "Conflict",
        _ => "Error",
    };
    let extra = error_type.map_or_else(String::new, |t| format!("x-amzn-ErrorType: {t}\r\n"));
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn error(status: u16, code: &str, message: String) -> Vec<u8> {
    response(status, &json!({"__type": code, "message": message}), Some(code))
}

fn entry_json(cluster: &str, principal: &str, e: &Entry) -> Json {
    let name = principal.rsplit('/').next().unwrap_or_default();
    json!({"accessEntry": {
        "clusterName": cluster,
        "principalArn": principal,
        "accessEntryArn": format!("arn:aws:eks:us-east-1:123456789012:access-entry/{cluster}/role/123456789012/{name}/standin"),
        "type": e.kind,
        "tags": e.tags,
        "kubernetesGroups": [],
        "username": format!("system:node:{{{{EC2PrivateDNSName}}}}"),
        "createdAt": 1_764_000_000,
        "modifiedAt": 1_764_000_000,
    }})
}

/// The answer to an access-entry call; `cluster_exists` asks moto about the cluster.
pub fn answer(
    entries: &AccessEntries,
    request_line: &str,
    body: &[u8],
    cluster_exists: impl Fn(&str) -> bool,
) -> Vec<u8> {
    let mut words = request_line.split_whitespace();
    let method = words.next().unwrap_or_default();
    let target = words.next().unwrap_or_default();
    let path = target.split('?').next().unwrap_or_default();
    let parts: Vec<String> = path.trim_start_matches('/').split('/').map(decode).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let cluster = parts.get(1).copied().unwrap_or_default();
    if !cluster_exists(cluster) {
        return error(
            404,
            "ResourceNotFoundException",
            format!("No cluster found for name: {cluster}."),
        );
    }
    let request: Json = serde_json::from_slice(body).unwrap_or(Json::Null);
    let mut all = entries.lock();
    match (method, &parts[2..]) {
        ("POST", ["access-entries"]) => {
            let principal = request["principalArn"].as_str().unwrap_or_default().to_string();
            let key = (cluster.to_string(), principal.clone());
            if all.contains_key(&key) {
                return error(
                    409,
                    "ResourceInUseException",
                    format!(
                        "The specified access entry resource is already in use on this cluster: {principal}"
                    ),
                );
            }
            let entry = Entry {
                kind: request["type"].as_str().unwrap_or("STANDARD").to_string(),
                tags: request.get("tags").cloned().unwrap_or(json!({})),
                policies: BTreeMap::new(),
            };
            let out = entry_json(cluster, &principal, &entry);
            all.insert(key, entry);
            response(200, &out, None)
        }
        (m, ["access-entries", principal, rest @ ..]) => {
            let key = (cluster.to_string(), principal.to_string());
            let Some(entry) = all.get_mut(&key) else {
                return error(
                    404,
                    "ResourceNotFoundException",
                    format!("The specified access entry resource can't be found: {principal}"),
                );
            };
            match (m, rest) {
                ("GET", []) => response(200, &entry_json(cluster, principal, entry), None),
                ("DELETE", []) => {
                    all.remove(&key);
                    response(200, &json!({}), None)
                }
                ("POST", ["access-policies"]) => {
                    let policy = request["policyArn"].as_str().unwrap_or_default().to_string();
                    let associated = json!({
                        "policyArn": policy,
                        "accessScope": request.get("accessScope").cloned().unwrap_or(json!({"type": "cluster"})),
                        "associatedAt": 1_764_000_000,
                        "modifiedAt": 1_764_000_000,
                    });
                    entry.policies.insert(policy, associated.clone());
                    response(
                        200,
                        &json!({"clusterName": cluster, "principalArn": principal, "associatedAccessPolicy": associated}),
                        None,
                    )
                }
                ("GET", ["access-policies"]) => response(
                    200,
                    &json!({
                        "clusterName": cluster,
                        "principalArn": principal,
                        "associatedAccessPolicies": entry.policies.values().cloned().collect::<Vec<_>>(),
                    }),
                    None,
                ),
                ("DELETE", ["access-policies", policy]) => {
                    entry.policies.remove(*policy);
                    response(200, &json!({}), None)
                }
                _ => error(
                    400,
                    "InvalidRequestException",
                    format!("The stand-in does not model {request_line}"),
                ),
            }
        }
        _ => error(
            400,
            "InvalidRequestException",
            format!("The stand-in does not model {request_line}"),
        ),
    }
}
