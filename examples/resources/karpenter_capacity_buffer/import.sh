# A CapacityBuffer is imported by its namespace and name.
terraform import karpenter_capacity_buffer.ci_runners ci/ci-runners
