//! API discovery: `/version`, the legacy and aggregated group and resource lists, and the
//! OpenAPI v3 document of the served types.

use std::collections::BTreeMap;

use http::{Request, header};
use hyper::body::Incoming;
use serde_json::{Value, json};

use crate::store::{CRD_GROUP, ResourceType, State, type_from_crd};

pub(super) fn version_info() -> Value {
    json!({
        "major": "1", "minor": "32", "gitVersion": "v1.32.0", "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0",
        "compiler": "gc", "platform": "linux/amd64", "emulationMajor": "1", "emulationMinor": "32",
        "minCompatibilityMajor": "1", "minCompatibilityMinor": "31"
    })
}
/// Version priority as Kubernetes sorts versions (GA > beta > alpha, higher numbers first).
pub(super) fn version_rank(v: &str) -> (u8, u32, u32) {
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
pub(super) fn served_groups(st: &State) -> BTreeMap<String, Vec<String>> {
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
pub(super) fn group_json(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({"name": name, "versions": vs, "preferredVersion": vs.first().cloned().unwrap_or(Value::Null)})
}
pub(super) fn resource_entries(rt: &ResourceType) -> Vec<Value> {
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
/// Whether the client prefers aggregated discovery (`apidiscovery.k8s.io/v2`).
pub(super) fn wants_aggregated(req: &Request<Incoming>) -> bool {
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
pub(super) fn resource_discovery(rt: &ResourceType) -> Value {
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
pub(super) fn aggregated_discovery(st: &State, core: bool) -> Value {
    let items: Vec<Value> = if core {
        vec![
            json!({"metadata": {"name": ""}, "versions": [{"version": "v1", "freshness": "Current", "resources": [
            {"resource": "namespaces", "responseKind": {"group": "", "version": "v1", "kind": "Namespace"}, "scope": "Cluster",
             "singularResource": "namespace", "verbs": ["get", "list"], "shortNames": ["ns"]},
            resource_discovery(&ResourceType::node())]}]}),
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
pub(super) fn openapi_doc(types: &[ResourceType]) -> Value {
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
