# Import an interruption queue by its SQS queue name (or its queue URL). The rules are found
# by their target (the queue); the cluster name is read from their `Karpenter-<cluster>-`
# prefix, or taken to be the queue name (Karpenter's getting-started convention).
terraform import karpenter_interruption_queue.this demo
