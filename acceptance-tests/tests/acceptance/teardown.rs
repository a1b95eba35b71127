//! Teardown when Karpenter is gone (issue #17). A node pool and its node class are applied on the
//! Kubernetes API test server, whose simulated Karpenter holds its leader-election Lease and
//! puts its finalizers on them; moto holds the EC2/IAM side as Karpenter tags it (instances,
//! launch templates, the class's instance profile) plus decoys of another pool, another class
//! and another cluster, and untagged ones. Then the simulated Karpenter is stopped mid-life
//! (the Lease is no longer renewed, finalizers are no longer removed) and:
//!
//! - with `force_destroy = true`, destroy succeeds, leaves nothing of ours and every decoy;
//! - without it, destroy fails fast (seconds, not `timeouts.delete`) naming what is stuck,
//!   why and what to do, and touches nothing in AWS;
//! - a destroy killed (SIGKILL of the provider) in the middle of the cleanup converges on the
//!   next run;
//! - the cluster's name comes from `kubernetes { eks { cluster_name } }` or from the provider's
//!   `cluster_name` (a token or `exec` login); with neither, force_destroy fails on itself and
//!   deletes nothing until the name is configured.
//!
//! Durations are printed (`--nocapture`), never asserted.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use acceptance_tests::Workdir;
use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::moto::{self, Fault, FaultProxy, Moto};
use acceptance_tests::processes::{provider_children, sigkill};
use kube_testserver::LeaseConfig;
use serde_json::json;

const CLUSTER: &str = "demo";
const PROFILE: &str = "demo_1234567890";
const DECOY_PROFILE: &str = "prod_1234567890";

struct Stack {
    cluster: Cluster,
    moto: Moto,
    proxy: FaultProxy,
    work: Workdir,
    /// `main.tf` as written (without the required_providers the harness adds).
    config: String,
    rt: tokio::runtime::Runtime,
}

/// What moto holds, by name tag (instances) or name (launch templates, profiles).
#[derive(Debug, Default)]
struct Aws {
    /// Name tag → state.
    instances: BTreeMap<String, String>,
    launch_templates: Vec<String>,
    profiles: Vec<String>,
}

fn tags(pairs: &[(&str, &str)]) -> Vec<aws_sdk_ec2::types::Tag> {
    pairs
        .iter()
        .map(|(k, v)| aws_sdk_ec2::types::Tag::builder().key(*k).value(*v).build())
        .collect()
}

/// Where the provider learns the cluster's name, the scope of the cleanup.
#[derive(Clone, Copy)]
enum ClusterScope {
    /// `kubernetes { eks { cluster_name } }` (native EKS login).
    EksBlock,
    /// The provider's `cluster_name`, beside a bearer token.
    ProviderAttribute,
    /// A bearer token and no cluster name anywhere.
    Unknown,
}

impl Stack {
    fn new(force_destroy: bool) -> Stack {
        Stack::scoped(force_destroy, ClusterScope::EksBlock)
    }

    /// The provider block for `scope`: the test server's URL and CA, then how it logs in.
    fn provider_block(cluster: &Cluster, aws: &str, scope: ClusterScope) -> String {
        let (top, login) = match scope {
            ClusterScope::EksBlock => (
                String::new(),
                format!("    eks {{\n      cluster_name = \"{CLUSTER}\"\n    }}\n"),
            ),
            ClusterScope::ProviderAttribute => (
                format!("  cluster_name = \"{CLUSTER}\"\n"),
                format!("    token = \"{}\"\n", cluster.server.token()),
            ),
            ClusterScope::Unknown => (
                String::new(),
                format!("    token = \"{}\"\n", cluster.server.token()),
            ),
        };
        format!(
            "provider \"karpenter\" {{\n{top}  kubernetes {{\n    host                   = \"{}\"\n    cluster_ca_certificate = <<-EOT\n{}\n    EOT\n{login}  }}\n{}",
            cluster.server.base_url(),
            cluster.server.ca_pem().trim_end(),
            aws.trim_start_matches("provider \"karpenter\" {\n")
        )
    }

