//! The Kubernetes API test server for acceptance tests: started in the test process (on its
//! own runtime thread, so blocking `terraform` runs are fine) and wired into the provider block.

use std::path::Path;
use std::time::Duration;

pub use kube_testserver::{Config, ControllerConfig, FaultKind, FaultSpec, LoggedRequest, TestServer};

/// A running test server.
pub struct Cluster {
    pub server: TestServer,
}

impl Cluster {
    /// `terraform apply` in `work`, with the CRDs of `crds_dir` installed once terraform prints
    /// its first `: Creating...`: CRDs that arrive during the apply, however long a loaded
    /// machine takes to start it (a fixed delay could install them before the apply began).
    /// Panics unless the apply succeeds.
    pub fn apply_with_crds_arriving(&self, work: &crate::Workdir, crds_dir: &Path) {
        let guard = Duration::from_secs(300);
        let mut apply = work.spawn(&["apply", "-no-color", "-input=false", "-auto-approve"]);
        assert!(
            apply.wait_for_stdout_line(|l| l.contains(": Creating..."), guard),
            "the apply never started creating"
        );
        self.server.install_crds_from_dir(crds_dir).expect("CRDs");
        apply.wait(guard).0.ok();
    }

    /// A server with the v1 CRDs already established and a simulated Karpenter running.
    pub fn with_v1_crds() -> Self {
        Self::start(Config {
            crd_dirs: vec![TestServer::shared_crds_dir("v1")],
            controller: ControllerConfig::karpenter(),
            ..Config::default()
        })
    }

    /// The quick-start's cluster (the local environment of `scripts/quickstart.sh`): Karpenter's
    /// kinds rebuilt from the repository's release data
    /// ([`crate::karpenter_release::served::newest`]), so a clone serves them with nothing
    /// beside it, and a simulated Karpenter running.
    pub fn from_release_data() -> Result<Self, String> {
        let crds = crate::karpenter_release::served::newest().map_err(|e| e.to_string())?;
        let cluster = Self::start(Config {
            controller: ControllerConfig::karpenter(),
            ..Config::default()
        });
        for crd in &crds {
            cluster
                .server
                .install_crd(&crd.to_string())
                .map_err(|e| format!("installing {}: {e}", crd["metadata"]["name"]))?;
        }
        Ok(cluster)
    }

    /// An EKS Auto Mode cluster: the v1 CRDs (Auto Mode serves `karpenter.sh/v1` NodePools and
    /// NodeClaims; EC2NodeClass comes along, as `crds/v1` has it too) with Auto Mode's NodePool
    /// default ([`auto_mode_node_pool_crd`]), and the NodeClass CRD rebuilt from the live EKS
    /// 1.31 schema and the EKS user guide (`acceptance-tests/crds/eks-auto-mode/`), with a
    /// simulated controller that holds no leader-election Lease: AWS runs it outside the cluster.
    pub fn with_eks_auto_mode() -> Self {
        let mut controller = ControllerConfig::karpenter();
        controller.leader_lease = None;
        controller.finalizers.insert(
            "NodeClass".to_string(),
            "eks.amazonaws.com/termination".to_string(),
        );
        Self::start(Config {
            crd_dirs: vec![
                TestServer::shared_crds_dir("v1"),
                crate::workspace_root().join("acceptance-tests/crds/eks-auto-mode"),
            ],
            controller,
            ..Config::default()
        })
        .installing(&auto_mode_node_pool_crd())
    }

    /// Installs (or replaces) CRDs from YAML text, panicking on an error.
    pub fn installing(self, crd_yaml: &str) -> Self {
        self.server
            .install_crd(crd_yaml)
            .unwrap_or_else(|e| panic!("installing a CRD: {e}"));
        self
    }

    /// A server with the v1 CRDs and the alpha kinds of `crds/v1-alpha/` (NodeOverlay, the
    /// namespaced CapacityBuffer) established and a simulated Karpenter running.
    pub fn with_alpha_crds() -> Self {
        Self::start(Config {
            crd_dirs: vec![
                TestServer::shared_crds_dir("v1"),
                TestServer::shared_crds_dir("v1-alpha"),
            ],
            controller: ControllerConfig::karpenter(),
            ..Config::default()
        })
    }

    /// A server with the CRDs of one Karpenter release from `crds/versions/` (`v1.0.14`, …)
    /// established and a simulated Karpenter running: a cluster on an older Karpenter.
    pub fn with_release_crds(release: &str) -> Self {
        Self::start(Config {
            crd_dirs: vec![TestServer::shared_crds_dir("versions").join(release)],
            controller: ControllerConfig::karpenter(),
            ..Config::default()
        })
    }

    /// A cluster on Karpenter v1.15: the CRDs of Karpenter's `main` after v1.14.1 (`crds/v1-main/`,
    /// which carry v1.15's open `spec.kubelet`), with the EC2NodeClass `spec.enclaveOptions`
    /// that v1.15 documents (`enabled`, a boolean, required when the object is given) added,
    /// since no v1.15 CRD file is in `../shared`; and a simulated Karpenter running, with its
    /// `NodeClassCEL` feature gate on (the docs' expressions need it).
    pub fn with_v1_15_crds() -> Self {
        Self::with_v1_15_crds_gated(true)
    }

