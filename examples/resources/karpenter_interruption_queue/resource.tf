# Karpenter's interruption queue for the cluster "demo": the SQS queue (named after the
# cluster, 300 s retention, SQS-managed encryption), its policy, and the five EventBridge
# rules that send it AWS Health, Spot interruption, rebalance, instance state-change and
# capacity reservation interruption events.
resource "karpenter_interruption_queue" "this" {
  cluster_name = "demo"

  tags = {
    "karpenter.sh/discovery" = "demo"
  }
}

# For the Helm chart: settings.interruptionQueue = queue_name.
output "queue_name" {
  value = karpenter_interruption_queue.this.queue_name
}

# For the controller policy (data "karpenter_controller_policy", interruption_queue_arn).
output "queue_arn" {
  value = karpenter_interruption_queue.this.queue_arn
}

output "rule_names" {
  value = { for kind, rule in karpenter_interruption_queue.this.rules : kind => rule.name }
}