    /// The simulated Karpenter of these tests: the pool's NodeClaim is launched and its Node
    /// registered (by the kubelet, then by Karpenter: its finalizer, its owner reference to
    /// the NodeClaim), and a short lease, so that "not renewed" shows within seconds
    /// (Karpenter's is 15 s).
    fn controller() -> ControllerConfig {
        let mut controller = ControllerConfig::karpenter();
        controller.node_claim_status = true;
        controller.node_registration = Some(Duration::ZERO);
        controller.leader_lease = Some(LeaseConfig {
            duration_seconds: 2,
            renew_every: Duration::from_millis(500),
            ..LeaseConfig::default()
        });
        controller
    }

    fn scoped(force_destroy: bool, scope: ClusterScope) -> Stack {
        let controller = Stack::controller();
        let cluster = Cluster::start(Config {
            crd_dirs: vec![TestServer::shared_crds_dir("v1")],
            controller,
            eks_tokens: true,
            ..Config::default()
        });
        let moto = Moto::start();
        let proxy = FaultProxy::start(moto.port());
        let aws = proxy.provider_block();
        let provider = Stack::provider_block(&cluster, &aws, scope);
        let config = format!(
            r#"{provider}
resource "karpenter_ec2_node_class" "default" {{
  name                          = "default"
  role                          = "KarpenterNodeRole-{CLUSTER}"
  ami_selector_terms            = [{{ alias = "al2023@latest" }}]
  subnet_selector_terms         = [{{ tags = {{ "karpenter.sh/discovery" = "{CLUSTER}" }} }}]
  security_group_selector_terms = [{{ tags = {{ "karpenter.sh/discovery" = "{CLUSTER}" }} }}]
  wait_for_ready                = true
  force_destroy                 = {force_destroy}
}}

resource "karpenter_node_pool" "default" {{
  name = "default"
  template = {{
    spec = {{
      node_class_ref = {{
        group = "karpenter.k8s.aws"
        kind  = "EC2NodeClass"
        name  = karpenter_ec2_node_class.default.name
      }}
      requirements = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }}]
    }}
  }}
  force_destroy = {force_destroy}
}}
"#
        );
        let mut work = Workdir::new(&config);
        moto::configure_env(&mut work);
        let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("runtime: {e}"));
        Stack {
            cluster,
            moto,
            proxy,
            work,
            config,
            rt,
        }
    }

    /// Moto holds what it held `before`, and no terminate or delete call reached it.
    fn assert_aws_untouched(&self, before: &Aws) {
        let after = self.aws();
        assert_eq!(before.instances, after.instances);
        assert_eq!(before.launch_templates, after.launch_templates);
        assert_eq!(before.profiles, after.profiles);
        let log = self.proxy.log();
        assert!(
            !log.iter()
                .any(|(op, _)| op.contains("Terminate") || op.contains("Delete")),
            "{log:?}"
        );
    }

    /// Applies, then puts in moto what Karpenter would have launched and made, plus decoys,
    /// and points the class's status at its instance profile (as Karpenter records it).
    fn apply_and_seed(&self) {
        self.apply_and_seed_with(true);
    }

    /// [`Stack::apply_and_seed`]; with `node`, waits until the pool's Node is registered as
    /// Karpenter's (its finalizer), as it is before Karpenter goes away.
    fn apply_and_seed_with(&self, node: bool) {
        self.work.apply().ok();
        let conf = self.moto.sdk_config();
        let ec2 = aws_sdk_ec2::Client::new(&conf);
        let iam = aws_sdk_iam::Client::new(&conf);
        let owned = format!("kubernetes.io/cluster/{CLUSTER}");
        self.rt.block_on(async {
            let instances: Vec<(&str, Vec<(&str, &str)>)> = vec![
                ("ours-1", vec![("karpenter.sh/nodepool", "default"), (&owned, "owned"), ("karpenter.k8s.aws/ec2nodeclass", "default"), ("eks:eks-cluster-name", CLUSTER)]),
                ("ours-2", vec![("karpenter.sh/nodepool", "default"), (&owned, "owned"), ("karpenter.k8s.aws/ec2nodeclass", "default"), ("eks:eks-cluster-name", CLUSTER)]),
                ("decoy-other-pool", vec![("karpenter.sh/nodepool", "other"), (&owned, "owned"), ("karpenter.k8s.aws/ec2nodeclass", "other"), ("eks:eks-cluster-name", CLUSTER)]),
                ("decoy-other-cluster", vec![("karpenter.sh/nodepool", "default"), ("kubernetes.io/cluster/prod", "owned"), ("karpenter.k8s.aws/ec2nodeclass", "default"), ("eks:eks-cluster-name", "prod")]),
                ("decoy-untagged", vec![]),
            ];
            for (name, extra) in instances {
                let mut all = vec![("Name", name)];
                all.extend(extra);
                ec2.run_instances()
                    .image_id("ami-12c6146b")
                    .instance_type(aws_sdk_ec2::types::InstanceType::M5Large)
                    .min_count(1)
                    .max_count(1)
                    .tag_specifications(
                        aws_sdk_ec2::types::TagSpecification::builder()
                            .resource_type(aws_sdk_ec2::types::ResourceType::Instance)
                            .set_tags(Some(tags(&all)))
                            .build(),
                    )
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("RunInstances {name}: {e:?}"));
            }
            let templates: Vec<(&str, Vec<(&str, &str)>)> = vec![
                ("karpenter.k8s.aws/1111", vec![("karpenter.k8s.aws/ec2nodeclass", "default"), ("eks:eks-cluster-name", CLUSTER)]),
                ("karpenter.k8s.aws/2222", vec![("karpenter.k8s.aws/ec2nodeclass", "default"), ("karpenter.k8s.aws/cluster", CLUSTER)]),
                ("decoy-other-class", vec![("karpenter.k8s.aws/ec2nodeclass", "other"), ("eks:eks-cluster-name", CLUSTER)]),
                ("decoy-other-cluster", vec![("karpenter.k8s.aws/ec2nodeclass", "default"), ("eks:eks-cluster-name", "prod")]),
                ("decoy-untagged", vec![]),
            ];
            for (name, t) in templates {
                let mut req = ec2
                    .create_launch_template()
                    .launch_template_name(name)
                    .launch_template_data(
                        aws_sdk_ec2::types::RequestLaunchTemplateData::builder()
                            .image_id("ami-12c6146b")
                            .build(),
                    );
                if !t.is_empty() {
                    req = req.tag_specifications(
                        aws_sdk_ec2::types::TagSpecification::builder()
                            .resource_type(aws_sdk_ec2::types::ResourceType::LaunchTemplate)
                            .set_tags(Some(tags(&t)))
                            .build(),
                    );
                }
                req.send()
                    .await
                    .unwrap_or_else(|e| panic!("CreateLaunchTemplate {name}: {e:?}"));
            }
            iam.create_role()
                .role_name(format!("KarpenterNodeRole-{CLUSTER}"))
                .assume_role_policy_document(r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#)
                .send()
                .await
                .unwrap_or_else(|e| panic!("CreateRole: {e:?}"));
            for (profile, class, tag_cluster) in [(PROFILE, "default", CLUSTER), (DECOY_PROFILE, "default", "prod")] {
                iam.create_instance_profile()
                    .instance_profile_name(profile)
                    .tags(aws_sdk_iam::types::Tag::builder().key("karpenter.k8s.aws/ec2nodeclass").value(class).build().expect("tag"))
                    .tags(aws_sdk_iam::types::Tag::builder().key(format!("kubernetes.io/cluster/{tag_cluster}")).value("owned").build().expect("tag"))
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("CreateInstanceProfile {profile}: {e:?}"));
                iam.add_role_to_instance_profile()
                    .instance_profile_name(profile)
                    .role_name(format!("KarpenterNodeRole-{CLUSTER}"))
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("AddRoleToInstanceProfile {profile}: {e:?}"));
            }
        });
        assert!(self.cluster.server.patch_object(
            "karpenter.k8s.aws",
            "ec2nodeclasses",
            "",
            "default",
            &json!({"status": {"instanceProfile": PROFILE}})
        ));
        if node {
            self.wait_for_registered_node();
        }
    }

    fn aws(&self) -> Aws {
        let conf = self.moto.sdk_config();
        let ec2 = aws_sdk_ec2::Client::new(&conf);
        let iam = aws_sdk_iam::Client::new(&conf);
        self.rt.block_on(async {
            let mut out = Aws::default();
            let reservations = ec2.describe_instances().send().await.expect("DescribeInstances");
            for i in reservations.reservations().iter().flat_map(|r| r.instances()) {
                let name = i
                    .tags()
                    .iter()
                    .find(|t| t.key() == Some("Name"))
                    .and_then(|t| t.value())
                    .unwrap_or_default()
                    .to_string();
                let state = i
                    .state()
                    .and_then(|s| s.name())
                    .map(|n| n.as_str().to_string())
                    .unwrap_or_default();
                out.instances.insert(name, state);
            }
            let lts = ec2
                .describe_launch_templates()
                .send()
                .await
                .expect("DescribeLaunchTemplates");
            out.launch_templates = lts
                .launch_templates()
                .iter()
                .filter_map(|l| l.launch_template_name().map(str::to_string))
                .collect();
            out.launch_templates.sort();
            let profiles = iam
                .list_instance_profiles()
                .send()
                .await
                .expect("ListInstanceProfiles");
            out.profiles = profiles
                .instance_profiles()
                .iter()
                .map(|p| p.instance_profile_name().to_string())
                .collect();
            out.profiles.sort();
            out
        })
    }

    /// (NodePool there, EC2NodeClass there, number of NodeClaims).
    fn karpenter_objects(&self) -> (bool, bool, usize) {
        (
            self.cluster.node_pool("default").is_some(),
            self.cluster.node_class("default").is_some(),
            self.node_claims(),
        )
    }

    /// The Nodes in the cluster: name → (finalizers, being deleted).
    fn nodes(&self) -> BTreeMap<String, (Vec<String>, bool)> {
        self.rt.block_on(async {
            let client = self.cluster.server.client().await.expect("client");
            let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
                client,
                &kube::api::ApiResource {
                    group: String::new(),
                    version: "v1".into(),
                    api_version: "v1".into(),
                    kind: "Node".into(),
                    plural: "nodes".into(),
                },
            );
            api.list(&Default::default())
                .await
                .expect("list Nodes")
                .items
                .into_iter()
                .map(|n| {
                    (
                        n.metadata.name.unwrap_or_default(),
                        (
                            n.metadata.finalizers.unwrap_or_default(),
                            n.metadata.deletion_timestamp.is_some(),
                        ),
                    )
                })
                .collect()
        })
    }

    /// Waits until the pool's Node is registered as Karpenter's (its finalizer), as it is
    /// before Karpenter goes away.
    fn wait_for_registered_node(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let nodes = self.nodes();
            if nodes
                .values()
                .any(|(f, _)| f.iter().any(|f| f == "karpenter.sh/termination"))
            {
                return;
            }
            assert!(Instant::now() < deadline, "no registered Node: {nodes:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn node_claims(&self) -> usize {
        self.node_claim_list().len()
    }

    fn node_claim_list(&self) -> Vec<kube::api::DynamicObject> {
        let rt = &self.rt;
        rt.block_on(async {
            let client = self.cluster.server.client().await.expect("client");
            let api: kube::Api<kube::api::DynamicObject> = kube::Api::all_with(
                client,
                &kube::api::ApiResource {
                    group: "karpenter.sh".into(),
                    version: "v1".into(),
                    api_version: "karpenter.sh/v1".into(),
                    kind: "NodeClaim".into(),
                    plural: "nodeclaims".into(),
                },
            );
            api.list(&Default::default())
                .await
                .expect("list NodeClaims")
                .items
        })
    }
}

