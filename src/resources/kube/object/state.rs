//! Between a kind's Terraform values and its Kubernetes object: the manifest a plan applies,
//! the state a stored object reads as, and the state of an object Terraform takes over
//! (import, move).

use kube::api::DynamicObject;
use serde_json::{Map, Value as Json, json};

use super::values::{adopted_metadata, keep_defaults_the_cluster_lacks, managed_metadata};
use super::{DEFAULT_NAMESPACE, KubeObjectType};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::convert::{from_wire, to_wire};
use crate::terraform::framework::schema::{Attribute, Nesting};
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

impl KubeObjectType {
    fn spec_attributes(&self) -> impl Iterator<Item = &Attribute> {
        self.schema.attributes.iter().filter(|a| a.wire_field().is_some())
    }

    /// The manifest to server-side apply for a planned state.
    pub(super) fn manifest(&self, planned: &Value) -> Result<Json, Diagnostics> {
        let name = get_str(planned, "name").unwrap_or_default();
        let spec_attrs: Vec<Attribute> = self.spec_attributes().cloned().collect();
        let spec = to_wire(&spec_attrs, planned, &AttributePath::root()).map_err(|e| {
            let mut d = Diagnostics::new();
            d.error_at(&e.path, "Value not known at apply time", e.message);
            d
        })?;
        let mut metadata = Map::new();
        metadata.insert("name".into(), json!(name));
        if let Some(namespace) = self.namespace_of(planned) {
            metadata.insert("namespace".into(), json!(namespace));
        }
        for part in ["labels", "annotations"] {
            if let Some(Value::Map(m)) = planned.get("metadata").and_then(|m| m.get(part)) {
                let entries: Map<String, Json> = m
                    .iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), json!(s))))
                    .collect();
                metadata.insert(part.into(), Json::Object(entries));
            }
        }
        Ok(json!({
            "apiVersion": self.kind.api_version(),
            "kind": self.kind.kind,
            "metadata": metadata,
            "spec": spec,
        }))
    }

    /// The Terraform state of a stored object. `base` supplies off-wire values and says which
    /// labels and annotations Terraform manages. Public for the fuzz targets (`fuzz/`), which
    /// feed it objects as an API server could return them.
    pub fn state_from_object(&self, obj: &DynamicObject, base: &Value) -> Result<Value, Diagnostics> {
        let spec = obj
            .data
            .get("spec")
            .and_then(Json::as_object)
            .cloned()
            .unwrap_or_default();
        let mut state =
            from_wire(&self.schema.attributes, &spec, base, &AttributePath::root()).map_err(|e| {
                Diagnostics::from_error(
                    format!("Unexpected {} from the API server", self.kind.kind),
                    format!("{}: {}", e.path, e.message),
                )
            })?;
        keep_defaults_the_cluster_lacks(&self.schema.attributes, &spec, &mut state, base);
        let Value::Object(fields) = &mut state else {
            return Ok(state);
        };
        // Blocks (`timeouts`) are Terraform-only settings: they come from the base state.
        for block in &self.schema.blocks {
            fields.insert(
                block.name.to_string(),
                base.get(block.name).cloned().unwrap_or(Value::Null),
            );
        }
        fields.insert(
            "name".into(),
            Value::string(obj.metadata.name.clone().unwrap_or_default()),
        );
        if self.kind.namespaced {
            let namespace = obj.metadata.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
            fields.insert("namespace".into(), Value::string(namespace));
        }
        if fields.contains_key("metadata") {
            fields.insert(
                "metadata".into(),
                managed_metadata(obj, base.get("metadata").unwrap_or(&Value::Null)),
            );
        }
        if let Some((Nesting::Single, status_attrs)) =
            self.schema.attribute("status").and_then(Attribute::nested)
        {
            let status = obj
                .data
                .get("status")
                .and_then(Json::as_object)
                .cloned()
                .unwrap_or_default();
            let value = from_wire(
                status_attrs,
                &status,
                &Value::Null,
                &AttributePath::root().attr("status"),
            )
            .map_err(|e| Diagnostics::from_error("Unexpected status from the API server", e.to_string()))?;
            fields.insert("status".into(), value);
        }
        (self.drop_admission_defaults)(&mut state, base);
        Ok(state)
    }

    /// The state of an object Terraform takes over (import, or a move from another provider):
    /// off-wire settings at their defaults, so the adopted state plans empty, and the labels
    /// and annotations a user would have written.
    pub(crate) fn adopted_state(&self, obj: &DynamicObject) -> Result<Value, Diagnostics> {
        let base = Value::Object(
            self.schema
                .attributes
                .iter()
                .map(|a| {
                    let v = if a.wire_field().is_none() {
                        a.default.clone().unwrap_or(Value::Null)
                    } else {
                        Value::Null
                    };
                    (a.name.to_string(), v)
                })
                .chain(
                    self.schema
                        .blocks
                        .iter()
                        .map(|b| (b.name.to_string(), Value::Null)),
                )
                .collect(),
        );
        let mut state = self.state_from_object(obj, &base)?;
        if let Value::Object(fields) = &mut state
            && fields.contains_key("metadata")
        {
            fields.insert("metadata".into(), adopted_metadata(obj));
        }
        Ok(state)
    }
}
