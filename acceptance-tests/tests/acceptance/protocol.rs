//! A tfplugin6 client that drives the built provider the way Terraform 1.14/1.15 does for
//! resource identity, `terraform query` list blocks and generated configuration, over the
//! plugin's real mTLS transport (the provider's own test helpers in `tests/provider/common.rs`), and the
//! checks Terraform core and its plugin framework make of every answer:
//!
//! - schemas: every resource type with a list schema has an identity schema;
//! - identities are wholly known objects of the identity schema's type after read, apply
//!   and import; an update plans and applies the identity it had; a refresh keeps it;
//! - list events carry an identity (or only warnings), at most `limit` of them, and a state
//!   only when `include_resource_object` is set;
//! - generated configuration, planned against the state it came from, plans no change.
//!
//! Terraform 1.11, the newest CLI on this machine, never sends these RPCs; the sequences here
//! are written from Terraform 1.15's gRPC client (`internal/plugin6/grpc_provider.go`): the
//! list configuration is the list block's `config` object, the `ListResource` stream is read
//! until `limit` events, and an event with an error diagnostic ends it.
#![allow(dead_code)]

use std::collections::BTreeMap;

use acceptance_tests::provider_dir;
use terraform_provider_karpenter::terraform::plugin::proto::tfplugin6 as pb;
use terraform_provider_karpenter::terraform::tfvalue::{Type, Value, json, msgpack};
use tonic::transport::Channel;

#[path = "../../../tests/provider/common.rs"]
#[allow(unused_imports)]
pub mod common;

/// What Terraform 1.15 tells the provider at configure time.
pub const TERRAFORM_VERSION: &str = "1.15.9";

/// One plugin process, configured, with the schemas it announced.
pub struct Session {
    pub plugin: common::Plugin,
    pub client: pb::provider_client::ProviderClient<Channel>,
    pub schema: pb::get_provider_schema::Response,
    pub identities: BTreeMap<String, pb::ResourceIdentitySchema>,
}

