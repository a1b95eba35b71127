# Terraform 1.12 and later: import the interruption queue by its identity, the SQS queue's
# name, region and account. Only the queue name is required; region and account_id, when
# given, must be those of the provider configuration's region and credentials.
import {
  to = karpenter_interruption_queue.this
  identity = {
    queue_name = "demo"
    region     = "us-east-1"
    account_id = "123456789012"
  }
}
