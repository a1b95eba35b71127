# An AWSNodeTemplate is imported by its name.
terraform import karpenter_node_template.default default
