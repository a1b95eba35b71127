//! `karpenter_node_overlay` through the real terraform CLI against the test server with the
//! v1.14.1 CRDs (v1 and the alpha kinds) and a simulated Karpenter that marks overlays Ready:
//! create, re-plan empty, drift, import with generated configuration, destroy; and a cluster
//! without the NodeOverlay CRD, where apply says which Karpenter version and gate it needs.

use acceptance_tests::kube::{Cluster, TestServer};
use acceptance_tests::roundtrip::{Import, import_with_generated_config};
use acceptance_tests::{Workdir, repo_file, resource_at};
use serde_json::json;

fn overlay(cluster: &Cluster, name: &str) -> Option<serde_json::Value> {
    cluster
        .server
        .object("karpenter.sh", "v1alpha1", "nodeoverlays", name)
}

fn example() -> String {
    repo_file("examples/resources/karpenter_node_overlay/resource.tf")
}

#[test]
fn example_applies_replans_empty_shows_drift_imports_and_destroys() {
    let cluster = Cluster::with_alpha_crds();
    let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), example()));
    work.apply().ok();

    let o = overlay(&cluster, "spot-discount").expect("NodeOverlay on the server");
    assert_eq!(o["spec"]["priceAdjustment"], "-10%");
    assert_eq!(o["spec"]["weight"], 10);
    assert_eq!(
        o["spec"]["requirements"][1],
        json!({"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]})
    );
    let fuse = overlay(&cluster, "fuse-devices").expect("second overlay");
    assert_eq!(fuse["spec"]["capacity"], json!({"smarter-devices/fuse": "1"}));
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // The status the simulated Karpenter wrote is read into state.
    cluster.eventually("overlay Ready", || {
        overlay(&cluster, "spot-discount").is_some_and(|o| o["status"]["conditions"].is_array())
    });
    work.terraform(&[
        "apply",
        "-refresh-only",
        "-auto-approve",
        "-no-color",
        "-input=false",
    ])
    .ok();
    let state = work.state();
    let spot = resource_at(&state, "karpenter_node_overlay.spot_discount");
    let ready = spot["values"]["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    assert!(ready, "{}", spot["values"]["status"]);

    // Drift on a field is shown as that field, and apply puts it back.
    assert!(cluster.server.patch_object(
        "karpenter.sh",
        "nodeoverlays",
        "",
        "spot-discount",
        &json!({"spec": {"weight": 99}})
    ));
    let run = work.plan().ok();
    assert!(
        run.stdout.contains("~ weight") && run.stdout.contains("99 -> 10"),
        "{}",
        run.stdout
    );
    work.apply().ok();
    assert_eq!(
        overlay(&cluster, "spot-discount").expect("overlay")["spec"]["weight"],
        10
    );

    // import {} with -generate-config-out gives configuration that plans empty.
    let generated = import_with_generated_config(
        &cluster,
        &[Import::new(
            "karpenter_node_overlay",
            "spot_discount",
            "spot-discount",
        )],
        "",
    );
    assert!(
        generated.contains("price_adjustment") && generated.contains("-10%"),
        "{generated}"
    );

    work.destroy().ok();
    assert!(overlay(&cluster, "spot-discount").is_none());
    assert!(overlay(&cluster, "fuse-devices").is_none());
}

/// Karpenter before v1.7 (or its CRDs without the alpha kinds): apply stops at the create
/// timeout with the version and gate the kind needs, not a generic "CRD not Established".
#[test]
fn a_cluster_without_the_crd_gets_the_version_and_gate_it_needs() {
    let cluster = Cluster::with_v1_crds();
    cluster.assert_kind_not_installed(
        r#"resource "karpenter_node_overlay" "x" {
  name         = "x"
  requirements = []
  price        = "0.5"
  timeouts {
    create = "5s"
  }
}
"#,
        &[
            "NodeOverlay is not installed in this cluster",
            "nodeoverlays.karpenter.sh",
            "Karpenter v1.7 or later",
            "NodeOverlay feature gate",
            "settings.featureGates.nodeOverlay=true",
        ],
    );
    assert!(overlay(&cluster, "x").is_none());
}

/// A CRD that arrives within the look-again window (a CRD chart installed in the same run)
/// is waited for as usual.
#[test]
fn a_crd_installed_during_the_apply_is_waited_for() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), example()));
    cluster.apply_with_crds_arriving(&work, &TestServer::shared_crds_dir("v1-alpha"));
    assert!(overlay(&cluster, "spot-discount").is_some());
}
