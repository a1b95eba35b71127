//! Whether two SQS queue policies grant the same thing, so a refresh can keep the document this
//! provider writes when AWS holds an equivalent one in another spelling: the policy of
//! Karpenter's CloudFormation reference (no `Version`, no statement ID on the allow statement,
//! `aws:SecureTransport` as a YAML boolean), or a document another tool wrote with single values
//! in place of one-element lists. Without this, importing a queue the getting-started stack made
//! would plan a policy rewrite that changes nothing.
//!
//! What counts as equivalent is decided in one place for every policy document the provider
//! compares, [`crate::policy::equivalence`]; this module is the queue's entry point to it and
//! holds the tests with the queue policies met in the field.

/// Whether the JSON documents `a` and `b` are equivalent queue policies (false if either does
/// not parse); the rules are [`crate::policy::equivalence`]'s.
pub fn equivalent(a: &str, b: &str) -> bool {
    crate::policy::equivalence::equivalent_text(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::aws::interruption_queue::policy_document;
    use serde_json::json;

    const ARN: &str = "arn:aws:sqs:us-east-1:123456789012:demo";

    /// The queue policy of Karpenter's CloudFormation reference, as CloudFormation writes it.
    fn cloudformation_policy() -> String {
        json!({
            "Id": "EC2InterruptionPolicy",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                    "Action": "sqs:SendMessage",
                    "Resource": ARN
                },
                {
                    "Sid": "DenyHTTP",
                    "Effect": "Deny",
                    "Action": "sqs:*",
                    "Resource": ARN,
                    "Condition": {"Bool": {"aws:SecureTransport": false}},
                    "Principal": "*"
                }
            ]
        })
        .to_string()
    }

    #[test]
    fn the_cloudformation_policy_is_the_one_this_provider_writes() {
        assert!(equivalent(&cloudformation_policy(), &policy_document(ARN, &[])));
    }

    #[test]
    fn spelling_does_not_matter_but_grants_do() {
        let ours = policy_document(ARN, &[]);
        let reordered = json!({"Statement": [
            {"Effect": "Deny", "Principal": "*", "Action": ["sqs:*"], "Resource": [ARN],
             "Condition": {"Bool": {"aws:SecureTransport": ["false"]}}},
            {"Effect": "Allow", "Principal": {"Service": ["sqs.amazonaws.com", "events.amazonaws.com"]},
             "Action": ["sqs:SendMessage"], "Resource": ARN},
        ]})
        .to_string();
        assert!(equivalent(&reordered, &ours));
        let other_queue = policy_document("arn:aws:sqs:us-east-1:123456789012:other", &[]);
        assert!(!equivalent(&other_queue, &ours));
        let no_deny = json!({"Statement": [
            {"Effect": "Allow", "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
             "Action": "sqs:SendMessage", "Resource": ARN}
        ]})
        .to_string();
        assert!(!equivalent(&no_deny, &ours));
        let more_senders = cloudformation_policy().replace("sqs.amazonaws.com", "sns.amazonaws.com");
        assert!(!equivalent(&more_senders, &ours));
        assert!(!equivalent("not json", &ours));
    }
}
