//! IAM policy documents as data: statements with actions, resources and conditions, rendered to
//! the JSON IAM accepts. Pure and offline; the Karpenter controller statements are in
//! [`controller`] (rendered from the reference policy of each Karpenter release, [`releases`]),
//! ARN parsing in [`arn`], whether two documents say the same in [`equivalence`].

pub mod arn;
pub mod controller;
pub mod equivalence;
pub mod releases;

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// One condition: `test` (operator), `variable` (key) and the values it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub test: &'static str,
    pub variable: String,
    pub values: Vec<String>,
}

/// One policy statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub sid: &'static str,
    pub effect: &'static str,
    pub actions: Vec<&'static str>,
    pub resources: Vec<String>,
    pub conditions: Vec<Condition>,
}

impl Statement {
    pub fn allow(sid: &'static str, actions: &[&'static str], resources: Vec<String>) -> Self {
        Self {
            sid,
            effect: "Allow",
            actions: actions.to_vec(),
            resources,
            conditions: Vec::new(),
        }
    }

    pub fn when(mut self, test: &'static str, variable: impl Into<String>, values: &[&str]) -> Self {
        self.conditions.push(Condition {
            test,
            variable: variable.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        });
        self
    }
}

/// A whole policy document (`Version` 2012-10-17).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyDocument {
    pub statements: Vec<Statement>,
}

impl PolicyDocument {
    /// Compact JSON: IAM's size limits count characters, so no whitespace is spent.
    pub fn to_json(&self) -> String {
        // Serialising plain strings and maps cannot fail; an empty object is a safe fallback.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// A single value is written as a string, several as an array, as IAM documents usually are.
struct OneOrMany<'a, T: Serialize>(&'a [T]);

impl<T: Serialize> Serialize for OneOrMany<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }
}

impl Serialize for Statement {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("Sid", self.sid)?;
        map.serialize_entry("Effect", self.effect)?;
        map.serialize_entry("Action", &OneOrMany(&self.actions))?;
        map.serialize_entry("Resource", &OneOrMany(&self.resources))?;
        if !self.conditions.is_empty() {
            let mut by_test: BTreeMap<&str, BTreeMap<&str, OneOrMany<'_, String>>> = BTreeMap::new();
            for c in &self.conditions {
                by_test
                    .entry(c.test)
                    .or_default()
                    .insert(&c.variable, OneOrMany(&c.values));
            }
            map.serialize_entry("Condition", &by_test)?;
        }
        map.end()
    }
}

impl Serialize for PolicyDocument {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("Version", "2012-10-17")?;
        map.serialize_entry("Statement", &self.statements)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_single_values_as_strings_and_groups_conditions() {
        let doc = PolicyDocument {
            statements: vec![
                Statement::allow("A", &["s3:GetObject"], vec!["*".into()])
                    .when("StringEquals", "aws:RequestedRegion", &["us-east-1"])
                    .when("StringEquals", "aws:PrincipalTag/x", &["1", "2"]),
            ],
        };
        let v: serde_json::Value = serde_json::from_str(&doc.to_json()).expect("json");
        assert_eq!(v["Version"], "2012-10-17");
        let st = &v["Statement"][0];
        assert_eq!(st["Action"], "s3:GetObject");
        assert_eq!(st["Resource"], "*");
        assert_eq!(
            st["Condition"]["StringEquals"]["aws:RequestedRegion"],
            "us-east-1"
        );
        assert_eq!(
            st["Condition"]["StringEquals"]["aws:PrincipalTag/x"],
            serde_json::json!(["1", "2"])
        );
    }
}
