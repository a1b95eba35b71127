# Keep room for three more CI runner pods at all times, so a burst of jobs starts without
# waiting for new nodes. The PodTemplate "ci-runner" in the namespace "ci" gives the shape of
# one runner (its requests); Karpenter keeps capacity for three such pods, or as many as fit in
# 12 CPUs and 48Gi, whichever is fewer. Needs Karpenter v1.14+ with the CapacityBuffer
# feature gate.
resource "karpenter_capacity_buffer" "ci_runners" {
  name      = "ci-runners"
  namespace = "ci"

  pod_template_ref = { name = "ci-runner" }
  replicas         = 3
  limits = {
    cpu    = "12"
    memory = "48Gi"
  }
}

# Spare capacity for 20% of the replicas of the Deployment "web" (at least one pod's worth),
# in the namespace "default".
resource "karpenter_capacity_buffer" "web_headroom" {
  name = "web-headroom"

  scalable_ref = {
    api_group = "apps"
    kind      = "Deployment"
    name      = "web"
  }
  percentage = 20
}
