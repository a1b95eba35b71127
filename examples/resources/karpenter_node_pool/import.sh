# A NodePool is imported by its name.
terraform import karpenter_node_pool.default default
