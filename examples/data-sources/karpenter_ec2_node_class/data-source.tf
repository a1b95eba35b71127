# What Karpenter resolved for the node class "default": feed its subnets and security groups
# to other resources, or check that the AMI selection found something.
data "karpenter_ec2_node_class" "default" {
  name = "default"
}

output "node_subnet_ids" {
  value = [for s in data.karpenter_ec2_node_class.default.status.subnets : s.id]
}

output "node_security_group_ids" {
  value = [for g in data.karpenter_ec2_node_class.default.status.security_groups : g.id]
}

output "node_ami_ids" {
  value = [for a in data.karpenter_ec2_node_class.default.status.amis : a.id]
}

output "node_instance_profile" {
  value = data.karpenter_ec2_node_class.default.status.instance_profile
}
