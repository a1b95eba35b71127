//! Whether two IAM policy documents say the same thing, so a document that exists in another
//! spelling is kept instead of rewritten (an apply writes nothing the plan does not show, and a
//! role's trust policy keeps the statement IDs and order someone else gave it).
//!
//! Two documents are equivalent when their statements are equal as sets after normalising what
//! IAM's policy grammar treats alike:
//! - the document's `Id` and `Version` are left out (no policy variables are used, so the
//!   version changes nothing), and so is every statement's `Sid`;
//! - a one-element list is its element, and lists of values are compared as sets;
//! - booleans and numbers are their string forms (IAM compares condition values as strings);
//! - the statements are compared as a set (their order grants nothing).

use serde_json::{Map, Value as Json};

/// Whether `a` and `b` are equivalent policy documents (false when either has no statements).
pub fn equivalent(a: &Json, b: &Json) -> bool {
    match (normal_statements(a), normal_statements(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Whether the JSON texts `a` and `b` are equivalent policy documents (false if either does not
/// parse).
pub fn equivalent_text(a: &str, b: &str) -> bool {
    match (serde_json::from_str::<Json>(a), serde_json::from_str::<Json>(b)) {
        (Ok(a), Ok(b)) => equivalent(&a, &b),
        _ => false,
    }
}

/// The statements of `doc` (one statement object or a list of them), each as its normal form,
/// sorted and without repeats; None when `doc` has no `Statement`.
pub fn normal_statements(doc: &Json) -> Option<Vec<String>> {
    let mut normal: Vec<String> = statements(doc)?.iter().map(normal_statement).collect();
    normal.sort();
    normal.dedup();
    Some(normal)
}

/// The statements of `doc`, as they are written.
pub fn statements(doc: &Json) -> Option<Vec<Json>> {
    match doc.get("Statement")? {
        Json::Array(s) => Some(s.clone()),
        single @ Json::Object(_) => Some(vec![single.clone()]),
        _ => None,
    }
}

/// One statement's normal form: no `Sid`, values normalised (see the module header).
pub fn normal_statement(statement: &Json) -> String {
    let mut s = statement.as_object().cloned().unwrap_or_default();
    s.remove("Sid");
    normal_value(&Json::Object(s)).to_string()
}

/// A value (list, scalar or object) in normal form.
pub fn normal_value(v: &Json) -> Json {
    match v {
        Json::Bool(b) => Json::String(b.to_string()),
        Json::Number(n) => Json::String(n.to_string()),
        Json::Array(items) if items.len() == 1 => normal_value(&items[0]),
        Json::Array(items) => {
            let mut normal: Vec<Json> = items.iter().map(normal_value).collect();
            normal.sort_by_key(|j| j.to_string());
            normal.dedup();
            Json::Array(normal)
        }
        Json::Object(fields) => Json::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), normal_value(v)))
                .collect::<Map<String, Json>>(),
        ),
        other => other.clone(),
    }
}

/// The values of a scalar-or-list field as strings (`"a"` → `["a"]`; absent → none).
pub fn values_of(v: Option<&Json>) -> Vec<String> {
    match v {
        Some(Json::Array(items)) => items.iter().filter_map(scalar).collect(),
        Some(other) => scalar(other).into_iter().collect(),
        None => Vec::new(),
    }
}

fn scalar(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Bool(b) => Some(b.to_string()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statement_ids_order_and_one_element_lists_do_not_matter() {
        let ours = json!({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"Federated": "arn:p"}, "Action": "sts:AssumeRoleWithWebIdentity",
             "Condition": {"StringEquals": {"x:sub": "system:serviceaccount:karpenter:karpenter"}}},
            {"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
             "Action": ["sts:AssumeRole", "sts:TagSession"]},
        ]});
        let theirs = json!({"Version": "2012-10-17", "Statement": [
            {"Sid": "PodIdentity", "Effect": "Allow", "Principal": {"Service": ["pods.eks.amazonaws.com"]},
             "Action": ["sts:TagSession", "sts:AssumeRole"]},
            {"Sid": "", "Effect": "Allow", "Principal": {"Federated": ["arn:p"]}, "Action": ["sts:AssumeRoleWithWebIdentity"],
             "Condition": {"StringEquals": {"x:sub": ["system:serviceaccount:karpenter:karpenter"]}}},
        ]});
        assert!(equivalent(&ours, &theirs));
        assert!(equivalent_text(&ours.to_string(), &theirs.to_string()));
    }

    #[test]
    fn a_different_grant_is_not_equivalent() {
        let a = json!({"Statement": {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}});
        let b = json!({"Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"},
                                     {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::1:root"}, "Action": "sts:AssumeRole"}]});
        assert!(equivalent(&a, &a.clone()));
        assert!(!equivalent(&a, &b));
        let c = json!({"Statement": {"Effect": "Deny", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}});
        assert!(!equivalent(&a, &c));
        assert!(!equivalent(&a, &json!({})));
        assert!(!equivalent_text("not json", &a.to_string()));
    }

    #[test]
    fn values_of_reads_one_value_or_a_list() {
        assert_eq!(values_of(Some(&json!("a"))), vec!["a"]);
        assert_eq!(values_of(Some(&json!(["a", true]))), vec!["a", "true"]);
        assert!(values_of(None).is_empty());
    }
}
