# `terraform query` (Terraform 1.14 and later) lists the legacy AWSNodeTemplates
# (karpenter.k8s.aws/v1alpha1, Karpenter 0.32 and older) of the cluster the provider
# configuration points at. Filters, all optional: label_selector and name_prefix.
list "karpenter_node_template" "all" {
  provider         = karpenter
  include_resource = true

  config {
    label_selector = "app.kubernetes.io/managed-by!=Helm"
  }
}
