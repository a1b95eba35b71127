//! The queue's policy document: the statements Karpenter's CloudFormation reference writes (EventBridge
//! and SQS may send), plus the user's `policy_statements`.

/// One extra policy statement from `policy_statements`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExtraStatement {
    pub sid: Option<String>,
    pub effect: String,
    pub actions: Vec<String>,
    /// (type, identifiers); type `*` means everyone.
    pub principals: Vec<(String, Vec<String>)>,
    /// (test, variable, values)
    pub conditions: Vec<(String, String, Vec<String>)>,
}

/// The queue policy: upstream's two statements (events/sqs may send; deny non-TLS) plus extras.
pub fn policy_document(queue_arn: &str, extra: &[ExtraStatement]) -> String {
    use serde_json::{Map, Value as J, json};
    let mut statements = vec![
        json!({
            "Sid": "AllowEventBridgeAndSqs",
            "Effect": "Allow",
            "Principal": { "Service": ["events.amazonaws.com", "sqs.amazonaws.com"] },
            "Action": "sqs:SendMessage",
            "Resource": queue_arn,
        }),
        json!({
            "Sid": "DenyHTTP",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "sqs:*",
            "Resource": queue_arn,
            "Condition": { "Bool": { "aws:SecureTransport": "false" } },
        }),
    ];
    for s in extra {
        let mut o = Map::new();
        if let Some(sid) = &s.sid {
            o.insert("Sid".into(), J::String(sid.clone()));
        }
        o.insert("Effect".into(), J::String(s.effect.clone()));
        if s.principals.iter().any(|(t, _)| t == "*") || s.principals.is_empty() {
            o.insert("Principal".into(), J::String("*".into()));
        } else {
            let mut p = Map::new();
            for (t, ids) in &s.principals {
                let entry = p.entry(t.clone()).or_insert_with(|| J::Array(vec![]));
                if let J::Array(a) = entry {
                    a.extend(ids.iter().cloned().map(J::String));
                }
            }
            o.insert("Principal".into(), J::Object(p));
        }
        o.insert("Action".into(), json!(s.actions));
        o.insert("Resource".into(), J::String(queue_arn.to_string()));
        if !s.conditions.is_empty() {
            let mut c = Map::new();
            for (test, variable, values) in &s.conditions {
                let t = c.entry(test.clone()).or_insert_with(|| J::Object(Map::new()));
                if let J::Object(t) = t {
                    t.insert(variable.clone(), json!(values));
                }
            }
            o.insert("Condition".into(), J::Object(c));
        }
        statements.push(J::Object(o));
    }
    json!({ "Version": "2012-10-17", "Id": "EC2InterruptionPolicy", "Statement": statements }).to_string()
}

/// `doc` in the canonical form this resource writes (compact, keys sorted), so a document AWS
/// returns reformatted compares equal to the one planned; not JSON → unchanged.
pub fn canonical_json(doc: &str) -> String {
    serde_json::from_str::<serde_json::Value>(doc).map_or_else(|_| doc.to_string(), |v| v.to_string())
}
