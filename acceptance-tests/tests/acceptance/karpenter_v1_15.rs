//! #50, Karpenter v1.15: the EC2NodeClasses of Karpenter's v1.15 docs (concepts/nodeclasses: the
//! reference kubelet, the open kubelet with `registryPullQPS`, the CEL example and the common
//! expressions, a kubelet tuned with upstream fields, Nitro Enclaves) and NodePools whose
//! `limits` are written as numbers and as strings, as Karpenter's examples and AWS's blueprints
//! write them, are created with kubectl on a v1.15 cluster, imported with
//! `-generate-config-out`, re-planned empty, and re-created from the generated configuration
//! alone as the same objects, numbers and strings keeping their types.
//!
//! The documents are written here from the facts of the docs (field names and values); the
//! cluster serves the CRDs of `crds/v1-main/` with v1.15's `enclaveOptions`
//! ([`Cluster::with_v1_15_crds`]).

use acceptance_tests::kube::Cluster;
use acceptance_tests::moved::{create_manifests, yaml_fixture};
use acceptance_tests::roundtrip::{Import, import_with_generated_config, recreate, spec_differences};
use serde_json::Value as Json;

/// What every node class of the documents shares, besides what each one shows.
const SELECTORS: &str = "
  role: KarpenterNodeRole-demo
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo";

fn node_class(name: &str, body: &str) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: {name}\nspec:{SELECTORS}\n{body}"
    )
}

fn node_pool(name: &str, class: &str, limits: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {name}
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: {class}
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: [on-demand]
  limits:
{limits}"
    )
}

