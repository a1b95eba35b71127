//! Figure 10 (issue 51): what saying which nodes a change replaces costs a plan. One NodePool
//! with 500 NodeClaims (labelled and hashed as Karpenter makes them) in the test server; a
//! `terraform plan` that changes a template label (the provider lists the NodeClaims once and
//! warns "replaces 500 of 500 nodes") beside a plan of the same state that changes only
//! `weight` (no drift, no list), interleaved. With `TF_LOG_PROVIDER=debug` the provider logs
//! the preview's own time ("drift preview", µs): the list, the verdicts and the warning.

use acceptance_tests::Workdir;
use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use serde_json::json;

use crate::error::BenchError;
use crate::provider::ProviderDir;
use crate::stats::Samples;

/// NodeClaims in the cluster.
pub const CLAIMS: usize = 500;

/// What figure 10 measured.
#[derive(Debug, Clone, Default)]
pub struct DriftFigures {
    /// Plan wall time (s) of the label change.
    pub plan: Samples,
    /// Plan wall time (s) of the weight change, the baseline.
    pub baseline: Samples,
    /// The provider's own time for the preview, ms.
    pub preview_ms: Samples,
    /// NodeClaim lists per plan with the label change (from the last repetition).
    pub lists: usize,
}

impl DriftFigures {
    /// Median over median.
    pub fn ratio(&self) -> f64 {
        self.plan.median_ratio(&self.baseline).unwrap_or(0.0)
    }
}

fn config(provider: &str, label: &str, weight: u32) -> String {
    format!(
        r#"{provider}
resource "karpenter_ec2_node_class" "default" {{
  name                          = "default"
  role                          = "KarpenterNodeRole-bench"
  ami_selector_terms            = [{{ alias = "al2023@latest" }}]
  subnet_selector_terms         = [{{ tags = {{ "karpenter.sh/discovery" = "bench" }} }}]
  security_group_selector_terms = [{{ tags = {{ "karpenter.sh/discovery" = "bench" }} }}]
}}

resource "karpenter_node_pool" "general" {{
  name   = "general"
  weight = {weight}
  template = {{
    metadata = {{ labels = {{ team = "{label}" }} }}
    spec = {{
      node_class_ref = {{ name = karpenter_ec2_node_class.default.name }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] }}]
    }}
  }}
}}
"#
    )
}

/// The pool's annotation `key`, once the simulated Karpenter wrote it.
fn pool_annotation(cluster: &Cluster, key: &str) -> Result<String, BenchError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(v) = cluster
            .node_pool("general")
            .and_then(|p| p["metadata"]["annotations"][key].as_str().map(str::to_string))
        {
            return Ok(v);
        }
        if std::time::Instant::now() > deadline {
            return Err(BenchError::Measure(format!("the pool never got {key}")));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `CLAIMS` NodeClaims of the pool, as Karpenter labels and annotates them.
fn seed(cluster: &Cluster) -> Result<(), BenchError> {
    let hash = pool_annotation(cluster, "karpenter.sh/nodepool-hash")?;
    let version = pool_annotation(cluster, "karpenter.sh/nodepool-hash-version")?;
    let types = ["m5.large", "c5.xlarge", "r6i.2xlarge", "m7g.large"];
    for i in 0..CLAIMS {
        let instance_type = types[i % types.len()];
        let family = instance_type.split('.').next().unwrap_or_default();
        let name = format!("general-{i:04}");
        let zone = ["us-east-1a", "us-east-1b", "us-east-1c"][i % 3];
        let capacity = if i % 3 == 0 { "spot" } else { "on-demand" };
        let arch = if family.ends_with('g') { "arm64" } else { "amd64" };
        let category = &family[..1];
        let claim = json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {
                "name": name,
                "labels": {
                    "karpenter.sh/nodepool": "general", "karpenter.k8s.aws/ec2nodeclass": "default",
                    "karpenter.sh/capacity-type": capacity,
                    "node.kubernetes.io/instance-type": instance_type,
                    "karpenter.k8s.aws/instance-family": family,
                    "karpenter.k8s.aws/instance-category": category,
                    "kubernetes.io/arch": arch,
                    "kubernetes.io/os": "linux", "topology.kubernetes.io/region": "us-east-1",
                    "topology.kubernetes.io/zone": zone,
                    "team": "platform"
                },
                "annotations": {"karpenter.sh/nodepool-hash": hash, "karpenter.sh/nodepool-hash-version": version}
            },
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [instance_type]}]
            }
        });
        cluster
            .server
            .create_object("karpenter.sh", "v1", "nodeclaims", "", claim, "karpenter")
            .map_err(|e| BenchError::Measure(format!("creating NodeClaim {name}: {e:?}")))?;
    }
    Ok(())
}

