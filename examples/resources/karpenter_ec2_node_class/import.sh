# An EC2NodeClass is imported by its name.
terraform import karpenter_ec2_node_class.default default
