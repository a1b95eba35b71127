# Terraform 1.12 and later: import the node role by its identity, the IAM role's name and
# account. Only the name is required; account_id, when given, must be the account of the
# provider's credentials.
import {
  to = karpenter_node_role.this
  identity = {
    name       = "KarpenterNodeRole-demo"
    account_id = "123456789012"
  }
}
