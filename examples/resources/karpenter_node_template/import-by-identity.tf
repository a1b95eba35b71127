# Terraform 1.12 and later: import the AWSNodeTemplate by its identity, its name. The cluster
# is the one the provider configuration points at.
import {
  to = karpenter_node_template.default
  identity = {
    name = "default"
  }
}
