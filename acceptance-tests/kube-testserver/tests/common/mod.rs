//! Helpers shared by the integration tests: starting servers, typed handles for the Karpenter
//! kinds, raw requests through a `kube::Client`, and polling with a timeout guard.
#![allow(dead_code)]

use http::{Method, Request};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube_testserver::{Config, ControllerConfig, TestServer};
use serde_json::{Value, json};
use std::time::Duration;

pub fn v1_crds() -> std::path::PathBuf {
    TestServer::shared_crds_dir("v1")
}

pub async fn start_with(cfg: Config) -> TestServer {
    TestServer::start(cfg).await.expect("server starts")
}

pub async fn start_v1() -> (TestServer, kube::Client) {
    start_v1_with(ControllerConfig::default()).await
}

/// A server with the v1 CRDs and the simulated controller set as given, and a client.
pub async fn start_v1_with(controller: ControllerConfig) -> (TestServer, kube::Client) {
    let s = start_with(Config {
        crd_dirs: vec![v1_crds()],
        controller,
        ..Config::default()
    })
    .await;
    let c = s.client().await.expect("client");
    (s, c)
}

pub fn api(
    client: &kube::Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Api::all_with(client.clone(), &ar)
}

pub fn nodepools(client: &kube::Client) -> Api<DynamicObject> {
    api(client, "karpenter.sh", "v1", "NodePool", "nodepools")
}

pub fn nodeclaims(client: &kube::Client) -> Api<DynamicObject> {
    api(client, "karpenter.sh", "v1", "NodeClaim", "nodeclaims")
}

pub fn nodeclasses(client: &kube::Client) -> Api<DynamicObject> {
    api(
        client,
        "karpenter.k8s.aws",
        "v1",
        "EC2NodeClass",
        "ec2nodeclasses",
    )
}

pub fn nodepool_json(name: &str) -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"template": {"spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}},
            "limits": {"cpu": "1000"}}
    })
}

pub fn nodeclass_json(name: &str) -> Value {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": name},
        "spec": {"role": "KarpenterNodeRole-test", "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "test"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "test"}}]}
    })
}

pub fn dynobj(v: Value) -> DynamicObject {
    serde_json::from_value(v).expect("valid object")
}

pub fn to_json(o: &DynamicObject) -> Value {
    serde_json::to_value(o).expect("serializable")
}

/// The `Status` of an API error (panics on other errors).
pub fn status_of(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// A raw request through the client; returns (status, headers, JSON body or Null).
pub async fn raw(
    client: &kube::Client,
    method: Method,
    uri: &str,
    content_type: &str,
    body: &Value,
) -> (u16, http::HeaderMap, Value) {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        serde_json::to_vec(body).expect("json")
    };
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(kube::client::Body::from(bytes))
        .expect("request");
    let resp = client.send(req).await.expect("response");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let b = resp.into_body().collect_bytes().await.expect("body");
    (status, headers, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

/// Poll `f` until it returns `Some`, for at most `secs` seconds.
pub async fn eventually<T, F: FnMut() -> Option<T>>(secs: u64, what: &str, mut f: F) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

pub const GUARD: Duration = Duration::from_secs(30);
