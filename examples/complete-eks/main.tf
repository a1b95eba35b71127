# A whole EKS cluster with Karpenter in one `terraform apply`: the VPC and the cluster from the
# community modules, Karpenter from its Helm chart, and this provider for the IAM roles, the
# interruption queue, the node class and a spot + on-demand pair of node pools.
#
# No -target and no second apply: the karpenter provider is configured from the cluster's
# outputs (unknown at plan time is fine, it connects only when a resource needs the cluster),
# and the node class and node pools wait until the Karpenter CRDs the Helm chart installs are
# served. No depends_on either: force_destroy on the node class and pools lets a destroy finish
# Karpenter's cleanup itself when the chart goes first (see docs/guides/one-apply-eks.md).
# Set controller_on_fargate = true to run the controller on Fargate (IRSA) instead of on the
# small managed node group.
terraform {
  required_version = ">= 1.11"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.95"
    }
    helm = {
      source  = "hashicorp/helm"
      version = "~> 2.17"
    }
    karpenter = {
      source = "karpenter/karpenter"
    }
  }
}

variable "cluster_name" {
  type    = string
  default = "karpenter-demo"
}

variable "region" {
  type    = string
  default = "us-east-1"
}

variable "kubernetes_version" {
  type    = string
  default = "1.33"
}

variable "karpenter_version" {
  type    = string
  default = "1.6.3"
}

variable "controller_on_fargate" {
  type        = bool
  description = "Run the Karpenter controller on a Fargate profile instead of the managed node group."
  default     = false
}

provider "aws" {
  region = var.region
}

data "aws_availability_zones" "available" {
  state = "available"
}

locals {
  azs = slice(data.aws_availability_zones.available.names, 0, 3)
  # Subnets and the node security group carry this tag; the node class selects by it.
  discovery_tags = { "karpenter.sh/discovery" = var.cluster_name }
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

  public_subnet_tags  = { "kubernetes.io/role/elb" = 1 }
  private_subnet_tags = merge(local.discovery_tags, { "kubernetes.io/role/internal-elb" = 1 })
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.37"

  cluster_name                             = var.cluster_name
  cluster_version                          = var.kubernetes_version
  cluster_endpoint_public_access           = true
  enable_cluster_creator_admin_permissions = true
  enable_irsa                              = true

  vpc_id     = module.vpc.vpc_id
  subnet_ids = module.vpc.private_subnets

  # Something has to run the controller (and CoreDNS) before Karpenter launches nodes: a small
  # managed node group, or Fargate profiles for the controller's namespace.
  eks_managed_node_groups = var.controller_on_fargate ? {} : {
    system = {
      instance_types = ["m6i.large"]
      min_size       = 2
      max_size       = 3
      desired_size   = 2
    }
  }
  fargate_profiles = var.controller_on_fargate ? {
    karpenter = { selectors = [{ namespace = "kube-system", labels = { "app.kubernetes.io/name" = "karpenter" } }] }
    coredns   = { selectors = [{ namespace = "kube-system", labels = { "k8s-app" = "kube-dns" } }] }
  } : {}

  node_security_group_tags = local.discovery_tags
}

# Helm reaches the cluster through its outputs, with a token from the AWS CLI; the karpenter
# provider makes the EKS token itself (`eks {}`), with no CLI.
provider "helm" {
  kubernetes {
    host                   = module.eks.cluster_endpoint
    cluster_ca_certificate = base64decode(module.eks.cluster_certificate_authority_data)
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", module.eks.cluster_name, "--region", var.region]
    }
  }
}

provider "karpenter" {
  # Scopes force_destroy's cleanup (Karpenter tags what it launches with the cluster's name).
  cluster_name = module.eks.cluster_name
  kubernetes {
    host                   = module.eks.cluster_endpoint
    cluster_ca_certificate = base64decode(module.eks.cluster_certificate_authority_data)
    eks {
      cluster_name = module.eks.cluster_name
    }
  }
  aws {
    region = var.region
  }
}

