//! The declarative schema model: the one description of a resource, data source or provider
//! block from which the protocol schema, validation, planning defaults, conversion to and from
//! API objects, and the generated docs are all derived.
//!
//! A schema is built once (in a `LazyLock`) with the builder methods below, e.g.
//! `Attribute::string("cluster_name").required().describe("…").validate(v::non_empty())`.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::diagnostics::Diagnostics;
use super::upgrade_step::UpgradeStep;
use super::validate::Validator;
use crate::terraform::tfvalue::{AttributePath, PathStep, Type, Value};

/// Whether the user sets an attribute, the provider does, or either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Required,
    Optional,
    Computed,
    OptionalComputed,
}

/// How nested attributes (and blocks) repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    Single,
    List,
    Set,
    Map,
}

/// An attribute's type: a plain Terraform type, or nested attributes.
#[derive(Clone)]
pub enum AttrType {
    Plain(Type),
    Nested {
        nesting: Nesting,
        attributes: Vec<Attribute>,
    },
}

/// Where an attribute lives in the API object it is converted to and from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The camelCase form of the attribute name (`node_class_ref` → `nodeClassRef`).
    Auto,
    /// An explicit API field name.
    Named(&'static str),
    /// Not part of the API object (e.g. `wait_for_ready`, `timeouts`, outputs we compute).
    Skip,
    /// A free-form API field carried as a JSON-encoded string attribute (CRD fields with
    /// `x-kubernetes-preserve-unknown-fields`). Compared as JSON, so formatting is no drift.
    Json(&'static str),
}

/// One attribute of a schema.
#[derive(Clone)]
pub struct Attribute {
    pub name: &'static str,
    pub ty: AttrType,
    pub mode: Mode,
    pub sensitive: bool,
    pub description: String,
    pub validators: Vec<Arc<dyn Validator>>,
    /// The value planned when the configuration leaves the attribute null.
    pub default: Option<Value>,
    /// The value the default fill writes into stored state written before the attribute
    /// existed, when that is not [`Self::default`] (or the attribute has none): what the
    /// attribute's meaning was for those objects, e.g. the version of something a release
    /// made before the version could be chosen, while new objects get the newest.
    pub state_fill: Option<Value>,
    /// A change of this attribute replaces the object.
    pub requires_replace: bool,
    /// A computed value that does not change once known: plans keep the prior value.
    pub stable: bool,
    pub wire: Wire,
    /// Environment variables read when the attribute is unset (provider configuration only).
    pub env: &'static [&'static str],
    pub deprecated: Option<&'static str>,
    /// When two values mean the same (`Some(same)`): a configured value that means what the
    /// prior state holds is planned as the prior value (Terraform accepts a plan that keeps
    /// the prior value of an attribute whose configuration is functionally equivalent), and a
    /// value read back from the API that means what the prior state holds reads as the prior.
    /// For values whose spelling carries no meaning, e.g. a quantity given as `1000` or `"1000"`.
    pub same: Option<fn(&Value, &Value) -> bool>,
    /// The type as the docs name it, where the protocol type says too little (a `Dynamic`
    /// attribute that holds a map of numbers or strings).
    pub type_label: Option<&'static str>,
}

impl Attribute {
    pub fn new(name: &'static str, ty: AttrType) -> Self {
        Self {
            name,
            ty,
            mode: Mode::Optional,
            sensitive: false,
            description: String::new(),
            validators: Vec::new(),
            default: None,
            state_fill: None,
            requires_replace: false,
            stable: false,
            wire: Wire::Auto,
            env: &[],
            deprecated: None,
            same: None,
            type_label: None,
        }
    }

