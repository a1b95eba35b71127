//! The AMI family an EC2NodeClass bootstraps with, resolved as Karpenter resolves it:
//! `ami_family` when set, else the family of its (first) `alias` term (`al2023@latest` →
//! `AL2023`), else none, which Karpenter treats as `Custom`. The one place that turns a node
//! class's configuration into a family: the kubelet checks and expressions, the alias rules and
//! drift all ask here.

use crate::terraform::tfvalue::Value;

/// Alias family → the `ami_family` it implies, as Karpenter spells it (rules E2–E7).
pub(crate) const ALIAS_FAMILIES: &[(&str, &str)] = &[
    ("al2", "AL2"),
    ("al2023", "AL2023"),
    ("bottlerocket", "Bottlerocket"),
    ("windows2019", "Windows2019"),
    ("windows2022", "Windows2022"),
    ("windows2025", "Windows2025"),
];

/// The family an alias (`al2023@latest`) implies, as Karpenter spells it (`AL2023`); `None`
/// when the text before `@` is no alias family Karpenter has.
pub(crate) fn of_alias(alias: &str) -> Option<&'static str> {
    let family = alias.split('@').next().unwrap_or_default();
    ALIAS_FAMILIES.iter().find(|(a, _)| *a == family).map(|(_, f)| *f)
}

/// What a node class's configuration (or planned value) says of its AMI family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AmiFamily {
    /// Not known until apply: `ami_family`, the selector terms, or the first term that may be
    /// an alias is unknown.
    Unknown,
    /// Neither `ami_family` nor an alias term: Karpenter treats the class as `Custom`.
    Unset,
    /// `ami_family`, as written.
    Set(String),
    /// The family the first alias term implies, as Karpenter spells it; `None` when the alias
    /// names no family Karpenter has (the alias's own check refuses it).
    Alias(Option<&'static str>),
}

impl AmiFamily {
    /// The family as Karpenter spells it, when it is known and named (`ami_family` or an alias).
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            AmiFamily::Set(family) => Some(family),
            AmiFamily::Alias(family) => *family,
            AmiFamily::Unknown | AmiFamily::Unset => None,
        }
    }
}

/// The AMI family of a node class's configuration (or planned value).
pub(crate) fn resolve(class: &Value) -> AmiFamily {
    match class.get("ami_family") {
        Some(family) if family.is_unknown() => return AmiFamily::Unknown,
        Some(family) => {
            if let Some(family) = family.as_str() {
                return AmiFamily::Set(family.to_string());
            }
        }
        None => {}
    }
    let terms = class.get("ami_selector_terms").unwrap_or(&Value::Null);
    if terms.is_unknown() {
        return AmiFamily::Unknown;
    }
    for term in terms.as_elements().unwrap_or_default() {
        if term.is_unknown() {
            return AmiFamily::Unknown;
        }
        match term.get("alias") {
            Some(alias) if alias.is_unknown() => return AmiFamily::Unknown,
            Some(alias) => {
                if let Some(alias) = alias.as_str() {
                    return AmiFamily::Alias(of_alias(alias));
                }
            }
            None => {}
        }
    }
    AmiFamily::Unset
}

#[cfg(test)]
mod tests {
    use super::{AmiFamily, of_alias, resolve};
    use crate::terraform::tfvalue::Value;

    fn class(ami_family: Value, aliases: Vec<Value>) -> Value {
        let terms: Vec<Value> = aliases
            .into_iter()
            .map(|a| Value::Object([("alias".to_string(), a)].into_iter().collect()))
            .collect();
        Value::Object(
            [
                ("ami_family".to_string(), ami_family),
                ("ami_selector_terms".to_string(), Value::List(terms)),
            ]
            .into_iter()
            .collect(),
        )
    }

    fn text(s: &str) -> Value {
        Value::String(s.to_string())
    }

    #[test]
    fn ami_family_first_then_the_alias_then_custom() {
        assert_eq!(
            resolve(&class(text("Custom"), vec![text("al2023@latest")])),
            AmiFamily::Set("Custom".into())
        );
        let alias = resolve(&class(
            Value::Null,
            vec![Value::Null, text("bottlerocket@v1.20.0")],
        ));
        assert_eq!(alias, AmiFamily::Alias(Some("Bottlerocket")));
        assert_eq!(alias.name(), Some("Bottlerocket"));
        assert_eq!(resolve(&class(Value::Null, vec![Value::Null])), AmiFamily::Unset);
        assert_eq!(
            resolve(&class(Value::Null, vec![text("ubuntu@latest")])).name(),
            None
        );
    }

    #[test]
    fn unknown_while_what_decides_is_unknown() {
        for unknown in [
            class(Value::unknown(), vec![text("al2@latest")]),
            class(Value::Null, vec![Value::unknown()]),
            class(Value::Null, vec![Value::unknown(), text("al2@latest")]),
        ] {
            assert_eq!(resolve(&unknown), AmiFamily::Unknown, "{unknown:?}");
        }
        for terms in [Value::unknown(), Value::List(vec![Value::unknown()])] {
            let mut unknown = class(Value::Null, vec![]);
            if let Value::Object(m) = &mut unknown {
                m.insert("ami_selector_terms".into(), terms);
            }
            assert_eq!(resolve(&unknown), AmiFamily::Unknown, "{unknown:?}");
        }
    }

    #[test]
    fn aliases_name_karpenters_spelling() {
        assert_eq!(of_alias("windows2025@latest"), Some("Windows2025"));
        assert_eq!(of_alias("al2"), Some("AL2"));
        assert_eq!(of_alias("AL2023@latest"), None);
    }
}