    /// [`Cluster::with_v1_15_crds`], with Karpenter's `NodeClassCEL` feature gate on or off
    /// (off, a node class with a kubelet expression is refused after the write).
    pub fn with_v1_15_crds_gated(node_class_cel: bool) -> Self {
        let mut controller = ControllerConfig::karpenter();
        controller.node_class_cel = node_class_cel;
        let cluster = Self::start(Config {
            crd_dirs: vec![TestServer::shared_crds_dir("v1-main")],
            controller,
            ..Config::default()
        });
        let path = TestServer::shared_crds_dir("v1-main").join("karpenter.k8s.aws_ec2nodeclasses.yaml");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut crd: serde_json::Value =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for version in crd["spec"]["versions"].as_array_mut().into_iter().flatten() {
            version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["enclaveOptions"] = serde_json::json!({
                "type": "object",
                "description": "AWS Nitro Enclaves on the instances (Karpenter v1.15).",
                "properties": {"enabled": {"type": "boolean"}},
                "required": ["enabled"],
            });
        }
        // JSON is YAML: the patched CRD is installed as it is.
        cluster.installing(&crd.to_string())
    }

    /// The Karpenter releases whose CRDs are in `crds/versions/`, oldest first (`v1.0.14`, …).
    pub fn releases() -> Vec<String> {
        let dir = TestServer::shared_crds_dir("versions");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        names.sort_by_key(|n| kube_testserver::upstream::release_key(n));
        names
    }

    /// A server with no CRDs yet (a cluster where Karpenter is not installed yet).
    pub fn empty() -> Self {
        Self::start(Config {
            controller: ControllerConfig::karpenter(),
            ..Config::default()
        })
    }

    pub fn start(config: Config) -> Self {
        let server = TestServer::start_background(config).unwrap_or_else(|e| panic!("kube-testserver: {e}"));
        Cluster { server }
    }

    /// The provider block for this server: host, CA and token, as an EKS module would feed them.
    pub fn provider_block(&self) -> String {
        format!(
            "provider \"karpenter\" {{\n  kubernetes {{\n    host                   = \"{}\"\n    cluster_ca_certificate = <<-EOT\n{}\n    EOT\n    token                  = \"{}\"\n  }}\n}}\n",
            self.server.base_url(),
            self.server.ca_pem().trim_end(),
            self.server.token()
        )
    }

    /// The provider block using the server's kubeconfig file instead.
    pub fn provider_block_kubeconfig(&self) -> String {
        format!(
            "provider \"karpenter\" {{\n  kubernetes {{\n    config_path = \"{}\"\n  }}\n}}\n",
            self.server.kubeconfig_path().display()
        )
    }

    pub fn node_pool(&self, name: &str) -> Option<serde_json::Value> {
        self.server.object("karpenter.sh", "v1", "nodepools", name)
    }

    pub fn node_class(&self, name: &str) -> Option<serde_json::Value> {
        self.server
            .object("karpenter.k8s.aws", "v1", "ec2nodeclasses", name)
    }

    /// An EKS Auto Mode NodeClass by name.
    pub fn eks_node_class(&self, name: &str) -> Option<serde_json::Value> {
        self.server.object("eks.amazonaws.com", "v1", "nodeclasses", name)
    }

    /// Requests whose path contains `fragment` (and method, when given).
    pub fn requests(&self, method: Option<&str>, fragment: &str) -> Vec<LoggedRequest> {
        self.server
            .request_log()
            .into_iter()
            .filter(|r| method.is_none_or(|m| r.method.eq_ignore_ascii_case(m)) && r.path.contains(fragment))
            .collect()
    }

    /// Waits (bounded) until `check` holds, for effects of the simulated controller.
    pub fn eventually(&self, what: &str, mut check: impl FnMut() -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !check() {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Applies `resource` (HCL of one Kubernetes kind whose CRD this cluster lacks) and checks
    /// that the apply fails, saying each of `phrases` (the kind, the CRD, the Karpenter version
    /// and feature gate it needs), without waiting for the create timeout the resource sets.
    pub fn assert_kind_not_installed(&self, resource: &str, phrases: &[&str]) {
        let work = crate::Workdir::new(&format!("{}\n{resource}", self.provider_block()));
        let started = std::time::Instant::now();
        let run = work.apply().failed();
        let took = started.elapsed();
        let text = run.output().replace('\n', " ");
        for expected in phrases {
            assert!(
                text.contains(expected),
                "missing {expected:?} in:\n{}",
                run.output()
            );
        }
        eprintln!("not-installed answer after {took:?}");
    }
}

/// The NodePool CRD of an EKS Auto Mode cluster: Karpenter's (`crds/v1`) with `expireAfter`
/// defaulting to `336h`, as in the NodePool CRD an EKS 1.31 Auto Mode cluster serves (the JSON
/// Schema generated from it: imroc/kubeschemas, `karpenter.sh/nodepool_v1.json`, commit
/// 32f51d9c, 2024-12-27). The rest of that schema predates fields Auto Mode has taken up since
/// (static pools' `replicas`, among others), so Karpenter's current CRD stands in for them.
pub fn auto_mode_node_pool_crd() -> String {
    let path = TestServer::shared_crds_dir("v1").join("karpenter.sh_nodepools.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let karpenters = "default: 720h";
    assert_eq!(
        text.matches(karpenters).count(),
        1,
        "{}: expected one expireAfter default",
        path.display()
    );
    text.replace(karpenters, "default: 336h")
}
