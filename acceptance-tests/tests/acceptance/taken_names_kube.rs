//! Create never adopts, on the Kubernetes side (#26): an object of every kind the provider
//! manages — NodePool, EC2NodeClass, the legacy Provisioner and AWSNodeTemplate, the newer
//! NodeOverlay and CapacityBuffer — made by `kubectl apply` (client-side) or by Helm
//! (server-side apply as `helm`) under the name a new resource wants is refused on `name`,
//! left exactly as it was, and survives `terraform destroy` of the refusing configuration.
//! The same holds for an object another Terraform state made with this provider: the refusal
//! then says it carries this provider's field manager. After an `import {}` block the apply
//! converges onto the object without recreating it.

use acceptance_tests::Workdir;
use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::Request;
use serde_json::{Value as Json, json};

/// Sends a built request (an `http::Request`, named only through kube here).
macro_rules! send {
    ($cluster:expr, $req:expr) => {{
        let req = $req;
        block_on(async {
            let client = $cluster.server.client().await.expect("client");
            client.request_text(req).await.expect("write accepted");
        });
    }};
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// A server with every kind's CRDs: v1, the alpha kinds and the legacy v1alpha5 ones.
fn cluster() -> Cluster {
    Cluster::start(Config {
        crd_dirs: vec![
            TestServer::shared_crds_dir("v1"),
            TestServer::shared_crds_dir("v1-alpha"),
            TestServer::shared_crds_dir("v1alpha5"),
        ],
        controller: ControllerConfig::karpenter(),
        ..Config::default()
    })
}

/// One kind: where its objects live, an object as a user's YAML would have it, and the
/// Terraform resource that names the same object.
struct Case {
    collection: &'static str,
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    namespace: Option<&'static str>,
    kind: &'static str,
    object: Json,
    resource: &'static str,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            collection: "/apis/karpenter.sh/v1/nodepools",
            group: "karpenter.sh",
            version: "v1",
            plural: "nodepools",
            namespace: None,
            kind: "NodePool",
            object: json!({
                "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                "metadata": {"name": "taken", "labels": {"team": "kubectl"}},
                "spec": {"template": {"spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]
                }}, "limits": {"cpu": "17"}}
            }),
            resource: r#"
resource "karpenter_node_pool" "p" {
  name = "taken"
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "other" }
      requirements   = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }]
    }
  }
}
"#,
        },
        Case {
            collection: "/apis/karpenter.k8s.aws/v1/ec2nodeclasses",
            group: "karpenter.k8s.aws",
            version: "v1",
            plural: "ec2nodeclasses",
            namespace: None,
            kind: "EC2NodeClass",
            object: json!({
                "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
                "metadata": {"name": "taken"},
                "spec": {
                    "role": "KarpenterNodeRole-kubectl",
                    "amiSelectorTerms": [{"alias": "al2023@latest"}],
                    "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "kubectl"}}],
                    "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "kubectl"}}]
                }
            }),
            resource: r#"
resource "karpenter_ec2_node_class" "c" {
  name                          = "taken"
  role                          = "KarpenterNodeRole-terraform"
  ami_selector_terms            = [{ alias = "bottlerocket@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "terraform" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "terraform" } }]
}
"#,
        },
        Case {
            collection: "/apis/karpenter.sh/v1alpha5/provisioners",
            group: "karpenter.sh",
            version: "v1alpha5",
            plural: "provisioners",
            namespace: None,
            kind: "Provisioner",
            object: json!({
                "apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner",
                "metadata": {"name": "taken"},
                "spec": {"providerRef": {"name": "default"}, "ttlSecondsAfterEmpty": 30}
            }),
            resource: r#"
resource "karpenter_provisioner" "p" {
  name         = "taken"
  provider_ref = { name = "other" }
}
"#,
        },
        Case {
            collection: "/apis/karpenter.k8s.aws/v1alpha1/awsnodetemplates",
            group: "karpenter.k8s.aws",
            version: "v1alpha1",
            plural: "awsnodetemplates",
            namespace: None,
            kind: "AWSNodeTemplate",
            object: json!({
                "apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate",
                "metadata": {"name": "taken"},
                "spec": {
                    "subnetSelector": {"karpenter.sh/discovery": "kubectl"},
                    "securityGroupSelector": {"karpenter.sh/discovery": "kubectl"}
                }
            }),
            resource: r#"
resource "karpenter_node_template" "t" {
  name                    = "taken"
  subnet_selector         = { "karpenter.sh/discovery" = "terraform" }
  security_group_selector = { "karpenter.sh/discovery" = "terraform" }
}
"#,
        },
        Case {
            collection: "/apis/karpenter.sh/v1alpha1/nodeoverlays",
            group: "karpenter.sh",
            version: "v1alpha1",
            plural: "nodeoverlays",
            namespace: None,
            kind: "NodeOverlay",
            object: json!({
                "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
                "metadata": {"name": "taken"},
                "spec": {"requirements": [], "price": "0.25"}
            }),
            resource: r#"
resource "karpenter_node_overlay" "o" {
  name         = "taken"
  requirements = []
  price        = "0.5"
}
"#,
        },
        Case {
            collection: "/apis/autoscaling.x-k8s.io/v1beta1/namespaces/team-a/capacitybuffers",
            group: "autoscaling.x-k8s.io",
            version: "v1beta1",
            plural: "capacitybuffers",
            namespace: Some("team-a"),
            kind: "CapacityBuffer",
            object: json!({
                "apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
                "metadata": {"name": "taken", "namespace": "team-a"},
                "spec": {"podTemplateRef": {"name": "kubectl"}, "replicas": 2}
            }),
            resource: r#"
resource "karpenter_capacity_buffer" "b" {
  name             = "taken"
  namespace        = "team-a"
  pod_template_ref = { name = "terraform" }
  replicas         = 5
}
"#,
        },
    ]
}

