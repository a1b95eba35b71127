# How many nodes the pool "default" holds, and whether Karpenter considers it Ready.
data "karpenter_node_pool" "default" {
  name = "default"
}

output "default_pool_nodes" {
  value = data.karpenter_node_pool.default.status.nodes
}

output "default_pool_ready" {
  value = one([for c in data.karpenter_node_pool.default.status.conditions : c.status if c.type == "Ready"])
}
