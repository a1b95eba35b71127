//! Shared pieces of the fuzz targets: the fixed set of Terraform types the value decoders are
//! fuzzed against, the provider's registry, and the Kubernetes kinds as resource types.
//!
//! Each target takes its first byte(s) as a selector (which type, which kind, which source) so
//! one corpus covers all of them, and the rest as the input under test.

pub mod kube_read;
pub mod kube_write;
pub mod move_state;
pub mod policy_text;
pub mod tfvalue_json;
pub mod tfvalue_msgpack;

use std::sync::LazyLock;

use terraform_provider_karpenter::provider::KarpenterProvider;
use terraform_provider_karpenter::resources::{self, kube::object::KubeObjectType};
use terraform_provider_karpenter::terraform::framework::Provider;
use terraform_provider_karpenter::terraform::framework::schema::Schema;
use terraform_provider_karpenter::terraform::tfvalue::Type;

/// The provider, built once per process.
pub static PROVIDER: LazyLock<KarpenterProvider> = LazyLock::new(KarpenterProvider::new);

/// The four Karpenter kinds, in a fixed order (selector byte modulo 4).
pub static KINDS: LazyLock<[KubeObjectType; 4]> = LazyLock::new(|| {
    [
        resources::kube::node_pool(),
        resources::kube::ec2_node_class(),
        resources::kube::provisioner(),
        resources::kube::node_template(),
    ]
});

/// Every schema the plugin decodes values against: the provider configuration, each resource
/// type and the data source.
pub fn schemas() -> Vec<&'static Schema> {
    let p: &'static KarpenterProvider = &PROVIDER;
    let mut out = vec![p.schema()];
    out.extend(p.resources().iter().map(|r| r.schema()));
    out.extend(p.data_sources().iter().map(|d| d.schema()));
    out
}

/// The fixed set of types the decoders are fuzzed against: primitives, dynamic, nested
/// collections and structural types with dynamic inside, then the value type of every schema.
pub static TYPES: LazyLock<Vec<Type>> = LazyLock::new(|| {
    let mut types = vec![
        Type::Dynamic,
        Type::String,
        Type::Number,
        Type::Bool,
        Type::list(Type::String),
        Type::set(Type::Number),
        Type::map(Type::Bool),
        Type::list(Type::Dynamic),
        Type::map(Type::list(Type::set(Type::String))),
        Type::set(Type::object([
            ("a", Type::String),
            ("b", Type::list(Type::Number)),
        ])),
        Type::object([
            ("name", Type::String),
            ("any", Type::Dynamic),
            ("tags", Type::map(Type::String)),
            (
                "rules",
                Type::list(Type::object([
                    ("key", Type::String),
                    ("values", Type::set(Type::String)),
                    ("weight", Type::Number),
                ])),
            ),
        ]),
        Type::Tuple(vec![Type::String, Type::Dynamic, Type::list(Type::Bool)]),
        Type::map(Type::Dynamic),
    ];
    types.extend(schemas().iter().map(|s| s.value_type()));
    types
});

/// One target's check of one input: returns when the input is handled, panics when a property
/// breaks.
pub type Check = fn(&[u8]);

/// The fuzz targets by name.
pub const TARGETS: &[(&str, Check)] = &[
    ("tfvalue_msgpack", tfvalue_msgpack::tfvalue_msgpack),
    ("tfvalue_json", tfvalue_json::tfvalue_json),
    ("kube_read", kube_read::kube_read),
    ("kube_write", kube_write::kube_write),
    ("move_state", move_state::move_state),
    ("policy_text", policy_text::policy_text),
];

/// Splits off the selector byte: `(selector, rest)`. Empty input selects 0 with no rest.
pub fn split(data: &[u8]) -> (usize, &[u8]) {
    match data.split_first() {
        Some((first, rest)) => (usize::from(*first), rest),
        None => (0, data),
    }
}
