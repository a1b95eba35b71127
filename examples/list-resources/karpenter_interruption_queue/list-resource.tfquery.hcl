# `terraform query` (Terraform 1.14 and later) lists the Karpenter interruption queues in the
# provider's AWS account and region. Filters, all optional: the cluster the queue serves and a
# queue name prefix.
list "karpenter_interruption_queue" "demo" {
  provider         = karpenter
  include_resource = true

  config {
    cluster_name = "demo"
  }
}
