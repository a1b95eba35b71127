terraform {
  required_providers {
    karpenter = {
      source  = "karpenter/karpenter"
      version = "~> 0.1.0"
    }
  }
}

# Typically fed from an EKS module's outputs, which may be unknown until the cluster exists:
# while they are, a plan reads nothing from the cluster.
provider "karpenter" {
  kubernetes {
    host                   = var.cluster_endpoint
    cluster_ca_certificate = base64decode(var.cluster_certificate_authority_data)
    # The EKS token, made by the provider with the aws {} block's credentials: no aws CLI needed.
    eks {
      cluster_name = var.cluster_name
    }
  }

  aws {
    region = var.region
  }
}

variable "cluster_name" {
  type    = string
  default = "demo"
}

variable "cluster_endpoint" {
  type    = string
  default = "https://example.eks.amazonaws.com"
}

variable "cluster_certificate_authority_data" {
  type    = string
  default = ""
}

variable "region" {
  type    = string
  default = "us-east-1"
}