    pub fn string(name: &'static str) -> Self {
        Self::new(name, AttrType::Plain(Type::String))
    }
    pub fn number(name: &'static str) -> Self {
        Self::new(name, AttrType::Plain(Type::Number))
    }
    pub fn bool(name: &'static str) -> Self {
        Self::new(name, AttrType::Plain(Type::Bool))
    }
    /// An attribute whose values carry their own type (Terraform's `DynamicPseudoType`): for
    /// API fields whose values differ in type, such as Kubernetes int-or-string fields, so a
    /// number stays a number and a string a string on the way to the API and back. Validators
    /// see the value itself, not its dynamic wrapper.
    pub fn dynamic(name: &'static str) -> Self {
        Self::new(name, AttrType::Plain(Type::Dynamic))
    }
    pub fn list_of(name: &'static str, element: Type) -> Self {
        Self::new(name, AttrType::Plain(Type::List(Box::new(element))))
    }
    pub fn set_of(name: &'static str, element: Type) -> Self {
        Self::new(name, AttrType::Plain(Type::Set(Box::new(element))))
    }
    pub fn map_of(name: &'static str, element: Type) -> Self {
        Self::new(name, AttrType::Plain(Type::Map(Box::new(element))))
    }
    pub fn object(name: &'static str, attributes: Vec<Attribute>) -> Self {
        Self::new(
            name,
            AttrType::Nested {
                nesting: Nesting::Single,
                attributes,
            },
        )
    }
    pub fn list_of_objects(name: &'static str, attributes: Vec<Attribute>) -> Self {
        Self::new(
            name,
            AttrType::Nested {
                nesting: Nesting::List,
                attributes,
            },
        )
    }
    pub fn set_of_objects(name: &'static str, attributes: Vec<Attribute>) -> Self {
        Self::new(
            name,
            AttrType::Nested {
                nesting: Nesting::Set,
                attributes,
            },
        )
    }
    pub fn map_of_objects(name: &'static str, attributes: Vec<Attribute>) -> Self {
        Self::new(
            name,
            AttrType::Nested {
                nesting: Nesting::Map,
                attributes,
            },
        )
    }

