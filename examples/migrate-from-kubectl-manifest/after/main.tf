# AFTER: the same objects as typed resources. The `moved` blocks hand the existing objects to
# this provider: `terraform plan` shows "has moved to" and no create or destroy, and the apply
# adopts the objects in place (same uid) with server-side apply.

variable "cluster_name" {
  type    = string
  default = "demo"
}

resource "karpenter_ec2_node_class" "default" {
  name                          = "default"
  role                          = "KarpenterNodeRole-${var.cluster_name}"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = var.cluster_name } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = var.cluster_name } }]
  tags                          = { team = "platform" }
}

resource "karpenter_node_pool" "default" {
  name     = "default"
  metadata = { labels = { team = "platform" } }
  template = {
    metadata = { labels = { cluster = var.cluster_name } }
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },
        { key = "kubernetes.io/arch", operator = "In", values = ["amd64", "arm64"] },
      ]
    }
  }
  limits     = { cpu = "1000", memory = "1000Gi" }
  disruption = { consolidation_policy = "WhenEmptyOrUnderutilized", consolidate_after = "1m" }
}

moved {
  from = kubectl_manifest.node_class
  to   = karpenter_ec2_node_class.default
}

moved {
  from = kubectl_manifest.node_pool
  to   = karpenter_node_pool.default
}