/// The documents, as kubectl would send them.
fn documents() -> Vec<Json> {
    let al2023 = "  amiSelectorTerms:\n    - alias: al2023@latest\n";
    let texts = vec![
        // The reference kubelet of the page's first example: the 12 fields Karpenter reads.
        node_class(
            "reference-kubelet",
            &format!(
                "{al2023}  kubelet:
    podsPerCore: 2
    maxPods: 20
    systemReserved:
      cpu: 100m
      memory: 100Mi
      ephemeral-storage: 1Gi
    kubeReserved:
      cpu: 200m
      memory: 100Mi
      ephemeral-storage: 3Gi
    evictionHard:
      memory.available: 5%
      nodefs.available: 10%
      nodefs.inodesFree: 10%
    evictionSoft:
      memory.available: 500Mi
      nodefs.available: 15%
      nodefs.inodesFree: 15%
    evictionSoftGracePeriod:
      memory.available: 1m
      nodefs.available: 1m30s
      nodefs.inodesFree: 2m
    evictionMaxPodGracePeriod: 60
    imageGCHighThresholdPercent: 85
    imageGCLowThresholdPercent: 80
    cpuCFSQuota: true
    clusterDNS: [\"10.0.1.100\"]"
            ),
        ),
        // The open kubelet: a field Karpenter does not read, passed to the node as it is.
        node_class(
            "open-kubelet",
            "  amiSelectorTerms:\n    - alias: al2023@v20240807\n  kubelet:\n    maxPods: 42\n    registryPullQPS: 10",
        ),
        // The CEL example: maxPods and the reservations scale with each instance type.
        node_class(
            "general-purpose",
            &format!(
                "{al2023}  kubelet:
    maxPods: \"((default_enis - 1) * (ips_per_eni - 1)) + 2\"
    kubeReserved:
      cpu: \"max(60, vcpus * 30)\"
      memory: \"11 * max_pods + 255\"
    systemReserved:
      cpu: \"max(20, vcpus * 10)\"
      memory: \"max(100, memory_mib / 64)\""
            ),
        ),
        // The common expressions not in the example above.
        node_class(
            "prefix-delegation",
            &format!(
                "{al2023}  kubelet:\n    maxPods: \"min(250, ((default_enis - 1) * (ips_per_eni - 1)) * 16 + 2)\""
            ),
        ),
        node_class(
            "fixed-pods-cap",
            &format!("{al2023}  kubelet:\n    maxPods: \"min(110, max_pods)\""),
        ),
        // A kubelet tuned with upstream fields: durations, feature gates, sysctls, log rotation,
        // image pulls, graceful shutdown, and a log flush frequency in nanoseconds (a number).
        node_class(
            "tuned-kubelet",
            &format!(
                "{al2023}  kubelet:
    maxPods: 110
    podsPerCore: 2
    kubeReserved:
      cpu: \"200m\"
      memory: \"512Mi\"
    evictionHard:
      memory.available: \"5%\"
    imageMaximumGCAge: 72h
    imageMinimumGCAge: 2m
    featureGates:
      KubeletCrashLoopBackOffMax: true
    crashLoopBackOff:
      maxContainerRestartPeriod: 60s
    allowedUnsafeSysctls: [\"net.core.somaxconn\", \"kernel.msg*\"]
    containerLogMaxSize: \"50Mi\"
    containerLogMaxFiles: 3
    topologyManagerPolicy: \"best-effort\"
    serializeImagePulls: false
    maxParallelImagePulls: 5
    registryPullQPS: 10
    registryBurst: 20
    kubeAPIQPS: 100
    shutdownGracePeriod: 60s
    shutdownGracePeriodCriticalPods: 20s
    logging:
      format: json
      flushFrequency: 5000000000
      verbosity: 2"
            ),
        ),
        // Nitro Enclaves.
        node_class(
            "enclave-enabled",
            &format!("  amiFamily: AL2023\n  enclaveOptions:\n    enabled: true\n{al2023}"),
        ),
        // limits as Karpenter's examples write them (numbers), and as some blueprints do (strings).
        node_pool(
            "limits-as-numbers",
            "general-purpose",
            "    cpu: 100\n    nvidia.com/gpu: 5\n    memory: 1000Gi",
        ),
        node_pool("limits-as-strings", "tuned-kubelet", "    cpu: \"16\""),
    ];
    texts.iter().map(|t| yaml_fixture(t)).collect()
}

fn resource_type(manifest: &Json) -> &'static str {
    match manifest["kind"].as_str() {
        Some("EC2NodeClass") => "karpenter_ec2_node_class",
        Some("NodePool") => "karpenter_node_pool",
        other => panic!("unexpected kind {other:?}"),
    }
}

fn name_of(manifest: &Json) -> String {
    manifest["metadata"]["name"]
        .as_str()
        .expect("metadata.name")
        .to_string()
}

fn stored(cluster: &Cluster, manifest: &Json) -> Json {
    let name = name_of(manifest);
    let object = match manifest["kind"].as_str() {
        Some("EC2NodeClass") => cluster.node_class(&name),
        _ => cluster.node_pool(&name),
    };
    object.unwrap_or_else(|| panic!("{} {name} is not on the server", manifest["kind"]))
}

#[test]
fn the_v1_15_documents_import_plan_empty_and_recreate_as_the_same_objects() {
    let docs = documents();
    let original = Cluster::with_v1_15_crds();
    create_manifests(&original, docs.clone());
    // The documents reach the server as written: the numbers are numbers.
    assert_eq!(
        stored(&original, &docs[7])["spec"]["limits"]["cpu"],
        serde_json::json!(100)
    );
    assert_eq!(
        stored(&original, &docs[8])["spec"]["limits"]["cpu"],
        serde_json::json!("16")
    );

    let imports: Vec<Import> = docs
        .iter()
        .map(|m| {
            let name = name_of(m);
            Import::new(resource_type(m), &name.replace('-', "_"), &name)
        })
        .collect();
    let generated = import_with_generated_config(&original, &imports, "");

    let fresh = Cluster::with_v1_15_crds();
    recreate(&fresh, &generated, "", docs.len());
    let mut problems = Vec::new();
    for m in &docs {
        for d in spec_differences(&stored(&original, m), &stored(&fresh, m)) {
            problems.push(format!("{} {}{d}", m["kind"], name_of(m)));
        }
    }
    assert!(problems.is_empty(), "{}\n{generated}", problems.join("\n"));
}

/// A node class in HCL with `kubelet` set to `kubelet` (an HCL object body).
fn node_class_hcl(kubelet: &str) -> String {
    format!(
        r#"
resource "karpenter_ec2_node_class" "cel" {{
  name                          = "cel"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{{ alias = "al2023@latest" }}]
  subnet_selector_terms         = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
  security_group_selector_terms = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
  kubelet                       = {kubelet}
}}
"#
    )
}