fn gone_or_terminating(state: &str) -> bool {
    state == "shutting-down" || state == "terminated"
}

/// Only the decoys remain running / present.
fn assert_only_decoys_left(aws: &Aws) {
    for ours in ["ours-1", "ours-2"] {
        let state = aws.instances.get(ours).map(String::as_str).unwrap_or("missing");
        assert!(gone_or_terminating(state), "{ours} is {state}: {aws:?}");
    }
    for decoy in ["decoy-other-pool", "decoy-other-cluster", "decoy-untagged"] {
        assert_eq!(
            aws.instances.get(decoy).map(String::as_str),
            Some("running"),
            "{decoy} must be left alone: {aws:?}"
        );
    }
    assert_eq!(
        aws.launch_templates,
        vec!["decoy-other-class", "decoy-other-cluster", "decoy-untagged"],
        "{aws:?}"
    );
    assert_eq!(aws.profiles, vec![DECOY_PROFILE.to_string()], "{aws:?}");
}

#[test]
fn force_destroy_finishes_karpenters_cleanup_and_touches_only_ours() {
    let mut stack = Stack::new(true);
    stack.apply_and_seed();
    assert_eq!(stack.karpenter_objects(), (true, true, 1));
    stack.cluster.server.stop_controller(false);
    let log = stack.work.path().join("provider.log");
    stack
        .work
        .env("TF_LOG_PROVIDER", "warn")
        .env("TF_LOG_PATH", &log.display().to_string());
    let started = Instant::now();
    let run = stack.work.destroy().ok();
    // #28: the pool's wait established that Karpenter is gone; the class's delete, later in
    // the same run, takes that verdict instead of waiting for its own.
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let verdicts: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("force_destroy: doing its cleanup"))
        .collect();
    assert_eq!(verdicts.len(), 2, "{log}");
    assert!(
        verdicts
            .iter()
            .any(|l| l.contains("EC2NodeClass") && l.contains("found earlier in this run")),
        "{verdicts:#?}"
    );
    println!(
        "destroy with force_destroy, Karpenter stopped: {:?}",
        started.elapsed()
    );
    assert!(
        run.stderr.is_empty() || !run.stderr.contains("Error"),
        "{}",
        run.output()
    );
    assert_eq!(stack.karpenter_objects(), (false, false, 0));
    assert_eq!(stack.nodes(), BTreeMap::new(), "the pool's Node is left");
    assert_only_decoys_left(&stack.aws());
    let terminate_calls = stack
        .proxy
        .log()
        .iter()
        .filter(|(op, _)| op.contains("TerminateInstances"))
        .count();
    assert!(terminate_calls >= 1, "{:?}", stack.proxy.log());
}

