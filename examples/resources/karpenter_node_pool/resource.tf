# A general-purpose pool: spot first, on-demand when spot is short, c/m/r families of
# generation 6 or newer, at most 1000 vCPUs, consolidating under-used nodes after a minute
# but never more than 10% of the nodes at once (and none during business hours).
resource "karpenter_node_pool" "default" {
  name = "default"

  template = {
    metadata = {
      labels = { workload = "general" }
    }
    spec = {
      node_class_ref = {
        group = "karpenter.k8s.aws"
        kind  = "EC2NodeClass"
        name  = "default"
      }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
        { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["5"] },
      ]
      expire_after = "720h"
    }
  }

  limits = {
    cpu = "1000"
  }

  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "1m"
    budgets = [
      { nodes = "10%" },
      { nodes = "0", schedule = "0 9 * * mon-fri", duration = "8h" },
    ]
  }
}
