# `terraform query` (Terraform 1.14 and later) lists the EKS Auto Mode NodeClasses of the
# cluster the provider configuration points at, the built-in "default" included. Filters, all
# optional: label_selector and name_prefix.
list "karpenter_eks_node_class" "all" {
  provider         = karpenter
  include_resource = true

  config {
    label_selector = "team=platform"
  }
}