/// #53: a Node of the pool that gets Karpenter's finalizer while force_destroy runs (Karpenter's
/// registration of the Node, in flight when it went away, landing after the teardown looked at
/// the Nodes) is released too. The teardown's first look at the Nodes is held back (answered
/// at once, the answer sent 3 s late) and the Node registered meanwhile: a teardown that looks
/// once misses it, and the pool's delete, which waits for its NodeClaims but not for their
/// Nodes, finishes all the same, leaving the Node and its finalizer behind.
#[test]
fn a_node_registered_while_force_destroy_runs_is_not_left_behind() {
    let stack = Stack::new(true);
    let mut controller = Stack::controller();
    // The NodeClaim is launched; its kubelet has not registered the Node yet.
    controller.node_registration = None;
    stack.cluster.server.set_controller(controller);
    stack.apply_and_seed_with(false);
    assert_eq!(stack.nodes(), BTreeMap::new());
    let claim = stack.node_claim_list().pop().expect("the pool's NodeClaim");
    let provider_id = claim.data["status"]["providerID"].clone();
    let node_name = claim.data["status"]["nodeName"]
        .as_str()
        .expect("nodeName")
        .to_string();
    stack.cluster.server.stop_controller(false);
    stack.cluster.server.inject_fault(
        kube_testserver::FaultSpec::slow(Duration::from_secs(3), 1)
            .method("GET")
            .path_contains("/api/v1/nodes"),
    );
    let background = stack.work.spawn(&["destroy", "-auto-approve", "-no-color"]);
    // The look has been answered from the store, the answer held back on its way: now the
    // registration lands.
    let deadline = Instant::now() + Duration::from_secs(120);
    while stack.cluster.server.answers_held_back() == 0 {
        assert!(
            Instant::now() < deadline,
            "the teardown's look at the Nodes was not answered within 120 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    stack
        .cluster
        .server
        .create_object(
            "",
            "v1",
            "nodes",
            "",
            json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": node_name, "finalizers": ["karpenter.sh/termination"],
                    "labels": {"karpenter.sh/nodepool": "default", "karpenter.sh/registered": "true",
                        "kubernetes.io/hostname": node_name},
                    "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                        "name": claim.metadata.name, "uid": claim.metadata.uid, "blockOwnerDeletion": true}]},
                "spec": {"providerID": provider_id}}),
            "karpenter",
        )
        .unwrap_or_else(|e| panic!("registering the Node: {e}"));
    let (run, took) = background.wait(Duration::from_secs(120));
    println!("destroy with a Node registered during the teardown: {took:?}");
    assert!(run.success, "{}", run.output());
    assert_eq!(stack.karpenter_objects(), (false, false, 0));
    assert_eq!(
        stack.nodes(),
        BTreeMap::new(),
        "the Node registered during the teardown is left"
    );
}

