//! #19 for the Kubernetes kinds, at the protocol level: resource identity, list resources and
//! generated configuration, driven as Terraform 1.14/1.15 drives them (see `protocol/mod.rs`)
//! over the real plugin binary with mTLS, against the Kubernetes API test server.
//!
//! Objects are made as people made them before this provider: with kubectl (server-side
//! apply by another field manager, server defaults filled in) and then edited by Karpenter
//! (the simulated controller writes status and its annotations). For each kind that the
//! listing finds, the generated configuration, planned against the imported state, plans no
//! change; identities are valid, unchanged by refresh and update, and equal whether the object
//! was imported by ID or by identity.

use crate::protocol;

use crate::protocol::{Session, attribute_names, has_errors, text, value};
use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use serde_json::{Value as Json, json};
use terraform_provider_karpenter::k8s::{Kind, kinds};
use terraform_provider_karpenter::terraform::plugin::proto::tfplugin6 as pb;
use terraform_provider_karpenter::terraform::tfvalue::Value;

fn provider_config(cluster: &Cluster) -> Json {
    json!({"kubernetes": {
        "host": cluster.server.base_url(),
        "cluster_ca_certificate": cluster.server.ca_pem(),
        "token": cluster.server.token(),
    }})
}

/// Creates `manifest`, an object of `kind`, as `kubectl apply --server-side` would.
async fn kubectl_apply(cluster: &Cluster, kind: &Kind, manifest: Json) {
    let client = cluster.server.client().await.expect("client");
    let ar = kind.api_resource();
    let name = manifest["metadata"]["name"].as_str().expect("name").to_string();
    let api: kube::Api<kube::core::DynamicObject> = match manifest["metadata"]["namespace"].as_str() {
        Some(ns) => kube::Api::namespaced_with(client, ns, &ar),
        None => kube::Api::all_with(client, &ar),
    };
    api.patch(
        &name,
        &kube::api::PatchParams::apply("kubectl").force(),
        &kube::api::Patch::Apply(&manifest),
    )
    .await
    .unwrap_or_else(|e| panic!("kubectl apply {} {name}: {e}", kind.kind));
}

fn node_pool(name: &str, labels: Json) -> Json {
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]
            }},
            "limits": {"cpu": "1000"}
        }
    })
}

fn node_class(name: &str) -> Json {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "role": "KarpenterNodeRole-demo",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
        }
    })
}

fn names(listed: &[protocol::Listed]) -> Vec<&str> {
    listed.iter().map(|l| l.display_name.as_str()).collect()
}

