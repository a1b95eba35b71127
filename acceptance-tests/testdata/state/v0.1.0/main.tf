# One representative configuration per managed resource type, applied by the provider build
# that became v0.1.0 against the Kubernetes API test server and moto; terraform.tfstate beside
# this file is the state it wrote. See README.md (how it was made) and
# acceptance-tests/tests/acceptance/state_upgrades.rs (how it is replayed).
# The provider block (test server and moto endpoints) is added by the test.

resource "karpenter_node_role" "nodes" {
  name                    = "KarpenterNodeRole-demo"
  path                    = "/karpenter/"
  create_instance_profile = true
  additional_policy_arns  = ["arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"]
  tags = {
    "karpenter.sh/discovery" = "demo"
  }
}

resource "karpenter_node_role" "auto" {
  name = "eks-auto-nodes"
  mode = "eks_auto_mode"
}

resource "karpenter_interruption_queue" "this" {
  cluster_name = "demo"
  tags = {
    "karpenter.sh/discovery" = "demo"
  }
}

resource "karpenter_controller_role" "this" {
  name                   = "KarpenterControllerRole-demo"
  cluster_name           = "demo"
  region                 = "us-east-1"
  node_role_arn          = karpenter_node_role.nodes.arn
  interruption_queue_arn = karpenter_interruption_queue.this.queue_arn
  irsa = {
    oidc_provider_arn = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
  }
  pod_identity      = true
  policy_attachment = "managed"
}

resource "karpenter_ec2_node_class" "default" {
  name = "default"
  role = karpenter_node_role.nodes.name

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
}

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
        name  = karpenter_ec2_node_class.default.name
      }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
      ]
      taints       = [{ key = "example.com/dedicated", value = "general", effect = "NoSchedule" }]
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
  weight = 10
}

resource "karpenter_eks_node_class" "private" {
  name = "private"
  role = karpenter_node_role.auto.name
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

resource "karpenter_node_overlay" "spot_discount" {
  name = "spot-discount"
  requirements = [
    { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] },
  ]
  price_adjustment = "-10%"
  weight           = 10
}

resource "karpenter_capacity_buffer" "web_headroom" {
  name = "web-headroom"
  scalable_ref = {
    api_group = "apps"
    kind      = "Deployment"
    name      = "web"
  }
  percentage = 20
}

resource "karpenter_node_template" "default" {
  name                    = "default"
  subnet_selector         = { "karpenter.sh/discovery" = "demo" }
  security_group_selector = { "karpenter.sh/discovery" = "demo" }
  ami_family              = "AL2"
  instance_profile        = "KarpenterNodeInstanceProfile-demo"
  metadata_options = {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 2
  }
  tags = {
    team = "platform"
  }
}

resource "karpenter_provisioner" "default" {
  name   = "default"
  labels = { workload = "legacy" }
  requirements = [
    { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
  ]
  provider_ref = {
    name = karpenter_node_template.default.name
  }
  consolidation = {
    enabled = true
  }
  ttl_seconds_until_expired = 2592000
  limits = {
    resources = { cpu = "1000" }
  }
}