#[test]
fn without_force_destroy_a_destroy_fails_fast_and_says_what_to_do() {
    let stack = Stack::new(false);
    stack.apply_and_seed();
    stack.cluster.server.stop_controller(false);
    let before = stack.aws();
    let started = Instant::now();
    let run = stack.work.destroy().failed();
    let took = started.elapsed();
    println!("destroy without force_destroy, Karpenter stopped: failed after {took:?}");
    let text = run.text();
    for expected in [
        "Karpenter is not running",
        "NodePool default",
        // #28: what blocks is named: the NodeClaims the pool owns, and their finalizer.
        "NodeClaim(s) it owns",
        "karpenter.sh/termination",
        "karpenter-leader-election",
        "has not been renewed",
        "force_destroy",
        "force_destroy = true",
    ] {
        assert!(
            text.contains(expected),
            "missing {expected:?} in:\n{}",
            run.output()
        );
    }
    // The garbage collector's finalizer is not Karpenter's, and the pool's force_destroy
    // promises only what it does (launch templates and profiles are the class's).
    for wrong in ["foregroundDeletion", "launch template", "instance profile"] {
        assert!(!text.contains(wrong), "{wrong:?} in:\n{}", run.output());
    }
    // Nothing in AWS was touched, and the objects are still there (only being deleted).
    stack.assert_aws_untouched(&before);
    assert!(stack.cluster.node_pool("default").is_some());
    // A graceful shutdown (Lease released) is recognised too, with its own wording.
    let stack = Stack::new(false);
    stack.work.apply().ok();
    stack.cluster.server.stop_controller(true);
    let started = Instant::now();
    let run = stack.work.destroy().failed();
    println!(
        "destroy without force_destroy, Karpenter shut down (Lease released): failed after {:?}",
        started.elapsed()
    );
    assert!(run.text().contains("was released"), "{}", run.output());
}

