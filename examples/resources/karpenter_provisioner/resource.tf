# A legacy Provisioner (Karpenter <= 0.32): on-demand m5/m6i/c6i nodes no smaller than
# "large" in two zones, labelled and tainted for general workloads, consolidated when
# under-used and replaced after 30 days, with at most 110 pods per node and 1000 vCPUs in
# total. `labels` and `taints` here are the nodes' (spec.labels, spec.taints); the
# Provisioner object's own labels go under `metadata`.
resource "karpenter_provisioner" "default" {
  name = "default"

  labels = { workload = "general" }

  requirements = [
    { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
    { key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5", "m6i", "c6i"] },
    { key = "karpenter.k8s.aws/instance-size", operator = "NotIn", values = ["nano", "micro", "small", "medium"] },
    { key = "topology.kubernetes.io/zone", operator = "In", values = ["eu-west-1a", "eu-west-1b"] },
  ]

  taints = [
    { key = "example.com/dedicated", value = "general", effect = "NoSchedule" },
  ]

  # The AWSNodeTemplate the nodes are launched from (a karpenter_node_template of this name;
  # in one configuration, refer to it as karpenter_node_template.default.name).
  provider_ref = {
    name = "default"
  }

  consolidation = {
    enabled = true
  }
  ttl_seconds_until_expired = 2592000 # 30 days

  kubelet_configuration = {
    max_pods = 110
  }

  limits = {
    resources = { cpu = "1000" }
  }
}
