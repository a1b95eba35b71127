# `terraform query` (Terraform 1.14 and later) lists the Karpenter node roles in the provider's
# AWS account. Filters, all optional: the cluster the role serves and a role name prefix.
list "karpenter_node_role" "nodes" {
  provider         = karpenter
  include_resource = true

  config {
    name_prefix = "KarpenterNodeRole-"
  }
}