#[test]
fn a_destroy_killed_during_the_cleanup_converges_on_the_next_run() {
    // The cluster's name from the provider's own attribute (a token login, no eks block).
    let stack = Stack::scoped(true, ClusterScope::ProviderAttribute);
    stack.apply_and_seed();
    stack.cluster.server.stop_controller(false);
    // TerminateInstances reaches moto (the instances stop) but its answer comes late: the
    // provider is killed while it waits for it.
    stack
        .proxy
        .arm(Fault::slow("TerminateInstances", 1, Duration::from_secs(60)));
    let background = stack.work.spawn(&["destroy", "-auto-approve", "-no-color"]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !stack
        .proxy
        .log()
        .iter()
        .any(|(op, _)| op.contains("TerminateInstances"))
    {
        assert!(
            Instant::now() < deadline,
            "no TerminateInstances: {:?}",
            stack.proxy.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let children = provider_children(background.id());
    assert!(!children.is_empty(), "no provider process");
    for pid in children {
        sigkill(pid);
    }
    let (run, _) = background.wait(Duration::from_secs(120));
    assert!(
        !run.success,
        "the killed destroy cannot succeed:\n{}",
        run.output()
    );
    stack.proxy.disarm();
    assert!(
        stack.cluster.node_pool("default").is_some(),
        "still there after the kill"
    );
    let started = Instant::now();
    stack.work.destroy().ok();
    println!("destroy after a killed one: {:?}", started.elapsed());
    assert_eq!(stack.karpenter_objects(), (false, false, 0));
    assert_eq!(stack.nodes(), BTreeMap::new(), "the pool's Node is left");
    assert_only_decoys_left(&stack.aws());
}

#[test]
fn force_destroy_without_a_cluster_name_deletes_nothing_until_the_name_is_configured() {
    let stack = Stack::scoped(true, ClusterScope::Unknown);
    stack.apply_and_seed();
    stack.cluster.server.stop_controller(false);
    let before = stack.aws();
    let run = stack.work.destroy().failed();
    let text = run.text();
    for expected in [
        "force_destroy needs the cluster's name",
        "Karpenter is not running",
        "cluster_name",
        "Nothing was deleted in AWS",
    ] {
        assert!(
            text.contains(expected),
            "missing {expected:?} in:\n{}",
            run.output()
        );
    }
    assert!(
        run.output().contains("force_destroy"),
        "the error is not on force_destroy:\n{}",
        run.output()
    );
    stack.assert_aws_untouched(&before);
    // The user adds the name the error asks for; the same destroy now finishes.
    let config = &stack.config;
    let with_name = config.replacen(
        "provider \"karpenter\" {\n",
        &format!("provider \"karpenter\" {{\n  cluster_name = \"{CLUSTER}\"\n"),
        1,
    );
    assert_ne!(*config, with_name, "no provider block in:\n{config}");
    stack.work.set_config(&with_name);
    stack.work.destroy().ok();
    assert_eq!(stack.karpenter_objects(), (false, false, 0));
    assert_eq!(stack.nodes(), BTreeMap::new(), "the pool's Node is left");
    assert_only_decoys_left(&stack.aws());
}

/// #28: with no Karpenter installed at all, a NodePool that owns nothing waits only for the
/// garbage collector's `foregroundDeletion`. A collector slow to notice a freshly installed
/// kind (kube-controller-manager rediscovers resources every ~30 s; here 45 s) must be waited
/// for, never blamed on Karpenter nor answered with `force_destroy`.
#[test]
fn a_pool_that_owns_nothing_waits_for_a_slow_garbage_collector() {
    let cluster = Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        gc_discovery_delay: Duration::from_secs(45),
        ..Config::default()
    });
    let work = Workdir::new(&format!(
        r#"{}
resource "karpenter_node_pool" "p" {{
  name = "p"
  template = {{
    spec = {{
      node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }}]
    }}
  }}
}}
"#,
        cluster.provider_block()
    ));
    work.apply().ok();
    let started = Instant::now();
    let run = work.destroy();
    println!("destroy with a slow garbage collector: {:?}", started.elapsed());
    assert!(run.success, "{}", run.output());
    // (The plan lists force_destroy among the attributes destroyed; the diagnostics must not.)
    assert!(
        !run.stderr.contains("Karpenter is not running"),
        "{}",
        run.output()
    );
    assert!(!run.stderr.contains("force_destroy"), "{}", run.output());
    assert!(cluster.node_pool("p").is_none());
}