    pub fn required(mut self) -> Self {
        self.mode = Mode::Required;
        self
    }
    pub fn optional(mut self) -> Self {
        self.mode = Mode::Optional;
        self
    }
    pub fn computed(mut self) -> Self {
        self.mode = Mode::Computed;
        self
    }
    pub fn optional_computed(mut self) -> Self {
        self.mode = Mode::OptionalComputed;
        self
    }
    pub fn sensitive(mut self) -> Self {
        self.sensitive = true;
        self
    }
    pub fn describe(mut self, text: impl Into<String>) -> Self {
        self.description = text.into();
        self
    }
    pub fn validate(mut self, validator: impl Validator + 'static) -> Self {
        self.validators.push(Arc::new(validator));
        self
    }
    /// A default makes the attribute optional+computed: the plan shows the default.
    pub fn default_value(mut self, value: Value) -> Self {
        self.default = Some(value);
        self.mode = Mode::OptionalComputed;
        self
    }
    /// The value of this attribute in stored state written before it existed (see
    /// [`Self::state_fill`]); the default fill writes it there instead of the default.
    pub fn fill_stored_state_with(mut self, value: Value) -> Self {
        self.state_fill = Some(value);
        self
    }
    pub fn replace_on_change(mut self) -> Self {
        self.requires_replace = true;
        self
    }
    pub fn stable(mut self) -> Self {
        self.stable = true;
        self
    }
    pub fn wire_name(mut self, name: &'static str) -> Self {
        self.wire = Wire::Named(name);
        self
    }
    /// The attribute is a JSON string holding the free-form API field `name`.
    pub fn json_on_wire(mut self, name: &'static str) -> Self {
        self.wire = Wire::Json(name);
        self
    }
    pub fn not_on_wire(mut self) -> Self {
        self.wire = Wire::Skip;
        self
    }
    pub fn env(mut self, vars: &'static [&'static str]) -> Self {
        self.env = vars;
        self
    }
    /// Values that `same` says mean the same are not a change (see [`Attribute::same`]).
    pub fn same_when(mut self, same: fn(&Value, &Value) -> bool) -> Self {
        self.same = Some(same);
        self
    }

    /// How the docs name this attribute's type (see [`Attribute::type_label`]).
    pub fn type_label(mut self, label: &'static str) -> Self {
        self.type_label = Some(label);
        self
    }

    pub fn deprecated(mut self, message: &'static str) -> Self {
        self.deprecated = Some(message);
        self
    }

    pub fn is_computed(&self) -> bool {
        matches!(self.mode, Mode::Computed | Mode::OptionalComputed)
    }

    pub fn is_settable(&self) -> bool {
        !matches!(self.mode, Mode::Computed)
    }

    /// The description plus the rules its validators enforce, so the schema Terraform shows
    /// and the generated docs say exactly what validation checks.
    pub fn full_description(&self) -> String {
        let mut text = self.description.clone();
        for rule in self.validators.iter().map(|v| v.description()) {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&rule);
        }
        text
    }

    /// The Terraform type this attribute's values have.
    pub fn value_type(&self) -> Type {
        match &self.ty {
            AttrType::Plain(t) => t.clone(),
            AttrType::Nested { nesting, attributes } => {
                let object = object_type(attributes, &[]);
                match nesting {
                    Nesting::Single => object,
                    Nesting::List => Type::List(Box::new(object)),
                    Nesting::Set => Type::Set(Box::new(object)),
                    Nesting::Map => Type::Map(Box::new(object)),
                }
            }
        }
    }

    /// The nested attributes, when this attribute has them.
    pub fn nested(&self) -> Option<(Nesting, &[Attribute])> {
        match &self.ty {
            AttrType::Nested { nesting, attributes } => Some((*nesting, attributes)),
            AttrType::Plain(_) => None,
        }
    }

    /// The API field name, or `None` when the attribute is not part of the API object.
    pub fn wire_field(&self) -> Option<String> {
        match self.wire {
            Wire::Auto => Some(camel_case(self.name)),
            Wire::Named(n) | Wire::Json(n) => Some(n.to_string()),
            Wire::Skip => None,
        }
    }
}

/// A nested block (used only where Terraform users expect blocks: provider settings, timeouts).
#[derive(Clone)]
pub struct Block {
    pub name: &'static str,
    pub nesting: Nesting,
    pub description: String,
    pub attributes: Vec<Attribute>,
    pub blocks: Vec<Block>,
    pub max_items: u32,
}

impl Block {
    /// A block that may appear at most once.
    pub fn single(name: &'static str, attributes: Vec<Attribute>) -> Self {
        Self {
            name,
            nesting: Nesting::Single,
            description: String::new(),
            attributes,
            blocks: Vec::new(),
            max_items: 1,
        }
    }
    pub fn describe(mut self, text: impl Into<String>) -> Self {
        self.description = text.into();
        self
    }
    pub fn with_blocks(mut self, blocks: Vec<Block>) -> Self {
        self.blocks = blocks;
        self
    }

    pub fn value_type(&self) -> Type {
        let object = object_type(&self.attributes, &self.blocks);
        match self.nesting {
            Nesting::Single => object,
            Nesting::List => Type::List(Box::new(object)),
            Nesting::Set => Type::Set(Box::new(object)),
            Nesting::Map => Type::Map(Box::new(object)),
        }
    }
}

/// The schema of a resource, a data source or the provider block.
#[derive(Clone)]
pub struct Schema {
    /// The state schema version (resources only).
    pub version: i64,
    /// The steps that upgrade stored state to `version`: step `v` turns version `v` into
    /// `v + 1` ([`super::upgrade`]).
    pub upgrade_steps: &'static [UpgradeStep],
    pub description: String,
    pub attributes: Vec<Attribute>,
    pub blocks: Vec<Block>,
}

