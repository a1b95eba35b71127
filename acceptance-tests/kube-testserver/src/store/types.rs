//! The kinds the store serves: [`ResourceType`] (what one version of a CRD, or the CRD kind
//! itself, looks like to a client), and the names of the CRD kind.

use std::sync::Arc;

use serde_json::{Value, json};

pub const CRD_GROUP: &str = "apiextensions.k8s.io";
pub const CRD_PLURAL: &str = "customresourcedefinitions";
pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

#[derive(Clone, Debug)]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub plural: String,
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub status_subresource: bool,
    pub scale_subresource: bool,
    pub schema: Option<Arc<Value>>,
    /// The version's `additionalPrinterColumns`.
    pub printer_columns: Vec<Value>,
}

impl ResourceType {
    pub fn crd() -> Self {
        Self {
            group: CRD_GROUP.into(),
            version: "v1".into(),
            plural: CRD_PLURAL.into(),
            singular: "customresourcedefinition".into(),
            kind: "CustomResourceDefinition".into(),
            list_kind: "CustomResourceDefinitionList".into(),
            namespaced: false,
            short_names: vec!["crd".into(), "crds".into()],
            categories: vec!["api-extensions".into()],
            status_subresource: true,
            scale_subresource: false,
            schema: None,
            printer_columns: vec![
                json!({"name": "Created At", "type": "string", "format": "date", "jsonPath": ".metadata.creationTimestamp"}),
            ],
        }
    }
    /// The core `v1` Node (cluster-scoped, no schema: every field is kept), the one built-in
    /// kind besides Namespaces: the simulated Karpenter registers the Nodes of the NodeClaims
    /// it launches, and `force_destroy` removes their finalizers.
    pub fn node() -> Self {
        Self {
            group: String::new(),
            version: "v1".into(),
            plural: "nodes".into(),
            singular: "node".into(),
            kind: "Node".into(),
            list_kind: "NodeList".into(),
            namespaced: false,
            short_names: vec!["no".into()],
            categories: Vec::new(),
            status_subresource: true,
            scale_subresource: false,
            schema: None,
            printer_columns: Vec::new(),
        }
    }
    /// `group/version`, or the version alone for the core group (`v1`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            return self.version.clone();
        }
        format!("{}/{}", self.group, self.version)
    }
    pub fn is_crd(&self) -> bool {
        self.group == CRD_GROUP && self.plural == CRD_PLURAL
    }
}
