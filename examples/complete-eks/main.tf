# A whole EKS cluster with Karpenter in one `terraform apply`: the VPC and the cluster from the
# community modules, Karpenter v1.15.1 from its two Helm charts (the CRDs, then the controller),
# EKS Pod Identity for the controller's AWS credentials, the account's EC2 Spot service-linked
# role (unless it exists already: var.create_spot_service_linked_role), and this provider for the
# IAM roles, the nodes' access entry, the interruption queue, the node class and two node pools.
#
# The README's usage stack is this file's Karpenter part, block for block (a test compares them
# and plans this file's karpenter_* part against the local test environment). For the v1.14
# long-term-support line instead, set karpenter_version = "1.14.1" (or a newer v1.14 patch;
# the CRD chart and the controller chart always at the same version). Upgrading later:
# docs/guides/upgrading-karpenter.md.
#
# No -target and no second apply: the karpenter provider is configured from the cluster's
# outputs (unknown at plan time is fine: resources it has not created yet need no connection to
# plan), and the node class and node pools wait until the CRDs the CRD chart installs are served.
# force_destroy on the node class and pools lets a destroy finish Karpenter's cleanup itself
# when the charts go first (see docs/guides/one-apply-eks.md).
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
      source  = "karpenter/karpenter"
      version = "~> 0.1.0"
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
  default = "1.34"
}

variable "karpenter_version" {
  type        = string
  description = "The Karpenter release: the version of both charts, karpenter-crd and karpenter (they move together), and the release whose IAM permissions the controller role gets."
  default     = "1.15.1"
}

variable "create_spot_service_linked_role" {
  type        = bool
  description = "Create the EC2 Spot service-linked role, AWSServiceRoleForEC2Spot: without it Karpenter's first Spot launch in an account fails (ServiceLinkedRoleCreationNotPermitted; the controller may not create the role). An account has at most one: set false where it exists already (any account that has launched Spot; check with `aws iam get-role --role-name AWSServiceRoleForEC2Spot`), otherwise the apply fails on this one resource with \"has been taken in this account\". When Terraform created it, `terraform destroy` deletes it (hashicorp/aws deletes a service-linked role it created)."
  default     = true
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
  # Access entries (the nodes' entry below) need API or API_AND_CONFIG_MAP (the module's default).
  authentication_mode = "API_AND_CONFIG_MAP"

  vpc_id     = module.vpc.vpc_id
  subnet_ids = module.vpc.private_subnets

  # Something has to run the controller, CoreDNS and the Pod Identity agent before Karpenter
  # launches nodes: a small managed node group.
  eks_managed_node_groups = {
    system = {
      # Set explicitly: AWS publishes no Amazon Linux 2 AMIs for Kubernetes 1.33 and later.
      ami_type       = "AL2023_x86_64_STANDARD"
      instance_types = ["m6i.large"]
      min_size       = 2
      max_size       = 3
      desired_size   = 2
    }
  }

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

# The nodes' role, and the EKS access entry (type EC2_LINUX) that lets nodes running as it join
# the cluster.
resource "karpenter_node_role" "this" {
  name = "KarpenterNodeRole-${module.eks.cluster_name}"
  eks_access_entry = {
    cluster_name = module.eks.cluster_name
  }
}

resource "karpenter_interruption_queue" "this" {
  cluster_name = module.eks.cluster_name
}

# The controller's role, trusted by EKS Pod Identity; the association below hands it to the
# chart's service account, kube-system/karpenter.
resource "karpenter_controller_role" "this" {
  name                   = "KarpenterControllerRole-${module.eks.cluster_name}"
  cluster_name           = module.eks.cluster_name
  node_role_arn          = karpenter_node_role.this.arn
  interruption_queue_arn = karpenter_interruption_queue.this.queue_arn
  pod_identity           = true
  # The permissions of the release the charts install.
  karpenter_version = var.karpenter_version
}

# Without this role Karpenter's first Spot launch in the account fails; Karpenter's
# getting-started creates it with the AWS CLI, ignoring the error when it exists. Where it exists already, set
# create_spot_service_linked_role = false.
resource "aws_iam_service_linked_role" "spot" {
  count            = var.create_spot_service_linked_role ? 1 : 0
  aws_service_name = "spot.amazonaws.com"
}

# The agent that serves Pod Identity credentials on every node.
resource "aws_eks_addon" "pod_identity_agent" {
  cluster_name = module.eks.cluster_name
  addon_name   = "eks-pod-identity-agent"
}

resource "aws_eks_pod_identity_association" "karpenter" {
  cluster_name    = module.eks.cluster_name
  namespace       = "kube-system"
  service_account = "karpenter"
  role_arn        = karpenter_controller_role.this.arn
}

# The CRDs, from their own chart: Helm upgrades a chart's templates but never the CRDs in a
# chart's crds/ folder, so only this chart keeps them in step with the controller.
resource "helm_release" "karpenter_crd" {
  name       = "karpenter-crd"
  namespace  = "kube-system"
  repository = "oci://public.ecr.aws/karpenter"
  chart      = "karpenter-crd"
  version    = var.karpenter_version
}

resource "helm_release" "karpenter" {
  name       = "karpenter"
  namespace  = "kube-system"
  repository = "oci://public.ecr.aws/karpenter"
  chart      = "karpenter"
  version    = var.karpenter_version
  skip_crds  = true
  wait       = true

  values = [yamlencode({
    serviceAccount = { name = "karpenter" }
    settings = {
      clusterName       = module.eks.cluster_name
      interruptionQueue = karpenter_interruption_queue.this.queue_name
    }
  })]

  # EKS hands Pod Identity credentials to a pod only if the association exists when the pod is
  # created, and the controller starts only once its CRDs are there. With wait = true the release
  # succeeds only once the controller's pods run, which needs the managed node group's nodes; the
  # cluster outputs it uses wait for the cluster and its access entries, not for the node group,
  # and depends_on takes a module only whole: module.eks.
  depends_on = [
    helm_release.karpenter_crd,
    aws_eks_addon.pod_identity_agent,
    aws_eks_pod_identity_association.karpenter,
    module.eks,
  ]
}

resource "karpenter_ec2_node_class" "default" {
  name                          = "default"
  role                          = karpenter_node_role.this.name
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = module.eks.cluster_name } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = module.eks.cluster_name } }]
  tags                          = { "karpenter.sh/discovery" = module.eks.cluster_name }
  wait_for_ready                = true

  # If Terraform uninstalls the charts before this class and the pools (nothing orders them on
  # destroy), the provider terminates their nodes and deletes Karpenter's launch templates and
  # instance profile itself, instead of waiting for finalizers no controller removes.
  force_destroy = true

  timeouts {
    create = "15m"
  }

  # No Spot launch before the Spot role exists; on destroy, the role goes after this class and
  # its nodes (IAM does not delete a service-linked role its service still uses).
  depends_on = [aws_iam_service_linked_role.spot]
}

# Spot first, on-demand when spot has no capacity; consolidated when nodes are empty or
# underutilized, at most 20% of the pool's nodes at a time. The higher weight makes Karpenter
# try this pool before the one below.
resource "karpenter_node_pool" "default" {
  name   = "default"
  weight = 50
  template = {
    spec = {
      node_class_ref = { name = karpenter_ec2_node_class.default.name }
      requirements = [
        { key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },
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

# On-demand only, for pods that select workload-class=steady, disrupted gently: one node at a
# time, and not at all for underutilization during business hours.
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
  value = [karpenter_node_pool.default.name, karpenter_node_pool.on_demand.name]
}
