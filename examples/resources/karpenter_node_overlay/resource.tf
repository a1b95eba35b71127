# Tell Karpenter that spot capacity of generation-6+ instances is 10% cheaper than it thinks
# (e.g. a negotiated discount), and that every instance of the pool "gpu" offers one
# extra device-plugin resource. Needs Karpenter v1.7+ with the NodeOverlay feature gate.
resource "karpenter_node_overlay" "spot_discount" {
  name = "spot-discount"

  requirements = [
    { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] },
    { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["5"] },
  ]
  price_adjustment = "-10%"
  weight           = 10
}

resource "karpenter_node_overlay" "fuse_devices" {
  name = "fuse-devices"

  requirements = [
    { key = "karpenter.sh/nodepool", operator = "In", values = ["gpu"] },
  ]
  capacity = {
    "smarter-devices/fuse" = "1"
  }
}
