# The role the Karpenter controller runs as. The trust policy admits the controller's
# service account through IRSA (works on Fargate) and through EKS Pod Identity; the
# permissions are the karpenter_controller_policy statements for this cluster.
resource "karpenter_node_role" "nodes" {
  name = "KarpenterNodeRole-demo"
}

resource "karpenter_controller_role" "this" {
  name                   = "KarpenterControllerRole-demo"
  cluster_name           = "demo"
  region                 = "us-east-1"
  node_role_arn          = karpenter_node_role.nodes.arn
  interruption_queue_arn = "arn:aws:sqs:us-east-1:123456789012:demo"

  irsa = {
    # e.g. module.eks.oidc_provider_arn
    oidc_provider_arn = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
    # namespace and service_account default to kube-system / karpenter
  }
  pod_identity = true

  # "inline" (default): one inline policy; "managed": one managed policy per upstream group.
  policy_attachment = "managed"

  # The Karpenter release you run: its reference policy (default for a new role: the newest
  # the provider knows; an existing role keeps its own until this changes).
  karpenter_version = "v1.15"
}

output "controller_role_arn" {
  value = karpenter_controller_role.this.arn
}
