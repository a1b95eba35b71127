# Terraform 1.12 and later: import the Provisioner by its identity, its name. The cluster is
# the one the provider configuration points at.
import {
  to = karpenter_provisioner.default
  identity = {
    name = "default"
  }
}
