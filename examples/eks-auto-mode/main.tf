# An EKS Auto Mode cluster whose compute is all custom, in one `terraform apply`: the VPC from
# the community module, the cluster from hashicorp/aws with Auto Mode enabled and no built-in
# node pools, and this provider for the node role (Auto Mode shape, with its EC2 access entry),
# a custom NodeClass and two node pools.
#
# Auto Mode runs Karpenter for you: there is no Helm release and no controller role, and the
# NodeClass and NodePool kinds are served as soon as the cluster is. The karpenter provider is
# configured from the cluster's outputs (unknown at plan time is fine: it connects only when a
# resource needs the cluster). See docs/guides/eks-auto-mode.md.
terraform {
  required_version = ">= 1.11"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.95"
    }
    karpenter = {
      source  = "karpenter/karpenter"
      version = "~> 0.1.0"
    }
  }
}

variable "cluster_name" {
  type    = string
  default = "auto-mode-demo"
}

variable "region" {
  type    = string
  default = "us-east-1"
}

variable "kubernetes_version" {
  type    = string
  default = "1.33"
}

provider "aws" {
  region = var.region
}

data "aws_availability_zones" "available" {
  state = "available"
}

locals {
  azs = slice(data.aws_availability_zones.available.names, 0, 3)
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.21"

  name            = var.cluster_name
  cidr            = "10.0.0.0/16"
  azs             = local.azs
  private_subnets = ["10.0.0.0/19", "10.0.32.0/19", "10.0.64.0/19"]
  public_subnets  = ["10.0.96.0/22", "10.0.100.0/22", "10.0.104.0/22"]

  enable_nat_gateway = true
  single_nat_gateway = true

  public_subnet_tags  = { "kubernetes.io/role/elb" = "1" }
  private_subnet_tags = { "kubernetes.io/role/internal-elb" = "1", "auto-mode/cluster" = var.cluster_name }
}

# The cluster role Auto Mode needs: the cluster policy and the four Auto Mode policies.
resource "aws_iam_role" "cluster" {
  name = "${var.cluster_name}-cluster"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "eks.amazonaws.com" }
      Action    = ["sts:AssumeRole", "sts:TagSession"]
    }]
  })
}

resource "aws_iam_role_policy_attachment" "cluster" {
  for_each = toset([
    "AmazonEKSClusterPolicy",
    "AmazonEKSComputePolicy",
    "AmazonEKSBlockStoragePolicy",
    "AmazonEKSLoadBalancingPolicy",
    "AmazonEKSNetworkingPolicy",
  ])
  role       = aws_iam_role.cluster.name
  policy_arn = "arn:aws:iam::aws:policy/${each.value}"
}

# Auto Mode on, built-in pools off (node_pools = []): every node comes from the pools below.
resource "aws_eks_cluster" "this" {
  name                          = var.cluster_name
  version                       = var.kubernetes_version
  role_arn                      = aws_iam_role.cluster.arn
  bootstrap_self_managed_addons = false

  access_config {
    authentication_mode = "API"
  }

  compute_config {
    enabled    = true
    node_pools = []
  }

  kubernetes_network_config {
    elastic_load_balancing {
      enabled = true
    }
  }

  storage_config {
    block_storage {
      enabled = true
    }
  }

  vpc_config {
    subnet_ids              = module.vpc.private_subnets
    endpoint_private_access = true
    endpoint_public_access  = true
  }

  depends_on = [aws_iam_role_policy_attachment.cluster]
}

provider "karpenter" {
  cluster_name = aws_eks_cluster.this.name
  kubernetes {
    host                   = aws_eks_cluster.this.endpoint
    cluster_ca_certificate = base64decode(aws_eks_cluster.this.certificate_authority[0].data)
    eks {
      cluster_name = aws_eks_cluster.this.name
    }
  }
  aws {
    region = var.region
  }
}

# The nodes' role: AmazonEKSWorkerNodeMinimalPolicy and AmazonEC2ContainerRegistryPullOnly,
# and the access entry of type EC2 with AmazonEKSAutoNodePolicy that a custom node role needs.
resource "karpenter_node_role" "auto" {
  name = "${var.cluster_name}-nodes"
  mode = "eks_auto_mode"
  eks_access_entry = {
    cluster_name = aws_eks_cluster.this.name
  }
}

resource "karpenter_eks_node_class" "private" {
  name = "private"
  role = karpenter_node_role.auto.name

  subnet_selector_terms = [
    { tags = { "auto-mode/cluster" = var.cluster_name } },
  ]
  security_group_selector_terms = [
    { id = aws_eks_cluster.this.vpc_config[0].cluster_security_group_id },
  ]

  network_policy = "DefaultDeny"
  ephemeral_storage = {
    size = "100Gi"
  }
  tags = {
    cluster = var.cluster_name
  }
}

# General workloads: spot first, on-demand when spot is short, current generations only.
resource "karpenter_node_pool" "general" {
  name = "general"
  template = {
    spec = {
      node_class_ref = {
        group = "eks.amazonaws.com"
        kind  = "NodeClass"
        name  = karpenter_eks_node_class.private.name
      }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },
        { key = "eks.amazonaws.com/instance-category", operator = "In", values = ["c", "m", "r"] },
        { key = "eks.amazonaws.com/instance-generation", operator = "Gt", values = ["5"] },
        { key = "kubernetes.io/arch", operator = "In", values = ["amd64", "arm64"] },
      ]
      expire_after = "336h"
    }
  }
  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "1m"
    budgets              = [{ nodes = "10%" }]
  }
  limits = { cpu = "200", memory = "800Gi" }
}

# Cluster add-ons and critical pods: on-demand, tainted so only what tolerates it lands here.
resource "karpenter_node_pool" "critical" {
  name   = "critical"
  weight = 50
  template = {
    spec = {
      node_class_ref = {
        group = "eks.amazonaws.com"
        kind  = "NodeClass"
        name  = karpenter_eks_node_class.private.name
      }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
        { key = "eks.amazonaws.com/instance-category", operator = "In", values = ["m"] },
      ]
      taints = [{ key = "CriticalAddonsOnly", effect = "NoSchedule" }]
    }
  }
  limits = { cpu = "32" }
}

output "node_class_status" {
  value = karpenter_eks_node_class.private.status
}
