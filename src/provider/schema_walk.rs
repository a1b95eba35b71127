//! A walk over every schema the provider declares: its own, every resource's, every data
//! source's and every list resource's (`terraform query`), nested attributes and blocks
//! included. Tests use it to hold a property of all of them at once (which attributes are
//! sensitive, whether every validation rule is sound, that everything is described).

use crate::provider::KarpenterProvider;
use crate::terraform::framework::schema::{AttrType, Attribute, Block};
use crate::terraform::framework::{Provider, Schema};

/// Calls `visit` with a name (`provider`, `karpenter_node_pool`, `data.karpenter_instance_types`,
/// `list.karpenter_node_role`) and the schema, for every schema of the provider.
pub(super) fn for_each_schema(mut visit: impl FnMut(&str, &Schema)) {
    let p = KarpenterProvider::new();
    visit("provider", p.schema());
    for r in p.resources() {
        visit(r.type_name(), r.schema());
        if let Some(list) = r.list_schema() {
            visit(&format!("list.{}", r.type_name()), list);
        }
    }
    for d in p.data_sources() {
        visit(&format!("data.{}", d.type_name()), d.schema());
    }
}

/// Calls `visit` with the dotted path (`provider.aws.region`, `karpenter_node_pool.limits`,
/// `data.karpenter_instance_types.filter`, `list.karpenter_node_role.name_prefix`) and the
/// attribute, for every attribute anywhere.
pub(super) fn for_each_attribute(mut visit: impl FnMut(&str, &Attribute)) {
    for_each_schema(|name, schema| walk(name, schema, &mut visit));
}

fn walk(prefix: &str, schema: &Schema, visit: &mut impl FnMut(&str, &Attribute)) {
    walk_attrs(prefix, &schema.attributes, visit);
    walk_blocks(prefix, &schema.blocks, visit);
}

fn walk_attrs(prefix: &str, attrs: &[Attribute], visit: &mut impl FnMut(&str, &Attribute)) {
    for a in attrs {
        let path = format!("{prefix}.{}", a.name);
        visit(&path, a);
        if let AttrType::Nested { attributes, .. } = &a.ty {
            walk_attrs(&path, attributes, visit);
        }
    }
}

/// Calls `visit` with the dotted path and the block, for every block at every depth.
fn for_each_block(prefix: &str, blocks: &[Block], visit: &mut impl FnMut(&str, &Block)) {
    for b in blocks {
        let path = format!("{prefix}.{}", b.name);
        visit(&path, b);
        for_each_block(&path, &b.blocks, visit);
    }
}

fn walk_blocks(prefix: &str, blocks: &[Block], visit: &mut impl FnMut(&str, &Attribute)) {
    for_each_block(prefix, blocks, &mut |path, b| {
        walk_attrs(path, &b.attributes, visit)
    });
}

/// Every resource type, data source and list resource, every block and every attribute at
/// every depth says what it is for, and so does every validator (the docs list the rules they
/// enforce); so does every attribute of every identity. The docs are made of these texts: an
/// empty one is a hole in a page.
#[test]
fn everything_is_described() {
    let mut missing = Vec::new();
    let mut attributes = 0;
    let mut schemas = Vec::new();
    for_each_schema(|name, schema| {
        schemas.push(name.to_string());
        if name != "provider" && schema.description.trim().is_empty() {
            missing.push(format!("{name} (the type)"));
        }
        for_each_block(name, &schema.blocks, &mut |path, block| {
            if block.description.trim().is_empty() {
                missing.push(format!("{path} (a block)"));
            }
        });
        walk(name, schema, &mut |path, attribute| {
            attributes += 1;
            if attribute.description.trim().is_empty() {
                missing.push(path.to_string());
            }
            if attribute
                .validators
                .iter()
                .any(|v| v.description().trim().is_empty())
            {
                missing.push(format!("{path} (a validator)"));
            }
        });
    });
    let p = KarpenterProvider::new();
    for r in p.resources() {
        for a in r
            .identity_schema()
            .map(|i| i.attributes.as_slice())
            .unwrap_or_default()
        {
            if a.description.trim().is_empty() {
                missing.push(format!("identity.{}.{}", r.type_name(), a.name));
            }
        }
    }
    // The walk reaches every kind of schema: the registry's resources and data sources, and
    // the list resources (the three AWS composites and the Kubernetes kinds).
    let count = |prefix: &str| schemas.iter().filter(|s| s.starts_with(prefix)).count();
    assert_eq!(count("karpenter_"), p.resources().len(), "{schemas:?}");
    assert_eq!(count("data."), p.data_sources().len(), "{schemas:?}");
    assert!(count("list.") >= 3, "{schemas:?}");
    assert!(attributes > 500, "the walk found only {attributes} attributes");
    assert!(missing.is_empty(), "undescribed:\n{}", missing.join("\n"));
}

/// #40 (laziness of `matches`): a pattern compiles when a value is first checked, so a bad one
/// would reach a user as a "provider bug" diagnostic; this compiles every rule of every schema.
#[test]
fn every_validation_rule_is_sound() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for_each_attribute(|path, attribute| {
        for validator in &attribute.validators {
            checked += 1;
            if let Err(e) = validator.self_check() {
                broken.push(format!("{path}: {e}"));
            }
        }
    });
    assert!(checked > 100, "the walk found only {checked} validators");
    assert!(
        broken.is_empty(),
        "unsound validation rules:\n{}",
        broken.join("\n")
    );
}
