# Import by role name; the IRSA / Pod Identity settings and the policy inputs are read back
# from the role's trust policy and permissions.
terraform import karpenter_controller_role.this KarpenterControllerRole-demo
