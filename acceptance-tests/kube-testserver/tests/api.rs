//! Behaviour of the test server as seen through a real `kube::Client`: auth, discovery, CRDs and
//! their establishment, custom object CRUD with metadata, server-side apply, watch, validation,
//! the status subresource, finalizers and owner references, the simulated controller, fault
//! injection, the request log and the admin endpoint, and the binary form.

mod common;

use common::*;
use futures_util::StreamExt;
use http::Method;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::wait::{await_condition, conditions};
use kube_testserver::{Config, ControllerConfig, FaultKind, FaultSpec, TestServer};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn token_and_client_certificate_authenticate_and_anything_else_gets_401() {
    let (s, client) = start_v1().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    assert_eq!(crds.list(&ListParams::default()).await.unwrap().items.len(), 3);

    let cert_client = s.client_for_context("kube-testserver-cert").await.unwrap();
    let crds2: Api<CustomResourceDefinition> = Api::all(cert_client);
    assert_eq!(crds2.list(&ListParams::default()).await.unwrap().items.len(), 3);

    let text = std::fs::read_to_string(s.kubeconfig_path())
        .unwrap()
        .replace(s.token(), "wrong-token");
    let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let bad = kube::Client::try_from(cfg).unwrap();
    let (code, _, body) = raw(&bad, Method::GET, "/apis", "application/json", &Value::Null).await;
    assert_eq!(code, 401);
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "Unauthorized");
    assert_eq!(body["code"], 401);
    assert!(s.ca_pem().contains("BEGIN CERTIFICATE"));
    assert!(s.base_url().starts_with("https://127.0.0.1:"));
}

#[tokio::test]
async fn discovery_serves_version_groups_and_resources() {
    let (_s, client) = start_v1().await;
    let v = client.apiserver_version().await.unwrap();
    assert_eq!(v.major, "1");
    let d = kube::discovery::Discovery::new(client.clone())
        .run()
        .await
        .unwrap();
    let groups: Vec<String> = d.groups().map(|g| g.name().to_string()).collect();
    assert!(groups.contains(&"karpenter.sh".to_string()), "{groups:?}");
    assert!(groups.contains(&"karpenter.k8s.aws".to_string()));
    assert!(groups.contains(&"apiextensions.k8s.io".to_string()));
    let (ar, caps) = d
        .get("karpenter.sh")
        .unwrap()
        .recommended_kind("NodePool")
        .unwrap();
    assert_eq!(ar.plural, "nodepools");
    assert_eq!(caps.scope, kube::discovery::Scope::Cluster);
    assert!(
        caps.subresources
            .iter()
            .any(|(r, _)| r.plural == "nodepools/status" || r.plural == "status"),
        "{:?}",
        caps.subresources
    );
    let agg = kube::discovery::Discovery::new(client.clone())
        .run_aggregated()
        .await
        .unwrap();
    let (ar2, caps2) = agg
        .get("karpenter.sh")
        .unwrap()
        .recommended_kind("NodePool")
        .unwrap();
    assert_eq!(ar2.plural, "nodepools");
    assert_eq!(caps2.scope, kube::discovery::Scope::Cluster);
    assert!(
        caps2
            .subresources
            .iter()
            .any(|(r, _)| r.plural.ends_with("status")),
        "{:?}",
        caps2.subresources
    );
    assert!(
        agg.get("karpenter.k8s.aws")
            .unwrap()
            .recommended_kind("EC2NodeClass")
            .is_some()
    );
    assert!(agg.get("apiextensions.k8s.io").is_some());
    let (_, _, api) = raw(&client, Method::GET, "/api", "application/json", &Value::Null).await;
    assert_eq!(api["versions"], json!(["v1"]));
    let (code, _, _) = raw(
        &client,
        Method::GET,
        "/apis/example.com/v1",
        "application/json",
        &Value::Null,
    )
    .await;
    assert_eq!(code, 404);
    let (code, _, root) = raw(
        &client,
        Method::GET,
        "/openapi/v3",
        "application/json",
        &Value::Null,
    )
    .await;
    assert_eq!(code, 200);
    assert!(root["paths"]["apis/karpenter.sh/v1"]["serverRelativeURL"].is_string());
}

#[tokio::test]
async fn loads_all_five_shared_crds() {
    let s = start_with(Config {
        crd_dirs: vec![v1_crds(), TestServer::shared_crds_dir("v1alpha5")],
        ..Config::default()
    })
    .await;
    let client = s.client().await.unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let list = crds.list(&ListParams::default()).await.unwrap();
    let mut names: Vec<String> = list
        .items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "awsnodetemplates.karpenter.k8s.aws",
            "ec2nodeclasses.karpenter.k8s.aws",
            "nodeclaims.karpenter.sh",
            "nodepools.karpenter.sh",
            "provisioners.karpenter.sh"
        ]
    );
    for c in &list.items {
        assert!(
            conditions::is_crd_established().matches_object(Some(c)),
            "{:?}",
            c.metadata.name
        );
    }
    let prov = api(&client, "karpenter.sh", "v1alpha5", "Provisioner", "provisioners");
    let p = dynobj(
        json!({"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": {"name": "legacy"},
        "spec": {"providerRef": {"name": "default"}, "ttlSecondsAfterEmpty": 30}}),
    );
    prov.create(&PostParams::default(), &p).await.unwrap();
}

use kube::runtime::wait::Condition;

