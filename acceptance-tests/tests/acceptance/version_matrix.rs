//! Every Karpenter v1 minor (#16, #50): the documented node pool and node class examples apply,
//! re-plan empty, import and destroy against the CRDs of each release in `crds/versions/`
//! (v1.0 to v1.14) and of v1.15 ([`Cluster::with_v1_15_crds`]: `crds/v1-main/` with v1.15's
//! `enclaveOptions`), and a setting the installed CRDs do not have fails at once on its
//! attribute, naming the release that added it.
//!
//! By default all sixteen minors run, in four tests of four minors each (about 40 s of one
//! thread on the 2-core machine in all);
//! `KARPENTER_VERSION_MATRIX=changed` runs only v1.0 and every minor that added a field our
//! schemas write (the releases in the provider's first-release table), for a quicker local
//! loop. Figures are in `acceptance-tests/reports/reliability.md`.

use std::time::{Duration, Instant};

use acceptance_tests::kube::Cluster;
use acceptance_tests::{Workdir, repo_file};
use terraform_provider_karpenter::k8s::skew::FIRST_RELEASES;

fn examples() -> String {
    format!(
        "{}\n{}",
        repo_file("examples/resources/karpenter_ec2_node_class/resource.tf"),
        repo_file("examples/resources/karpenter_node_pool/resource.tf")
    )
}

/// The name the matrix gives v1.15, whose CRDs are not among `crds/versions/`.
const V1_15: &str = "v1.15";

/// The releases to run: all, or with `KARPENTER_VERSION_MATRIX=changed` v1.0 and each minor
/// that added a field (v1.15 always: it opened the kubelet).
fn selected() -> Vec<String> {
    let mut all = Cluster::releases();
    all.push(V1_15.to_string());
    if std::env::var("KARPENTER_VERSION_MATRIX").as_deref() != Ok("changed") {
        return all;
    }
    all.into_iter()
        .filter(|release| {
            release == V1_15
                || release.starts_with("v1.0.")
                || FIRST_RELEASES
                    .iter()
                    .any(|(_, _, first)| release.starts_with(&format!("{first}.")))
        })
        .collect()
}

/// The selected minors run in [`PARTS`] tests, each taking every `PARTS`-th release: the
/// harness runs tests in name order, so one test of all sixteen started last and ran alone
/// for half a minute at the end of the run.
const PARTS: usize = 4;

/// The releases of part `index` (0-based) of the matrix: every `PARTS`-th selected one.
fn part(index: usize) -> Vec<String> {
    let releases = selected();
    assert!(releases.len() >= 2, "{releases:?}");
    releases.into_iter().skip(index).step_by(PARTS).collect()
}

#[test]
fn examples_apply_replan_import_and_destroy_on_every_selected_minor_part_1() {
    examples_apply_replan_import_and_destroy(&part(0));
}

#[test]
fn examples_apply_replan_import_and_destroy_on_every_selected_minor_part_2() {
    examples_apply_replan_import_and_destroy(&part(1));
}

#[test]
fn examples_apply_replan_import_and_destroy_on_every_selected_minor_part_3() {
    examples_apply_replan_import_and_destroy(&part(2));
}

#[test]
fn examples_apply_replan_import_and_destroy_on_every_selected_minor_part_4() {
    examples_apply_replan_import_and_destroy(&part(3));
}

