# `terraform query` (Terraform 1.14 and later) lists the EC2NodeClasses of the cluster the
# provider configuration points at. Filters, all optional: label_selector and name_prefix.
list "karpenter_ec2_node_class" "all" {
  provider         = karpenter
  include_resource = true

  config {
    label_selector = "karpenter.sh/discovery"
  }
}
