//! Conversions between the framework's types and the tfplugin6 messages: schemas, diagnostics
//! and attribute paths. Kept apart from the RPC handlers so both stay short.

use super::proto::tfplugin6 as pb;
use crate::terraform::framework::config_scan::Finding;
use crate::terraform::framework::schema::{AttrType, Attribute, Block, Mode, Nesting, Schema};
use crate::terraform::framework::{Diagnostic, Diagnostics, IdentitySchema, Severity};
use crate::terraform::tfvalue::{AttributePath, PathStep};

const MARKDOWN: i32 = 1;

pub fn schema(s: &Schema) -> pb::Schema {
    pb::Schema {
        version: s.version,
        block: Some(pb::schema::Block {
            version: 0,
            attributes: s.attributes.iter().map(attribute).collect(),
            block_types: s.blocks.iter().map(nested_block).collect(),
            description: s.description.clone(),
            description_kind: MARKDOWN,
            deprecated: false,
            deprecation_message: String::new(),
            // 6.11's computed blocks: none here (`timeouts` is configuration); a client that
            // does not allow them (6.10 and older) reads the field as absent, i.e. false.
            computed: false,
        }),
    }
}

fn attribute(a: &Attribute) -> pb::schema::Attribute {
    let (r#type, nested_type) = match &a.ty {
        AttrType::Plain(t) => (t.to_json(), None),
        AttrType::Nested { nesting, attributes } => (Vec::new(), Some(nested_object(attributes, *nesting))),
    };
    pb::schema::Attribute {
        name: a.name.to_string(),
        r#type,
        nested_type,
        description: a.full_description(),
        description_kind: MARKDOWN,
        required: a.mode == Mode::Required,
        optional: matches!(a.mode, Mode::Optional | Mode::OptionalComputed),
        computed: matches!(a.mode, Mode::Computed | Mode::OptionalComputed),
        sensitive: a.sensitive,
        deprecated: a.deprecated.is_some(),
        deprecation_message: a.deprecated.unwrap_or_default().to_string(),
        write_only: false,
    }
}

/// Nested attributes. `min_items`/`max_items` are deprecated in the protocol and left at 0.
#[allow(deprecated)]
fn nested_object(attributes: &[Attribute], nesting: Nesting) -> pb::schema::Object {
    pb::schema::Object {
        attributes: attributes.iter().map(attribute).collect(),
        nesting: object_nesting(nesting),
        min_items: 0,
        max_items: 0,
    }
}

fn object_nesting(n: Nesting) -> i32 {
    use pb::schema::object::NestingMode as M;
    (match n {
        Nesting::Single => M::Single,
        Nesting::List => M::List,
        Nesting::Set => M::Set,
        Nesting::Map => M::Map,
    }) as i32
}

fn nested_block(b: &Block) -> pb::schema::NestedBlock {
    use pb::schema::nested_block::NestingMode as M;
    let nesting = match b.nesting {
        Nesting::Single => M::Single,
        Nesting::List => M::List,
        Nesting::Set => M::Set,
        Nesting::Map => M::Map,
    };
    pb::schema::NestedBlock {
        type_name: b.name.to_string(),
        block: Some(pb::schema::Block {
            version: 0,
            attributes: b.attributes.iter().map(attribute).collect(),
            block_types: b.blocks.iter().map(nested_block).collect(),
            description: b.description.clone(),
            description_kind: MARKDOWN,
            deprecated: false,
            deprecation_message: String::new(),
            // 6.11's computed blocks: none here (`timeouts` is configuration); a client that
            // does not allow them (6.10 and older) reads the field as absent, i.e. false.
            computed: false,
        }),
        nesting: nesting as i32,
        min_items: 0,
        max_items: if b.nesting == Nesting::Single {
            0
        } else {
            i64::from(b.max_items)
        },
    }
}

/// An identity schema (`GetResourceIdentitySchemas`).
pub fn identity_schema(s: &IdentitySchema) -> pb::ResourceIdentitySchema {
    pb::ResourceIdentitySchema {
        version: s.version,
        identity_attributes: s
            .attributes
            .iter()
            .map(|a| pb::resource_identity_schema::IdentityAttribute {
                name: a.name.to_string(),
                r#type: a.ty.to_json(),
                required_for_import: a.required_for_import,
                optional_for_import: !a.required_for_import,
                description: a.description.to_string(),
            })
            .collect(),
    }
}

pub fn path(p: &AttributePath) -> pb::AttributePath {
    use pb::attribute_path::step::Selector;
    pb::AttributePath {
        steps: p
            .steps
            .iter()
            .map(|s| pb::attribute_path::Step {
                selector: Some(match s {
                    PathStep::Attribute(n) => Selector::AttributeName(n.clone()),
                    PathStep::ElementKeyString(k) => Selector::ElementKeyString(k.clone()),
                    PathStep::ElementKeyInt(i) => Selector::ElementKeyInt(*i),
                }),
            })
            .collect(),
    }
}

/// Terraform shows the source line of a configured top-level attribute, but cannot point
/// inside an object value, nor at an attribute that is absent; so the detail itself names
/// the whole attribute path.
fn detail_with_path(d: &Diagnostic) -> String {
    match &d.path {
        Some(p) if !p.is_root() => format!("{p}: {}", d.detail),
        _ => d.detail.clone(),
    }
}

pub fn diagnostic(d: &Diagnostic) -> pb::Diagnostic {
    located_diagnostic(d, None)
}

/// A diagnostic about a configuration of `schema`: its attribute path is cut to what
/// Terraform can show the line of ([`Schema::locatable`]), its detail names the whole path.
fn located_diagnostic(d: &Diagnostic, schema: Option<&Schema>) -> pb::Diagnostic {
    use pb::diagnostic::Severity as S;
    let attribute = match (&d.path, schema) {
        (Some(p), Some(schema)) => Some(schema.locatable(p)),
        (p, _) => p.clone(),
    };
    pb::Diagnostic {
        severity: match d.severity {
            Severity::Error => S::Error,
            Severity::Warning => S::Warning,
        } as i32,
        summary: d.summary.clone(),
        detail: detail_with_path(d),
        attribute: attribute.as_ref().map(path),
    }
}

pub fn diagnostics(d: &Diagnostics) -> Vec<pb::Diagnostic> {
    d.iter().map(diagnostic).collect()
}

/// [`diagnostics`] about a configuration of `schema`, placed where Terraform can show them.
pub fn diagnostics_in(d: &Diagnostics, schema: &Schema) -> Vec<pb::Diagnostic> {
    d.iter().map(|d| located_diagnostic(d, Some(schema))).collect()
}

/// A finding of the configuration scan: its detail already names the whole path and where
/// the key is written; its subject is the deepest path Terraform can show the line of.
pub fn finding(f: &Finding) -> pb::Diagnostic {
    use pb::diagnostic::Severity as S;
    pb::Diagnostic {
        severity: match f.severity {
            Severity::Error => S::Error,
            Severity::Warning => S::Warning,
        } as i32,
        summary: f.summary.clone(),
        detail: f.detail.clone(),
        attribute: (!f.subject.is_root()).then(|| path(&f.subject)),
    }
}
