//! The Terraform configurations the benchmarks run: one `karpenter_ec2_node_class` and N
//! `karpenter_node_pool`s (the shape of the examples), and the baseline — the same number of
//! `terraform_data` resources whose `input` is the very same object, so Terraform handles the
//! same amount of configuration while no provider process is involved; and the user-shape
//! baseline — what a `kubectl_manifest` user writes today: each object as a YAML heredoc, one
//! string per resource, with no schema behind it.

/// The node class's attributes (HCL body, without the block around it).
const CLASS_BODY: &str = r#"  name                          = "default"
  role                          = "KarpenterNodeRole-bench"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "bench" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "bench" } }]
  tags                          = { team = "platform" }
"#;

/// A node pool's attributes; `{name}` and `{class}` are filled in.
fn pool_body(i: usize, class_name: &str) -> String {
    format!(
        r#"  name = "pool-{i}"
  template = {{
    metadata = {{
      labels = {{ workload = "general" }}
    }}
    spec = {{
      node_class_ref = {{
        group = "karpenter.k8s.aws"
        kind  = "EC2NodeClass"
        name  = {class_name}
      }}
      requirements = [
        {{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] }},
        {{ key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] }},
        {{ key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["5"] }},
      ]
      expire_after = "720h"
    }}
  }}
  limits = {{
    cpu = "1000"
  }}
  disruption = {{
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "1m"
    budgets = [
      {{ nodes = "10%" }},
      {{ nodes = "0", schedule = "0 9 * * mon-fri", duration = "8h" }},
    ]
  }}
"#
    )
}

/// `provider_block`, one node class and `n` node pools that name it.
pub fn karpenter(provider_block: &str, n: usize) -> String {
    let mut out =
        format!("{provider_block}\nresource \"karpenter_ec2_node_class\" \"default\" {{\n{CLASS_BODY}}}\n");
    for i in 0..n {
        out.push_str(&format!(
            "\nresource \"karpenter_node_pool\" \"pool_{i}\" {{\n{}}}\n",
            pool_body(i, "karpenter_ec2_node_class.default.name")
        ));
    }
    out
}

/// `n` node pools only (for the CRD gate, where the class's CRD is not the one timed).
pub fn karpenter_pools_only(provider_block: &str, n: usize) -> String {
    let mut out = format!("{provider_block}\n");
    for i in 0..n {
        out.push_str(&format!(
            "\nresource \"karpenter_node_pool\" \"pool_{i}\" {{\n{}}}\n",
            pool_body(i, "\"default\"")
        ));
    }
    out
}

/// The baseline: `terraform_data` resources with the same objects as `input` (the pools
/// referring to the class's name the same way), and no provider required at all.
pub fn baseline(n: usize) -> String {
    let mut out = format!(
        "terraform {{\n  required_providers {{\n  }}\n}}\n\nresource \"terraform_data\" \"class\" {{\n  input = {{\n{}  }}\n}}\n",
        indent(CLASS_BODY)
    );
    for i in 0..n {
        out.push_str(&format!(
            "\nresource \"terraform_data\" \"pool_{i}\" {{\n  input = {{\n{}  }}\n}}\n",
            indent(&pool_body(i, "terraform_data.class.input.name"))
        ));
    }
    out
}

/// `n` `terraform_data` holding the node pools only, naming their class `"default"` as
/// [`karpenter_pools_only`] does (figure 11's baseline).
pub fn baseline_pools_only(n: usize) -> String {
    let mut out = "terraform {\n  required_providers {\n  }\n}\n".to_string();
    for i in 0..n {
        out.push_str(&format!(
            "\nresource \"terraform_data\" \"pool_{i}\" {{\n  input = {{\n{}  }}\n}}\n",
            indent(&pool_body(i, "\"default\""))
        ));
    }
    out
}

/// The node class as a `kubectl_manifest` user writes it.
const CLASS_YAML: &str = r#"apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-bench
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: bench
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: bench
  tags:
    team: platform
"#;

/// A node pool as a `kubectl_manifest` user writes it: the same fields as [`pool_body`].
fn pool_yaml(i: usize) -> String {
    format!(
        r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool-{i}
spec:
  template:
    metadata:
      labels:
        workload: general
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: ${{yamldecode(terraform_data.class.input).metadata.name}}
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
        - key: karpenter.k8s.aws/instance-generation
          operator: Gt
          values: ["5"]
      expireAfter: 720h
  limits:
    cpu: "1000"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets:
      - nodes: 10%
      - nodes: "0"
        schedule: "0 9 * * mon-fri"
        duration: 8h
"#
    )
}

/// The user-shape baseline: `terraform_data` resources whose `input` is each object's YAML
/// text (the pools naming the class through it), as `yaml_body` would hold it.
pub fn baseline_yaml(n: usize) -> String {
    let mut out = format!(
        "terraform {{\n  required_providers {{\n  }}\n}}\n\nresource \"terraform_data\" \"class\" {{\n  input = <<-YAML\n{}  YAML\n}}\n",
        indent(&indent(CLASS_YAML))
    );
    for i in 0..n {
        out.push_str(&format!(
            "\nresource \"terraform_data\" \"pool_{i}\" {{\n  input = <<-YAML\n{}  YAML\n}}\n",
            indent(&indent(&pool_yaml(i)))
        ));
    }
    out
}

fn indent(body: &str) -> String {
    body.lines().map(|l| format!("  {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_references() {
        let k = karpenter("provider \"karpenter\" {}", 3);
        assert_eq!(k.matches("resource \"karpenter_node_pool\"").count(), 3);
        assert_eq!(k.matches("resource \"karpenter_ec2_node_class\"").count(), 1);
        let b = baseline(3);
        assert_eq!(b.matches("resource \"terraform_data\"").count(), 4);
        assert!(b.contains("name  = terraform_data.class.input.name"));
        assert!(!b.contains("karpenter/karpenter"));
        let y = baseline_yaml(3);
        assert_eq!(y.matches("resource \"terraform_data\"").count(), 4);
        assert_eq!(y.matches("kind: NodePool").count(), 3);
        assert!(y.contains("name: ${yamldecode(terraform_data.class.input).metadata.name}"));
        let p = baseline_pools_only(2);
        assert_eq!(p.matches("resource \"terraform_data\"").count(), 2);
        assert!(p.contains("name  = \"default\""));
    }
}
