# Terraform 1.12 and later: import the EC2NodeClass by its identity, its name. The cluster is
# the one the provider configuration points at.
import {
  to = karpenter_ec2_node_class.default
  identity = {
    name = "default"
  }
}