fn examples_apply_replan_import_and_destroy(releases: &[String]) {
    let mut figures = Vec::new();
    for release in releases {
        let started = Instant::now();
        let cluster = if release == V1_15 {
            Cluster::with_v1_15_crds()
        } else {
            Cluster::with_release_crds(release)
        };
        let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), examples()));
        work.apply().ok();
        assert!(cluster.node_pool("default").is_some(), "{release}: no NodePool");
        assert!(
            cluster.node_class("default").is_some(),
            "{release}: no EC2NodeClass"
        );
        assert!(
            work.plan_is_empty(),
            "{release}: second plan must be empty:\n{}",
            work.plan().output()
        );

        // Forget both, import them by name, and plan empty again.
        work.terraform(&[
            "state",
            "rm",
            "karpenter_node_pool.default",
            "karpenter_ec2_node_class.default",
        ])
        .ok();
        work.terraform(&["import", "-no-color", "karpenter_node_pool.default", "default"])
            .ok();
        work.terraform(&[
            "import",
            "-no-color",
            "karpenter_ec2_node_class.default",
            "default",
        ])
        .ok();
        // Import cannot know the off-wire `wait_for_ready = true`, so one apply settles it
        // (nothing is written to the cluster for it); then the plan is empty.
        let after_import = work.plan().output();
        assert!(
            after_import.contains("wait_for_ready")
                && after_import.contains("0 to add, 1 to change, 0 to destroy"),
            "{release}: plan after import:\n{after_import}"
        );
        work.apply().ok();
        assert!(
            work.plan_is_empty(),
            "{release}: plan after import and apply must be empty:\n{}",
            work.plan().output()
        );

        work.destroy().ok();
        assert!(cluster.node_pool("default").is_none(), "{release}");
        assert!(cluster.node_class("default").is_none(), "{release}");
        figures.push(format!("{release} {:.1}s", started.elapsed().as_secs_f64()));
    }
    eprintln!("version matrix: {}", figures.join(", "));
}

fn static_pool(replicas: u32) -> String {
    format!(
        r#"
resource "karpenter_node_pool" "static" {{
  name     = "static"
  replicas = {replicas}
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }}]
    }}
  }}
  timeouts {{
    create = "2m"
  }}
}}
"#
    )
}

/// `replicas` (Karpenter v1.8) on a v1.0 cluster: the apply fails in seconds, on the
/// attribute, naming v1.8; before #16 it retried the server's 500 until the timeout. The same
/// configuration applies and re-plans empty on v1.8.
#[test]
fn a_setting_the_installed_crds_lack_fails_at_once_on_its_attribute() {
    let old = Cluster::with_release_crds("v1.0.14");
    let work = Workdir::new(&format!("{}\n{}", old.provider_block(), static_pool(2)));
    let started = Instant::now();
    let run = work.apply().failed();
    let took = started.elapsed();
    let text = run.output();
    assert!(
        text.contains("Not supported by the Karpenter installed in this cluster"),
        "{text}"
    );
    assert!(text.contains("replicas") && text.contains("v1.8"), "{text}");
    assert!(text.contains("with karpenter_node_pool.static"), "{text}");
    assert!(old.node_pool("static").is_none());
    assert!(
        old.requests(Some("PATCH"), "/nodepools/").is_empty(),
        "nothing is sent that the cluster cannot take"
    );
    assert!(took < Duration::from_secs(60), "took {took:?}");
    eprintln!("replicas on v1.0: apply failed after {:.1}s", took.as_secs_f64());

    let new = Cluster::with_release_crds("v1.8.8");
    let work = Workdir::new(&format!("{}\n{}", new.provider_block(), static_pool(2)));
    work.apply().ok();
    assert_eq!(new.node_pool("static").expect("pool")["spec"]["replicas"], 2);
    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
}

/// #28: values a v1.0 cluster's CRDs lack (`consolidation_policy = "Balanced"`, Karpenter v1.14;
/// the `Gte` operator, v1.9) fail before the first write, one error per value, on its attribute,
/// naming the release that added it; nothing is sent, and there is no raw 422 beside them.
#[test]
fn values_the_installed_crds_lack_fail_before_the_write_one_error_each() {
    let old = Cluster::with_release_crds("v1.0.14");
    let work = Workdir::new(&format!(
        r#"{}
resource "karpenter_node_pool" "p" {{
  name = "p"
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.k8s.aws/instance-cpu", operator = "Gte", values = ["4"] }}]
    }}
  }}
  disruption = {{
    consolidation_policy = "Balanced"
    consolidate_after    = "1m"
  }}
}}
"#,
        old.provider_block()
    ));
    let run = work.apply().failed();
    let text = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(run.stderr.matches("Error:").count(), 2, "{text}");
    assert!(
        text.contains("disruption.consolidation_policy")
            && text.contains("Karpenter added \"Balanced\" in v1.14"),
        "{text}"
    );
    assert!(
        text.contains("template.spec.requirements[0].operator")
            && text.contains("Karpenter added \"Gte\" in v1.9"),
        "{text}"
    );
    assert!(!text.contains("The API server rejected"), "{text}");
    assert!(old.requests(Some("PATCH"), "/nodepools/").is_empty(), "{text}");
}
