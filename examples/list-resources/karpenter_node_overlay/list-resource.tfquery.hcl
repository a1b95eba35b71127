# `terraform query` (Terraform 1.14 and later) lists the NodeOverlays of the cluster the
# provider configuration points at. Filters, all optional: label_selector and name_prefix.
list "karpenter_node_overlay" "all" {
  provider         = karpenter
  include_resource = true

  config {
    name_prefix = "spot-"
  }
}
