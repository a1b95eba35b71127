# `terraform query` (Terraform 1.14 and later) lists the Karpenter controller roles in the
# provider's AWS account. Filters, all optional: the cluster the role serves and a role name
# prefix.
list "karpenter_controller_role" "demo" {
  provider         = karpenter
  include_resource = true

  config {
    cluster_name = "demo"
  }
}
