# Terraform 1.12 and later: import the NodeOverlay by its identity, its name. The cluster is
# the one the provider configuration points at.
import {
  to = karpenter_node_overlay.spot_discount
  identity = {
    name = "spot-discount"
  }
}