impl Case {
    fn stored(&self, cluster: &Cluster) -> Option<Json> {
        match self.namespace {
            Some(ns) => cluster
                .server
                .object_in(self.group, self.version, self.plural, ns, "taken"),
            None => cluster
                .server
                .object(self.group, self.version, self.plural, "taken"),
        }
    }

    /// `kubectl apply` (client-side) of a new object: a POST as `kubectl-client-side-apply`.
    fn kubectl_create(&self, cluster: &Cluster) {
        let mut obj = self.object.clone();
        obj["metadata"]["annotations"] =
            json!({"kubectl.kubernetes.io/last-applied-configuration": self.object.to_string()});
        let params = PostParams {
            field_manager: Some("kubectl-client-side-apply".into()),
            ..Default::default()
        };
        let req = Request::new(self.collection)
            .create(&params, serde_json::to_vec(&obj).expect("json"))
            .expect("request");
        send!(cluster, req);
    }

    /// What Helm 3.17+ sends: a server-side apply as `helm`.
    fn helm_apply(&self, cluster: &Cluster) {
        let params = PatchParams::apply("helm").force();
        let req = Request::new(self.collection)
            .patch("taken", &params, &Patch::Apply(&self.object))
            .expect("request");
        send!(cluster, req);
    }
}

/// The parts of an object a takeover would change: everything but status (which the simulated
/// Karpenter may write at any time) and the bookkeeping that follows a status write.
fn user_visible(obj: &Json) -> Json {
    let mut o = obj.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("status");
    }
    if let Some(meta) = o["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
        meta.remove("managedFields");
    }
    json!({"object": o, "managers": spec_managers(obj)})
}

