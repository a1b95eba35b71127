terraform {
  required_providers {
    karpenter = {
      source  = "karpenter/karpenter"
      version = "~> 0.1.0"
    }
    # Kept until the moves are applied: Terraform needs every provider the state names.
    kubectl = {
      source = "gavinbunney/kubectl"
    }
  }
}

variable "cluster_endpoint" {
  type = string
}

variable "cluster_certificate_authority_data" {
  type = string
}

provider "karpenter" {
  kubernetes {
    host                   = var.cluster_endpoint
    cluster_ca_certificate = base64decode(var.cluster_certificate_authority_data)
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", var.cluster_name]
    }
  }
}
