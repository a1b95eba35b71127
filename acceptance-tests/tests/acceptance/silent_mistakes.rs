//! #28, "mistakes that apply with exit 0": through the real terraform CLI against the
//! Kubernetes API test server.
//!
//! - A NodePool whose `node_class_ref.name` names a class that does not exist applies, with a
//!   warning that names the class (the pool would launch nothing); one whose class is a
//!   `karpenter_ec2_node_class` of the same configuration gets none.
//! - Two requirements on one key that can never both hold warn at plan, on the second one,
//!   saying why; requirements that overlap do not.

use acceptance_tests::Workdir;
use acceptance_tests::kube::Cluster;

fn pool(name: &str, class: &str, requirements: &str) -> String {
    format!(
        r#"
resource "karpenter_node_pool" "{name}" {{
  name = "{name}"
  template = {{
    spec = {{
      node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = {class} }}
      requirements   = [{requirements}]
    }}
  }}
}}
"#
    )
}

const CLASS: &str = r#"
resource "karpenter_ec2_node_class" "c" {
  name                          = "c"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
}
"#;

const ON_DEMAND: &str = r#"{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }"#;

#[test]
fn a_missing_node_class_is_a_warning_naming_it() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!(
        "{}\n{CLASS}\n{}\n{}",
        cluster.provider_block(),
        pool("orphan", "\"missing\"", ON_DEMAND),
        pool("ordered", "karpenter_ec2_node_class.c.name", ON_DEMAND),
    ));
    let run = work.apply().ok();
    let text = run.text();
    assert!(
        text.contains("The EC2NodeClass \"missing\" does not exist"),
        "{}",
        run.output()
    );
    assert!(text.contains("NodeClassReady"), "{}", run.output());
    assert_eq!(
        text.matches("does not exist").count(),
        1,
        "only the orphan warns:\n{}",
        run.output()
    );
    assert!(text.contains("karpenter_node_pool.orphan"), "{}", run.output());
}

#[test]
fn requirements_that_can_never_hold_together_warn_at_plan_on_the_second() {
    let cluster = Cluster::with_v1_crds();
    let impossible = format!(
        r#"{ON_DEMAND},
        {{ key = "kubernetes.io/arch", operator = "In", values = ["amd64"] }},
        {{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}"#
    );
    let overlapping = format!(
        r#"{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] }},
        {ON_DEMAND}"#
    );
    let work = Workdir::new(&format!(
        "{}\n{CLASS}\n{}\n{}",
        cluster.provider_block(),
        pool("impossible", "karpenter_ec2_node_class.c.name", &impossible),
        pool("fine", "karpenter_ec2_node_class.c.name", &overlapping),
    ));
    let run = work.plan().ok();
    let text = run.text();
    assert!(
        text.contains("Requirements on karpenter.sh/capacity-type can never hold together"),
        "{}",
        run.output()
    );
    assert!(
        text.contains("template.spec.requirements[2]: This requirement on karpenter.sh/capacity-type"),
        "{}",
        run.output()
    );
    assert!(
        text.contains("contradicts template.spec.requirements[0]"),
        "{}",
        run.output()
    );
    assert_eq!(
        text.matches("can never hold together").count(),
        1,
        "{}",
        run.output()
    );
    assert!(
        text.contains("karpenter_node_pool.impossible"),
        "{}",
        run.output()
    );
}