/// The managers of the object's own fields (status entries left out).
fn spec_managers(obj: &Json) -> Vec<String> {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["subresource"].as_str().is_none_or(str::is_empty))
        .map(|e| {
            format!(
                "{}/{}",
                e["manager"].as_str().unwrap_or(""),
                e["operation"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every kind, made by kubectl (half of them) or Helm (the other half): each create is refused
/// on `name`, naming the kind, the managers and the import block; nothing of any object
/// changes, not even its resourceVersion; destroy of the refusing configuration deletes none.
#[test]
fn objects_made_by_kubectl_or_helm_are_refused_untouched_and_survive_destroy() {
    let cluster = cluster();
    let cases = cases();
    for (i, case) in cases.iter().enumerate() {
        if i % 2 == 0 {
            case.kubectl_create(&cluster);
        } else {
            case.helm_apply(&cluster);
        }
    }
    let before: Vec<Json> = cases
        .iter()
        .map(|c| {
            c.stored(&cluster)
                .unwrap_or_else(|| panic!("{} not made", c.kind))
        })
        .collect();
    let config: String = cases.iter().map(|c| c.resource).collect();
    let work = Workdir::new(&format!("{}\n{config}", cluster.provider_block()));
    let run = work.apply().failed();
    let out = one_line(&run.output());
    for (i, case) in cases.iter().enumerate() {
        let manager = if i % 2 == 0 {
            "kubectl-client-side-apply"
        } else {
            "helm"
        };
        let refusal = format!("{} already exists", case.kind);
        assert!(out.contains(&refusal), "no refusal for {}: {out}", case.kind);
        let id = match case.namespace {
            Some(ns) => format!("{ns}/taken"),
            None => "taken".to_string(),
        };
        let type_name = case.resource.split('"').nth(1).expect("resource type");
        let label = case.resource.split('"').nth(3).expect("resource label");
        // The import advice names the resource's address (#41): its name is a literal here.
        for needle in [
            format!("managed by {manager}"),
            format!("to = {type_name}.{label} id = \"{id}\""),
            format!("terraform import {type_name}.{label} {id}"),
        ] {
            assert!(out.contains(&needle), "{}: no {needle:?} in: {out}", case.kind);
        }
    }
    assert_eq!(
        out.matches("It was not made by this provider").count(),
        cases.len(),
        "{out}"
    );
    // Each refusal is on the resource's `name` line, with its path: `31: name = "taken" name: A…`.
    assert_eq!(
        out.matches("name = \"taken\" name: A").count(),
        cases.len(),
        "{out}"
    );
    let state = work.state();
    assert!(
        state["values"]["root_module"]["resources"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "a refused create was recorded: {state}"
    );
    let check_untouched = |when: &str| {
        for (case, was) in cases.iter().zip(&before) {
            let now = case
                .stored(&cluster)
                .unwrap_or_else(|| panic!("{when}: the {} was deleted", case.kind));
            assert_eq!(
                user_visible(&now),
                user_visible(was),
                "{when}: the {} changed",
                case.kind
            );
            assert_eq!(
                now["metadata"]["generation"], was["metadata"]["generation"],
                "{when}: the {} spec was written",
                case.kind
            );
        }
    };
    check_untouched("after the refused apply");
    // The provider's requests (by their User-Agent) to the taken objects: reads only.
    let providers_requests = |method: &str| -> Vec<String> {
        cluster
            .requests(Some(method), "/taken")
            .into_iter()
            .filter(|r| r.user_agent.starts_with("terraform-provider-karpenter"))
            .map(|r| r.path)
            .collect()
    };
    assert_eq!(
        providers_requests("GET").len(),
        cases.len(),
        "one look-up per create"
    );
    for method in ["PATCH", "PUT", "POST", "DELETE"] {
        assert!(
            providers_requests(method).is_empty(),
            "the provider sent {method} to a taken object: {:?}",
            providers_requests(method)
        );
    }
    work.destroy().ok();
    check_untouched("after destroy of the refusing configuration");
    assert!(
        providers_requests("DELETE").is_empty(),
        "destroy deleted a taken object"
    );
}

/// Two Terraform states with the same NodePool name: the second is refused with "another
/// Terraform state" (our field manager is on the object), the first's object and plan are
/// unchanged, and the second's destroy deletes nothing. An `import {}` block in the second
/// state then takes the pool over on purpose without recreating it (same uid).
#[test]
fn a_second_state_with_the_same_name_is_refused_until_it_imports() {
    let cluster = cluster();
    let pool = |cpu: &str| {
        format!(
            r#"
resource "karpenter_node_pool" "p" {{
  name = "shared"
  template = {{
    spec = {{
      node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
  limits = {{ cpu = "{cpu}" }}
}}
"#
        )
    };
    let first = Workdir::new(&format!("{}\n{}", cluster.provider_block(), pool("100")));
    first.apply().ok();
    let made = cluster.node_pool("shared").expect("pool");
    let second = Workdir::new(&format!("{}\n{}", cluster.provider_block(), pool("5")));
    let out = one_line(&second.apply().failed().output());
    for needle in [
        "NodePool already exists",
        "It carries this provider's mark (the field manager `terraform-provider-karpenter`)",
        "interrupted",
        "another Terraform state manages it",
        "to = karpenter_node_pool.p id = \"shared\"",
        "will not delete it",
    ] {
        assert!(out.contains(needle), "no {needle:?} in: {out}");
    }
    let now = cluster.node_pool("shared").expect("pool after the refusal");
    assert_eq!(
        user_visible(&now),
        user_visible(&made),
        "the refusal changed the pool"
    );
    assert_eq!(now["spec"]["limits"]["cpu"], "100");
    assert!(first.plan_is_empty(), "the first state's plan is not empty");
    second.destroy().ok();
    assert!(
        cluster.node_pool("shared").is_some(),
        "the second state's destroy deleted the pool"
    );
    assert!(
        first.plan_is_empty(),
        "the first state's plan is not empty after the other destroy"
    );

    // On purpose: the second state imports the pool, and its apply updates it in place.
    second.set_config(&format!(
        "{}\n{}\nimport {{\n  to = karpenter_node_pool.p\n  id = \"shared\"\n}}\n",
        cluster.provider_block(),
        pool("5")
    ));
    second.apply().ok();
    let adopted = cluster.node_pool("shared").expect("pool after the import");
    assert_eq!(
        adopted["metadata"]["uid"], made["metadata"]["uid"],
        "the import recreated the pool"
    );
    assert_eq!(adopted["spec"]["limits"]["cpu"], "5");
    assert!(second.plan_is_empty(), "plan after the import is not empty");
}
