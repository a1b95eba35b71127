//! `karpenter_capacity_buffer` through the real terraform CLI against the test server with the
//! v1.14.1 alpha CRDs (CapacityBuffer is namespaced) and a simulated Karpenter that reports
//! buffers: create in the configured namespace and in `default`, re-plan empty, status read
//! into state, drift, update in place, a namespace change that replaces, import by
//! `namespace/name` with generated configuration, destroy; bad input at plan on its attribute;
//! a namespace that does not exist; and a cluster on Karpenter v1.13 (no CapacityBuffer CRD), where apply says which Karpenter
//! version and feature gate the kind needs.

use std::time::Instant;

use acceptance_tests::kube::Cluster;
use acceptance_tests::roundtrip::{Import, import_with_generated_config};
use acceptance_tests::{Workdir, repo_file, resource_at};
use serde_json::{Value, json};

const GROUP: &str = "autoscaling.x-k8s.io";
const PLURAL: &str = "capacitybuffers";

fn buffer(cluster: &Cluster, namespace: &str, name: &str) -> Option<Value> {
    cluster
        .server
        .object_in(GROUP, "v1beta1", PLURAL, namespace, name)
}

fn example() -> String {
    repo_file("examples/resources/karpenter_capacity_buffer/resource.tf")
}

#[test]
fn example_applies_replans_empty_shows_drift_updates_imports_and_destroys() {
    let cluster = Cluster::with_alpha_crds();
    let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), example()));
    let started = Instant::now();
    work.apply().ok();
    eprintln!("apply of the example took {:?}", started.elapsed());

    let ci = buffer(&cluster, "ci", "ci-runners").expect("CapacityBuffer in namespace ci");
    assert_eq!(ci["spec"]["podTemplateRef"], json!({"name": "ci-runner"}));
    assert_eq!(ci["spec"]["replicas"], 3);
    assert_eq!(ci["spec"]["limits"], json!({"cpu": "12", "memory": "48Gi"}));
    assert_eq!(
        ci["spec"]["provisioningStrategy"],
        "buffer.x-k8s.io/active-capacity"
    );
    assert!(
        buffer(&cluster, "default", "ci-runners").is_none(),
        "only in its own namespace"
    );
    let web = buffer(&cluster, "default", "web-headroom").expect("no namespace set: default");
    assert_eq!(
        web["spec"]["scalableRef"],
        json!({"apiGroup": "apps", "kind": "Deployment", "name": "web"})
    );
    assert_eq!(web["spec"]["percentage"], 20);
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // What the simulated buffer controller reports is read into state, and is no drift.
    cluster.eventually("buffer status", || {
        buffer(&cluster, "ci", "ci-runners").is_some_and(|o| o["status"]["conditions"].is_array())
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
    let ci_state = resource_at(&state, "karpenter_capacity_buffer.ci_runners");
    assert_eq!(ci_state["values"]["namespace"], "ci");
    assert_eq!(
        ci_state["values"]["status"]["replicas"], 3,
        "{}",
        ci_state["values"]["status"]
    );
    assert_eq!(
        ci_state["values"]["status"]["pod_template_ref"]["name"],
        "ci-runner"
    );
    assert_eq!(
        resource_at(&state, "karpenter_capacity_buffer.web_headroom")["values"]["namespace"],
        "default"
    );
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // Drift on a field is shown as that field, and apply puts it back.
    assert!(cluster.server.patch_object(
        GROUP,
        PLURAL,
        "ci",
        "ci-runners",
        &json!({"spec": {"replicas": 7}})
    ));
    let run = work.plan().ok();
    assert!(
        run.stdout.contains("~ replicas") && run.stdout.contains("7 -> 3"),
        "{}",
        run.stdout
    );
    work.apply().ok();
    assert_eq!(
        buffer(&cluster, "ci", "ci-runners").expect("buffer")["spec"]["replicas"],
        3
    );

    // Deleted behind Terraform's back: the plan creates it again.
    assert!(
        cluster
            .server
            .delete_object(GROUP, PLURAL, "default", "web-headroom")
    );
    let run = work.plan().ok();
    assert!(
        run.stdout
            .contains("karpenter_capacity_buffer.web_headroom will be created"),
        "{}",
        run.stdout
    );
    work.apply().ok();
    assert!(buffer(&cluster, "default", "web-headroom").is_some());

    // An update is in place; a namespace change replaces the object.
    let updated = example()
        .replace("replicas         = 3", "replicas         = 5")
        .replace("percentage = 20", "percentage = 30");
    let moved = updated.replace(
        "  name = \"web-headroom\"\n",
        "  name      = \"web-headroom\"\n  namespace = \"web\"\n",
    );
    assert_ne!(moved, updated, "the example changed shape; adjust the test");
    work.set_config(&format!("{}\n{}", cluster.provider_block(), updated));
    let uid_before = buffer(&cluster, "ci", "ci-runners").expect("buffer")["metadata"]["uid"].clone();
    let run = work.plan().ok();
    assert!(
        run.stdout.contains("0 to add, 2 to change, 0 to destroy"),
        "{}",
        run.stdout
    );
    work.apply().ok();
    let ci = buffer(&cluster, "ci", "ci-runners").expect("buffer");
    assert_eq!(ci["spec"]["replicas"], 5);
    assert_eq!(ci["metadata"]["uid"], uid_before, "updated in place");
    work.set_config(&format!("{}\n{}", cluster.provider_block(), moved));
    let run = work.plan().ok();
    assert!(
        run.stdout.contains("must be replaced") && run.stdout.contains("1 to add, 0 to change, 1 to destroy"),
        "{}",
        run.stdout
    );
    work.apply().ok();
    assert!(buffer(&cluster, "default", "web-headroom").is_none());
    assert_eq!(
        buffer(&cluster, "web", "web-headroom").expect("in web")["spec"]["percentage"],
        30
    );
    assert!(work.plan_is_empty(), "{}", work.plan().output());

    // import {} by namespace/name with -generate-config-out gives configuration that plans empty.
    let generated = import_with_generated_config(
        &cluster,
        &[Import::new(
            "karpenter_capacity_buffer",
            "ci_runners",
            "ci/ci-runners",
        )],
        "",
    );
    assert!(
        generated.contains("namespace") && generated.contains("\"ci\"") && generated.contains("48Gi"),
        "{generated}"
    );

    // terraform import with a bare name says which ID it takes.
    let bare = Workdir::new(&format!(
        "{}\nresource \"karpenter_capacity_buffer\" \"x\" {{\n  name             = \"ci-runners\"\n  namespace        = \"ci\"\n  pod_template_ref = {{ name = \"ci-runner\" }}\n  replicas         = 5\n}}\n",
        cluster.provider_block()
    ));
    let run = bare
        .terraform(&[
            "import",
            "-no-color",
            "-input=false",
            "karpenter_capacity_buffer.x",
            "ci-runners",
        ])
        .failed();
    let text = run.output().replace('\n', " ");
    assert!(
        text.contains("Invalid import ID") && text.contains("<namespace>/<name>"),
        "{}",
        run.output()
    );
    let run = bare
        .terraform(&[
            "import",
            "-no-color",
            "-input=false",
            "karpenter_capacity_buffer.x",
            "default/ci-runners",
        ])
        .failed();
    assert!(
        run.output().contains("in the namespace \"default\""),
        "{}",
        run.output()
    );

    let started = Instant::now();
    work.destroy().ok();
    eprintln!("destroy took {:?}", started.elapsed());
    assert!(buffer(&cluster, "ci", "ci-runners").is_none());
    assert!(buffer(&cluster, "web", "web-headroom").is_none());
}

/// The CRD's rules fail at plan, on the attribute, before anything reaches the cluster.
#[test]
fn bad_input_fails_at_plan_on_its_attribute() {
    let cluster = Cluster::with_alpha_crds();
    let work = Workdir::new(&format!(
        r#"{}
resource "karpenter_capacity_buffer" "both" {{
  name             = "both"
  pod_template_ref = {{ name = "t" }}
  replicas         = 1
  scalable_ref     = {{ kind = "Deployment", name = "web" }}
}}
resource "karpenter_capacity_buffer" "unbounded" {{
  name             = "unbounded"
  pod_template_ref = {{ name = "t" }}
}}
resource "karpenter_capacity_buffer" "negative" {{
  name         = "negative"
  namespace    = "Team_A"
  scalable_ref = {{ kind = "Deployment", name = "web" }}
  percentage   = -5
  limits       = {{ cpu = "lots" }}
}}
"#,
        cluster.provider_block()
    ));
    cluster.server.clear_request_log();
    let run = work.plan().failed();
    // One diagnostic per "Error: ", on its resource, its detail starting with the path.
    let diagnostics: Vec<&str> = run.stderr.split("Error: ").skip(1).collect();
    for (resource, path, words) in [
        ("both", "scalable_ref", "cannot both be set"),
        ("unbounded", "pod_template_ref", "needs replicas or limits"),
        ("negative", "namespace", "namespace name"),
        ("negative", "percentage", "at least 0"),
        ("negative", "limits[\"cpu\"]", "quantity"),
    ] {
        let address = format!("with karpenter_capacity_buffer.{resource},");
        let at_path = regex::Regex::new(&format!(r"(?m)^{}[:.\[]", regex::escape(path))).expect("regex");
        let found = diagnostics
            .iter()
            .find(|d| d.contains(&address) && at_path.is_match(d))
            .unwrap_or_else(|| panic!("no error on {resource} at {path} in:\n{}", run.stderr));
        assert!(found.contains(words), "{resource} at {path}: {found}");
    }
    let writes: Vec<_> = cluster
        .server
        .request_log()
        .into_iter()
        .filter(|r| r.path.contains(PLURAL))
        .collect();
    assert!(writes.is_empty(), "plan touched the cluster: {writes:?}");
}

/// A namespace that does not exist fails the apply at once, on `namespace`, instead of being
/// retried like the 404 of a kind that was just registered until `timeouts.create` passes.
#[test]
fn a_namespace_that_does_not_exist_fails_at_once_on_the_namespace_attribute() {
    let cluster = Cluster::with_alpha_crds();
    cluster.server.set_namespaces(Some(&["default", "kube-system"]));
    let work = Workdir::new(&format!(
        r#"{}
resource "karpenter_capacity_buffer" "x" {{
  name             = "x"
  namespace        = "team-a"
  pod_template_ref = {{ name = "t" }}
  replicas         = 1
  timeouts {{
    create = "2m"
  }}
}}
"#,
        cluster.provider_block()
    ));
    let started = Instant::now();
    let run = work.apply().failed();
    eprintln!(
        "missing-namespace answer after {:?} (create timeout 2m)",
        started.elapsed()
    );
    let text = run.output();
    assert!(
        text.contains("Error: Namespace does not exist")
            && text.contains("namespace        = \"team-a\"")
            && text.contains("kubernetes_namespace"),
        "{text}"
    );
    let patches = cluster.requests(Some("PATCH"), "/namespaces/team-a/capacitybuffers");
    assert_eq!(patches.len(), 1, "one write, not retried: {patches:?}");
}

/// Karpenter v1.13 (or a v1.14 without the CapacityBuffer CRD): apply stops with the version
/// and gate the kind needs, not a generic "CRD not Established" after the whole timeout.
#[test]
fn a_cluster_without_the_crd_gets_the_version_and_gate_it_needs() {
    let cluster = Cluster::with_release_crds("v1.13.1");
    cluster.assert_kind_not_installed(
        r#"resource "karpenter_capacity_buffer" "x" {
  name             = "x"
  pod_template_ref = { name = "t" }
  replicas         = 1
  timeouts {
    create = "5s"
  }
}
"#,
        &[
            "CapacityBuffer is not installed in this cluster",
            "capacitybuffers.autoscaling.x-k8s.io",
            "Karpenter v1.14 or later",
            "CapacityBuffer feature gate",
            "settings.featureGates.capacityBuffer=true",
        ],
    );
    assert!(buffer(&cluster, "default", "x").is_none());
}
