# What EKS Auto Mode resolved for its built-in node class "default": the subnets and security
# groups its nodes use, to wire into a custom class or other resources.
data "karpenter_eks_node_class" "built_in" {
  name = "default"
}

output "auto_mode_subnet_ids" {
  value = [for s in data.karpenter_eks_node_class.built_in.status.subnets : s.id]
}

output "auto_mode_security_group_ids" {
  value = [for g in data.karpenter_eks_node_class.built_in.status.security_groups : g.id]
}
