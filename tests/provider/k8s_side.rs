//! The provider's Kubernetes side against the Kubernetes API test server, through a real
//! `kube::Client`: the CRD gate (delayed CRDs, one wait shared by many callers), server-side
//! apply with transient faults and fail-fast on 422, deletion that waits for finalizers, and
//! the same calls for a namespaced kind (CapacityBuffer).

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DynamicObject};
use kube::runtime::wait::await_condition;
use kube_testserver::{Config, ControllerConfig, FaultKind, FaultSpec, TestServer};
use serde_json::json;
use terraform_provider_karpenter::k8s::gate::CrdGate;
use terraform_provider_karpenter::k8s::{KubeError, apply, kinds, wait};
use tokio::time::Instant;

fn deadline(secs: u64) -> Instant {
    Instant::now() + Duration::from_secs(secs)
}

/// Waits, on a watch of the object, until Karpenter's controller in the test server has put
/// its finalizer on the node class `name`; panics, naming what it waited for, after `secs`.
async fn finalizer_added(client: &kube::Client, name: &str, secs: u64) {
    const FINALIZER: &str = "karpenter.k8s.aws/termination";
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &kinds::EC2_NODE_CLASS.api_resource());
    let has_it = |o: Option<&DynamicObject>| {
        o.and_then(|o| o.metadata.finalizers.as_ref())
            .is_some_and(|f| f.iter().any(|f| f == FINALIZER))
    };
    match tokio::time::timeout(Duration::from_secs(secs), await_condition(api, name, has_it)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => panic!("watching node class {name} for the finalizer {FINALIZER}: {e}"),
        Err(_) => panic!(
            "the controller did not add the finalizer {FINALIZER} to node class {name} within {secs} s"
        ),
    }
}