/// Item 3: Karpenter (v1.15, its `NodeClassCEL` gate off) refuses a node class with a kubelet
/// expression after the write; the apply says so, with Karpenter's reason and message on the
/// `kubelet` attribute, instead of succeeding with a node class that launches nothing. The
/// next apply with a literal converges, and then plans empty.
#[test]
fn a_node_class_karpenter_refuses_after_the_write_fails_the_apply_with_its_reason() {
    let cluster = Cluster::with_v1_15_crds_gated(false);
    let work = acceptance_tests::Workdir::new(&format!(
        "{}\n{}",
        cluster.provider_block(),
        node_class_hcl(r#"{ max_pods = "min(110, max_pods)" }"#)
    ));
    let run = work.apply().failed();
    let output = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "Karpenter refused this EC2NodeClass",
        "KubeletExpressionsDisabled",
        "NodeClassCEL feature gate is disabled",
        "with karpenter_ec2_node_class.cel",
        "kubelet",
    ] {
        assert!(output.contains(expected), "missing {expected:?} in:\n{output}");
    }
    // Written, and in state (a create that failed afterwards: tainted, replaced next time).
    assert!(cluster.node_class("cel").is_some());

    work.set_config(&format!(
        "{}\n{}",
        cluster.provider_block(),
        node_class_hcl("{ max_pods = 110 }")
    ));
    work.apply().ok();
    assert_eq!(
        cluster.node_class("cel").expect("cel")["spec"]["kubelet"]["maxPods"],
        serde_json::json!(110)
    );
    assert!(work.plan_is_empty(), "{}", work.plan().output());
}