/// The token the documented-role tests use.
const DOCUMENTED_TOKEN: &str = "documented-role-token";

/// A stack (token login with the provider's `cluster_name`) applied with full rights, then
/// switched to a token limited to `rules`.
fn stack_with_rules(force_destroy: bool, rules: Vec<kube_testserver::PolicyRule>) -> Stack {
    let stack = Stack::scoped(force_destroy, ClusterScope::ProviderAttribute);
    stack.apply_and_seed();
    stack
        .cluster
        .server
        .grant(kube_testserver::Grant::new(DOCUMENTED_TOKEN, rules));
    let restricted = stack
        .config
        .replace(stack.cluster.server.token(), DOCUMENTED_TOKEN);
    assert_ne!(restricted, stack.config);
    stack.work.set_config(&restricted);
    stack
}

/// #28: the least-privilege ClusterRole of the docs is enough for the "is Karpenter running"
/// check (a destroy without `force_destroy` fails fast, not on its timeout) and for a
/// `force_destroy` teardown; no request is refused.
#[test]
fn the_documented_cluster_role_is_enough_for_the_liveness_check_and_force_destroy() {
    use crate::least_privilege_kube::{documented_rules, forbidden_requests};
    let stack = stack_with_rules(false, documented_rules());
    stack.cluster.server.stop_controller(false);
    let run = stack.work.destroy().failed();
    assert!(
        run.text().contains("Karpenter is not running"),
        "{}",
        run.output()
    );
    assert!(
        forbidden_requests(&stack.cluster).is_empty(),
        "{:?}",
        forbidden_requests(&stack.cluster)
    );

    let stack = stack_with_rules(true, documented_rules());
    stack.cluster.server.stop_controller(false);
    let run = stack.work.destroy().ok();
    assert!(!run.text().contains("Could not check"), "{}", run.output());
    assert_eq!(stack.karpenter_objects(), (false, false, 0));
    assert_eq!(stack.nodes(), BTreeMap::new(), "the pool's Node is left");
    assert_only_decoys_left(&stack.aws());
    assert!(
        forbidden_requests(&stack.cluster).is_empty(),
        "{:?}",
        forbidden_requests(&stack.cluster)
    );
}