fn node_class(name: &str) -> serde_json::Value {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "role": "KarpenterNodeRole-demo",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_waits_for_crds_registered_later_with_one_shared_wait() {
    let server = TestServer::start(Config {
        establish_delay: Duration::from_millis(300),
        ..Config::default()
    })
    .await
    .expect("server");
    let client = server.client().await.expect("client");
    let gate = Arc::new(CrdGate::new());
    let mut waiters = Vec::new();
    for _ in 0..20 {
        let (gate, client) = (gate.clone(), client.clone());
        waiters.push(tokio::spawn(async move {
            gate.ensure(&client, &kinds::EC2_NODE_CLASS, deadline(30)).await
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        waiters.iter().all(|w| !w.is_finished()),
        "the gate opened before the CRD existed"
    );
    server
        .install_crds_from_dir(TestServer::shared_crds_dir("v1"))
        .expect("install CRDs");
    for w in waiters {
        w.await
            .expect("join")
            .expect("gate opens once the CRD is established");
    }
    assert_eq!(gate.waits(), 1, "one wait shared by every caller");
    // Once open, the gate answers without asking the server again.
    server.clear_request_log();
    gate.ensure(&client, &kinds::EC2_NODE_CLASS, deadline(5))
        .await
        .expect("open");
    assert!(server.request_log().is_empty(), "{:?}", server.request_log());
    // Writes work right away.
    apply::apply(
        &client,
        &kinds::EC2_NODE_CLASS,
        None,
        "default",
        &node_class("default"),
        None,
        deadline(10),
    )
    .await
    .expect("apply");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_times_out_with_a_message_that_says_what_to_do() {
    let server = TestServer::start(Config::default()).await.expect("server");
    let client = server.client().await.expect("client");
    let err = CrdGate::new()
        .ensure(
            &client,
            &kinds::NODE_POOL,
            Instant::now() + Duration::from_millis(800),
        )
        .await
        .expect_err("no CRD ever appears");
    let text = err.to_string();
    assert!(
        text.contains("nodepools.karpenter.sh") && text.contains("timeouts.create"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_rides_out_transient_faults_and_fails_fast_on_invalid() {
    let server = TestServer::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        ..Config::default()
    })
    .await
    .expect("server");
    let client = server.client().await.expect("client");
    for kind in [
        FaultKind::TooManyRequests,
        FaultKind::InternalError,
        FaultKind::WebhookRefused,
        FaultKind::DropConnection,
    ] {
        server.inject_fault(FaultSpec::new(kind, 1).method("PATCH"));
    }
    let stored = apply::apply(
        &client,
        &kinds::EC2_NODE_CLASS,
        None,
        "faulty",
        &node_class("faulty"),
        None,
        deadline(60),
    )
    .await
    .expect("apply converges through the faults");
    assert_eq!(stored.metadata.name.as_deref(), Some("faulty"));
    let patches: Vec<u16> = server
        .request_log()
        .iter()
        .filter(|r| r.method == "PATCH")
        .map(|r| r.status)
        .collect();
    assert_eq!(patches.len(), 5, "four faults then success: {patches:?}");
    assert!(matches!(patches.last(), Some(200 | 201)), "{patches:?}");

    let mut invalid = node_class("invalid");
    invalid["spec"]["metadataOptions"] = json!({"httpTokens": "sometimes"});
    server.clear_request_log();
    let err = apply::apply(
        &client,
        &kinds::EC2_NODE_CLASS,
        None,
        "invalid",
        &invalid,
        None,
        deadline(60),
    )
    .await
    .expect_err("422");
    assert_eq!(err.code(), Some(422), "{err}");
    assert_eq!(server.request_log().len(), 1, "a 422 is not retried");
    match err {
        KubeError::Api(status) => {
            let causes = status.details.map(|d| d.causes).unwrap_or_default();
            assert!(
                causes
                    .iter()
                    .any(|c| c.field.contains("metadataOptions.httpTokens")),
                "{causes:?}"
            );
        }
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_waits_for_finalizers_and_times_out_naming_them() {
    let mut controller = ControllerConfig::karpenter();
    controller.finalizer_removal_delay = Duration::from_millis(700);
    let server = TestServer::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller,
        ..Config::default()
    })
    .await
    .expect("server");
    let client = server.client().await.expect("client");
    apply::apply(
        &client,
        &kinds::EC2_NODE_CLASS,
        None,
        "a",
        &node_class("a"),
        None,
        deadline(10),
    )
    .await
    .expect("apply a");
    finalizer_added(&client, "a", 10).await;
    wait::delete_and_wait(&client, &kinds::EC2_NODE_CLASS, None, "a", &[], deadline(30))
        .await
        .expect("deleted");
    assert!(
        server
            .object("karpenter.k8s.aws", "v1", "ec2nodeclasses", "a")
            .is_none()
    );
    // Already gone is success.
    wait::delete_and_wait(&client, &kinds::EC2_NODE_CLASS, None, "a", &[], deadline(5))
        .await
        .expect("already gone");

    let mut slow = ControllerConfig::karpenter();
    slow.finalizer_removal_delay = Duration::from_secs(3600);
    server.set_controller(slow);
    apply::apply(
        &client,
        &kinds::EC2_NODE_CLASS,
        None,
        "b",
        &node_class("b"),
        None,
        deadline(10),
    )
    .await
    .expect("apply b");
    finalizer_added(&client, "b", 10).await;
    let err = wait::delete_and_wait(
        &client,
        &kinds::EC2_NODE_CLASS,
        None,
        "b",
        &[],
        Instant::now() + Duration::from_secs(1),
    )
    .await
    .expect_err("finalizer never removed");
    let text = err.to_string();
    assert!(text.contains("karpenter.k8s.aws/termination"), "{text}");
}

/// A namespaced kind goes through the same calls, addressed by namespace: apply writes it into
/// its namespace, get finds it only there, delete removes it from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaced_objects_are_applied_read_and_deleted_in_their_namespace() {
    let server = TestServer::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1-alpha")],
        ..Config::default()
    })
    .await
    .expect("server");
    let client = server.client().await.expect("client");
    let kind = kinds::CAPACITY_BUFFER;
    CrdGate::new()
        .ensure(&client, &kind, deadline(10))
        .await
        .expect("CapacityBuffer CRD served");
    let buffer = json!({
        "apiVersion": "autoscaling.x-k8s.io/v1beta1",
        "kind": "CapacityBuffer",
        "metadata": {"name": "runners", "namespace": "ci"},
        "spec": {"podTemplateRef": {"name": "runner"}, "replicas": 2}
    });
    let stored = apply::apply(&client, &kind, Some("ci"), "runners", &buffer, None, deadline(10))
        .await
        .expect("apply");
    assert_eq!(stored.metadata.namespace.as_deref(), Some("ci"));
    let on_server = server
        .object_in(
            "autoscaling.x-k8s.io",
            "v1beta1",
            "capacitybuffers",
            "ci",
            "runners",
        )
        .expect("stored in ci");
    assert_eq!(on_server["spec"]["replicas"], 2);
    assert_eq!(
        on_server["spec"]["provisioningStrategy"], "buffer.x-k8s.io/active-capacity",
        "the CRD default"
    );
    let other = apply::get(&client, &kind, Some("default"), "runners", deadline(5))
        .await
        .expect("get");
    assert!(other.is_none(), "not in another namespace");
    let found = apply::get(&client, &kind, Some("ci"), "runners", deadline(5))
        .await
        .expect("get")
        .expect("found in ci");
    assert_eq!(found.metadata.name.as_deref(), Some("runners"));
    wait::delete_and_wait(&client, &kind, Some("ci"), "runners", &[], deadline(10))
        .await
        .expect("deleted");
    assert!(
        server
            .object_in(
                "autoscaling.x-k8s.io",
                "v1beta1",
                "capacitybuffers",
                "ci",
                "runners"
            )
            .is_none()
    );
}
