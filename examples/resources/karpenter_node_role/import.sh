# Import by role name.
terraform import karpenter_node_role.this KarpenterNodeRole-demo
