# A custom EKS Auto Mode node class: nodes in the private subnets, the cluster's node security
# group, a bigger and encrypted root volume, and network policies that deny by default.
# Needs a cluster with Auto Mode enabled. The node role has the Auto Mode shape and its EC2
# access entry (see karpenter_node_role with mode = "eks_auto_mode").
resource "karpenter_eks_node_class" "private" {
  name = "private"
  role = "eks-auto-nodes"

  subnet_selector_terms = [
    { tags = { "kubernetes.io/role/internal-elb" = "1", "eks-cluster" = "demo" } },
  ]
  security_group_selector_terms = [
    { tags = { "aws:eks:cluster-name" = "demo" } },
  ]

  network_policy            = "DefaultDeny"
  network_policy_event_logs = "Enabled"

  ephemeral_storage = {
    size       = "160Gi"
    iops       = 6000
    throughput = 250
  }

  tags = {
    team = "platform"
  }
}
