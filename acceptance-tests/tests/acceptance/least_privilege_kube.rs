//! The ClusterRole in `docs/guides/least-privilege.md` is enough, and every rule in it counts:
//! the Kubernetes API test server gets a token limited to exactly the rules of that YAML, and
//! terraform applies, refreshes and destroys node pools and EC2 node classes (v1), node overlays
//! and capacity buffers (the alpha kinds; capacity buffers are namespaced), and provisioners
//! and node templates (v1alpha5) with it, and lists every kind (`terraform query`, with states)
//! with it; on an EKS Auto Mode cluster, the NodeClass and an Auto Mode pool too. With a rule
//! taken away, the apply fails with the API server's 403 naming the verb and the resource.

use crate::protocol;

use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::{Workdir, repo_file};
use kube_testserver::{Grant, PolicyRule};
use serde_json::Value;

const TOKEN: &str = "least-privilege-token";

/// The rules of the ClusterRole documented in the guide (the first YAML block there).
pub(crate) fn documented_rules() -> Vec<PolicyRule> {
    let guide = repo_file("docs/guides/least-privilege.md");
    let yaml = guide
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```yaml block in the guide");
    let role: Value = serde_saphyr::from_str(yaml).expect("the ClusterRole YAML parses");
    assert_eq!(role["kind"], "ClusterRole");
    serde_json::from_value(role["rules"].clone()).expect("rules are apiGroups/resources/verbs")
}

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

fn config(cluster: &Cluster) -> String {
    let provider = cluster.provider_block().replace(cluster.server.token(), TOKEN);
    assert!(provider.contains(TOKEN));
    let mut c = provider;
    for example in [
        "karpenter_ec2_node_class",
        "karpenter_node_pool",
        "karpenter_node_template",
        "karpenter_provisioner",
        "karpenter_node_overlay",
        "karpenter_capacity_buffer",
    ] {
        c.push_str(&repo_file(&format!("examples/resources/{example}/resource.tf")));
        c.push('\n');
    }
    c
}

fn objects(cluster: &Cluster) -> [Option<Value>; 8] {
    let s = &cluster.server;
    let buffers = ("autoscaling.x-k8s.io", "v1beta1", "capacitybuffers");
    [
        s.object("karpenter.sh", "v1", "nodepools", "default"),
        s.object("karpenter.k8s.aws", "v1", "ec2nodeclasses", "default"),
        s.object("karpenter.sh", "v1alpha5", "provisioners", "default"),
        s.object("karpenter.k8s.aws", "v1alpha1", "awsnodetemplates", "default"),
        s.object("karpenter.sh", "v1alpha1", "nodeoverlays", "spot-discount"),
        s.object("karpenter.sh", "v1alpha1", "nodeoverlays", "fuse-devices"),
        s.object_in(buffers.0, buffers.1, buffers.2, "ci", "ci-runners"),
        s.object_in(buffers.0, buffers.1, buffers.2, "default", "web-headroom"),
    ]
}

/// (verb, group/resource) of every request the restricted token made, from the request log.
pub(crate) fn forbidden_requests(cluster: &Cluster) -> Vec<String> {
    cluster
        .server
        .request_log()
        .into_iter()
        .filter(|r| r.status == 403)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[test]
fn the_documented_cluster_role_is_enough_for_every_kind() {
    let cluster = cluster();
    let rules = documented_rules();
    cluster.server.grant(Grant::new(TOKEN, rules));
    let work = Workdir::new(&config(&cluster));
    work.apply().ok();
    assert!(
        objects(&cluster).iter().all(Option::is_some),
        "all eight objects on the server"
    );
    assert!(
        work.plan_is_empty(),
        "refresh with the restricted token finds no drift"
    );
    // `terraform query` (list blocks, with states) works with the same token.
    tokio::runtime::Runtime::new().expect("runtime").block_on(async {
        let mut s = protocol::Session::start(serde_json::json!({"kubernetes": {
            "host": cluster.server.base_url(),
            "cluster_ca_certificate": cluster.server.ca_pem(),
            "token": TOKEN,
        }}))
        .await;
        for (type_name, count) in [
            ("karpenter_node_pool", 1),
            ("karpenter_ec2_node_class", 1),
            ("karpenter_provisioner", 1),
            ("karpenter_node_template", 1),
            ("karpenter_node_overlay", 2),
            ("karpenter_capacity_buffer", 2),
        ] {
            let (found, diags) = s.list(type_name, serde_json::json!({}), true, 100).await;
            assert!(diags.is_empty(), "{type_name}: {}", protocol::text(&diags));
            assert_eq!(found.len(), count, "{type_name}");
        }
    });
    work.destroy().ok();
    assert!(
        objects(&cluster).iter().all(Option::is_none),
        "all eight objects deleted"
    );
    let denied = forbidden_requests(&cluster);
    assert!(denied.is_empty(), "requests refused: {denied:?}");
    // The token really was restricted: the server's own token was never used.
    assert!(
        cluster.server.request_log().iter().all(|r| r.status != 401),
        "unauthenticated requests"
    );
}

#[test]
fn a_token_without_the_documented_rules_is_refused() {
    let cluster = cluster();
    let outsider = Grant::new(TOKEN, vec![PolicyRule::new(&[""], &["namespaces"], &["get"])]);
    cluster.server.grant(outsider);
    let work = Workdir::new(&config(&cluster));
    let run = work.apply().failed();
    assert!(run.text().contains("forbidden"), "{}", run.output());
}

/// Which terraform command a case runs with the reduced role.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    Apply,
    Refresh,
    Destroy,
}

/// Each case takes one verb (or a whole rule) away and runs the command that needs it; the
/// error must name the verb, the resource and the API group. Objects are created with the full
/// role first when the command is a refresh or a destroy.
#[test]
fn removing_a_rule_fails_with_a_clear_diagnostic() {
    let full = documented_rules();
    let find = |group: &str, resource: &str| {
        full.iter()
            .position(|r| {
                r.api_groups.iter().any(|g| g == group) && r.resources.iter().any(|x| x == resource)
            })
            .unwrap_or_else(|| panic!("no documented rule for {resource}.{group}"))
    };
    let cases: [(usize, Option<&str>, Stage, &str); 5] = [
        (
            find("karpenter.sh", "nodepools"),
            Some("patch"),
            Stage::Apply,
            "cannot patch resource \"nodepools\" in API group \"karpenter.sh\"",
        ),
        (
            find("karpenter.k8s.aws", "ec2nodeclasses"),
            Some("get"),
            Stage::Refresh,
            "cannot get resource \"ec2nodeclasses\" in API group \"karpenter.k8s.aws\"",
        ),
        (
            find("karpenter.sh", "provisioners"),
            Some("delete"),
            Stage::Destroy,
            "cannot delete resource \"provisioners\" in API group \"karpenter.sh\"",
        ),
        (
            find("autoscaling.x-k8s.io", "capacitybuffers"),
            Some("patch"),
            Stage::Apply,
            "cannot patch resource \"capacitybuffers\" in API group \"autoscaling.x-k8s.io\" in the namespace",
        ),
        (
            find("apiextensions.k8s.io", "customresourcedefinitions"),
            None,
            Stage::Apply,
            "resource \"customresourcedefinitions\" in API group \"apiextensions.k8s.io\"",
        ),
    ];
    for (index, verb, stage, expected) in cases {
        let mut rules = full.clone();
        match verb {
            Some(v) => rules[index].verbs.retain(|x| x != v),
            None => {
                rules.remove(index);
            }
        }
        let cluster = cluster();
        let work = Workdir::new(&config(&cluster));
        if stage != Stage::Apply {
            cluster.server.grant(Grant::new(TOKEN, full.clone()));
            work.apply().ok();
        }
        cluster.server.grant(Grant::new(TOKEN, rules));
        let run = match stage {
            Stage::Apply => work.apply(),
            Stage::Refresh => work.plan(),
            Stage::Destroy => work.destroy(),
        };
        let text = run.text();
        assert!(
            !run.success && text.contains(expected) && text.contains("Error:"),
            "without {verb:?} on rule {index}, {stage:?} should fail naming {expected:?}:\n{}",
            run.output()
        );
        assert!(!forbidden_requests(&cluster).is_empty());
        let diagnostic: Vec<&str> = run
            .stderr
            .lines()
            .skip_while(|l| !l.starts_with("Error:"))
            .filter(|l| !l.trim().is_empty())
            .take(6)
            .collect();
        eprintln!(
            "{stage:?} without {verb:?} on rule {index}:\n{}\n",
            diagnostic.join("\n")
        );
    }
}

/// #29: on an EKS Auto Mode cluster the same ClusterRole is enough for a NodeClass and an Auto
/// Mode pool: apply (with the reference check reading the NodeClass), refresh, list, destroy.
#[test]
fn the_documented_cluster_role_is_enough_on_eks_auto_mode() {
    let cluster = Cluster::with_eks_auto_mode();
    cluster.server.grant(Grant::new(TOKEN, documented_rules()));
    let provider = cluster.provider_block().replace(cluster.server.token(), TOKEN);
    let work = Workdir::new(&format!(
        "{provider}\n{}\n{}",
        repo_file("examples/resources/karpenter_eks_node_class/resource.tf"),
        crate::eks_auto_mode::POOL
    ));
    work.apply().ok();
    assert!(cluster.eks_node_class("private").is_some() && cluster.node_pool("batch").is_some());
    assert!(
        work.plan_is_empty(),
        "refresh with the restricted token finds no drift"
    );
    tokio::runtime::Runtime::new().expect("runtime").block_on(async {
        let mut s = protocol::Session::start(serde_json::json!({"kubernetes": {
            "host": cluster.server.base_url(),
            "cluster_ca_certificate": cluster.server.ca_pem(),
            "token": TOKEN,
        }}))
        .await;
        let (found, diags) = s
            .list("karpenter_eks_node_class", serde_json::json!({}), true, 100)
            .await;
        assert!(diags.is_empty(), "{}", protocol::text(&diags));
        assert_eq!(found.len(), 1);
    });
    work.destroy().ok();
    assert!(cluster.eks_node_class("private").is_none());
    let denied = forbidden_requests(&cluster);
    assert!(denied.is_empty(), "requests refused: {denied:?}");
}
