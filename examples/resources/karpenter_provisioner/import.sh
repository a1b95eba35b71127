# A Provisioner is imported by its name.
terraform import karpenter_provisioner.default default