impl Schema {
    pub fn new(description: impl Into<String>, attributes: Vec<Attribute>) -> Self {
        Self {
            version: 0,
            upgrade_steps: &[],
            description: description.into(),
            attributes,
            blocks: Vec::new(),
        }
    }
    pub fn with_blocks(mut self, blocks: Vec<Block>) -> Self {
        self.blocks = blocks;
        self
    }
    /// Sets the version without steps: state of an older version then fails to upgrade with
    /// a diagnostic. Resources use [`Schema::with_upgrade_steps`].
    pub fn with_version(mut self, version: i64) -> Self {
        self.version = version;
        self
    }
    /// The version steps of a resource whose state shape changed (a rename, a re-shape): the
    /// schema's version becomes the number of steps. An attribute added with a default needs
    /// none (the default fill of [`super::upgrade`] covers it).
    pub fn with_upgrade_steps(mut self, steps: &'static [UpgradeStep]) -> Self {
        self.upgrade_steps = steps;
        self.version = i64::try_from(steps.len()).unwrap_or(i64::MAX);
        self
    }

    /// The object type of a whole value of this schema.
    pub fn value_type(&self) -> Type {
        object_type(&self.attributes, &self.blocks)
    }

    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    pub fn block(&self, name: &str) -> Option<&Block> {
        self.blocks.iter().find(|b| b.name == name)
    }

    /// The part of `path` whose source line Terraform can show. Terraform follows a
    /// diagnostic's path through blocks and ends at one attribute (or at one element of a list
    /// or map written literally as its value); it does not look inside an object value, and
    /// falls back to the resource's header line for a path that tries to. So the path is cut
    /// after its first attribute (and that attribute's element key, if one follows): the
    /// error shows on the line of the top-level attribute, and its text names the whole path.
    pub fn locatable(&self, path: &AttributePath) -> AttributePath {
        let mut out = AttributePath::root();
        let mut blocks: &[Block] = &self.blocks;
        let mut steps = path.steps.iter().peekable();
        while let Some(PathStep::Attribute(name)) = steps.next() {
            out.steps.push(PathStep::Attribute(name.clone()));
            let key = steps.next_if(|s| !matches!(s, PathStep::Attribute(_)));
            out.steps.extend(key.cloned());
            match blocks.iter().find(|b| b.name == name.as_str()) {
                Some(block) => blocks = &block.blocks,
                None => break,
            }
        }
        out
    }
}

fn object_type(attributes: &[Attribute], blocks: &[Block]) -> Type {
    let mut fields = BTreeMap::new();
    for a in attributes {
        fields.insert(a.name.to_string(), a.value_type());
    }
    for b in blocks {
        fields.insert(b.name.to_string(), b.value_type());
    }
    Type::Object(fields)
}

/// `snake_case` → `camelCase`, the CRD field naming rule our schemas follow.
pub fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `camelCase`/`PascalCase`/`HTTPTokens` → `snake_case`/`http_tokens`, `-` → `_`; other text
/// unchanged but for case. The reverse of [`camel_case`] but for acronyms in a row
/// (`kubeAPIQPS` → `kube_apiqps`).
pub fn snake_case(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    let mut out = String::with_capacity(key.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).and_then(|p| chars.get(p));
            let next = chars.get(i + 1);
            let boundary = match prev {
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_uppercase() => next.is_some_and(|n| n.is_lowercase()),
                _ => false,
            };
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c == '-' {
            out.push('_');
        } else {
            out.push(c);
        }
    }
    out
}

/// A null value of the given type's shape: objects get every attribute null, which is how
/// absent nested values must be written; collections are plain null.
pub fn null_object(ty: &Type) -> Value {
    match ty {
        Type::Object(fields) => Value::Object(fields.keys().map(|k| (k.clone(), Value::Null)).collect()),
        _ => Value::Null,
    }
}

