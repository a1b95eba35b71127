//! #58: the plan's notes say the same thing in every plan of the same configuration, whatever
//! order Terraform plans its resources in. The case from the issue: a node class with a kubelet
//! expression and six node pools that name it by a string (as a module writes it when the class
//! comes from a variable or another module), planned eight times; then the same pools against a
//! class that only the cluster has, against one nobody has, and against one whose kubelet comes
//! from a variable the provider cannot read before Terraform plans the class.

use acceptance_tests::kube::Cluster;
use acceptance_tests::{PlanWarning as Warning, Workdir, plan_warnings};

const CLASS: &str = r#"
resource "karpenter_ec2_node_class" "workers" {
  name                          = "workers"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  kubelet                       = { max_pods = "min(110, vcpus * 8)" }
}
"#;

/// Six pools that name `class` by a string, each launching other types.
fn pools(class: &str) -> String {
    ["c5", "m5", "r5", "c6i", "m6i", "r6i"]
        .iter()
        .map(|family| {
            format!(
                r#"
resource "karpenter_node_pool" "{family}" {{
  name = "{family}"
  template = {{
    spec = {{
      node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "{class}" }}
      requirements = [
        {{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["{family}"] }},
      ]
    }}
  }}
}}
"#
            )
        })
        .collect()
}

fn warnings(work: &Workdir) -> Vec<Warning> {
    plan_warnings(work, &[])
}

/// The kubelet notes on pool `family`.
fn on_pool<'w>(warnings: &'w [Warning], family: &str) -> Vec<&'w Warning> {
    let address = format!("karpenter_node_pool.{family}");
    warnings
        .iter()
        .filter(|(at, summary, _)| *at == address && summary.contains("node class's kubelet expressions"))
        .collect()
}

#[test]
fn pools_that_name_their_class_by_a_string_say_the_same_in_every_plan() {
    let cluster = Cluster::with_v1_15_crds();
    let work = Workdir::new(&format!(
        "{}\n{CLASS}\n{}",
        cluster.provider_block(),
        pools("workers")
    ));
    let first = warnings(&work);
    for family in ["c5", "m5", "r5", "c6i", "m6i", "r6i"] {
        let notes = on_pool(&first, family);
        assert_eq!(notes.len(), 1, "{family}: {first:#?}");
        let detail = &notes[0].2;
        assert!(
            detail.contains("The EC2NodeClass \"workers\" sets kubelet CEL expressions")
                && detail.contains("max_pods evaluates to")
                && detail.contains("types this pool can launch"),
            "{family}: {detail}"
        );
    }
    for round in 2..=8 {
        let again = warnings(&work);
        assert_eq!(again, first, "plan {round} said something else than plan 1");
    }
}

#[test]
fn a_pool_whose_class_is_elsewhere_says_what_the_cluster_has_or_that_it_is_not_found() {
    let cluster = Cluster::with_v1_15_crds();
    // The class is made by another configuration.
    let other = Workdir::new(&format!("{}\n{CLASS}", cluster.provider_block()));
    other.apply().ok();
    let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), pools("workers")));
    let found = warnings(&work);
    let notes = on_pool(&found, "m5");
    assert_eq!(notes.len(), 1, "{found:#?}");
    let detail = &notes[0].2;
    assert!(
        detail.contains("as the cluster has it; it is not in this plan")
            && detail.contains("max_pods evaluates to 16–110"),
        "{detail}"
    );
    assert_eq!(warnings(&work), found);

    work.set_config(&format!("{}\n{}", cluster.provider_block(), pools("nobody")));
    let missing = warnings(&work);
    let notes = on_pool(&missing, "c5");
    assert_eq!(notes.len(), 1, "{missing:#?}");
    assert!(
        notes[0]
            .2
            .contains("\"nobody\" is neither in this configuration nor in the cluster"),
        "{}",
        notes[0].2
    );
}

#[test]
fn a_class_whose_kubelet_the_provider_cannot_read_in_time_is_said_once_per_pool_with_the_fix() {
    let cluster = Cluster::with_v1_15_crds();
    let class = CLASS.replace(
        r#"kubelet                       = { max_pods = "min(110, vcpus * 8)" }"#,
        "kubelet                       = var.kubelet",
    );
    let mut work = Workdir::new(&format!(
        "{}\nvariable \"kubelet\" {{ type = any }}\n{class}\n{}",
        cluster.provider_block(),
        pools("workers")
    ));
    work.env("TF_VAR_kubelet", r#"{ max_pods = "min(110, vcpus * 8)" }"#);
    let first = warnings(&work);
    for family in ["c5", "r6i"] {
        let notes = on_pool(&first, family);
        assert_eq!(notes.len(), 1, "{family}: {first:#?}");
        let (_, summary, detail) = notes[0];
        assert!(
            summary.contains("not known") && detail.contains("karpenter_ec2_node_class.<its name>.name"),
            "{summary}: {detail}"
        );
    }
    assert_eq!(warnings(&work), first);
}