fn identity(session: &Session, type_name: &str, json: Json) -> Value {
    value(&session.identity_type(type_name), json)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_resource_type_declares_an_identity_and_a_list_resource() {
    let cluster = Cluster::with_v1_crds();
    let mut session = Session::start(provider_config(&cluster)).await;
    let resources: Vec<&String> = session.schema.resource_schemas.keys().collect();
    assert_eq!(resources.len(), 10, "{resources:?}");
    for type_name in &resources {
        assert!(
            session.identities.contains_key(*type_name),
            "{type_name} has no identity schema"
        );
        assert!(
            session.schema.list_resource_schemas.contains_key(*type_name),
            "{type_name} has no list resource"
        );
        let id = &session.identities[*type_name];
        assert!(
            id.identity_attributes.iter().any(|a| a.required_for_import),
            "{type_name}: an identity needs an attribute required for import"
        );
        assert!(
            id.identity_attributes
                .iter()
                .all(|a| a.required_for_import != a.optional_for_import && !a.description.is_empty()),
            "{type_name}: every identity attribute is either required or optional, and described"
        );
    }
    // Every list resource is a managed resource type with an identity (Terraform refuses a list
    // resource whose resource type has no identity schema).
    for type_name in session.schema.list_resource_schemas.keys() {
        assert!(session.identities.contains_key(type_name), "{type_name}");
    }
    let kube_kinds = [
        "karpenter_node_pool",
        "karpenter_ec2_node_class",
        "karpenter_eks_node_class",
        "karpenter_provisioner",
        "karpenter_node_template",
        "karpenter_node_overlay",
    ];
    for kind in kube_kinds {
        let attrs: Vec<&str> = session.identities[kind]
            .identity_attributes
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(attrs, ["name"], "{kind}");
    }
    let buffer: Vec<&str> = session.identities["karpenter_capacity_buffer"]
        .identity_attributes
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(buffer, ["name", "namespace"]);
    let metadata = session
        .client
        .get_metadata(pb::get_metadata::Request {})
        .await
        .expect("GetMetadata")
        .into_inner();
    assert_eq!(metadata.list_resources.len(), 10);
    assert!(
        metadata
            .server_capabilities
            .expect("capabilities")
            .generate_resource_config
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_made_with_kubectl_are_listed_imported_by_identity_and_plan_empty() {
    let cluster = Cluster::with_v1_crds();
    kubectl_apply(&cluster, &kinds::EC2_NODE_CLASS, node_class("default")).await;
    for (name, labels) in [
        ("default", json!({"team": "platform"})),
        ("gpu", json!({"team": "ml"})),
        ("batch", json!({})),
    ] {
        kubectl_apply(&cluster, &kinds::NODE_POOL, node_pool(name, labels)).await;
    }
    // Karpenter's own writes (status, its annotations) are there before the import.
    cluster.eventually("the node class to be reported ready", || {
        cluster
            .node_class("default")
            .is_some_and(|o| o["status"]["conditions"].is_array())
    });
    let mut s = Session::start(provider_config(&cluster)).await;
    let np = "karpenter_node_pool";

    let (all, diags) = s.list(np, json!({}), true, 100).await;
    assert!(diags.is_empty(), "{}", text(&diags));
    assert_eq!(names(&all), ["batch", "default", "gpu"], "name order");
    for listed in &all {
        assert_eq!(
            listed.identity,
            identity(&s, np, json!({"name": listed.display_name}))
        );
        s.assert_generated_config_plans_empty(np, listed).await;
    }
    let (classes, _) = s.list("karpenter_ec2_node_class", json!({}), true, 100).await;
    assert_eq!(names(&classes), ["default"]);
    s.assert_generated_config_plans_empty("karpenter_ec2_node_class", &classes[0])
        .await;

    // Filters: server-side label selector, name prefix; no state unless asked for; limit.
    let (ml, _) = s.list(np, json!({"label_selector": "team=ml"}), false, 100).await;
    assert_eq!(names(&ml), ["gpu"]);
    assert!(ml[0].state.is_none());
    let (prefixed, _) = s.list(np, json!({"name_prefix": "de"}), false, 100).await;
    assert_eq!(names(&prefixed), ["default"]);
    let (none, diags) = s
        .list(np, json!({"label_selector": "team=nobody"}), true, 100)
        .await;
    assert!(none.is_empty() && diags.is_empty(), "{none:?} {}", text(&diags));
    // The provider itself stops at the limit: the whole stream holds one result.
    assert_eq!(s.events_sent(np, 1).await, 1, "limit = 1 sends one result");
    assert_eq!(s.events_sent(np, 0).await, 3, "no limit sends all");

    // Import by identity gives what import by ID gives, with the same identity.
    let default_id = identity(&s, np, json!({"name": "default"}));
    let by_identity = s
        .import_by_identity(np, &default_id)
        .await
        .expect("import by identity");
    let by_id = s.import_by_id(np, "default").await.expect("import by id");
    assert_eq!(by_identity, by_id);
    assert_eq!(by_identity.1, default_id);

    // An update keeps the identity: planned, applied, and refreshed.
    let (state, id) = by_identity;
    let mut config = s.generate(np, &state).await;
    if let Value::Object(fields) = &mut config {
        let labels = Value::Map([("team".to_string(), Value::string("data"))].into());
        fields.insert(
            "metadata".into(),
            Value::object([("labels", labels), ("annotations", Value::Null)]),
        );
    }
    let (planned, planned_id, replace, diags) = s.plan(np, &state, &config, &id).await;
    assert!(!has_errors(&diags), "{}", text(&diags));
    assert!(replace.is_empty(), "{replace:?}");
    assert_ne!(planned, state, "the label change is planned");
    assert_eq!(planned_id, id, "an update plans the identity it had");
    let (applied, applied_id, diags) = s.apply(np, &state, &planned, &config, &planned_id).await;
    assert!(!has_errors(&diags), "{}", text(&diags));
    assert_eq!(applied_id, id, "an update applies the identity it had");
    let (_, read_id) = s.read(np, &applied, &applied_id).await.expect("refresh");
    assert_eq!(read_id, id);
    assert_eq!(
        cluster.node_pool("default").expect("pool")["metadata"]["labels"]["team"],
        "data"
    );

    // A create returns the new object's identity, wholly known.
    let mut fresh = config.clone();
    if let Value::Object(fields) = &mut fresh {
        fields.insert("name".into(), Value::string("fresh"));
    }
    let (planned, _, _, diags) = s.plan(np, &Value::Null, &fresh, &Value::Null).await;
    assert!(!has_errors(&diags), "{}", text(&diags));
    let (_, created_id, diags) = s.apply(np, &Value::Null, &planned, &fresh, &Value::Null).await;
    assert!(!has_errors(&diags), "{}", text(&diags));
    s.assert_valid_identity(np, &created_id);
    assert_eq!(created_id, identity(&s, np, json!({"name": "fresh"})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_requests_that_cannot_be_served_are_diagnostics() {
    let cluster = Cluster::with_v1_crds();
    let mut s = Session::start(provider_config(&cluster)).await;
    let np = "karpenter_node_pool";

    // Importing by an identity without its required attribute, or naming nothing.
    let err = s
        .import_by_identity(np, &identity(&s, np, json!({})))
        .await
        .expect_err("no name");
    assert!(err.contains("Incomplete resource identity"), "{err}");
    let err = s
        .import_by_identity(np, &identity(&s, np, json!({"name": "absent"})))
        .await
        .expect_err("absent");
    assert!(err.contains("non-existent"), "{err}");

    // A list configuration with an empty filter is refused on that attribute, by its path in
    // the list block (Terraform resolves it there: `config { label_selector }`).
    let diags = s.validate_list(np, json!({"label_selector": ""})).await;
    assert!(has_errors(&diags), "{}", text(&diags));
    assert_eq!(
        attribute_names(&diags[0]),
        ["config", "label_selector"],
        "{diags:?}"
    );
    // A negative limit is refused on the block's own `limit`.
    let diags = s.validate_list_with_limit(np, json!({}), Some(-1)).await;
    assert!(has_errors(&diags), "{}", text(&diags));
    assert_eq!(attribute_names(&diags[0]), ["limit"], "{diags:?}");
    assert!(!has_errors(
        &s.validate_list_with_limit(np, json!({}), Some(0)).await
    ));
    assert!(!has_errors(
        &s.validate_list(np, json!({"name_prefix": "team-"})).await
    ));

    // A label selector the API server refuses ends the listing with its error.
    let (listed, diags) = s.list(np, json!({"label_selector": "a in (b"}), false, 10).await;
    assert!(listed.is_empty());
    assert!(has_errors(&diags), "{}", text(&diags));

    // A `moved {}` from kubectl_manifest hands over the identity with the state.
    let yaml = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: moved\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n      requirements: []\n";
    let moved = s
        .client
        .move_resource_state(pb::move_resource_state::Request {
            source_provider_address: "registry.terraform.io/gavinbunney/kubectl".into(),
            source_type_name: "kubectl_manifest".into(),
            source_schema_version: 1,
            source_state: Some(pb::RawState {
                json: json!({"yaml_body": yaml}).to_string().into_bytes(),
                flatmap: Default::default(),
            }),
            target_type_name: np.into(),
            ..Default::default()
        })
        .await
        .expect("MoveResourceState")
        .into_inner();
    assert!(!has_errors(&moved.diagnostics), "{}", text(&moved.diagnostics));
    let data = moved
        .target_identity
        .and_then(|i| i.identity_data)
        .expect("target identity");
    let moved_identity = terraform_provider_karpenter::terraform::tfvalue::msgpack::decode(
        &data.msgpack,
        &s.identity_type(np),
    )
    .expect("decode");
    assert_eq!(moved_identity, identity(&s, np, json!({"name": "moved"})));

    // Stored identities are upgraded as they are; a newer version is refused.
    for (version, json, ok) in [
        (0, r#"{"name":"default"}"#, true),
        (1, r#"{"name":"default"}"#, false),
    ] {
        let r = s
            .client
            .upgrade_resource_identity(pb::upgrade_resource_identity::Request {
                type_name: np.into(),
                version,
                raw_identity: Some(pb::RawState {
                    json: json.as_bytes().to_vec(),
                    flatmap: Default::default(),
                }),
            })
            .await
            .expect("UpgradeResourceIdentity")
            .into_inner();
        assert_eq!(
            !has_errors(&r.diagnostics),
            ok,
            "version {version}: {}",
            text(&r.diagnostics)
        );
        if ok {
            let data = r
                .upgraded_identity
                .and_then(|i| i.identity_data)
                .expect("identity");
            let ty = s.identity_type(np);
            let v = terraform_provider_karpenter::terraform::tfvalue::msgpack::decode(&data.msgpack, &ty)
                .expect("decode");
            assert_eq!(v, identity(&s, np, json!({"name": "default"})));
        }
    }

    // A kind the cluster does not serve (NodeOverlay before Karpenter v1.7) lists nothing,
    // with a warning that says why, and no error that would end the query.
    let (listed, diags) = s.list("karpenter_node_overlay", json!({}), true, 10).await;
    assert!(listed.is_empty());
    assert!(!has_errors(&diags) && !diags.is_empty(), "{}", text(&diags));
    assert!(text(&diags).contains("not installed"), "{}", text(&diags));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaced_capacity_buffers_are_listed_per_namespace() {
    let cluster = Cluster::with_alpha_crds();
    for (namespace, name) in [("ci", "runners"), ("default", "web")] {
        let manifest = json!({
            "apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"podTemplateRef": {"name": "runner"}, "replicas": 2}
        });
        kubectl_apply(&cluster, &kinds::CAPACITY_BUFFER, manifest).await;
    }
    let mut s = Session::start(provider_config(&cluster)).await;
    let cb = "karpenter_capacity_buffer";
    let (all, diags) = s.list(cb, json!({}), true, 100).await;
    assert!(!has_errors(&diags), "{}", text(&diags));
    assert_eq!(names(&all), ["ci/runners", "default/web"]);
    assert_eq!(
        all[0].identity,
        identity(&s, cb, json!({"name": "runners", "namespace": "ci"}))
    );
    for listed in &all {
        s.assert_generated_config_plans_empty(cb, listed).await;
    }
    let (ci, _) = s.list(cb, json!({"namespace": "ci"}), false, 100).await;
    assert_eq!(names(&ci), ["ci/runners"]);
    // An identity without a namespace means `default`, as the resource's namespace does.
    let (_, id) = s
        .import_by_identity(cb, &identity(&s, cb, json!({"name": "web"})))
        .await
        .expect("import");
    assert_eq!(
        id,
        identity(&s, cb, json!({"name": "web", "namespace": "default"}))
    );
}

/// #29: on an EKS Auto Mode cluster the NodeClasses (a custom one and the built-in `default`,
/// both made outside Terraform, with server defaults filled in) are listed with their
/// identities, import by identity, and their generated configuration plans empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eks_node_classes_are_listed_and_plan_empty_on_auto_mode() {
    let cluster = Cluster::with_eks_auto_mode();
    for (name, role) in [
        ("default", "AmazonEKSAutoNodeRole"),
        ("private", "eks-auto-nodes"),
    ] {
        let manifest = json!({
            "apiVersion": "eks.amazonaws.com/v1", "kind": "NodeClass",
            "metadata": {"name": name},
            "spec": {
                "role": role,
                "subnetSelectorTerms": [{"tags": {"kubernetes.io/role/internal-elb": "1"}}],
                "securityGroupSelectorTerms": [{"id": "sg-0123456789abcdef0"}],
                "ephemeralStorage": {"size": "100Gi"}
            }
        });
        kubectl_apply(&cluster, &kinds::EKS_NODE_CLASS, manifest).await;
    }
    let mut s = Session::start(provider_config(&cluster)).await;
    let nc = "karpenter_eks_node_class";
    let (all, diags) = s.list(nc, json!({}), true, 100).await;
    assert!(!has_errors(&diags), "{}", text(&diags));
    assert_eq!(names(&all), ["default", "private"]);
    assert_eq!(all[1].identity, identity(&s, nc, json!({"name": "private"})));
    for listed in &all {
        s.assert_generated_config_plans_empty(nc, listed).await;
    }
    let (_, id) = s
        .import_by_identity(nc, &identity(&s, nc, json!({"name": "private"})))
        .await
        .expect("import");
    assert_eq!(id, identity(&s, nc, json!({"name": "private"})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_kinds_are_listed_and_plan_empty() {
    let cluster = Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1alpha5")],
        controller: ControllerConfig::karpenter(),
        ..Config::default()
    });
    // Karpenter ≤ 0.32's defaulting webhook fills in what kubectl left out.
    cluster.server.set_legacy_webhook_defaults(true);
    kubectl_apply(
        &cluster,
        &kinds::PROVISIONER,
        json!({
            "apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner",
            "metadata": {"name": "default"},
            "spec": {
                "providerRef": {"name": "default"},
                "ttlSecondsAfterEmpty": 30,
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
                "limits": {"resources": {"cpu": "100"}}
            }
        }),
    )
    .await;
    kubectl_apply(
        &cluster,
        &kinds::AWS_NODE_TEMPLATE,
        json!({
            "apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate",
            "metadata": {"name": "default"},
            "spec": {
                "subnetSelector": {"karpenter.sh/discovery": "demo"},
                "securityGroupSelector": {"karpenter.sh/discovery": "demo"}
            }
        }),
    )
    .await;
    let mut s = Session::start(provider_config(&cluster)).await;
    for type_name in ["karpenter_provisioner", "karpenter_node_template"] {
        let (listed, diags) = s.list(type_name, json!({}), true, 100).await;
        assert!(!has_errors(&diags), "{type_name}: {}", text(&diags));
        assert_eq!(names(&listed), ["default"], "{type_name}");
        s.assert_generated_config_plans_empty(type_name, &listed[0]).await;
    }
}

/// "Written out and planned": the configuration the provider generates for every listed
/// object, written as Terraform writes it (`protocol::resource_hcl`), with an `import` block
/// by ID, planned by the real terraform binary (1.11 here: it reads the HCL, builds the
/// proposed state and calls the provider's plan like any later version). The plan imports
/// everything and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_configuration_written_out_plans_no_change_with_terraform() {
    let cluster = Cluster::with_alpha_crds();
    kubectl_apply(&cluster, &kinds::EC2_NODE_CLASS, node_class("default")).await;
    kubectl_apply(
        &cluster,
        &kinds::NODE_POOL,
        node_pool("default", json!({"team": "a"})),
    )
    .await;
    kubectl_apply(&cluster, &kinds::NODE_POOL, json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": "tuned", "annotations": {"owner": "data-team"}},
            "spec": {
                "weight": 10,
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m",
                               "budgets": [{"nodes": "20%", "reasons": ["Empty"]}]},
                "template": {
                    "metadata": {"labels": {"workload": "batch"}},
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                        "expireAfter": "Never",
                        "taints": [{"key": "batch", "value": "true", "effect": "NoSchedule"}],
                        "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i", "c7i"], "minValues": 2}]
                    }
                },
                "limits": {"cpu": "500", "memory": "2000Gi"}
            }
        }),
    )
    .await;
    kubectl_apply(
        &cluster,
        &kinds::CAPACITY_BUFFER,
        json!({
            "apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
            "metadata": {"name": "runners", "namespace": "default"},
            "spec": {"podTemplateRef": {"name": "runner"}, "replicas": 3}
        }),
    )
    .await;
    cluster.eventually("the node class to be reported ready", || {
        cluster
            .node_class("default")
            .is_some_and(|o| o["status"]["conditions"].is_array())
    });
    let mut s = Session::start(provider_config(&cluster)).await;
    let mut hcl = cluster.provider_block();
    let mut count = 0;
    for type_name in [
        "karpenter_ec2_node_class",
        "karpenter_node_pool",
        "karpenter_capacity_buffer",
    ] {
        let (listed, diags) = s.list(type_name, json!({}), true, 100).await;
        assert!(!has_errors(&diags), "{}", text(&diags));
        let block = s.resource_block(type_name);
        for (i, l) in listed.iter().enumerate() {
            let config = s.generate(type_name, l.state.as_ref().expect("state")).await;
            let name = format!("r{i}");
            hcl.push_str(&protocol::resource_hcl(&block, type_name, &name, &config));
            hcl.push_str(&format!(
                "import {{\n  to = {type_name}.{name}\n  id = \"{}\"\n}}\n",
                l.display_name
            ));
            count += 1;
        }
    }
    assert_eq!(count, 4);
    let work = acceptance_tests::Workdir::new(&hcl);
    let run = work.plan();
    assert!(run.success, "{}\n{hcl}", run.output());
    assert!(
        run.stdout
            .contains("Plan: 4 to import, 0 to add, 0 to change, 0 to destroy."),
        "{}\n{hcl}",
        run.stdout
    );
}
