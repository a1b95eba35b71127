# Terraform 1.12 and later: import the NodeClass by its identity, its name. The cluster is the
# one the provider configuration points at.
import {
  to = karpenter_eks_node_class.private
  identity = {
    name = "private"
  }
}
