# The smallest useful Karpenter stack with only this provider: the node role, the interruption
# queue, the controller role (IRSA) with its permissions, an EC2NodeClass and a NodePool.
#
# ./scripts/quickstart.sh applies it against a local test environment (the Kubernetes API test
# server with the real Karpenter CRDs, and moto for AWS) and writes local.auto.tfvars for it.
# Against a real cluster, set kubeconfig_path (or use the kubernetes {} settings of
# examples/provider/provider.tf) and leave aws_endpoint unset.
terraform {
  required_providers {
    karpenter = {
      source  = "karpenter/karpenter"
      version = "~> 0.1.0"
    }
  }
}

variable "cluster_name" {
  type    = string
  default = "quick-start"
}

variable "region" {
  type    = string
  default = "us-east-1"
}

variable "kubeconfig_path" {
  type = string
}

variable "oidc_provider_arn" {
  type        = string
  description = "The cluster's IAM OIDC provider (for IRSA), e.g. module.eks.oidc_provider_arn."
  default     = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
}

variable "aws_endpoint" {
  type        = string
  description = "One endpoint for IAM, SQS, EventBridge and STS (a local AWS stand-in); null for AWS itself."
  default     = null
}

provider "karpenter" {
  kubernetes {
    config_path = var.kubeconfig_path
  }
  aws {
    region = var.region
    dynamic "endpoints" {
      for_each = var.aws_endpoint == null ? [] : [var.aws_endpoint]
      content {
        iam    = endpoints.value
        sqs    = endpoints.value
        events = endpoints.value
        sts    = endpoints.value
      }
    }
  }
}

resource "karpenter_node_role" "this" {
  name = "KarpenterNodeRole-${var.cluster_name}"
}

resource "karpenter_interruption_queue" "this" {
  cluster_name = var.cluster_name
}

resource "karpenter_controller_role" "this" {
  name                   = "KarpenterControllerRole-${var.cluster_name}"
  cluster_name           = var.cluster_name
  region                 = var.region
  node_role_arn          = karpenter_node_role.this.arn
  interruption_queue_arn = karpenter_interruption_queue.this.queue_arn
  irsa = {
    oidc_provider_arn = var.oidc_provider_arn
  }
}

resource "karpenter_ec2_node_class" "default" {
  name                          = "default"
  role                          = karpenter_node_role.this.name
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = var.cluster_name } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = var.cluster_name } }]
  wait_for_ready                = true
}

resource "karpenter_node_pool" "default" {
  name = "default"
  template = {
    spec = {
      node_class_ref = { name = karpenter_ec2_node_class.default.name }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
      ]
    }
  }
  limits = { cpu = "100" }
}

# What Karpenter's Helm chart needs.
output "helm_values" {
  value = {
    "settings.clusterName"       = var.cluster_name
    "settings.interruptionQueue" = karpenter_interruption_queue.this.queue_name
    "serviceAccount.annotations" = { "eks.amazonaws.com/role-arn" = karpenter_controller_role.this.arn }
  }
}

output "node_class_ready" {
  value = [for c in karpenter_ec2_node_class.default.status.conditions : c.status if c.type == "Ready"]
}