#[tokio::test]
async fn crd_kind_is_served_only_after_the_establish_delay() {
    let s = start_with(Config {
        establish_delay: Duration::from_millis(1500),
        ..Config::default()
    })
    .await;
    let client = s.client().await.unwrap();
    let text = std::fs::read_to_string(v1_crds().join("karpenter.sh_nodepools.yaml")).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let waiter = tokio::spawn(await_condition(
        crds.clone(),
        "nodepools.karpenter.sh",
        conditions::is_crd_established(),
    ));
    s.install_crd(&text).unwrap();
    let crd = crds.get("nodepools.karpenter.sh").await.unwrap();
    assert!(!conditions::is_crd_established().matches_object(Some(&crd)));
    let err = status_of(nodepools(&client).list(&ListParams::default()).await.unwrap_err());
    assert_eq!(err.code, 404);
    assert_eq!(err.message, "the server could not find the requested resource");
    let done = tokio::time::timeout(GUARD, waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(conditions::is_crd_established().matches_object(done.as_ref()));
    let conds = done.unwrap().status.unwrap().conditions.unwrap();
    assert!(
        conds
            .iter()
            .any(|c| c.type_ == "NamesAccepted" && c.status == "True")
    );
    assert!(
        nodepools(&client)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn a_crd_created_over_the_api_is_established_and_deleting_it_removes_its_objects() {
    let s = start_with(Config::default()).await;
    let client = s.client().await.unwrap();
    let text = std::fs::read_to_string(v1_crds().join("karpenter.sh_nodepools.yaml")).unwrap();
    let crd: CustomResourceDefinition = serde_saphyr_free_parse(&text);
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let created = crds.create(&PostParams::default(), &crd).await.unwrap();
    assert!(created.metadata.uid.is_some());
    tokio::time::timeout(
        GUARD,
        await_condition(
            crds.clone(),
            "nodepools.karpenter.sh",
            conditions::is_crd_established(),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    nodepools(&client)
        .create(&PostParams::default(), &dynobj(nodepool_json("a")))
        .await
        .unwrap();
    let again = status_of(crds.create(&PostParams::default(), &crd).await.unwrap_err());
    assert_eq!((again.code, again.reason.as_str()), (409, "AlreadyExists"));
    crds.delete("nodepools.karpenter.sh", &DeleteParams::default())
        .await
        .unwrap();
    eventually(5, "CRD gone", || {
        s.object(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "nodepools.karpenter.sh",
        )
        .is_none()
        .then_some(())
    })
    .await;
    assert!(s.object("karpenter.sh", "v1", "nodepools", "a").is_none());
}

/// Parse a CRD from YAML through JSON (the server's own parser is not part of the test's trust).
fn serde_saphyr_free_parse(text: &str) -> CustomResourceDefinition {
    let v: Value = serde_saphyr::from_str(text).unwrap();
    serde_json::from_value(v).unwrap()
}

#[tokio::test]
async fn objects_carry_real_metadata_and_stale_replaces_conflict() {
    let (_s, client) = start_v1().await;
    let np = nodepools(&client);
    let created = to_json(
        &np.create(&PostParams::default(), &dynobj(nodepool_json("default")))
            .await
            .unwrap(),
    );
    let m = &created["metadata"];
    assert!(m["uid"].as_str().unwrap().len() == 36);
    assert_eq!(m["generation"], 1);
    assert!(m["creationTimestamp"].as_str().unwrap().ends_with('Z'));
    let rv1 = m["resourceVersion"].as_str().unwrap().to_string();
    // Defaults from the CRD schema were applied.
    assert_eq!(
        created["spec"]["disruption"]["consolidationPolicy"],
        "WhenEmptyOrUnderutilized"
    );
    assert_eq!(
        created["spec"]["disruption"]["budgets"],
        json!([{"nodes": "10%"}])
    );
    assert_eq!(created["spec"]["template"]["spec"]["expireAfter"], "720h");

    let dup = status_of(
        np.create(&PostParams::default(), &dynobj(nodepool_json("default")))
            .await
            .unwrap_err(),
    );
    assert_eq!((dup.code, dup.reason.as_str()), (409, "AlreadyExists"));

    let mut changed = created.clone();
    changed["spec"]["weight"] = json!(10);
    let replaced = to_json(
        &np.replace("default", &PostParams::default(), &dynobj(changed.clone()))
            .await
            .unwrap(),
    );
    assert_eq!(replaced["metadata"]["generation"], 2);
    assert_ne!(replaced["metadata"]["resourceVersion"], rv1);

    // `changed` still carries the old resourceVersion.
    changed["spec"]["weight"] = json!(20);
    let stale = status_of(
        np.replace("default", &PostParams::default(), &dynobj(changed))
            .await
            .unwrap_err(),
    );
    assert_eq!((stale.code, stale.reason.as_str()), (409, "Conflict"));
    assert!(
        stale.message.contains("the object has been modified"),
        "{}",
        stale.message
    );

    // Replace needs a resourceVersion; apiVersion must match the path.
    let mut unconditional = to_json(&np.get("default").await.unwrap());
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let (code, _, body) = raw(
        &client,
        Method::PUT,
        "/apis/karpenter.sh/v1/nodepools/default",
        "application/json",
        &unconditional,
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(body["details"]["causes"][0]["field"], "metadata.resourceVersion");
    let mut wrong_version = nodepool_json("other");
    wrong_version["apiVersion"] = json!("karpenter.sh/v1beta1");
    let (code, _, body) = raw(
        &client,
        Method::POST,
        "/apis/karpenter.sh/v1/nodepools",
        "application/json",
        &wrong_version,
    )
    .await;
    assert_eq!(code, 400, "{body}");

    // A label change is not a spec change: generation stays, resourceVersion moves.
    let labelled = to_json(
        &np.patch(
            "default",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "a"}}})),
        )
        .await
        .unwrap(),
    );
    assert_eq!(labelled["metadata"]["generation"], 2);
    assert_ne!(
        labelled["metadata"]["resourceVersion"],
        replaced["metadata"]["resourceVersion"]
    );

    // JSON patch.
    let (code, _, body) = raw(
        &client,
        Method::PATCH,
        "/apis/karpenter.sh/v1/nodepools/default",
        "application/json-patch+json",
        &json!([{"op": "replace", "path": "/spec/weight", "value": 30}]),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["weight"], 30);
    assert_eq!(body["metadata"]["generation"], 3);
    let (code, _, _) = raw(
        &client,
        Method::PATCH,
        "/apis/karpenter.sh/v1/nodepools/default",
        "application/strategic-merge-patch+json",
        &json!({}),
    )
    .await;
    assert_eq!(code, 415);

    assert_eq!(np.list(&ListParams::default()).await.unwrap().items.len(), 1);
    assert_eq!(
        np.list(&ListParams::default().labels("team=a"))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    assert_eq!(
        np.list(&ListParams::default().labels("team=b"))
            .await
            .unwrap()
            .items
            .len(),
        0
    );
    let answer = np.delete("default", &DeleteParams::default()).await.unwrap();
    let status = answer
        .right()
        .expect("an immediate deletion is answered with a Status");
    let details = status.details.unwrap();
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("default", "nodepools")
    );
    assert_eq!(details.uid, created["metadata"]["uid"].as_str().unwrap());
    let gone = status_of(np.get("default").await.unwrap_err());
    assert_eq!((gone.code, gone.reason.as_str()), (404, "NotFound"));
    assert_eq!(gone.message, "nodepools.karpenter.sh \"default\" not found");
}

#[tokio::test]
async fn namespaced_custom_objects_work() {
    let s = start_with(Config::default()).await;
    let client = s.client().await.unwrap();
    s.install_crd(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              size: {type: integer, default: 3}\n",
    )
    .unwrap();
    let ar = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let in_a: Api<kube::api::DynamicObject> = Api::namespaced_with(client.clone(), "a", &ar);
    let in_b: Api<kube::api::DynamicObject> = Api::namespaced_with(client.clone(), "b", &ar);
    let w = dynobj(
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}}),
    );
    let created = to_json(&in_a.create(&PostParams::default(), &w).await.unwrap());
    assert_eq!(created["metadata"]["namespace"], "a");
    assert_eq!(created["spec"]["size"], 3);
    in_b.create(&PostParams::default(), &w).await.unwrap();
    let all: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &ar);
    assert_eq!(all.list(&ListParams::default()).await.unwrap().items.len(), 2);
    assert_eq!(in_a.list(&ListParams::default()).await.unwrap().items.len(), 1);
    assert!(s.object_in("example.com", "v1", "widgets", "b", "w").is_some());
}

