//! The real `kubectl` against the test server: get, apply (client-side and server-side),
//! patch, wait for an established CRD, delete, and client-certificate auth.

mod common;

use common::*;
use kube_testserver::{Config, TestServer};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const NODEPOOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: [\"amd64\"]
  limits:
    cpu: \"1000\"
";

struct Kubectl {
    kubeconfig: std::path::PathBuf,
    cache: std::path::PathBuf,
}

impl Kubectl {
    fn new(s: &TestServer) -> Self {
        if std::process::Command::new("kubectl")
            .arg("version")
            .arg("--client")
            .output()
            .is_err()
        {
            panic!(
                "kubectl not found on PATH: the kubectl tests need it (v1.32 is expected at /usr/bin/kubectl)"
            );
        }
        Kubectl {
            kubeconfig: s.kubeconfig_path(),
            cache: s.work_dir().join("kubectl-cache"),
        }
    }

    /// Run kubectl; returns (success, stdout, stderr).
    async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let fut = tokio::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args)
            .output();
        let out = tokio::time::timeout(GUARD, fut)
            .await
            .expect("kubectl finished")
            .expect("kubectl ran");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(ok, "kubectl {args:?} failed:\n{out}\n{err}");
        out
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gets_applies_patches_waits_and_deletes() {
    let s = start_with(Config {
        crd_dirs: vec![v1_crds()],
        ..Config::default()
    })
    .await;
    let k = Kubectl::new(&s);
    let crds = k.ok(&["get", "crd"]).await;
    assert!(
        crds.contains("nodepools.karpenter.sh") && crds.contains("ec2nodeclasses.karpenter.k8s.aws"),
        "{crds}"
    );

    let file = write(s.work_dir(), "nodepool.yaml", NODEPOOL);
    let out = k.ok(&["apply", "-f", &file]).await;
    assert!(out.contains("nodepool.karpenter.sh/default created"), "{out}");
    let obj = s.object("karpenter.sh", "v1", "nodepools", "default").unwrap();
    assert!(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].is_string());
    assert_eq!(obj["spec"]["disruption"]["consolidateAfter"], "0s");

    let out = k.ok(&["apply", "-f", &file]).await;
    assert!(out.contains("unchanged"), "{out}");
    let changed = write(
        s.work_dir(),
        "nodepool2.yaml",
        &NODEPOOL.replace("\"1000\"", "\"2000\""),
    );
    let out = k.ok(&["apply", "-f", &changed]).await;
    assert!(out.contains("configured"), "{out}");
    assert_eq!(
        s.object("karpenter.sh", "v1", "nodepools", "default").unwrap()["spec"]["limits"]["cpu"],
        "2000"
    );

    // Server-side apply: without --force-conflicts the client-side manager's field conflicts.
    let (ok, _, err) = k.run(&["apply", "--server-side", "-f", &file]).await;
    assert!(!ok && err.contains("conflict"), "{err}");
    let out = k
        .ok(&["apply", "--server-side", "--force-conflicts", "-f", &file])
        .await;
    assert!(out.contains("serverside-applied"), "{out}");
    let obj = s.object("karpenter.sh", "v1", "nodepools", "default").unwrap();
    assert_eq!(obj["spec"]["limits"]["cpu"], "1000");
    let mf = obj["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        mf.iter()
            .any(|e| e["manager"] == "kubectl" && e["operation"] == "Apply"),
        "{mf:?}"
    );

    let out = k
        .ok(&[
            "patch",
            "nodepool",
            "default",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"weight":7}}"#,
        ])
        .await;
    assert!(out.contains("patched"), "{out}");
    assert_eq!(
        s.object("karpenter.sh", "v1", "nodepools", "default").unwrap()["spec"]["weight"],
        7
    );
    let (ok, _, err) = k
        .run(&[
            "patch",
            "nodepool",
            "default",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"weight":700}}"#,
        ])
        .await;
    assert!(
        !ok && err.contains("spec.weight") && err.contains("less than or equal to 100"),
        "{err}"
    );

    // Printer columns come from the CRD (server-side Table).
    let table = k.ok(&["get", "nodepools"]).await;
    let header = table.lines().next().unwrap_or("");
    assert!(
        header
            .split_whitespace()
            .eq(["NAME", "NODECLASS", "NODES", "READY", "AGE"]),
        "{table}"
    );
    assert!(
        table.lines().nth(1).unwrap_or("").starts_with("default "),
        "{table}"
    );
    let json = k.ok(&["get", "nodepool", "default", "-o", "json"]).await;
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["metadata"]["name"], "default");

    let out = k
        .ok(&[
            "wait",
            "--for",
            "condition=established",
            "crd/nodepools.karpenter.sh",
            "--timeout=10s",
        ])
        .await;
    assert!(out.contains("condition met"), "{out}");

    let out = k.ok(&["delete", "nodepool", "default"]).await;
    assert!(out.contains("deleted"), "{out}");
    assert!(s.object("karpenter.sh", "v1", "nodepools", "default").is_none());

    let out = k
        .ok(&["--context", "kube-testserver-cert", "get", "nodepools"])
        .await;
    assert!(!out.contains("default"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_waits_for_a_crd_registered_later_and_deletes_through_finalizers() {
    let mut ctl = kube_testserver::ControllerConfig::karpenter();
    ctl.finalizer_removal_delay = Duration::from_millis(300);
    let s = start_with(Config {
        establish_delay: Duration::from_millis(800),
        controller: ctl,
        ..Config::default()
    })
    .await;
    let k = Kubectl::new(&s);
    let text = std::fs::read_to_string(v1_crds().join("karpenter.sh_nodepools.yaml")).unwrap();
    let crd_file = write(s.work_dir(), "crd.yaml", &text);
    let out = k.ok(&["apply", "--server-side", "-f", &crd_file]).await;
    assert!(out.contains("serverside-applied"), "{out}");
    let out = k
        .ok(&[
            "wait",
            "--for",
            "condition=established",
            "crd/nodepools.karpenter.sh",
            "--timeout=20s",
        ])
        .await;
    assert!(out.contains("condition met"), "{out}");
    let file = write(s.work_dir(), "nodepool.yaml", NODEPOOL);
    k.ok(&["apply", "-f", &file]).await;
    eventually(10, "finalizer", || {
        let o = s.object("karpenter.sh", "v1", "nodepools", "default")?;
        o["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
            .then_some(())
    })
    .await;
    let out = k.ok(&["delete", "nodepool", "default", "--timeout=20s"]).await;
    assert!(out.contains("deleted"), "{out}");
    assert!(s.object("karpenter.sh", "v1", "nodepools", "default").is_none());
}
