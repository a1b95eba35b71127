# Terraform 1.12 and later: import the CapacityBuffer by its identity, its namespace and name
# (a namespace left out means "default"). The cluster is the one the provider configuration
# points at.
import {
  to = karpenter_capacity_buffer.ci_runners
  identity = {
    namespace = "ci"
    name      = "ci-runners"
  }
}