/// The real namespaced Karpenter kind: CapacityBuffers from the shared CRD are stored per
/// namespace, defaulted and checked by the CRD (its CEL rules included), and the simulated
/// controller reports them with a status the CRD's status schema accepts.
#[tokio::test]
async fn capacity_buffers_are_namespaced_checked_by_their_crd_and_reported_by_the_controller() {
    let s = start_with(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1-alpha")],
        controller: ControllerConfig::karpenter(),
        ..Config::default()
    })
    .await;
    let client = s.client().await.unwrap();
    let ar = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("autoscaling.x-k8s.io", "v1beta1", "CapacityBuffer"),
        "capacitybuffers",
    );
    let ci: Api<kube::api::DynamicObject> = Api::namespaced_with(client.clone(), "ci", &ar);
    let pp = PatchParams::apply("terraform-provider-karpenter").force();
    let buffer = json!({"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
        "metadata": {"name": "runners", "namespace": "ci"},
        "spec": {"podTemplateRef": {"name": "runner"}, "replicas": 3}});
    let stored = to_json(&ci.patch("runners", &pp, &Patch::Apply(&buffer)).await.unwrap());
    assert_eq!(stored["metadata"]["namespace"], "ci");
    assert_eq!(
        stored["spec"]["provisioningStrategy"],
        "buffer.x-k8s.io/active-capacity"
    );
    assert!(
        s.object_in(
            "autoscaling.x-k8s.io",
            "v1beta1",
            "capacitybuffers",
            "default",
            "runners"
        )
        .is_none()
    );

    // The CRD's CEL rule: not both references.
    let mut both = buffer.clone();
    both["metadata"]["name"] = json!("both");
    both["spec"]["scalableRef"] = json!({"kind": "Deployment", "name": "web"});
    let refused = status_of(ci.patch("both", &pp, &Patch::Apply(&both)).await.unwrap_err());
    assert_eq!(refused.code, 422, "{refused:?}");
    assert!(
        refused.message.contains("either PodTemplateRef or ScalableRef"),
        "{}",
        refused.message
    );

    let status = eventually(10, "CapacityBuffer status", || {
        let o = s.object_in(
            "autoscaling.x-k8s.io",
            "v1beta1",
            "capacitybuffers",
            "ci",
            "runners",
        )?;
        o["status"]["conditions"].is_array().then(|| o["status"].clone())
    })
    .await;
    assert_eq!(status["replicas"], 3);
    assert_eq!(status["podTemplateRef"], json!({"name": "runner"}));
    assert_eq!(status["conditions"][0]["type"], "ReadyForProvisioning");
    let current = s
        .object_in(
            "autoscaling.x-k8s.io",
            "v1beta1",
            "capacitybuffers",
            "ci",
            "runners",
        )
        .unwrap();
    let (code, _, body) = raw(
        &client,
        Method::PUT,
        "/apis/autoscaling.x-k8s.io/v1beta1/namespaces/ci/capacitybuffers/runners/status",
        "application/json",
        &current,
    )
    .await;
    assert_eq!(code, 200, "the simulated status passes the CRD: {body}");

    // With a list of namespaces, a write into another one gets NamespaceLifecycle's 404.
    s.set_namespaces(Some(&["default", "ci"]));
    let missing: Api<kube::api::DynamicObject> = Api::namespaced_with(client.clone(), "team-a", &ar);
    let mut elsewhere = buffer.clone();
    elsewhere["metadata"]["namespace"] = json!("team-a");
    let refused = status_of(
        missing
            .patch("runners", &pp, &Patch::Apply(&elsewhere))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (refused.code, refused.message.as_str()),
        (404, "namespaces \"team-a\" not found")
    );
    let details = refused.details.expect("details");
    assert_eq!(
        (details.kind.as_str(), details.name.as_str()),
        ("namespaces", "team-a")
    );
    let (code, _, _) = raw(
        &client,
        Method::GET,
        "/api/v1/namespaces/team-a",
        "",
        &json!(null),
    )
    .await;
    assert_eq!(code, 404);
    let (code, _, _) = raw(&client, Method::GET, "/api/v1/namespaces/ci", "", &json!(null)).await;
    assert_eq!(code, 200);
    // Writes into a listed namespace still work.
    ci.patch("runners", &pp, &Patch::Apply(&buffer)).await.unwrap();
}

#[tokio::test]
async fn server_side_apply_behaves_like_one_manager_applying_its_full_intent() {
    let (s, client) = start_v1().await;
    let np = nodepools(&client);
    let pp = PatchParams::apply("terraform-provider-karpenter").force();
    let mut intent = nodepool_json("ssa");
    intent["spec"]["weight"] = json!(10);
    intent["spec"]["disruption"] = json!({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s"});
    let first = to_json(&np.patch("ssa", &pp, &Patch::Apply(&intent)).await.unwrap());
    assert_eq!(first["metadata"]["generation"], 1);
    let mf = first["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        mf.iter().any(|e| e["manager"] == "terraform-provider-karpenter"
            && e["operation"] == "Apply"
            && e["fieldsV1"]["f:spec"]["f:weight"].is_object()),
        "{mf:?}"
    );
    let rv = first["metadata"]["resourceVersion"].clone();

    // The same intent again is a no-op: nothing changes, not even the resourceVersion.
    let again = to_json(&np.patch("ssa", &pp, &Patch::Apply(&intent)).await.unwrap());
    assert_eq!(again["metadata"]["resourceVersion"], rv);
    assert_eq!(again["metadata"]["generation"], 1);

    // Dropping fields removes them; defaults come back; generation moves once.
    let mut smaller = nodepool_json("ssa");
    smaller["metadata"]["labels"] = json!({"env": "test"});
    let third = to_json(&np.patch("ssa", &pp, &Patch::Apply(&smaller)).await.unwrap());
    assert!(third["spec"].get("weight").is_none(), "{}", third["spec"]);
    assert_eq!(
        third["spec"]["disruption"]["consolidationPolicy"],
        "WhenEmptyOrUnderutilized"
    );
    assert_eq!(third["spec"]["disruption"]["consolidateAfter"], "0s");
    assert_eq!(third["metadata"]["generation"], 2);
    assert_eq!(third["metadata"]["labels"]["env"], "test");
    assert_ne!(third["metadata"]["resourceVersion"], rv);

    // Another manager's field survives our applies; conflicts without force are 409.
    np.patch(
        "ssa",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {"other": "x"}}})),
    )
    .await
    .unwrap();
    let fourth = to_json(&np.patch("ssa", &pp, &Patch::Apply(&smaller)).await.unwrap());
    assert_eq!(fourth["metadata"]["annotations"]["other"], "x");
    let mut clash = smaller.clone();
    clash["metadata"]["annotations"] = json!({"other": "y"});
    let err = status_of(
        np.patch("ssa", &PatchParams::apply("tf2"), &Patch::Apply(&clash))
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert!(
        err.message.starts_with("Apply failed with 1 conflict"),
        "{}",
        err.message
    );

    // Apply through the status subresource changes only status.
    let st = np
        .patch_status(
            "ssa",
            &PatchParams::apply("karpenter").force(),
            &Patch::Apply(
                json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "status": {"nodes": 2}}),
            ),
        )
        .await
        .unwrap();
    let st = to_json(&st);
    assert_eq!(st["status"]["nodes"], 2);
    assert_eq!(st["metadata"]["generation"], 2);
    assert!(s.object("karpenter.sh", "v1", "nodepools", "ssa").is_some());
}

