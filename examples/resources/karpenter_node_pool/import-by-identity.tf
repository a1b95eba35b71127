# Terraform 1.12 and later: import the NodePool by its identity, its name. The cluster is the
# one the provider configuration points at.
import {
  to = karpenter_node_pool.default
  identity = {
    name = "default"
  }
}
