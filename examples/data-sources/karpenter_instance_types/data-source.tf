# What a Graviton pool of current general-purpose types would launch, and what it costs.
# Offline: no AWS or cluster access needed.
data "karpenter_instance_types" "graviton" {
  requirements = [
    { key = "kubernetes.io/arch", operator = "In", values = ["arm64"] },
    { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
    { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["6"] },
    { key = "karpenter.k8s.aws/instance-cpu", operator = "Lte", values = ["16"] },
  ]
}

output "graviton_pool" {
  value = {
    count    = data.karpenter_instance_types.graviton.match_count
    cheapest = data.karpenter_instance_types.graviton.cheapest
    largest  = data.karpenter_instance_types.graviton.largest_by_memory
    prices   = { for t in data.karpenter_instance_types.graviton.instance_types : t.name => t.on_demand_price }
  }
}

# The same question asked of EC2 for two zones of the provider's region.
data "karpenter_instance_types" "in_my_zones" {
  source = "ec2"
  zones  = ["us-east-1a", "us-east-1b"]
  requirements = [
    { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m7g", "c7g"] },
  ]
}