#[tokio::test]
async fn invalid_objects_get_422_with_causes_and_unknown_fields_are_pruned() {
    let (_s, client) = start_v1().await;
    let np = nodepools(&client);
    let mut bad = nodepool_json("bad");
    bad["spec"]["weight"] = json!(500);
    bad["spec"]["template"]["spec"]["requirements"][0]["operator"] = json!("Sometimes");
    bad["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("nodeClassRef");
    let err = status_of(np.create(&PostParams::default(), &dynobj(bad)).await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert!(
        err.message
            .starts_with("NodePool.karpenter.sh \"bad\" is invalid: ["),
        "{}",
        err.message
    );
    let details = err.details.unwrap();
    assert_eq!(details.kind, "NodePool");
    assert_eq!(details.group, "karpenter.sh");
    let fields: Vec<(&str, &str)> = details
        .causes
        .iter()
        .map(|c| (c.field.as_str(), c.reason.as_str()))
        .collect();
    assert!(
        fields.contains(&("spec.weight", "FieldValueInvalid")),
        "{fields:?}"
    );
    assert!(
        fields.contains(&(
            "spec.template.spec.requirements[0].operator",
            "FieldValueNotSupported"
        )),
        "{fields:?}"
    );
    assert!(
        fields.contains(&("spec.template.spec.nodeClassRef", "FieldValueRequired")),
        "{fields:?}"
    );
    let weight = details.causes.iter().find(|c| c.field == "spec.weight").unwrap();
    assert_eq!(
        weight.message,
        "Invalid value: 500: spec.weight in body should be less than or equal to 100"
    );

    // Type errors, patterns and maxItems.
    let mut bad2 = nodepool_json("bad2");
    bad2["spec"]["limits"] = json!({"cpu": "lots"});
    bad2["spec"]["template"]["spec"]["expireAfter"] = json!(5);
    let err = status_of(
        np.create(&PostParams::default(), &dynobj(bad2))
            .await
            .unwrap_err(),
    );
    let causes = err.details.unwrap().causes;
    assert!(
        causes
            .iter()
            .any(|c| c.field == "spec.limits.cpu" && c.message.contains("should match")),
        "{causes:?}"
    );
    assert!(
        causes
            .iter()
            .any(|c| c.field == "spec.template.spec.expireAfter" && c.reason == "FieldValueTypeInvalid"),
        "{causes:?}"
    );

    // Unknown fields: dropped with a warning, or 400 under fieldValidation=Strict.
    let mut extra = nodepool_json("extra");
    extra["spec"]["bogus"] = json!(1);
    let (code, headers, body) = raw(
        &client,
        Method::POST,
        "/apis/karpenter.sh/v1/nodepools",
        "application/json",
        &extra,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert!(body["spec"].get("bogus").is_none());
    assert!(
        headers
            .get("warning")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("unknown field \\\"spec.bogus\\\""),
        "{headers:?}"
    );
    extra["metadata"]["name"] = json!("extra2");
    let (code, _, body) = raw(
        &client,
        Method::POST,
        "/apis/karpenter.sh/v1/nodepools?fieldValidation=Strict",
        "application/json",
        &extra,
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "strict decoding error: unknown field \"spec.bogus\""
    );

    // Bad names.
    let err = status_of(
        np.create(&PostParams::default(), &dynobj(nodepool_json("Not_Valid")))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.details.unwrap().causes[0].field, "metadata.name");
}

#[tokio::test]
async fn status_is_a_separate_subresource() {
    let (_s, client) = start_v1().await;
    let np = nodepools(&client);
    let mut with_status = nodepool_json("s");
    with_status["status"] = json!({"nodes": 5});
    let created = to_json(
        &np.create(&PostParams::default(), &dynobj(with_status))
            .await
            .unwrap(),
    );
    assert!(created.get("status").is_none(), "status is dropped on create");
    let patched = to_json(
        &np.patch_status(
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"nodes": 3}})),
        )
        .await
        .unwrap(),
    );
    assert_eq!(patched["status"]["nodes"], 3);
    assert_eq!(patched["metadata"]["generation"], 1);
    let via_main = to_json(
        &np.patch(
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"nodes": 9}, "spec": {"weight": 4}})),
        )
        .await
        .unwrap(),
    );
    assert_eq!(via_main["status"]["nodes"], 3);
    assert_eq!(via_main["spec"]["weight"], 4);
    let via_status = to_json(
        &np.patch_status(
            "s",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"weight": 50}})),
        )
        .await
        .unwrap(),
    );
    assert_eq!(via_status["spec"]["weight"], 4);
    let (code, _, _) = raw(
        &client,
        Method::GET,
        "/apis/karpenter.sh/v1/nodepools/s/scale2",
        "application/json",
        &Value::Null,
    )
    .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn watch_streams_added_modified_deleted_from_a_resource_version() {
    let (_s, client) = start_v1().await;
    let np = nodepools(&client);
    let rv = np
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = np
        .watch(&WatchParams::default().timeout(20), &rv)
        .await
        .unwrap()
        .boxed();
    np.create(&PostParams::default(), &dynobj(nodepool_json("w")))
        .await
        .unwrap();
    np.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"weight": 2}})),
    )
    .await
    .unwrap();
    np.delete("w", &DeleteParams::default()).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let ev = tokio::time::timeout(GUARD, stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        match ev {
            WatchEvent::Added(o) => seen.push(("ADDED", o.metadata.name.unwrap())),
            WatchEvent::Modified(o) => seen.push(("MODIFIED", o.metadata.name.unwrap())),
            WatchEvent::Deleted(o) => seen.push(("DELETED", o.metadata.name.unwrap())),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(
        seen,
        vec![
            ("ADDED", "w".to_string()),
            ("MODIFIED", "w".to_string()),
            ("DELETED", "w".to_string())
        ]
    );

    // A watch from "0" starts with the current objects.
    np.create(&PostParams::default(), &dynobj(nodepool_json("x")))
        .await
        .unwrap();
    let mut s2 = np
        .watch(&WatchParams::default().timeout(5), "0")
        .await
        .unwrap()
        .boxed();
    let first = tokio::time::timeout(GUARD, s2.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(first, WatchEvent::Added(ref o) if o.metadata.name.as_deref() == Some("x")),
        "{first:?}"
    );
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let (s, client) = start_v1().await;
    let np = nodepools(&client);
    let mut obj = nodepool_json("held");
    obj["metadata"]["finalizers"] = json!(["example.com/hold"]);
    np.create(&PostParams::default(), &dynobj(obj)).await.unwrap();
    let marked = np
        .delete("held", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .expect("object while finalizers remain");
    assert!(marked.metadata.deletion_timestamp.is_some());
    let still = np.get("held").await.unwrap();
    assert!(still.metadata.deletion_timestamp.is_some());
    // New finalizers cannot be added while deleting.
    let err = status_of(
        np.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/hold", "x/y"]}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(err.code, 422);
    np.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(status_of(np.get("held").await.unwrap_err()).code, 404);
    assert!(s.object("karpenter.sh", "v1", "nodepools", "held").is_none());
}

async fn pool_with_claim(client: &kube::Client, name: &str, claim_finalizer: bool) -> (String, String) {
    let pool = to_json(
        &nodepools(client)
            .create(&PostParams::default(), &dynobj(nodepool_json(name)))
            .await
            .unwrap(),
    );
    let uid = pool["metadata"]["uid"].as_str().unwrap().to_string();
    let claim_name = format!("{name}-claim");
    let mut claim = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": claim_name, "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": name,
            "uid": uid, "blockOwnerDeletion": true, "controller": true}]},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "kubernetes.io/arch", "operator": "Exists"}]}});
    if claim_finalizer {
        claim["metadata"]["finalizers"] = json!(["example.com/hold"]);
    }
    nodeclaims(client)
        .create(&PostParams::default(), &dynobj(claim))
        .await
        .unwrap();
    (uid, claim_name)
}