/// #28: without the `leases` rule, a destroy while Karpenter runs still finishes, with a
/// warning that says what the missing rule costs.
#[test]
fn without_lease_access_a_destroy_warns_what_it_costs() {
    let mut rules = crate::least_privilege_kube::documented_rules();
    rules.retain(|r| !r.resources.iter().any(|x| x == "leases"));
    let stack = stack_with_rules(false, rules);
    // Karpenter takes a few seconds to finish (draining), so the delete looks at the Lease.
    let mut controller = ControllerConfig::karpenter();
    controller.leader_lease = Some(LeaseConfig {
        duration_seconds: 2,
        renew_every: Duration::from_millis(500),
        ..LeaseConfig::default()
    });
    controller.finalizer_removal_delay = Duration::from_secs(6);
    stack.cluster.server.set_controller(controller);
    let run = stack.work.destroy().ok();
    let text = run.text();
    assert!(
        text.contains("Could not check whether Karpenter is running"),
        "{}",
        run.output()
    );
    assert!(text.contains("timeouts.delete"), "{}", run.output());
    assert!(text.contains("leases in coordination.k8s.io"), "{}", run.output());
    assert_eq!(stack.karpenter_objects(), (false, false, 0));
}

/// #29, part 4: on an EKS Auto Mode cluster AWS runs Karpenter outside the cluster, so there is
/// no leader-election Lease. A destroy there waits for the finalizers AWS's Karpenter removes
/// (here after 40 s, longer than the 30 s that no Lease otherwise takes to mean "gone") and
/// never decides Karpenter is gone: with `force_destroy = true` and no cluster name, a wrong
/// verdict would fail on the missing name.
#[test]
fn on_eks_auto_mode_a_missing_lease_is_not_karpenter_gone() {
    let mut controller = ControllerConfig::karpenter();
    controller.leader_lease = None;
    controller.finalizer_removal_delay = Duration::from_secs(40);
    let cluster = Cluster::start(Config {
        crd_dirs: vec![
            TestServer::shared_crds_dir("v1"),
            acceptance_tests::workspace_root().join("acceptance-tests/crds/eks-auto-mode"),
        ],
        controller,
        ..Config::default()
    });
    let work = Workdir::new(&format!(
        r#"{}
resource "karpenter_node_pool" "p" {{
  name = "p"
  template = {{
    spec = {{
      node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }}]
    }}
  }}
  force_destroy = true
}}
"#,
        cluster.provider_block()
    ));
    work.apply().ok();
    let started = Instant::now();
    let run = work.destroy();
    println!("destroy on Auto Mode without a Lease: {:?}", started.elapsed());
    assert!(run.success, "{}", run.output());
    assert!(
        !run.stderr.contains("Karpenter is not running"),
        "{}",
        run.output()
    );
    assert!(!run.stderr.contains("force_destroy"), "{}", run.output());
    assert!(cluster.node_pool("p").is_none());
}
