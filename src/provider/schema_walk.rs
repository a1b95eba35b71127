//! A walk over every attribute the provider declares: its own schema, then every resource and
//! data source schema, nested attributes and blocks included. Tests use it to hold a property of
//! all attributes at once (which are sensitive, whether every validation rule is sound).

use crate::provider::KarpenterProvider;
use crate::terraform::framework::schema::{AttrType, Attribute, Block};
use crate::terraform::framework::{Provider, Schema};

/// Calls `visit` with the dotted path (`provider.aws.region`, `karpenter_node_pool.limits`,
/// `data.karpenter_instance_types.filter`) and the attribute, for every attribute anywhere.
pub(super) fn for_each_attribute(mut visit: impl FnMut(&str, &Attribute)) {
    let p = KarpenterProvider::new();
    walk("provider", p.schema(), &mut visit);
    for r in p.resources() {
        walk(r.type_name(), r.schema(), &mut visit);
    }
    for d in p.data_sources() {
        walk(&format!("data.{}", d.type_name()), d.schema(), &mut visit);
    }
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

fn walk_blocks(prefix: &str, blocks: &[Block], visit: &mut impl FnMut(&str, &Attribute)) {
    for b in blocks {
        let path = format!("{prefix}.{}", b.name);
        walk_attrs(&path, &b.attributes, visit);
        walk_blocks(&path, &b.blocks, visit);
    }
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
