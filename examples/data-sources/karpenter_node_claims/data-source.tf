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
