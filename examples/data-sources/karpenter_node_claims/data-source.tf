# The machines Karpenter launched for the pool "default": which instances, where.
data "karpenter_node_claims" "default" {
  node_pool = "default"
}

output "default_pool_instances" {
  value = { for c in data.karpenter_node_claims.default.node_claims : c.name => {
    node          = c.node_name
    instance_type = c.instance_type
    capacity_type = c.capacity_type
    zone          = c.zone
    provider_id   = c.provider_id
  } }
}

# For a pipeline: the nodes Karpenter marked drifted (it replaces them within the pool's
# disruption budgets), with why; gate a rollout on it being empty.
output "default_pool_drifted" {
  value = { for c in data.karpenter_node_claims.default.node_claims : c.name => c.drift_reason if c.drifted }
}
