# `terraform query` (Terraform 1.14 and later) lists the NodePools of the cluster the provider
# configuration points at. Filters, all optional: a Kubernetes label selector (the API server
# filters) and a name prefix.
list "karpenter_node_pool" "data_team" {
  provider         = karpenter
  include_resource = true
  limit            = 100

  config {
    label_selector = "team=data"
    name_prefix    = "data-"
  }
}
