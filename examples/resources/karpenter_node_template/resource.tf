# A legacy AWSNodeTemplate (Karpenter <= 0.32) that finds its subnets and security groups by
# the cluster's discovery tag, uses the EKS-optimized AL2 AMIs, a 100 GiB gp3 root volume and
# IMDSv2, and tags every instance it launches. (Alternatively, point `launch_template` at an
# existing EC2 launch template and set `instance_profile`; the launch template then replaces
# the security groups, AMI, block devices, metadata options and user data.)
resource "karpenter_node_template" "default" {
  name = "default"

  subnet_selector         = { "karpenter.sh/discovery" = "my-cluster" }
  security_group_selector = { "karpenter.sh/discovery" = "my-cluster" }
  ami_family              = "AL2"
  instance_profile        = "KarpenterNodeInstanceProfile-my-cluster"

  block_device_mappings = [
    {
      device_name = "/dev/xvda"
      ebs = {
        volume_size           = "100Gi"
        volume_type           = "gp3"
        encrypted             = true
        delete_on_termination = true
      }
    },
  ]

  metadata_options = {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 2
  }

  tags = {
    "karpenter.sh/discovery" = "my-cluster"
    team                     = "platform"
  }
}