/// A diagnostic's text, for messages.
pub fn text(diags: &[pb::Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| format!("[{}] {}: {}", d.severity, d.summary, d.detail))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn has_errors(diags: &[pb::Diagnostic]) -> bool {
    diags
        .iter()
        .any(|d| d.severity == pb::diagnostic::Severity::Error as i32)
}

pub fn dv(value: &Value, ty: &Type) -> Option<pb::DynamicValue> {
    Some(pb::DynamicValue {
        msgpack: msgpack::encode(value, ty).expect("encode"),
        json: vec![],
    })
}

pub fn undv(value: Option<&pb::DynamicValue>, ty: &Type) -> Value {
    match value {
        Some(v) if !v.msgpack.is_empty() => msgpack::decode(&v.msgpack, ty).expect("decode msgpack"),
        _ => Value::Null,
    }
}

/// A value of `ty` from JSON, absent attributes null (as Terraform fills them in).
pub fn value(ty: &Type, json: serde_json::Value) -> Value {
    json::decode_lenient(json.to_string().as_bytes(), ty).expect("value of the type")
}

/// The result of a listing: what Terraform keeps of each event.
#[derive(Debug)]
pub struct Listed {
    pub identity: Value,
    pub display_name: String,
    pub state: Option<Value>,
    pub diagnostics: Vec<pb::Diagnostic>,
}

impl Session {
    /// Starts the plugin as Terraform would, reads its schemas (GetProviderSchema, then
    /// GetResourceIdentitySchemas, as Terraform 1.12+ does on every schema load) and
    /// configures it with `provider_config` (JSON of the provider block).
    pub async fn start(provider_config: serde_json::Value) -> Session {
        common::use_binary(provider_dir().join("terraform-provider-karpenter"));
        let (plugin, _hs, channel, _id) = common::start_and_connect().await;
        let mut client = common::provider_client(channel);
        let schema = client
            .get_provider_schema(pb::get_provider_schema::Request {})
            .await
            .expect("GetProviderSchema")
            .into_inner();
        assert!(!has_errors(&schema.diagnostics), "{}", text(&schema.diagnostics));
        let identities = client
            .get_resource_identity_schemas(pb::get_resource_identity_schemas::Request {})
            .await
            .expect("GetResourceIdentitySchemas")
            .into_inner();
        assert!(
            !has_errors(&identities.diagnostics),
            "{}",
            text(&identities.diagnostics)
        );
        let mut session = Session {
            plugin,
            client,
            schema,
            identities: identities.identity_schemas.into_iter().collect(),
        };
        let provider_ty = session.provider_type();
        let config = value(&provider_ty, provider_config);
        let r = session
            .client
            .configure_provider(pb::configure_provider::Request {
                terraform_version: TERRAFORM_VERSION.into(),
                config: dv(&config, &provider_ty),
                client_capabilities: Some(pb::ClientCapabilities::default()),
            })
            .await
            .expect("ConfigureProvider")
            .into_inner();
        assert!(!has_errors(&r.diagnostics), "{}", text(&r.diagnostics));
        session
    }

    fn block_type(schema: &pb::Schema) -> Type {
        block_type(schema.block.as_ref().expect("block"))
    }

    pub fn provider_type(&self) -> Type {
        Self::block_type(self.schema.provider.as_ref().expect("provider schema"))
    }

    pub fn resource_type(&self, type_name: &str) -> Type {
        Self::block_type(&self.schema.resource_schemas[type_name])
    }

    pub fn list_type(&self, type_name: &str) -> Type {
        Self::block_type(&self.schema.list_resource_schemas[type_name])
    }

    pub fn identity_type(&self, type_name: &str) -> Type {
        let schema = &self.identities[type_name];
        Type::object(schema.identity_attributes.iter().map(|a| {
            let ty: Type = Type::from_json(&a.r#type).expect("identity attribute type");
            (a.name.clone(), ty)
        }))
    }

    /// Checks the contract of an identity Terraform would store: a wholly known object of the
    /// identity schema's type.
    pub fn assert_valid_identity(&self, type_name: &str, identity: &Value) {
        assert!(!identity.is_null(), "{type_name}: no identity");
        assert!(
            identity.is_wholly_known(),
            "{type_name}: identity not wholly known: {identity:?}"
        );
        identity
            .conforms_to(&self.identity_type(type_name))
            .unwrap_or_else(|e| panic!("{type_name}: identity does not fit its schema: {e:?}"));
    }

    fn identity_data(&self, type_name: &str, identity: &Value) -> Option<pb::ResourceIdentityData> {
        (!identity.is_null()).then(|| pb::ResourceIdentityData {
            identity_data: dv(identity, &self.identity_type(type_name)),
        })
    }

    fn identity_value(&self, type_name: &str, data: Option<&pb::ResourceIdentityData>) -> Value {
        data.map(|d| undv(d.identity_data.as_ref(), &self.identity_type(type_name)))
            .unwrap_or(Value::Null)
    }

    /// ImportResourceState by identity (`import { identity = { … } }`), then ReadResource as
    /// Terraform does right after, with the imported identity as the current one. Returns the
    /// read state and identity.
    pub async fn import_by_identity(
        &mut self,
        type_name: &str,
        identity: &Value,
    ) -> Result<(Value, Value), String> {
        let r = self
            .client
            .import_resource_state(pb::import_resource_state::Request {
                type_name: type_name.into(),
                id: String::new(),
                client_capabilities: Some(pb::ClientCapabilities::default()),
                identity: self.identity_data(type_name, identity),
            })
            .await
            .expect("ImportResourceState")
            .into_inner();
        if has_errors(&r.diagnostics) {
            return Err(text(&r.diagnostics));
        }
        assert_eq!(r.imported_resources.len(), 1, "exactly one imported resource");
        let imported = &r.imported_resources[0];
        let state = undv(imported.state.as_ref(), &self.resource_type(type_name));
        let imported_identity = self.identity_value(type_name, imported.identity.as_ref());
        // Terraform: "import of … didn't return an identity" otherwise.
        self.assert_valid_identity(type_name, &imported_identity);
        let (read, read_identity) = self.read(type_name, &state, &imported_identity).await?;
        Ok((read, read_identity))
    }

    /// ImportResourceState by ID (`terraform import`, `import { id = … }`), then ReadResource.
    pub async fn import_by_id(&mut self, type_name: &str, id: &str) -> Result<(Value, Value), String> {
        let r = self
            .client
            .import_resource_state(pb::import_resource_state::Request {
                type_name: type_name.into(),
                id: id.into(),
                client_capabilities: Some(pb::ClientCapabilities::default()),
                identity: None,
            })
            .await
            .expect("ImportResourceState")
            .into_inner();
        if has_errors(&r.diagnostics) {
            return Err(text(&r.diagnostics));
        }
        let imported = &r.imported_resources[0];
        let state = undv(imported.state.as_ref(), &self.resource_type(type_name));
        let identity = self.identity_value(type_name, imported.identity.as_ref());
        self.assert_valid_identity(type_name, &identity);
        self.read(type_name, &state, &identity).await
    }

    /// ReadResource with a current identity; checks that a found object's identity is valid
    /// and, when one was stored, unchanged.
    pub async fn read(
        &mut self,
        type_name: &str,
        state: &Value,
        identity: &Value,
    ) -> Result<(Value, Value), String> {
        let ty = self.resource_type(type_name);
        let r = self
            .client
            .read_resource(pb::read_resource::Request {
                type_name: type_name.into(),
                current_state: dv(state, &ty),
                client_capabilities: Some(pb::ClientCapabilities::default()),
                current_identity: self.identity_data(type_name, identity),
                ..Default::default()
            })
            .await
            .expect("ReadResource")
            .into_inner();
        if has_errors(&r.diagnostics) {
            return Err(text(&r.diagnostics));
        }
        let new_state = undv(r.new_state.as_ref(), &ty);
        let new_identity = self.identity_value(type_name, r.new_identity.as_ref());
        if !new_state.is_null() {
            assert!(
                new_state.is_wholly_known(),
                "{type_name}: read state has unknowns"
            );
            self.assert_valid_identity(type_name, &new_identity);
            if !identity.is_null() {
                assert_eq!(
                    &new_identity, identity,
                    "{type_name}: a refresh changed the identity"
                );
            }
        }
        Ok((new_state, new_identity))
    }

    /// PlanResourceChange as Terraform calls it: the proposed new state is the configuration
    /// with computed attributes the configuration leaves null taken from the prior state.
    /// Returns (planned state, planned identity, replace paths, diagnostics).
    pub async fn plan(
        &mut self,
        type_name: &str,
        prior: &Value,
        config: &Value,
        prior_identity: &Value,
    ) -> (Value, Value, Vec<pb::AttributePath>, Vec<pb::Diagnostic>) {
        let ty = self.resource_type(type_name);
        let block = self.schema.resource_schemas[type_name]
            .block
            .clone()
            .expect("block");
        let proposed = proposed_new(&block, prior, config);
        let r = self
            .client
            .plan_resource_change(pb::plan_resource_change::Request {
                type_name: type_name.into(),
                prior_state: dv(prior, &ty),
                proposed_new_state: dv(&proposed, &ty),
                config: dv(config, &ty),
                client_capabilities: Some(pb::ClientCapabilities::default()),
                prior_identity: self.identity_data(type_name, prior_identity),
                ..Default::default()
            })
            .await
            .expect("PlanResourceChange")
            .into_inner();
        let planned = undv(r.planned_state.as_ref(), &ty);
        let identity = self.identity_value(type_name, r.planned_identity.as_ref());
        (planned, identity, r.requires_replace, r.diagnostics)
    }

    /// PlanResourceChange with the private state and client capabilities given, and (protocol
    /// 6.11) the private state an earlier plan of this change returned; the raw answer.
    pub async fn plan_raw(
        &mut self,
        type_name: &str,
        prior: &Value,
        config: &Value,
        prior_private: &[u8],
        capabilities: pb::ClientCapabilities,
        planned_private: &[u8],
    ) -> pb::plan_resource_change::Response {
        let ty = self.resource_type(type_name);
        let block = self.schema.resource_schemas[type_name]
            .block
            .clone()
            .expect("block");
        let proposed = proposed_new(&block, prior, config);
        self.client
            .plan_resource_change(pb::plan_resource_change::Request {
                type_name: type_name.into(),
                prior_state: dv(prior, &ty),
                proposed_new_state: dv(&proposed, &ty),
                config: dv(config, &ty),
                prior_private: prior_private.to_vec(),
                client_capabilities: Some(capabilities),
                planned_private: planned_private.to_vec(),
                ..Default::default()
            })
            .await
            .expect("PlanResourceChange")
            .into_inner()
    }

    /// ApplyResourceChange; returns (new state, new identity, diagnostics).
    pub async fn apply(
        &mut self,
        type_name: &str,
        prior: &Value,
        planned: &Value,
        config: &Value,
        planned_identity: &Value,
    ) -> (Value, Value, Vec<pb::Diagnostic>) {
        let ty = self.resource_type(type_name);
        let r = self
            .client
            .apply_resource_change(pb::apply_resource_change::Request {
                type_name: type_name.into(),
                prior_state: dv(prior, &ty),
                planned_state: dv(planned, &ty),
                config: dv(config, &ty),
                planned_identity: self.identity_data(type_name, planned_identity),
                ..Default::default()
            })
            .await
            .expect("ApplyResourceChange")
            .into_inner();
        let state = undv(r.new_state.as_ref(), &ty);
        let identity = self.identity_value(type_name, r.new_identity.as_ref());
        (state, identity, r.diagnostics)
    }

    /// ValidateListResourceConfig with the list block's `config` (JSON).
    pub async fn validate_list(&mut self, type_name: &str, config: serde_json::Value) -> Vec<pb::Diagnostic> {
        self.validate_list_with_limit(type_name, config, None).await
    }

    /// ValidateListResourceConfig with the block's `limit` as well (Terraform 1.15 leaves it
    /// out; the protocol has a field for it).
    pub async fn validate_list_with_limit(
        &mut self,
        type_name: &str,
        config: serde_json::Value,
        limit: Option<i64>,
    ) -> Vec<pb::Diagnostic> {
        let ty = self.list_type(type_name);
        let config = value(&ty, config);
        self.client
            .validate_list_resource_config(pb::validate_list_resource_config::Request {
                type_name: type_name.into(),
                config: dv(&config, &ty),
                limit: limit.and_then(|l| dv(&value(&Type::Number, l.into()), &Type::Number)),
                ..Default::default()
            })
            .await
            .expect("ValidateListResourceConfig")
            .into_inner()
            .diagnostics
    }

    /// ListResource read as Terraform 1.15 reads it: at most `limit` events; an error
    /// diagnostic ends the stream; a warning-only event without an identity is skipped.
    /// Returns the results and every diagnostic seen.
    pub async fn list(
        &mut self,
        type_name: &str,
        config: serde_json::Value,
        include_resource_object: bool,
        limit: i64,
    ) -> (Vec<Listed>, Vec<pb::Diagnostic>) {
        let ty = self.list_type(type_name);
        let config = value(&ty, config);
        let mut stream = self
            .client
            .list_resource(pb::list_resource::Request {
                type_name: type_name.into(),
                config: dv(&config, &ty),
                include_resource_object,
                limit,
            })
            .await
            .expect("ListResource")
            .into_inner();
        let (mut results, mut diags) = (Vec::new(), Vec::new());
        let resource_ty = self.resource_type(type_name);
        loop {
            if results.len() as i64 >= limit {
                break;
            }
            let Some(event) = stream.message().await.expect("ListResource stream") else {
                break;
            };
            diags.extend(event.diagnostic.clone());
            if has_errors(&event.diagnostic) {
                break;
            }
            let Some(identity) = event.identity.as_ref() else {
                assert!(
                    !event.diagnostic.is_empty(),
                    "{type_name}: an event with neither identity nor diagnostics"
                );
                continue;
            };
            let identity = self.identity_value(type_name, Some(identity));
            self.assert_valid_identity(type_name, &identity);
            let state = event
                .resource_object
                .as_ref()
                .map(|o| undv(Some(o), &resource_ty));
            assert_eq!(
                state.is_some(),
                include_resource_object,
                "{type_name}: a resource object must come exactly when asked for"
            );
            results.push(Listed {
                identity,
                display_name: event.display_name.clone(),
                state,
                diagnostics: event.diagnostic.clone(),
            });
        }
        (results, diags)
    }

    /// The number of results in a whole ListResource stream read to its end, with no filter
    /// and no states: what the provider itself sends for `limit` (the harness's [`Session::list`]
    /// stops reading at the limit as Terraform does, which would hide extra events).
    pub async fn events_sent(&mut self, type_name: &str, limit: i64) -> usize {
        let ty = self.list_type(type_name);
        let mut stream = self
            .client
            .list_resource(pb::list_resource::Request {
                type_name: type_name.into(),
                config: dv(&value(&ty, serde_json::json!({})), &ty),
                include_resource_object: false,
                limit,
            })
            .await
            .expect("ListResource")
            .into_inner();
        let mut events = 0;
        while let Some(event) = stream.message().await.expect("stream") {
            assert!(
                event.resource_object.is_none(),
                "{type_name}: a state nobody asked for"
            );
            assert!(!has_errors(&event.diagnostic), "{}", text(&event.diagnostic));
            if event.identity.is_some() {
                events += 1;
            }
        }
        events
    }

    /// GenerateResourceConfig for a state.
    pub async fn generate(&mut self, type_name: &str, state: &Value) -> Value {
        let ty = self.resource_type(type_name);
        let r = self
            .client
            .generate_resource_config(pb::generate_resource_config::Request {
                type_name: type_name.into(),
                state: dv(state, &ty),
            })
            .await
            .expect("GenerateResourceConfig")
            .into_inner();
        assert!(!has_errors(&r.diagnostics), "{}", text(&r.diagnostics));
        undv(r.config.as_ref(), &ty)
    }

    /// The `terraform query -generate-config-out` flow for one listed object, then the plan
    /// of what it wrote: import by the listed identity, read, generate configuration from
    /// the listed state, and plan that configuration against the imported state. Panics
    /// unless the plan is empty and the identity is kept.
    pub async fn assert_generated_config_plans_empty(&mut self, type_name: &str, listed: &Listed) {
        let state = listed
            .state
            .as_ref()
            .expect("listed with include_resource_object");
        let config = self.generate(type_name, state).await;
        let (imported, identity) = self
            .import_by_identity(type_name, &listed.identity)
            .await
            .unwrap_or_else(|e| panic!("{type_name} {}: import by identity: {e}", listed.display_name));
        assert_eq!(
            identity, listed.identity,
            "{type_name}: import gave another identity"
        );
        let (planned, planned_identity, replace, diags) =
            self.plan(type_name, &imported, &config, &identity).await;
        assert!(!has_errors(&diags), "{type_name}: {}", text(&diags));
        assert!(
            replace.is_empty(),
            "{type_name}: generated config plans a replacement: {replace:?}"
        );
        assert_eq!(
            planned_identity, identity,
            "{type_name}: plan changed the identity"
        );
        assert_eq!(
            planned, imported,
            "{type_name} {}: the generated configuration does not plan empty.\nconfig: {config:?}",
            listed.display_name
        );
    }
}

/// The value type a protocol schema block implies (Terraform's `ImpliedType`).
pub fn block_type(block: &pb::schema::Block) -> Type {
    let mut fields: BTreeMap<String, Type> = block
        .attributes
        .iter()
        .map(|a| (a.name.clone(), attribute_type(a)))
        .collect();
    for b in &block.block_types {
        use pb::schema::nested_block::NestingMode as M;
        let inner = block_type(b.block.as_ref().expect("nested block"));
        let ty = match M::try_from(b.nesting) {
            Ok(M::List) => Type::list(inner),
            Ok(M::Set) => Type::set(inner),
            Ok(M::Map) => Type::map(inner),
            _ => inner,
        };
        fields.insert(b.type_name.clone(), ty);
    }
    Type::Object(fields)
}

fn attribute_type(a: &pb::schema::Attribute) -> Type {
    let Some(nested) = &a.nested_type else {
        return Type::from_json(&a.r#type).expect("attribute type");
    };
    use pb::schema::object::NestingMode as M;
    let inner = Type::Object(
        nested
            .attributes
            .iter()
            .map(|n| (n.name.clone(), attribute_type(n)))
            .collect(),
    );
    match M::try_from(nested.nesting) {
        Ok(M::List) => Type::list(inner),
        Ok(M::Set) => Type::set(inner),
        Ok(M::Map) => Type::map(inner),
        _ => inner,
    }
}

/// Terraform's proposed new state (objchange.ProposedNew), for the attribute shapes this
/// provider uses: configured values win; a computed attribute the configuration leaves null
/// keeps its prior value; nested single objects and lists of objects merge element by element.
pub fn proposed_new(block: &pb::schema::Block, prior: &Value, config: &Value) -> Value {
    if config.is_null() {
        return Value::Null;
    }
    let mut out = BTreeMap::new();
    for a in &block.attributes {
        let c = config.get(&a.name).cloned().unwrap_or(Value::Null);
        let p = prior.get(&a.name).cloned().unwrap_or(Value::Null);
        out.insert(a.name.clone(), proposed_attribute(a, &p, &c));
    }
    for b in &block.block_types {
        out.insert(
            b.type_name.clone(),
            config.get(&b.type_name).cloned().unwrap_or(Value::Null),
        );
    }
    Value::Object(out)
}

fn proposed_attribute(a: &pb::schema::Attribute, prior: &Value, config: &Value) -> Value {
    if config.is_null() {
        return if a.computed { prior.clone() } else { Value::Null };
    }
    let Some(nested) = &a.nested_type else {
        return config.clone();
    };
    use pb::schema::object::NestingMode as M;
    let inner = |p: &Value, c: &Value| {
        let mut out = BTreeMap::new();
        for na in &nested.attributes {
            let cv = c.get(&na.name).cloned().unwrap_or(Value::Null);
            let pv = p.get(&na.name).cloned().unwrap_or(Value::Null);
            out.insert(na.name.clone(), proposed_attribute(na, &pv, &cv));
        }
        Value::Object(out)
    };
    match (M::try_from(nested.nesting), config) {
        (Ok(M::Single), Value::Object(_)) => inner(prior, config),
        (Ok(M::List), Value::List(items)) => Value::List(
            items
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let p = prior
                        .as_elements()
                        .and_then(|e| e.get(i))
                        .cloned()
                        .unwrap_or(Value::Null);
                    inner(&p, c)
                })
                .collect(),
        ),
        (Ok(M::Map), Value::Map(entries)) => Value::Map(
            entries
                .iter()
                .map(|(k, c)| {
                    let p = prior.get(k).cloned().unwrap_or(Value::Null);
                    (k.clone(), inner(&p, c))
                })
                .collect(),
        ),
        _ => config.clone(),
    }
}

/// The HCL Terraform writes for a generated configuration (`internal/genconfig`): attributes in
/// name order; computed ones that are null and deprecated ones left out; every other null
/// written as `null`; nested attributes as object, list and map literals. Terraform 1.11 reads
/// it back, so a plan of it checks the whole round trip with the real planner.
pub fn resource_hcl(block: &pb::schema::Block, type_name: &str, name: &str, config: &Value) -> String {
    let mut out = format!("resource \"{type_name}\" \"{name}\" {{\n");
    attributes_hcl(&block.attributes, config, 2, &mut out);
    out.push_str("}\n");
    out
}

fn attributes_hcl(attributes: &[pb::schema::Attribute], object: &Value, indent: usize, out: &mut String) {
    let mut sorted: Vec<&pb::schema::Attribute> = attributes.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for a in sorted {
        let v = object.get(&a.name).cloned().unwrap_or(Value::Null);
        if (a.computed && v.is_null()) || a.deprecated {
            continue;
        }
        let pad = " ".repeat(indent);
        out.push_str(&format!("{pad}{} = ", a.name));
        match (&a.nested_type, &v) {
            (_, Value::Null) => out.push_str("null"),
            (Some(nested), _) => nested_hcl(nested, &v, indent, out),
            // Terraform writes a string holding a JSON object or array as `jsonencode(…)`.
            (None, Value::String(text)) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(j @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => {
                    out.push_str(&format!("jsonencode({})", json_hcl(&j)))
                }
                _ => out.push_str(&literal_hcl(&v)),
            },
            (None, _) => out.push_str(&literal_hcl(&v)),
        }
        out.push('\n');
    }
}

fn nested_hcl(nested: &pb::schema::Object, v: &Value, indent: usize, out: &mut String) {
    use pb::schema::object::NestingMode as M;
    let pad = " ".repeat(indent);
    let object = |o: &Value, indent: usize, out: &mut String| {
        out.push_str("{\n");
        attributes_hcl(&nested.attributes, o, indent + 2, out);
        out.push_str(&" ".repeat(indent));
        out.push('}');
    };
    match (M::try_from(nested.nesting), v) {
        (Ok(M::List | M::Set), _) => {
            out.push_str("[\n");
            for e in v.as_elements().unwrap_or_default() {
                out.push_str(&format!("{pad}  "));
                object(e, indent + 2, out);
                out.push_str(",\n");
            }
            out.push_str(&format!("{pad}]"));
        }
        (Ok(M::Map), _) => {
            out.push_str("{\n");
            for (k, e) in v.as_entries().into_iter().flatten() {
                out.push_str(&format!("{pad}  {} = ", quote(k)));
                object(e, indent + 2, out);
                out.push('\n');
            }
            out.push_str(&format!("{pad}}}"));
        }
        _ => object(v, indent, out),
    }
}

fn quote(s: &str) -> String {
    let escaped = s
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace("${", "$${")
        .replace("%{", "%%{");
    format!("\"{escaped}\"")
}

fn json_hcl(j: &serde_json::Value) -> String {
    match j {
        serde_json::Value::String(s) => quote(s),
        serde_json::Value::Array(items) => {
            format!("[{}]", items.iter().map(json_hcl).collect::<Vec<_>>().join(", "))
        }
        serde_json::Value::Object(fields) => format!(
            "{{ {} }}",
            fields
                .iter()
                .map(|(k, v)| format!("{} = {}", quote(k), json_hcl(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

fn literal_hcl(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => quote(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
            format!(
                "[{}]",
                items.iter().map(literal_hcl).collect::<Vec<_>>().join(", ")
            )
        }
        Value::Map(entries) | Value::Object(entries) => format!(
            "{{ {} }}",
            entries
                .iter()
                .map(|(k, e)| format!("{} = {}", quote(k), literal_hcl(e)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        // A dynamic value is written as the value it holds (a number stays a number).
        Value::Dynamic(_, inner) => literal_hcl(inner),
        other => panic!("no HCL literal for {other:?}"),
    }
}

impl Session {
    /// The schema block of a resource type.
    pub fn resource_block(&self, type_name: &str) -> pb::schema::Block {
        self.schema.resource_schemas[type_name]
            .block
            .clone()
            .expect("block")
    }
}

/// The attribute names along a diagnostic's path (none without a path).
pub fn attribute_names(d: &pb::Diagnostic) -> Vec<String> {
    d.attribute
        .iter()
        .flat_map(|p| &p.steps)
        .filter_map(|step| match &step.selector {
            Some(pb::attribute_path::step::Selector::AttributeName(n)) => Some(n.clone()),
            _ => None,
        })
        .collect()
}