#[tokio::test]
async fn foreground_deletion_waits_for_dependents_and_background_collects_them() {
    let (s, client) = start_v1().await;
    let (_, claim) = pool_with_claim(&client, "fg", true).await;
    nodepools(&client)
        .delete("fg", &DeleteParams::foreground())
        .await
        .unwrap();
    let pool = s
        .object("karpenter.sh", "v1", "nodepools", "fg")
        .expect("pool waits for its dependents");
    assert!(pool["metadata"]["deletionTimestamp"].is_string());
    assert!(
        pool["metadata"]["finalizers"]
            .as_array()
            .unwrap()
            .contains(&json!("foregroundDeletion"))
    );
    let c = s.object("karpenter.sh", "v1", "nodeclaims", &claim).unwrap();
    assert!(c["metadata"]["deletionTimestamp"].is_string());
    assert!(s.patch_object(
        "karpenter.sh",
        "nodeclaims",
        "",
        &claim,
        &json!({"metadata": {"finalizers": null}})
    ));
    assert!(s.object("karpenter.sh", "v1", "nodeclaims", &claim).is_none());
    assert!(s.object("karpenter.sh", "v1", "nodepools", "fg").is_none());

    let (_, claim) = pool_with_claim(&client, "bg", false).await;
    nodepools(&client)
        .delete("bg", &DeleteParams::background())
        .await
        .unwrap();
    assert!(s.object("karpenter.sh", "v1", "nodepools", "bg").is_none());
    assert!(s.object("karpenter.sh", "v1", "nodeclaims", &claim).is_none());

    let (_, claim) = pool_with_claim(&client, "or", false).await;
    nodepools(&client)
        .delete("or", &DeleteParams::orphan())
        .await
        .unwrap();
    let orphan = s
        .object("karpenter.sh", "v1", "nodeclaims", &claim)
        .expect("orphaned dependent stays");
    assert!(orphan["metadata"].get("ownerReferences").is_none());
}

#[tokio::test]
async fn simulated_controller_finalizes_fills_status_and_creates_owned_claims() {
    let mut ctl = ControllerConfig::karpenter();
    ctl.finalizer_removal_delay = Duration::from_millis(300);
    ctl.node_class_status_delay = Duration::from_millis(300);
    let (s, client) = start_v1_with(ctl).await;
    nodeclasses(&client)
        .create(&PostParams::default(), &dynobj(nodeclass_json("default")))
        .await
        .unwrap();
    let status = eventually(10, "EC2NodeClass Ready", || {
        let o = s.object("karpenter.k8s.aws", "v1", "ec2nodeclasses", "default")?;
        let ready = o["status"]["conditions"]
            .as_array()?
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        ready.then(|| o["status"].clone())
    })
    .await;
    assert!(!status["subnets"].as_array().unwrap().is_empty());
    assert!(
        status["securityGroups"][0]["id"]
            .as_str()
            .unwrap()
            .starts_with("sg-")
    );
    assert!(status["amis"][0]["id"].as_str().unwrap().starts_with("ami-"));
    assert!(status["instanceProfile"].is_string());
    // The simulated status is valid under the CRD's own status schema: writing it back
    // through the validating /status endpoint is accepted.
    let current = s
        .object("karpenter.k8s.aws", "v1", "ec2nodeclasses", "default")
        .unwrap();
    let (code, _, body) = raw(
        &client,
        Method::PUT,
        "/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default/status",
        "application/json",
        &current,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let nc = s
        .object("karpenter.k8s.aws", "v1", "ec2nodeclasses", "default")
        .unwrap();
    assert_eq!(
        nc["metadata"]["finalizers"],
        json!(["karpenter.k8s.aws/termination"])
    );

    let np = nodepools(&client);
    np.create(&PostParams::default(), &dynobj(nodepool_json("default")))
        .await
        .unwrap();
    let mut claims = Vec::new();
    for _ in 0..400 {
        claims = nodeclaims(&client)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        if !claims.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(claims.len(), 1, "one NodeClaim owned by the pool");
    assert_eq!(
        claims[0].metadata.owner_references.as_ref().unwrap()[0].kind,
        "NodePool"
    );
    eventually(10, "pool finalizer", || {
        let o = s.object("karpenter.sh", "v1", "nodepools", "default")?;
        (o["metadata"]["finalizers"] == json!(["karpenter.sh/termination"])).then_some(())
    })
    .await;
    np.delete("default", &DeleteParams::foreground()).await.unwrap();
    assert!(
        s.object("karpenter.sh", "v1", "nodepools", "default").is_some(),
        "held by finalizers for a while"
    );
    eventually(10, "pool and claims gone", || {
        (s.object("karpenter.sh", "v1", "nodepools", "default").is_none()
            && s.object(
                "karpenter.sh",
                "v1",
                "nodeclaims",
                claims[0].metadata.name.as_deref()?,
            )
            .is_none())
        .then_some(())
    })
    .await;

    let pool_status_ok = {
        np.create(&PostParams::default(), &dynobj(nodepool_json("checked")))
            .await
            .unwrap();
        let pool = eventually(10, "NodePool Ready", || {
            let o = s.object("karpenter.sh", "v1", "nodepools", "checked")?;
            o["status"]["conditions"].is_array().then_some(o)
        })
        .await;
        let (code, _, body) = raw(
            &client,
            Method::PUT,
            "/apis/karpenter.sh/v1/nodepools/checked/status",
            "application/json",
            &pool,
        )
        .await;
        (code, body)
    };
    assert_eq!(pool_status_ok.0, 200, "{}", pool_status_ok.1);
    // Statuses follow spec changes: observedGeneration catches up with generation.
    np.patch(
        "checked",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"weight": 9}})),
    )
    .await
    .unwrap();
    eventually(10, "observedGeneration 2", || {
        let o = s.object("karpenter.sh", "v1", "nodepools", "checked")?;
        (o["metadata"]["generation"] == 2 && o["status"]["conditions"][0]["observedGeneration"] == 2)
            .then_some(())
    })
    .await;
    nodeclasses(&client)
        .patch(
            "default",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"detailedMonitoring": true}})),
        )
        .await
        .unwrap();
    eventually(10, "EC2NodeClass observedGeneration 2", || {
        let o = s.object("karpenter.k8s.aws", "v1", "ec2nodeclasses", "default")?;
        (o["status"]["conditions"][0]["observedGeneration"] == 2).then_some(())
    })
    .await;
    // Karpenter's own writes: drift-hash annotations and a managedFields entry of its own.
    let checked = s.object("karpenter.sh", "v1", "nodepools", "checked").unwrap();
    assert!(
        checked["metadata"]["annotations"]["karpenter.sh/nodepool-hash"].is_string(),
        "{checked}"
    );
    assert_eq!(
        checked["metadata"]["annotations"]["karpenter.sh/nodepool-hash-version"],
        "v3"
    );
    let managers: Vec<&str> = checked["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert!(managers.contains(&"karpenter"), "{managers:?}");
    s.set_controller(ControllerConfig::default());
    np.create(&PostParams::default(), &dynobj(nodepool_json("plain")))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        s.object("karpenter.sh", "v1", "nodepools", "plain").unwrap()["metadata"]
            .get("finalizers")
            .is_none()
    );
}