/// Runs every attribute's validators over `config`, recursing into nested attributes and blocks.
pub fn validate_attributes(
    attributes: &[Attribute],
    blocks: &[Block],
    config: &Value,
    path: &AttributePath,
    diags: &mut Diagnostics,
) {
    for attribute in attributes {
        let Some(value) = config.get(attribute.name) else {
            continue;
        };
        validate_attribute(attribute, value, &path.attr(attribute.name), diags);
    }
    for block in blocks {
        let Some(value) = config.get(block.name) else {
            continue;
        };
        let block_path = path.attr(block.name);
        match block.nesting {
            Nesting::Single => {
                validate_attributes(&block.attributes, &block.blocks, value, &block_path, diags)
            }
            _ => {
                for (i, element) in value.as_elements().unwrap_or_default().iter().enumerate() {
                    validate_attributes(
                        &block.attributes,
                        &block.blocks,
                        element,
                        &block_path.index(i),
                        diags,
                    );
                }
            }
        }
    }
}

fn validate_attribute(attribute: &Attribute, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
    let value = value.strip_dynamic();
    if value.is_null() || value.is_unknown() {
        return;
    }
    for validator in &attribute.validators {
        validator.validate(value, path, diags);
    }
    if let Some((nesting, nested)) = attribute.nested() {
        match nesting {
            Nesting::Single => validate_attributes(nested, &[], value, path, diags),
            Nesting::List | Nesting::Set => {
                for (i, element) in value.as_elements().unwrap_or_default().iter().enumerate() {
                    if !element.is_null() && !element.is_unknown() {
                        validate_attributes(nested, &[], element, &path.index(i), diags);
                    }
                }
            }
            Nesting::Map => {
                for (key, element) in value.as_entries().into_iter().flatten() {
                    if !element.is_null() && !element.is_unknown() {
                        validate_attributes(nested, &[], element, &path.key(key.clone()), diags);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// #28: Terraform shows the line of a block's attribute, of a top-level attribute and of
    /// an element written literally in it, never of an attribute inside an object value.
    #[test]
    fn locatable_paths_end_at_the_first_attribute_outside_blocks() {
        let schema = Schema::new(
            "",
            vec![
                Attribute::object("template", vec![Attribute::string("name")]),
                Attribute::list_of_objects("requirements", vec![Attribute::string("operator")]),
            ],
        )
        .with_blocks(vec![Block::single("timeouts", vec![Attribute::string("create")])]);
        let cut = |p: AttributePath| schema.locatable(&p).to_string();
        let root = AttributePath::root;
        assert_eq!(cut(root().attr("template").attr("spec").attr("name")), "template");
        assert_eq!(
            cut(root().attr("requirements").index(2).attr("operator")),
            "requirements[2]"
        );
        assert_eq!(cut(root().attr("timeouts").attr("create")), "timeouts.create");
        assert_eq!(cut(root().attr("template")), "template");
        assert_eq!(cut(root()), "");
    }

    #[test]
    fn camel_case_follows_crd_names() {
        assert_eq!(camel_case("node_class_ref"), "nodeClassRef");
        assert_eq!(camel_case("name"), "name");
        assert_eq!(camel_case("min_values"), "minValues");
    }

    #[test]
    fn implied_type_covers_attributes_and_blocks() {
        let schema = Schema::new(
            "t",
            vec![
                Attribute::string("name").required(),
                Attribute::object("meta", vec![Attribute::map_of("labels", Type::String)]),
                Attribute::list_of_objects("items", vec![Attribute::number("n")]),
            ],
        )
        .with_blocks(vec![Block::single("timeouts", vec![Attribute::string("create")])]);
        let Type::Object(fields) = schema.value_type() else {
            panic!("object expected")
        };
        assert_eq!(fields.len(), 4);
        assert_eq!(fields["name"], Type::String);
        assert!(matches!(&fields["items"], Type::List(inner) if matches!(**inner, Type::Object(_))));
        assert!(matches!(&fields["timeouts"], Type::Object(_)));
    }
}
