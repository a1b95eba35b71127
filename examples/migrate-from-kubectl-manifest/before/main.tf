# BEFORE: Karpenter's objects as templated YAML through kubectl_manifest. Untyped (a typo in a
# field name is found by the API server at apply time, if at all) and without drift detection of
# the fields the template sets.

terraform {
  required_providers {
    kubectl = {
      source = "gavinbunney/kubectl"
    }
  }
}

variable "cluster_name" {
  type    = string
  default = "demo"
}

resource "kubectl_manifest" "node_class" {
  yaml_body = templatefile("${path.module}/node-class.yaml.tftpl", {
    cluster_name = var.cluster_name
  })
}

resource "kubectl_manifest" "node_pool" {
  yaml_body = templatefile("${path.module}/node-pool.yaml.tftpl", {
    cluster_name = var.cluster_name
  })
}
