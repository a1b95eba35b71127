//! YAML and JSON text, as `yamldecode`/`jsondecode` would decode it, turned into scan
//! [`Node`]s: YAML keeps each key's line and column (serde-saphyr's `Spanned`); JSON only
//! names the file.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use super::finding::Place;
use super::node::{Entry, Node, Scalar};

/// Which decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syntax {
    Yaml,
    Json,
}

impl Syntax {
    /// The Terraform function that decodes it.
    pub fn function(self) -> &'static str {
        match self {
            Syntax::Yaml => "yamldecode",
            Syntax::Json => "jsondecode",
        }
    }
}

/// The contents of a file named `shown`; `None` when it does not parse (Terraform reports
/// that itself).
pub(super) fn parse_file(text: &str, syntax: Syntax, shown: &str) -> Option<Node<'static>> {
    let mut node = decode(text, syntax)?;
    set_places(&mut node, &|p: &mut Place| p.file = shown.to_string());
    Some(node)
}

/// Text written inline (a string or heredoc argument): every key is placed at `call`, the
/// decoding function's call.
pub(super) fn parse(text: &str, syntax: Syntax, call: Option<&Place>) -> Option<Node<'static>> {
    let mut node = decode(text, syntax)?;
    set_places(&mut node, &|p: &mut Place| match call {
        Some(call) => *p = call.clone(),
        None => p.line = 0,
    });
    Some(node)
}

fn decode(text: &str, syntax: Syntax) -> Option<Node<'static>> {
    match syntax {
        Syntax::Yaml => serde_saphyr::from_str::<YamlNode>(text).ok().map(|n| n.0),
        Syntax::Json => serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .map(|v| json_node(&v)),
    }
}

fn set_places(node: &mut Node<'static>, fix: &dyn Fn(&mut Place)) {
    match node {
        Node::Object(entries) => {
            for e in entries {
                if let Some(p) = &mut e.at {
                    fix(p);
                }
                set_places(&mut e.value, fix);
            }
        }
        Node::Tuple(items) | Node::OneOf(items) => items.iter_mut().for_each(|n| set_places(n, fix)),
        Node::Elements(inner) => set_places(inner, fix),
        Node::Scalar(_) | Node::Unknown(_) | Node::Lazy(..) => {}
    }
}

fn json_node(v: &serde_json::Value) -> Node<'static> {
    use serde_json::Value as J;
    match v {
        J::Null => Node::Scalar(Scalar::Null),
        J::Bool(b) => Node::Scalar(Scalar::Bool(*b)),
        J::Number(n) => Node::Scalar(Scalar::Num(n.to_string())),
        J::String(s) => Node::Scalar(Scalar::Str(s.clone())),
        J::Array(items) => Node::Tuple(items.iter().map(json_node).collect()),
        J::Object(map) => Node::Object(
            map.iter()
                .map(|(k, v)| Entry {
                    key: k.clone(),
                    at: Some(Place {
                        file: String::new(),
                        line: 0,
                        column: 0,
                    }),
                    value: json_node(v),
                })
                .collect(),
        ),
    }
}

/// A YAML node, deserialized with its keys' positions.
struct YamlNode(Node<'static>);

/// A mapping key as text (YAML keys may be numbers or booleans; `yamldecode` makes them
/// strings).
struct KeyText(String);

impl<'de> Deserialize<'de> for YamlNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match YamlNode::deserialize(d)?.0 {
            Node::Scalar(Scalar::Str(s) | Scalar::Num(s)) => Ok(KeyText(s)),
            Node::Scalar(Scalar::Bool(b)) => Ok(KeyText(b.to_string())),
            Node::Scalar(Scalar::Null) => Ok(KeyText("null".into())),
            _ => Err(de::Error::custom("a mapping key that is not a scalar")),
        }
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = YamlNode;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<YamlNode, E> {
        Ok(YamlNode(Node::Scalar(Scalar::Bool(v))))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<YamlNode, E> {
        Ok(YamlNode(Node::Scalar(Scalar::Num(v.to_string()))))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<YamlNode, E> {
        Ok(YamlNode(Node::Scalar(Scalar::Num(v.to_string()))))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<YamlNode, E> {
        Ok(YamlNode(Node::Scalar(Scalar::Num(v.to_string()))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<YamlNode, E> {
        Ok(YamlNode(Node::Scalar(Scalar::Str(v.to_string()))))
    }
    fn visit_unit<E: de::Error>(self) -> Result<YamlNode, E> {
        Ok(YamlNode(Node::Scalar(Scalar::Null)))
    }
    fn visit_none<E: de::Error>(self) -> Result<YamlNode, E> {
        Ok(YamlNode(Node::Scalar(Scalar::Null)))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<YamlNode, D::Error> {
        YamlNode::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<YamlNode, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<YamlNode>()? {
            items.push(item.0);
        }
        Ok(YamlNode(Node::Tuple(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<YamlNode, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<KeyText>>()? {
            let value = map.next_value::<YamlNode>()?;
            let line = usize::try_from(key.referenced.line()).unwrap_or(0);
            let column = usize::try_from(key.referenced.column()).unwrap_or(0);
            entries.push(Entry {
                key: key.value.0,
                at: Some(Place {
                    file: String::new(),
                    line,
                    column,
                }),
                value: value.0,
            });
        }
        Ok(YamlNode(Node::Object(entries)))
    }
}