resource "karpenter_node_role" "this" {
  name = "KarpenterNodeRole-${var.cluster_name}"
}

# Nodes launched by Karpenter join the cluster through an access entry for their role.
resource "aws_eks_access_entry" "nodes" {
  cluster_name  = module.eks.cluster_name
  principal_arn = karpenter_node_role.this.arn
  type          = "EC2_LINUX"
}

resource "karpenter_interruption_queue" "this" {
  cluster_name = module.eks.cluster_name
}

resource "karpenter_controller_role" "this" {
  name                   = "KarpenterControllerRole-${var.cluster_name}"
  cluster_name           = module.eks.cluster_name
  region                 = var.region
  node_role_arn          = karpenter_node_role.this.arn
  interruption_queue_arn = karpenter_interruption_queue.this.queue_arn
  # IRSA works on managed nodes and on Fargate alike (Pod Identity does not work on Fargate).
  irsa = {
    oidc_provider_arn = module.eks.oidc_provider_arn
    namespace         = "kube-system"
    service_account   = "karpenter"
  }
}

resource "helm_release" "karpenter" {
  name       = "karpenter"
  namespace  = "kube-system"
  repository = "oci://public.ecr.aws/karpenter"
  chart      = "karpenter"
  version    = var.karpenter_version
  wait       = true

  values = [yamlencode({
    serviceAccount = {
      name        = "karpenter"
      annotations = { "eks.amazonaws.com/role-arn" = karpenter_controller_role.this.arn }
    }
    settings = {
      clusterName       = module.eks.cluster_name
      clusterEndpoint   = module.eks.cluster_endpoint
      interruptionQueue = karpenter_interruption_queue.this.queue_name
    }
    replicas = 2
  })]
}

resource "karpenter_ec2_node_class" "default" {
  name                          = "default"
  role                          = karpenter_node_role.this.name
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = local.discovery_tags }]
  security_group_selector_terms = [{ tags = local.discovery_tags }]
  tags                          = { "karpenter.sh/discovery" = var.cluster_name }
  wait_for_ready                = true

  # If Terraform uninstalls the chart before this class and the pools (nothing orders them on
  # destroy), the provider terminates their nodes and deletes Karpenter's launch templates and
  # instance profile itself, instead of waiting for finalizers no controller removes.
  force_destroy = true

  timeouts {
    create = "15m"
  }
}

# Spot first: a higher weight makes Karpenter try this pool before the on-demand one. Spot
# nodes may be consolidated during the day, but at most 20% of them at a time.
resource "karpenter_node_pool" "spot" {
  name   = "spot"
  weight = 50
  template = {
    spec = {
      node_class_ref = { name = karpenter_ec2_node_class.default.name }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m", "r"] },
        { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["5"] },
      ]
      expire_after = "168h"
    }
  }
  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "1m"
    budgets              = [{ nodes = "20%" }]
  }
  limits        = { cpu = "200", memory = "800Gi" }
  force_destroy = true
}

# On-demand as the fallback, disrupted gently: one node at a time, and not at all for
# underutilization during business hours.
resource "karpenter_node_pool" "on_demand" {
  name   = "on-demand"
  weight = 10
  template = {
    metadata = {
      labels = { "workload-class" = "steady" }
    }
    spec = {
      node_class_ref = { name = karpenter_ec2_node_class.default.name }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },
        { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m"] },
      ]
      expire_after = "720h"
    }
  }
  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "10m"
    budgets = [
      { nodes = "1" },
      { nodes = "0", schedule = "0 8 * * mon-fri", duration = "10h", reasons = ["Underutilized"] },
    ]
  }
  limits        = { cpu = "100" }
  force_destroy = true
}

output "cluster_name" {
  value = module.eks.cluster_name
}

output "node_pools" {
  value = [karpenter_node_pool.spot.name, karpenter_node_pool.on_demand.name]
}