/// Item 3, the other side: with no Karpenter running (no leader-election Lease), nothing is
/// waited for and nothing refuses: the apply writes the node class and succeeds.
#[test]
fn without_a_running_karpenter_the_apply_does_not_wait_for_its_verdict() {
    let cluster = Cluster::with_v1_15_crds_gated(false);
    cluster.server.stop_controller(true);
    let work = acceptance_tests::Workdir::new(&format!(
        "{}\n{}",
        cluster.provider_block(),
        node_class_hcl(r#"{ max_pods = "min(110, max_pods)" }"#)
    ));
    let run = work.apply().ok();
    let output = run.output();
    assert!(
        !output.contains("Karpenter refused") && !output.contains("has not validated"),
        "{output}"
    );
    assert_eq!(
        cluster.node_class("cel").expect("cel")["spec"]["kubelet"]["maxPods"],
        serde_json::json!("min(110, max_pods)")
    );
}

/// Item 4: on a cluster whose Karpenter is v1.14 (its CRD types the kubelet with 12 fields and
/// takes only quantities as reservations), an upstream kubelet field and a kubelet expression
/// are refused at plan (the cluster is reachable), naming v1.15; nothing is written.
#[test]
fn an_older_karpenter_refuses_v1_15_kubelet_settings_naming_the_release() {
    let cluster = Cluster::with_release_crds("v1.14.1");
    for (kubelet, attribute) in [
        ("{ registry_pull_qps = 10 }", "kubelet.registry_pull_qps"),
        (
            r#"{ kube_reserved = { cpu = "max(60, vcpus * 30)" } }"#,
            "kubelet.kube_reserved",
        ),
    ] {
        let work = acceptance_tests::Workdir::new(&format!(
            "{}\n{}",
            cluster.provider_block(),
            node_class_hcl(kubelet)
        ));
        let run = work.plan().failed();
        let output = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
        for expected in [
            "Not supported by the Karpenter installed in this cluster",
            "v1.15",
            attribute,
        ] {
            assert!(
                output.contains(expected),
                "{kubelet}: missing {expected:?} in:\n{output}"
            );
        }
        assert!(cluster.node_class("cel").is_none(), "{kubelet}: written anyway");
    }
}

/// #58: on a cluster whose Karpenter is v1.14, a pool naming v1.15's
/// `karpenter.k8s.aws/nitro-sandbox` label (in its template's labels, or as a requirement's key)
/// is refused at plan, where the API server would refuse it at apply ("label domain
/// \"karpenter.k8s.aws\" is restricted"), naming v1.15; on v1.15 it plans.
#[test]
fn a_label_the_installed_release_forbids_is_refused_at_plan_naming_the_release() {
    let pool = |labels: &str, key: &str| {
        let value = if key == "karpenter.sh/capacity-type" {
            "spot"
        } else {
            "true"
        };
        format!(
            r#"
resource "karpenter_node_pool" "sandbox" {{
  name = "sandbox"
  template = {{
    metadata = {{ labels = {labels} }}
    spec = {{
      node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }}
      requirements = [{{ key = "{key}", operator = "In", values = ["{value}"] }}]
    }}
  }}
}}
"#
        )
    };
    let sandbox = "karpenter.k8s.aws/nitro-sandbox";
    let old = Cluster::with_release_crds("v1.14.1");
    for (config, attribute) in [
        (
            pool(
                &format!(r#"{{ "{sandbox}" = "true" }}"#),
                "karpenter.sh/capacity-type",
            ),
            "template.metadata.labels",
        ),
        (
            pool("{ team = \"a\" }", sandbox),
            "template.spec.requirements[0].key",
        ),
    ] {
        let work = acceptance_tests::Workdir::new(&format!("{}\n{config}", old.provider_block()));
        let run = work.plan().failed();
        let output = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
        for expected in [
            "Not supported by the Karpenter installed in this cluster",
            "label domain \"karpenter.k8s.aws\" is restricted",
            "Karpenter allows it from v1.15",
            attribute,
        ] {
            assert!(output.contains(expected), "missing {expected:?} in:\n{output}");
        }
        assert!(old.node_pool("sandbox").is_none(), "written anyway");
    }
    let new = Cluster::with_v1_15_crds();
    let work = acceptance_tests::Workdir::new(&format!(
        "{}\n{}",
        new.provider_block(),
        pool(&format!(r#"{{ "{sandbox}" = "true" }}"#), sandbox)
    ));
    work.plan().ok();
}

/// Item 2: kubelet expressions are checked at plan, with Karpenter's rules, and shown: the
/// range over the offline table on the node class, over the types a pool can launch on the
/// pool; an expression that goes negative for some type is a plan error on its attribute.
#[test]
fn kubelet_expressions_are_checked_and_shown_at_plan() {
    let cluster = Cluster::with_v1_15_crds();
    let pool = r#"
resource "karpenter_node_pool" "small" {
  name = "small"
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = karpenter_ec2_node_class.cel.name }
      requirements = [
        { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5", "c5"] },
        { key = "karpenter.k8s.aws/instance-size", operator = "In", values = ["large", "xlarge"] },
      ]
    }
  }
}
"#;
    let work = acceptance_tests::Workdir::new(&format!(
        "{}\n{}\n{pool}",
        cluster.provider_block(),
        node_class_hcl(
            r#"{
    max_pods       = "min(110, max_pods)"
    kube_reserved  = { cpu = "max(60, vcpus * 30)", memory = "11 * max_pods + 255" }
  }"#
        )
    ));
    let run = work.plan().ok();
    let output = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "What the kubelet expressions come to",
        "types of Karpenter v1.14's instance-type table",
        "max_pods evaluates to",
        "kube_reserved[\"cpu\"] evaluates to",
        "What the node class's kubelet expressions come to for this pool",
        "max_pods evaluates to 29–58 over the 4 types this pool can launch",
    ] {
        assert!(
            output.contains(expected),
            "missing {expected:?} in:\n{}",
            run.output()
        );
    }
    work.apply().ok();
    // An unchanged plan says nothing more.
    let again = work.plan().ok();
    assert!(
        !again.output().contains("kubelet expressions come to"),
        "{}",
        again.output()
    );

    // A reservation that goes negative on small types: an error on its attribute, at plan.
    work.set_config(&format!(
        "{}\n{}\n{pool}",
        cluster.provider_block(),
        node_class_hcl(r#"{ kube_reserved = { cpu = "vcpus * 100 - 400" } }"#)
    ));
    let run = work.plan().failed();
    let output = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "Kubelet expression fails for some instance types",
        "kube_reserved[\"cpu\"] fails for",
        "KubeletExpressionEvaluationFailed",
    ] {
        assert!(
            output.contains(expected),
            "missing {expected:?} in:\n{}",
            run.output()
        );
    }
}
