# The smallest useful stack with only this provider. It grows as resources land; today it
# renders the Karpenter controller's IAM policy for a cluster, offline.
terraform {
  required_providers {
    karpenter = {
      source = "karpenter/karpenter"
    }
  }
}

variable "cluster_name" {
  type    = string
  default = "quick-start"
}

data "karpenter_controller_policy" "this" {
  cluster_name           = var.cluster_name
  region                 = "us-east-1"
  account_id             = "123456789012"
  node_role_arn          = "arn:aws:iam::123456789012:role/KarpenterNodeRole-${var.cluster_name}"
  interruption_queue_arn = "arn:aws:sqs:us-east-1:123456789012:${var.cluster_name}"
}

output "controller_policy_statement_ids" {
  value = [for s in data.karpenter_controller_policy.this.statements : s.sid]
}
