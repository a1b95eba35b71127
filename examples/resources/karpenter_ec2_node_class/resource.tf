# Nodes run AL2023 in the subnets and security groups tagged for the cluster, with the node
# role Karpenter creates instance profiles from.
resource "karpenter_ec2_node_class" "default" {
  name = "default"
  role = "KarpenterNodeRole-demo"

  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]

  block_device_mappings = [{
    device_name = "/dev/xvda"
    root_volume = true
    ebs = {
      volume_size = "100Gi"
      volume_type = "gp3"
      encrypted   = true
    }
  }]

  tags = {
    team = "platform"
  }

  # Return from apply only once Karpenter reports the class Ready (subnets, security
  # groups, AMIs and instance profile resolved).
  wait_for_ready = true
}
