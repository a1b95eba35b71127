# Import an interruption queue by its SQS queue name (or its queue URL). The rules are found
# by their target (the queue), and the cluster name is taken to be the queue name, as in
# Karpenter's getting-started template.
terraform import karpenter_interruption_queue.this demo
