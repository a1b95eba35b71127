# `terraform query` (Terraform 1.14 and later) lists the legacy Provisioners
# (karpenter.sh/v1alpha5, Karpenter 0.32 and older) of the cluster the provider configuration
# points at. Filters, all optional: label_selector and name_prefix.
list "karpenter_provisioner" "all" {
  provider         = karpenter
  include_resource = true

  config {
    name_prefix = "default"
  }
}
