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
//!   that the principal exists;
//! - moto keeps no `computeConfig` (its CreateCluster drops it): a test can make a cluster an
//!   Auto Mode cluster with a node role ([`AccessEntries::auto_mode_cluster`]), and the proxy
//!   then adds `computeConfig` to moto's DescribeCluster answer and holds the `EC2` entry with
//!   `AmazonEKSAutoNodePolicy` that EKS makes for that role. That entry cannot be modified: the
//!   stand-in refuses to delete it or change its policies (`InvalidRequestException`).

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

/// The stand-in's entries, by (cluster, principal ARN), and the Auto Mode node role of the
/// clusters made Auto Mode clusters, by cluster.
#[derive(Debug, Default)]
pub struct AccessEntries {
    entries: Mutex<BTreeMap<(String, String), Entry>>,
    compute_node_roles: Mutex<BTreeMap<String, String>>,
}

/// The access policy EKS associates with its own entry for an Auto Mode node role.
const AUTO_NODE_POLICY: &str = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAutoNodePolicy";

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

    /// Makes `cluster` an EKS Auto Mode cluster whose compute configuration names `node_role`,
    /// as `compute_config { node_role_arn = … }` does: DescribeCluster reports it, and the entry
    /// EKS makes for the role (type `EC2`, `AmazonEKSAutoNodePolicy`, no tags) exists.
    pub fn auto_mode_cluster(&self, cluster: &str, node_role: &str) {
        self.compute_node_roles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(cluster.to_string(), node_role.to_string());
        self.lock().insert(
            (cluster.to_string(), node_role.to_string()),
            Entry {
                kind: "EC2".to_string(),
                tags: json!({}),
                policies: [(AUTO_NODE_POLICY.to_string(), json!({"type": "cluster"}))].into(),
            },
        );
    }

    /// The `computeConfig` DescribeCluster reports for `cluster`, when it is an Auto Mode
    /// cluster of the stand-in.
    pub fn compute_config(&self, cluster: &str) -> Option<Json> {
        let roles = self.compute_node_roles.lock().unwrap_or_else(|e| e.into_inner());
        roles.get(cluster).map(
            |role| json!({"enabled": true, "nodePools": ["general-purpose", "system"], "nodeRoleArn": role}),
        )
    }

    fn is_eks_managed(&self, cluster: &str, principal: &str) -> bool {
        self.compute_node_roles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(cluster)
            .is_some_and(|role| role == principal)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The cluster a DescribeCluster request line names (`GET /clusters/<name>`).
pub fn describe_cluster_name(request_line: &str) -> Option<String> {
    let mut words = request_line.split_whitespace();
    if words.next() != Some("GET") {
        return None;
    }
    let path = words.next()?.split('?').next()?;
    let name = path.strip_prefix("/clusters/")?;
    (!name.is_empty() && !name.contains('/')).then(|| decode(name))
}

/// moto's DescribeCluster `response` with `compute_config` added to its cluster (unchanged when
/// it is not a 200 answer with a JSON body).
pub fn with_compute_config(response: Vec<u8>, compute_config: &Json) -> Vec<u8> {
    let Some(split) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return response;
    };
    let (head, body) = (&response[..split], &response[split + 4..]);
    if !head.starts_with(b"HTTP/1.1 200") && !head.starts_with(b"HTTP/1.0 200") {
        return response;
    }
    let Ok(mut json) = serde_json::from_slice::<Json>(body) else {
        return response;
    };
    let Some(cluster) = json.get_mut("cluster").and_then(Json::as_object_mut) else {
        return response;
    };
    cluster.insert("computeConfig".to_string(), compute_config.clone());
    let body = json.to_string();
    let head: Vec<String> = String::from_utf8_lossy(head)
        .lines()
        .filter(|l| !l.to_ascii_lowercase().starts_with("content-length:"))
        .map(str::to_string)
        .collect();
    format!(
        "{}\r\nContent-Length: {}\r\n\r\n{body}",
        head.join("\r\n"),
        body.len()
    )
    .into_bytes()
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
            if m != "GET" && entries.is_eks_managed(cluster, principal) {
                return error(
                    400,
                    "InvalidRequestException",
                    format!(
                        "The access entry of {principal} is managed by EKS for the cluster's compute configuration \
                         and cannot be modified."
                    ),
                );
            }
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
