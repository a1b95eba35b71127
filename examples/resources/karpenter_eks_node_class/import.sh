# An EKS Auto Mode NodeClass is imported by its name.
terraform import karpenter_eks_node_class.private private
