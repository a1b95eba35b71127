# The controller policy for one cluster, rendered offline. Attach `json` inline, or each of
# `documents` as its own managed policy.
data "karpenter_controller_policy" "this" {
  cluster_name           = "demo"
  region                 = "us-east-1"
  account_id             = "123456789012"
  node_role_arn          = "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"
  interruption_queue_arn = "arn:aws:sqs:us-east-1:123456789012:demo"
  karpenter_version      = "v1.15" # the Karpenter release you run; default: the newest known
}

output "controller_policy_json" {
  value = data.karpenter_controller_policy.this.json
}