#[tokio::test]
async fn injected_faults_answer_like_the_real_server_and_the_log_counts_requests() {
    let (s, retrying) = start_v1().await;
    let mut cfg = s.client_config("kube-testserver").await.unwrap();
    cfg.default_retry = false;
    let client = kube::Client::try_from(cfg).unwrap();
    let np = nodepools(&client);
    s.clear_request_log();
    s.inject_fault(FaultSpec {
        retry_after_secs: 3,
        ..FaultSpec::new(FaultKind::TooManyRequests, 2)
            .method("GET")
            .path_contains("/nodepools")
    });
    let (code, headers, body) = raw(
        &client,
        Method::GET,
        "/apis/karpenter.sh/v1/nodepools",
        "application/json",
        &Value::Null,
    )
    .await;
    assert_eq!(code, 429);
    assert_eq!(headers.get("retry-after").unwrap(), "3");
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(body["details"]["retryAfterSeconds"], 3);
    let e = status_of(np.list(&ListParams::default()).await.unwrap_err());
    assert_eq!(e.code, 429);
    np.list(&ListParams::default()).await.unwrap();

    s.inject_fault(FaultSpec::new(FaultKind::InternalError, 1));
    assert_eq!(
        status_of(np.list(&ListParams::default()).await.unwrap_err()).code,
        500
    );
    s.inject_fault(FaultSpec::new(FaultKind::ServiceUnavailable, 1));
    let e = status_of(np.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (503, "ServiceUnavailable"));
    s.inject_fault(FaultSpec::new(FaultKind::WebhookRefused, 1).method("POST"));
    let e = status_of(
        np.create(&PostParams::default(), &dynobj(nodepool_json("a")))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 500);
    assert!(
        e.message.contains("failed calling webhook") && e.message.contains("connection refused"),
        "{}",
        e.message
    );
    s.inject_fault(FaultSpec::new(FaultKind::DropConnection, 1));
    let dropped = np.list(&ListParams::default()).await.unwrap_err();
    assert!(!matches!(dropped, kube::Error::Api(_)), "{dropped:?}");
    s.inject_fault(FaultSpec::new(FaultKind::Forbidden, 1));
    let e = status_of(np.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
    assert!(
        e.message
            .contains("cannot list resource \"nodepools\" in API group \"karpenter.sh\""),
        "{}",
        e.message
    );
    s.inject_fault(FaultSpec::new(FaultKind::Unauthorized, 1));
    assert_eq!(
        status_of(np.list(&ListParams::default()).await.unwrap_err()).code,
        401
    );
    s.inject_fault(FaultSpec::new(FaultKind::GatewayTimeout, 1));
    let e = status_of(np.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (504, "Timeout"));

    s.set_latency(Duration::from_millis(150));
    np.list(&ListParams::default()).await.unwrap();
    s.set_latency(Duration::ZERO);

    // kube's default client retries 429 after Retry-After and gets through.
    s.inject_fault(FaultSpec::new(FaultKind::TooManyRequests, 1).method("GET"));
    nodepools(&retrying).list(&ListParams::default()).await.unwrap();

    let log = s.request_log();
    let statuses: Vec<u16> = log
        .iter()
        .filter(|r| r.path == "/apis/karpenter.sh/v1/nodepools")
        .map(|r| r.status)
        .collect();
    assert_eq!(
        statuses,
        vec![429, 429, 200, 500, 503, 500, 0, 403, 401, 504, 200, 429, 200],
        "{log:?}"
    );
    assert_eq!(log.iter().filter(|r| r.fault.is_some()).count(), 10);
    assert!(log[log.len() - 3].duration >= Duration::from_millis(150));
    s.clear_request_log();
    assert!(s.request_log().is_empty());
}

#[tokio::test]
async fn a_slow_fault_makes_the_change_at_once_and_answers_late() {
    let (s, _retrying) = start_v1().await;
    let mut cfg = s.client_config("kube-testserver").await.unwrap();
    cfg.default_retry = false;
    let client = kube::Client::try_from(cfg).unwrap();
    let np = nodepools(&client);
    s.inject_fault(FaultSpec::slow(Duration::from_secs(5), 1).method("POST"));
    let create = tokio::spawn(async move {
        np.create(&PostParams::default(), &dynobj(nodepool_json("late")))
            .await
            .map(|_| ())
    });
    // The object is stored while its answer is still held back (bounded wait: a hang guard).
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while s.object("karpenter.sh", "v1", "nodepools", "late").is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the slow create never took effect"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!create.is_finished(), "the answer was not held back");
    create.abort();
    assert_eq!(
        s.request_log()
            .iter()
            .filter(|r| r.fault == Some(FaultKind::Slow))
            .count(),
        0,
        "a held answer is logged when it is sent"
    );
}

async fn http_plain(url: &str, method: &str, path: &str, body: &str) -> (u16, Value) {
    let hostport = url.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(hostport).await.unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tcp.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).to_string();
    let code: u16 = text.split(' ').nth(1).unwrap().parse().unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    (code, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn admin_endpoint_offers_faults_log_crds_and_objects() {
    let s = start_with(Config::default()).await;
    let mut cfg = s.client_config("kube-testserver").await.unwrap();
    cfg.default_retry = false;
    let client = kube::Client::try_from(cfg).unwrap();
    let admin = s.admin_url().unwrap();
    let text = std::fs::read_to_string(v1_crds().join("karpenter.sh_nodepools.yaml")).unwrap();
    let (code, body) = http_plain(&admin, "POST", "/__admin/crds", &text).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["installed"], json!(["nodepools.karpenter.sh"]));
    nodepools(&client)
        .create(&PostParams::default(), &dynobj(nodepool_json("a")))
        .await
        .unwrap();
    let (code, obj) = http_plain(&admin, "GET", "/__admin/objects/karpenter.sh/v1/nodepools/a", "").await;
    assert_eq!(code, 200);
    assert_eq!(obj["metadata"]["name"], "a");
    let (code, patched) = http_plain(
        &admin,
        "PATCH",
        "/__admin/objects/karpenter.sh/v1/nodepools/a",
        r#"{"metadata":{"labels":{"x":"y"}}}"#,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(patched["metadata"]["labels"]["x"], "y");
    let (code, _) = http_plain(
        &admin,
        "POST",
        "/__admin/faults",
        r#"{"kind":"service_unavailable","count":1,"method":"GET"}"#,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(
        status_of(nodepools(&client).get("a").await.unwrap_err()).code,
        503
    );
    let (_, log) = http_plain(&admin, "GET", "/__admin/requests", "").await;
    assert!(
        log.as_array()
            .unwrap()
            .iter()
            .any(|r| r["status"] == 503 && r["fault"] == "service_unavailable"),
        "{log}"
    );
    let (code, _) = http_plain(
        &admin,
        "PUT",
        "/__admin/controller",
        r#"{"enabled":true,"finalizers":{"NodePool":"x.io/f"}}"#,
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = http_plain(
        &admin,
        "DELETE",
        "/__admin/objects/karpenter.sh/v1/nodepools/a",
        "",
    )
    .await;
    assert_eq!(code, 200);
    assert!(s.object("karpenter.sh", "v1", "nodepools", "a").is_none());
    // The same endpoint on the TLS port requires auth like the API.
    let (code, _, _) = raw(
        &client,
        Method::GET,
        "/__admin/requests",
        "application/json",
        &Value::Null,
    )
    .await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn the_binary_writes_a_kubeconfig_and_prints_its_path() {
    let exe = env!("CARGO_BIN_EXE_kube-testserver");
    let mut child = tokio::process::Command::new(exe)
        .arg("--crds")
        .arg(v1_crds())
        .arg("--crds")
        .arg(TestServer::shared_crds_dir("v1alpha5"))
        .args(["--port", "0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(GUARD, tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line))
        .await
        .unwrap()
        .unwrap();
    let path = std::path::PathBuf::from(line.trim());
    assert!(path.is_absolute(), "{line}");
    assert!(path.file_name().unwrap().to_str().unwrap().contains("kubeconfig"));
    let kc = kube::config::Kubeconfig::read_from(&path).unwrap();
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(cfg).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    assert_eq!(crds.list(&ListParams::default()).await.unwrap().items.len(), 5);
    // SIGTERM stops it cleanly, removing its temporary work directory.
    let pid = child.id().unwrap().to_string();
    // The shell's builtin `kill`, so no separate kill binary is needed.
    let killed = tokio::process::Command::new("sh")
        .args(["-c", &format!("kill -TERM {pid}")])
        .status()
        .await
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(GUARD, child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(!path.exists(), "work directory removed on exit");
}

#[test]
fn start_background_serves_while_the_caller_blocks() {
    // CRDs installed later become Established on the server's own runtime, after this delay.
    let s = TestServer::start_background(Config {
        crd_dirs: vec![v1_crds()],
        establish_delay: Duration::from_millis(100),
        ..Config::default()
    })
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kube-testserver"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(!out.status.success());
    s.install_crd(
        &std::fs::read_to_string(
            TestServer::shared_crds_dir("v1alpha5").join("karpenter.sh_provisioners.yaml"),
        )
        .unwrap(),
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let n = rt.block_on(async {
        let client = s.client().await.unwrap();
        let crds: Api<CustomResourceDefinition> = Api::all(client);
        crds.list(&ListParams::default()).await.unwrap().items.len()
    });
    assert_eq!(n, 4);
    let established = |crd: &Value| {
        crd["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
    };
    rt.block_on(eventually(
        10,
        "the background server to mark the CRD provisioners.karpenter.sh Established",
        || {
            s.object(
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                "provisioners.karpenter.sh",
            )
            .filter(established)
        },
    ));
}

#[tokio::test]
async fn kube_watchers_work_with_list_watch_and_streaming_lists() {
    use kube::runtime::watcher;
    let (_s, client) = start_v1().await;
    let np = nodepools(&client);
    np.create(&PostParams::default(), &dynobj(nodepool_json("before")))
        .await
        .unwrap();
    for cfg in [
        watcher::Config::default(),
        watcher::Config::default().streaming_lists(),
    ] {
        let mut w = watcher::watcher(np.clone(), cfg).boxed();
        let mut initial = Vec::new();
        loop {
            match tokio::time::timeout(GUARD, w.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap()
            {
                watcher::Event::InitApply(o) => initial.push(o.metadata.name.unwrap()),
                watcher::Event::InitDone => break,
                _ => {}
            }
        }
        assert!(initial.contains(&"before".to_string()), "{initial:?}");
        let name = format!("after-{}", initial.len());
        np.create(&PostParams::default(), &dynobj(nodepool_json(&name)))
            .await
            .unwrap();
        loop {
            if let watcher::Event::Apply(o) = tokio::time::timeout(GUARD, w.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap()
                && o.metadata.name.as_deref() == Some(name.as_str())
            {
                break;
            }
        }
    }
}

#[test]
fn the_handle_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TestServer>();
    assert_send_sync::<Config>();
}

#[tokio::test]
async fn delete_collection_removes_matching_objects() {
    let (s, client) = start_v1().await;
    let np = nodepools(&client);
    for (name, team) in [("a", "x"), ("b", "x"), ("c", "y")] {
        let mut o = nodepool_json(name);
        o["metadata"]["labels"] = json!({"team": team});
        np.create(&PostParams::default(), &dynobj(o)).await.unwrap();
    }
    np.delete_collection(&DeleteParams::default(), &ListParams::default().labels("team=x"))
        .await
        .unwrap();
    let left: Vec<String> = np
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|o| o.metadata.name.unwrap())
        .collect();
    assert_eq!(left, vec!["c".to_string()]);
    assert!(s.object("karpenter.sh", "v1", "nodepools", "a").is_none());
}

#[tokio::test]
async fn lists_page_with_limit_and_continue() {
    let (_s, client) = start_v1().await;
    let np = nodepools(&client);
    for i in 0..5 {
        np.create(&PostParams::default(), &dynobj(nodepool_json(&format!("p{i}"))))
            .await
            .unwrap();
    }
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut lp = ListParams::default().limit(2);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = np.list(&lp).await.unwrap();
        pages += 1;
        assert!(page.items.len() <= 2);
        names.extend(page.items.into_iter().map(|o| o.metadata.name.unwrap()));
        token = page.metadata.continue_.filter(|c| !c.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, vec!["p0", "p1", "p2", "p3", "p4"]);
}

/// Every v1 minor's CRD set in `versions/` loads; under server-side apply a field that minor's
/// CRD does not declare gets the real server's 500 (no reason, "failed to create typed patch
/// object (/<name>; <group>/<version>, Kind=<Kind>): .<path>: field not declared in schema");
/// create and update honour `fieldValidation` (Strict: 400, Warn: a warning, Ignore: silence).
#[tokio::test]
async fn older_crds_refuse_undeclared_fields_like_the_real_server() {
    let versions = TestServer::shared_crds_dir("versions");
    let mut dirs: Vec<_> = std::fs::read_dir(&versions)
        .expect("versions dir")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 15, "{dirs:?}");
    for dir in &dirs {
        let s = start_with(Config {
            crd_dirs: vec![dir.clone()],
            ..Config::default()
        })
        .await;
        let c = s.client().await.expect("client");
        nodepools(&c)
            .patch(
                "common",
                &PatchParams::apply("t").force(),
                &Patch::Apply(nodepool_json("common")),
            )
            .await
            .unwrap_or_else(|e| panic!("{dir:?}: {e}"));
    }

    let s = start_with(Config {
        crd_dirs: vec![versions.join("v1.0.14")],
        ..Config::default()
    })
    .await;
    let c = s.client().await.expect("client");
    let mut pool = nodepool_json("static");
    pool["spec"]["replicas"] = json!(3);
    let (code, _, body) = raw(
        &c,
        Method::PATCH,
        "/apis/karpenter.sh/v1/nodepools/static?fieldManager=t&force=true",
        "application/apply-patch+yaml",
        &pool,
    )
    .await;
    assert_eq!(code, 500, "{body}");
    assert_eq!(
        body["message"],
        "failed to create typed patch object (/static; karpenter.sh/v1, Kind=NodePool): .spec.replicas: field not declared in schema"
    );
    assert!(body.get("reason").is_none(), "{body}");
    assert_eq!(body["status"], "Failure");
    assert!(s.object("karpenter.sh", "v1", "nodepools", "static").is_none());
    // Two at once: the `errors:` list.
    pool["spec"]["bogus"] = json!(true);
    let (code, _, body) = raw(
        &c,
        Method::PATCH,
        "/apis/karpenter.sh/v1/nodepools/static?fieldManager=t&force=true",
        "application/apply-patch+yaml",
        &pool,
    )
    .await;
    assert_eq!(code, 500, "{body}");
    let message = body["message"].as_str().expect("message");
    assert!(message.contains("): errors:\n  .spec.bogus: field not declared in schema\n  .spec.replicas: field not declared in schema"), "{message}");

    // Create, then update (PUT) under each fieldValidation mode.
    let created = nodepools(&c)
        .create(&PostParams::default(), &dynobj(nodepool_json("put")))
        .await
        .expect("create");
    let mut update = serde_json::to_value(&created).expect("json");
    update["spec"]["replicas"] = json!(2);
    let uri = "/apis/karpenter.sh/v1/nodepools/put";
    let (code, _, body) = raw(
        &c,
        Method::PUT,
        &format!("{uri}?fieldValidation=Strict"),
        "application/json",
        &update,
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["reason"], "BadRequest");
    assert_eq!(
        body["message"],
        "strict decoding error: unknown field \"spec.replicas\""
    );
    let (code, headers, body) = raw(
        &c,
        Method::PUT,
        &format!("{uri}?fieldValidation=Warn"),
        "application/json",
        &update,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert!(body["spec"].get("replicas").is_none(), "{body}");
    assert!(
        headers
            .get("warning")
            .and_then(|w| w.to_str().ok())
            .is_some_and(|w| w.contains("unknown field \\\"spec.replicas\\\"")),
        "{headers:?}"
    );
    update["metadata"]["resourceVersion"] = body["metadata"]["resourceVersion"].clone();
    let (code, headers, body) = raw(
        &c,
        Method::PUT,
        &format!("{uri}?fieldValidation=Ignore"),
        "application/json",
        &update,
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert!(headers.get("warning").is_none(), "{headers:?}");
}

/// A read answers after the simulated controller has reacted to every earlier write, however
/// slow its task is scheduled: what a test observes right after a write does not depend on
/// the machine's load. Here each reaction takes 300 ms, and the NodePool read straight after
/// its create already has the controller's finalizer, status and NodeClaim.
#[tokio::test]
async fn reads_see_the_controllers_reactions_to_earlier_writes_even_when_it_is_slow() {
    let mut ctl = ControllerConfig::karpenter();
    ctl.reaction_delay = Duration::from_millis(300);
    let (_server, client) = start_v1_with(ctl).await;
    let np = nodepools(&client);
    let created = np
        .create(&PostParams::default(), &dynobj(nodepool_json("default")))
        .await
        .unwrap();
    assert!(
        created.data.get("status").is_none(),
        "the write's answer is before any reaction"
    );
    let read = np.get("default").await.unwrap();
    let ready = read.data["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
    assert!(ready, "{:#}", read.data);
    assert_eq!(
        read.metadata.finalizers.as_deref(),
        Some(&["karpenter.sh/termination".to_string()][..])
    );
    let listed = nodeclaims(&client).list(&ListParams::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1, "{:?}", listed.items);
}

/// #53: Nodes are served at `/api/v1/nodes`; a launched NodeClaim's Node is registered by the
/// simulated kubelet and taken over by the running controller as Karpenter does it (finalizer,
/// owner reference, labels); deleting the NodeClaim deletes the Node, whose finalizer the
/// controller then removes. A Node the kubelet registers after the controller stopped gets no
/// finalizer.
#[tokio::test]
async fn launched_claims_get_nodes_registered_as_karpenter_registers_them() {
    let mut ctl = ControllerConfig::karpenter();
    ctl.node_claim_status = true;
    ctl.node_registration = Some(Duration::ZERO);
    ctl.finalizer_removal_delay = Duration::from_millis(200);
    let (s, client) = start_v1_with(ctl.clone()).await;
    let nodes = api(&client, "", "v1", "Node", "nodes");
    let list = |labels: &'static str| {
        let nodes = nodes.clone();
        async move {
            nodes
                .list(&ListParams::default().labels(labels))
                .await
                .unwrap()
                .items
        }
    };
    assert!(list("").await.is_empty());
    nodepools(&client)
        .create(&PostParams::default(), &dynobj(nodepool_json("default")))
        .await
        .unwrap();
    let mut registered = Vec::new();
    for _ in 0..400 {
        registered = list("karpenter.sh/registered=true").await;
        if !registered.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let node = to_json(&registered.pop().expect("a registered Node"));
    let claim = nodeclaims(&client)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .remove(0);
    assert_eq!(node["apiVersion"], "v1");
    assert_eq!(
        node["metadata"]["finalizers"],
        json!(["karpenter.sh/termination"])
    );
    assert_eq!(node["metadata"]["labels"]["karpenter.sh/nodepool"], "default");
    assert_eq!(node["spec"]["providerID"], claim.data["status"]["providerID"]);
    assert_eq!(node["metadata"]["name"], claim.data["status"]["nodeName"]);
    assert_eq!(
        node["spec"]["taints"],
        json!([]),
        "the unregistered taint is removed"
    );
    let owner = &node["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "NodeClaim");
    assert_eq!(owner["blockOwnerDeletion"], true);
    assert_eq!(owner["uid"].as_str(), claim.metadata.uid.as_deref());
    // Deleting the NodeClaim: Karpenter deletes the Node, then removes both finalizers.
    let claim_name = claim.metadata.name.clone().unwrap();
    nodeclaims(&client)
        .delete(&claim_name, &DeleteParams::default())
        .await
        .unwrap();
    for _ in 0..400 {
        let claims = nodeclaims(&client)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        if list("").await.is_empty() && claims.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(list("").await.is_empty(), "the Node is gone with its NodeClaim");
    // Karpenter stops right after launching a NodeClaim; its kubelet registers the Node later.
    let mut slow = ctl;
    slow.node_registration = Some(Duration::from_millis(300));
    s.set_controller(slow);
    nodepools(&client)
        .create(&PostParams::default(), &dynobj(nodepool_json("other")))
        .await
        .unwrap();
    nodeclaims(&client).list(&ListParams::default()).await.unwrap();
    s.stop_controller(false);
    let mut unregistered = Vec::new();
    for _ in 0..400 {
        unregistered = list("karpenter.sh/nodepool=other").await;
        if !unregistered.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let node = unregistered.pop().expect("the kubelet registers the Node");
    assert_eq!(node.metadata.finalizers, None, "no Karpenter to register it");
    assert_eq!(node.metadata.owner_references, None);
}
