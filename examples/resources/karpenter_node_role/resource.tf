# The role Karpenter's nodes run as: EC2 may assume it, and it has the node policies of
# Karpenter's reference attached (worker node, CNI, ECR pull-only, SSM).
resource "karpenter_node_role" "this" {
  name = "KarpenterNodeRole-demo"

  # For v1alpha5 / AWSNodeTemplate setups that name an instance profile:
  create_instance_profile = true

  additional_policy_arns = [
    "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy",
  ]

  tags = {
    "karpenter.sh/discovery" = "demo"
  }
}

output "node_role_arn" {
  value = karpenter_node_role.this.arn
}
