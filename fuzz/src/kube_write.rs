//! The write path of the four Karpenter kinds: a configuration as Terraform could send it
//! (msgpack of the resource's type) → per-attribute validators, the resource's own validation,
//! the generic planner and `to_wire` (the spec that is applied). When the spec converts, reading
//! it back with `from_wire` must give a value that conforms to the resource's type.

use super::{KINDS, split};
use terraform_provider_karpenter::terraform::framework::convert::{from_wire, to_wire};
use terraform_provider_karpenter::terraform::framework::schema::Attribute;
use terraform_provider_karpenter::terraform::framework::{Diagnostics, plan, schema};
use terraform_provider_karpenter::terraform::tfvalue::{AttributePath, Value, msgpack};

/// Runs one input; panics on a broken property (the fuzzer reports it as a crash).
pub fn kube_write(data: &[u8]) {
    let (selector, bytes) = split(data);
    let kind = &KINDS[selector % KINDS.len()];
    let schema = &**kind.schema;
    let ty = schema.value_type();
    let Ok(config) = msgpack::decode(bytes, &ty) else {
        return;
    };
    let mut diags = Diagnostics::new();
    schema::validate_attributes(
        &schema.attributes,
        &schema.blocks,
        &config,
        &AttributePath::root(),
        &mut diags,
    );
    (kind.validate)(&config, None, &mut diags);
    let planned = plan::plan(&schema.attributes, &schema.blocks, &config, &Value::Null).planned;
    let _ = (kind.replacements)(&config, &planned);
    let spec_attrs: Vec<Attribute> = schema
        .attributes
        .iter()
        .filter(|a| a.wire_field().is_some())
        .cloned()
        .collect();
    let Ok(spec) = to_wire(&spec_attrs, &planned, &AttributePath::root()) else {
        return;
    };
    let Ok(Value::Object(mut fields)) =
        from_wire(&schema.attributes, &spec, &planned, &AttributePath::root())
    else {
        return;
    };
    // Blocks (`timeouts`) are Terraform-only: the read path takes them from the prior state.
    for block in &schema.blocks {
        fields.insert(
            block.name.to_string(),
            planned.get(block.name).cloned().unwrap_or(Value::Null),
        );
    }
    if let Err((path, message)) = Value::Object(fields).conforms_to(&ty) {
        panic!("spec read back does not conform to {ty} at {path}: {message}");
    }
}
