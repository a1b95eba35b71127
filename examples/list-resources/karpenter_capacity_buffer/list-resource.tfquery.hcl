# `terraform query` (Terraform 1.14 and later) lists the CapacityBuffers of the cluster the
# provider configuration points at. Filters, all optional: a namespace (every namespace when
# left out), a label selector and a name prefix.
list "karpenter_capacity_buffer" "ci" {
  provider         = karpenter
  include_resource = true

  config {
    namespace      = "ci"
    label_selector = "team=ci"
  }
}
