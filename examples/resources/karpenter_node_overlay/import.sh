# A NodeOverlay is imported by its name.
terraform import karpenter_node_overlay.spot_discount spot-discount