/// The micros of the provider's "drift preview" line in `log`.
fn preview_micros(log: &str) -> Option<u64> {
    log.lines().filter(|l| l.contains("drift preview")).find_map(|l| {
        let at = l.find("micros=")? + "micros=".len();
        l[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()
    })
}

/// Runs figure 10.
pub fn measure(reps: usize, p: &ProviderDir) -> Result<DriftFigures, BenchError> {
    let cluster = Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller: ControllerConfig {
            node_claims_per_node_pool: 0,
            ..ControllerConfig::karpenter()
        },
        ..Config::default()
    });
    let provider = cluster.provider_block();
    let mut work = Workdir::with_provider_dir(&config(&provider, "platform", 10), &p.dir, &[]);
    let applied = work.terraform(&["apply", "-no-color", "-input=false", "-auto-approve"]);
    if !applied.success {
        return Err(BenchError::Terraform {
            what: "apply of the drift figure's pool".into(),
            output: applied.output(),
        });
    }
    seed(&cluster)?;
    work.env("TF_LOG_PROVIDER", "debug");
    let drifting = config(&provider, "core", 10);
    let behavioural = config(&provider, "platform", 20);
    let mut figures = DriftFigures::default();
    let plan = |config: &str, what: &str| -> Result<(f64, String), BenchError> {
        work.set_config(config);
        let start = std::time::Instant::now();
        let run = work.terraform(&["plan", "-no-color", "-input=false"]);
        let secs = start.elapsed().as_secs_f64();
        if !run.success {
            return Err(BenchError::Terraform {
                what: what.to_string(),
                output: run.output(),
            });
        }
        Ok((secs, format!("{}\n{}", run.stdout, run.stderr)))
    };
    // One untimed warm-up of each.
    plan(&drifting, "plan of a drifting change (warm-up)")?;
    plan(&behavioural, "plan of a behavioural change (warm-up)")?;
    for rep in 0..reps {
        for turn in 0..2 {
            if (turn + rep) % 2 == 0 {
                cluster.server.clear_request_log();
                let (secs, out) = plan(&drifting, "plan of a drifting change")?;
                let expected = format!("This change replaces {CLAIMS} of {CLAIMS} nodes");
                if !out.replace('\n', " ").contains(&expected) {
                    return Err(BenchError::Measure(format!(
                        "no {expected:?} in the plan:\n{out}"
                    )));
                }
                let us = preview_micros(&out).ok_or_else(|| {
                    BenchError::Measure("no \"drift preview\" line in the provider's log".into())
                })?;
                figures.plan.push(secs);
                figures.preview_ms.push(us as f64 / 1000.0);
                figures.lists = cluster
                    .requests(Some("GET"), "/nodeclaims")
                    .iter()
                    .filter(|r| r.path.ends_with("/nodeclaims"))
                    .count();
            } else {
                let (secs, _) = plan(&behavioural, "plan of a behavioural change")?;
                figures.baseline.push(secs);
            }
        }
    }
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::preview_micros;

    #[test]
    fn reads_the_previews_timing_line() {
        let log = "2026-11-26T06:00:00.000Z [DEBUG] provider.terraform-provider-karpenter: drift preview: \
                   kind=NodePool name=general micros=5120 warnings=1";
        assert_eq!(preview_micros(log), Some(5120));
        assert_eq!(preview_micros("nothing here"), None);
    }
}
