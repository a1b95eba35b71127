//! The in-memory object store: CRDs and custom objects, resource versions, the event history
//! that watches replay from, and the write paths (create, update, delete) with the metadata
//! rules of kube-apiserver: uid, resourceVersion, generation, managedFields, finalizers,
//! deletionTimestamp, ownerReferences with foreground/background/orphan deletion (the garbage
//! collector runs synchronously after each write), and CRD establishment.

use crate::schema::{self, FieldError};
use crate::ssa;
use crate::util::{ApiError, finalizers, meta_mut, meta_str, now_rfc3339, qualified, set_finalizers};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use tokio::sync::broadcast;

pub const CRD_GROUP: &str = "apiextensions.k8s.io";
pub const CRD_PLURAL: &str = "customresourcedefinitions";
pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";
const HISTORY: usize = 4096;

/// A served kind, resolved from a CRD (or the built-in CRD kind itself).
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
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }
    pub fn is_crd(&self) -> bool {
        self.group == CRD_GROUP && self.plural == CRD_PLURAL
    }
}

/// Which part of an object a write addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sub {
    Main,
    Status,
}

impl Sub {
    fn name(self) -> &'static str {
        match self {
            Sub::Main => "",
            Sub::Status => "status",
        }
    }
}

/// One watch event.
#[derive(Debug)]
pub struct Event {
    pub rv: u64,
    pub group: String,
    pub plural: String,
    pub etype: &'static str,
    pub object: Value,
}

/// Per-write options.
#[derive(Clone, Debug, Default)]
pub struct WriteCtx {
    pub manager: String,
    pub dry_run: bool,
    /// `fieldValidation=Strict`: unknown fields fail the write (400).
    pub strict: bool,
    /// `fieldValidation=Ignore`: unknown fields are dropped without a warning.
    pub ignore_unknown: bool,
}

impl WriteCtx {
    /// A write of the simulated controller: as the `karpenter` field manager, no dry run,
    /// default field validation.
    pub fn controller() -> Self {
        WriteCtx {
            manager: "karpenter".into(),
            dry_run: false,
            strict: false,
            ignore_unknown: false,
        }
    }
}

/// What a write produced.
#[derive(Debug)]
pub struct Written {
    pub object: Value,
    pub warnings: Vec<String>,
    /// For deletes: the object is gone (as opposed to marked for deletion).
    pub gone: bool,
}

/// Label and field selectors of a list or watch.
#[derive(Clone, Debug, Default)]
pub struct Selectors {
    labels: Vec<LabelReq>,
    fields: Vec<(String, bool, String)>,
}

#[derive(Clone, Debug)]
enum LabelReq {
    Eq(String, String),
    Ne(String, String),
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

impl Selectors {
    pub fn parse(label: Option<&str>, field: Option<&str>) -> Result<Self, ApiError> {
        let mut s = Selectors::default();
        if let Some(l) = label.filter(|l| !l.is_empty()) {
            for term in split_terms(l) {
                let t = term.trim();
                let req = if let Some(k) = t.strip_prefix('!') {
                    LabelReq::NotExists(k.trim().into())
                } else if let Some((k, rest)) = t.split_once(" notin ") {
                    LabelReq::NotIn(k.trim().into(), set_values(rest)?)
                } else if let Some((k, rest)) = t.split_once(" in ") {
                    LabelReq::In(k.trim().into(), set_values(rest)?)
                } else if let Some((k, v)) = t.split_once("!=") {
                    LabelReq::Ne(k.trim().into(), v.trim().into())
                } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                    LabelReq::Eq(k.trim().into(), v.trim().into())
                } else {
                    LabelReq::Exists(t.into())
                };
                s.labels.push(req);
            }
        }
        if let Some(f) = field.filter(|f| !f.is_empty()) {
            for term in f.split(',') {
                let (k, neg, v) = if let Some((k, v)) = term.split_once("!=") {
                    (k, true, v)
                } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                    (k, false, v)
                } else {
                    return Err(ApiError::bad_request(format!("invalid field selector: {term}")));
                };
                if k != "metadata.name" && k != "metadata.namespace" {
                    return Err(ApiError::bad_request(format!("field label not supported: {k}")));
                }
                s.fields.push((k.into(), neg, v.into()));
            }
        }
        Ok(s)
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        let ok_labels = self.labels.iter().all(|r| match r {
            LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
            LabelReq::Ne(k, v) => get(k) != Some(v.as_str()),
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
            LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
        });
        ok_labels
            && self.fields.iter().all(|(k, neg, v)| {
                let actual = meta_str(obj, k.trim_start_matches("metadata.")).unwrap_or("");
                (actual == v) != *neg
            })
    }
}

fn split_terms(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

fn set_values(s: &str) -> Result<Vec<String>, ApiError> {
    let inner = s
        .trim()
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .ok_or_else(|| ApiError::bad_request(format!("invalid label selector set: {s}")))?;
    Ok(inner
        .split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect())
}

type Key = (String, String, String, String);

/// Resolved kinds by (group, version, plural) → (CRD resourceVersion, kind).
type TypeCache = std::collections::HashMap<(String, String, String), (String, ResourceType)>;

/// Past events to replay and the receiver for what follows.
pub type Replay = (Vec<Arc<Event>>, broadcast::Receiver<Arc<Event>>);

/// The whole store. Lives behind one mutex; never held across an await.
pub struct State {
    pub rv: u64,
    objects: BTreeMap<(String, String), BTreeMap<(String, String), Value>>,
    history: VecDeque<Arc<Event>>,
    tx: broadcast::Sender<Arc<Event>>,
    /// CRDs created since the last drain: (name, uid). The server schedules their establishment.
    pub pending_establish: Vec<(String, String)>,
    /// When each CRD (by name) last became Established, in microseconds since the Unix epoch:
    /// the known moment a gate-reaction measurement starts from.
    pub established_at: BTreeMap<String, u64>,
    /// Resolved kinds by (group, version, plural), valid while the CRD's resourceVersion matches.
    rt_cache: std::cell::RefCell<TypeCache>,
    /// Admit Provisioners as Karpenter v0.32's mutating webhook did ([`crate::webhooks`]).
    pub legacy_webhook_defaults: bool,
    /// The namespaces that exist, when a test says so; `None` (the default): every one does.
    pub namespaces: Option<BTreeSet<String>>,
    /// The resourceVersion of the newest event sent to watchers (0: none yet); what the
    /// simulated controller must have handled before a read is answered
    /// ([`crate::controller::caught_up`]).
    pub last_event: u64,
}

impl State {
    /// Whether `namespace` exists (every one does unless a test listed them).
    pub fn namespace_exists(&self, namespace: &str) -> bool {
        self.namespaces
            .as_ref()
            .is_none_or(|known| known.contains(namespace))
    }
}

/// What kube-apiserver's NamespaceLifecycle admission answers a write into a namespace that
/// does not exist: 404 `namespaces "x" not found`, with details naming the namespace.
pub fn namespace_not_found(namespace: &str) -> ApiError {
    ApiError::new(404, "NotFound", format!("namespaces \"{namespace}\" not found"))
        .with_details(json!({"name": namespace, "kind": "namespaces"}))
}

pub fn invalid(kind: &str, group: &str, name: &str, errs: &[FieldError]) -> ApiError {
    let list: Vec<String> = errs.iter().map(FieldError::full).collect();
    let joined = if list.len() == 1 {
        list[0].clone()
    } else {
        format!("[{}]", list.join(", "))
    };
    let causes: Vec<Value> = errs
        .iter()
        .map(|e| json!({"reason": e.reason, "message": e.message, "field": e.field}))
        .collect();
    ApiError::new(
        422,
        "Invalid",
        format!("{} \"{name}\" is invalid: {joined}", qualified(kind, group)),
    )
    .with_details(json!({"name": name, "group": group, "kind": kind, "causes": causes}))
}

fn strip_for_compare(v: &Value) -> Value {
    let mut c = v.clone();
    if let Some(m) = meta_mut(&mut c) {
        m.remove("resourceVersion");
        if let Some(Value::Array(mf)) = m.get_mut("managedFields") {
            for e in mf.iter_mut() {
                if let Some(o) = e.as_object_mut() {
                    o.remove("time");
                }
            }
        }
    }
    c
}

fn spec_part(v: &Value, include_status: bool) -> Value {
    let mut c = v.clone();
    if let Some(o) = c.as_object_mut() {
        o.remove("metadata");
        o.remove("apiVersion");
        o.remove("kind");
        if !include_status {
            o.remove("status");
        }
    }
    c
}

fn random_suffix() -> String {
    const ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4().as_bytes()[..5]
        .iter()
        .map(|b| ALPHA[*b as usize % ALPHA.len()] as char)
        .collect()
}

/// Resolve the served kind for `version` of a CRD object, if it is established and serves it.
pub fn type_from_crd(crd: &Value, version: &str) -> Option<ResourceType> {
    if !crd_established(crd) {
        return None;
    }
    let spec = crd.get("spec")?;
    let names = spec.get("names")?;
    let v = spec.get("versions")?.as_array()?.iter().find(|v| {
        v.get("name").and_then(Value::as_str) == Some(version)
            && v.get("served").and_then(Value::as_bool) == Some(true)
    })?;
    let kind = names.get("kind")?.as_str()?.to_string();
    let strs = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    Some(ResourceType {
        group: spec.get("group")?.as_str()?.to_string(),
        version: version.to_string(),
        plural: names.get("plural")?.as_str()?.to_string(),
        singular: names
            .get("singular")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| kind.to_lowercase()),
        list_kind: names
            .get("listKind")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| format!("{kind}List")),
        kind,
        namespaced: spec.get("scope").and_then(Value::as_str) == Some("Namespaced"),
        short_names: strs(names.get("shortNames")),
        categories: strs(names.get("categories")),
        status_subresource: v.pointer("/subresources/status").is_some(),
        scale_subresource: v.pointer("/subresources/scale").is_some(),
        schema: v.pointer("/schema/openAPIV3Schema").cloned().map(Arc::new),
        printer_columns: v
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    })
}

/// Whether a CRD object carries `Established=True`.
pub fn crd_established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

fn validate_crd(obj: &mut Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let err = |r: &'static str, f: &str, m: &str| FieldError {
        reason: r,
        field: f.into(),
        message: m.into(),
    };
    let group = obj
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let plural = obj
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = obj
        .pointer("/spec/names/kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if group.is_empty() {
        errs.push(err("FieldValueRequired", "spec.group", "Required value"));
    }
    if plural.is_empty() {
        errs.push(err("FieldValueRequired", "spec.names.plural", "Required value"));
    }
    if kind.is_empty() {
        errs.push(err("FieldValueRequired", "spec.names.kind", "Required value"));
    }
    match obj.pointer("/spec/scope").and_then(Value::as_str) {
        Some("Cluster") | Some("Namespaced") => {}
        other => errs.push(err(
            "FieldValueNotSupported",
            "spec.scope",
            &format!(
                "Unsupported value: {}: supported values: \"Cluster\", \"Namespaced\"",
                schema::show(&other.map(|s| json!(s)).unwrap_or(Value::Null))
            ),
        )),
    }
    let versions = obj
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        errs.push(err(
            "FieldValueInvalid",
            "spec.versions",
            "Invalid value: \"null\": must have exactly one version marked as storage version",
        ));
    } else if versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count()
        != 1
    {
        errs.push(err(
            "FieldValueInvalid",
            "spec.versions",
            "Invalid value: \"array\": must have exactly one version marked as storage version",
        ));
    }
    let name = meta_str(obj, "name").unwrap_or("").to_string();
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        errs.push(err(
            "FieldValueInvalid",
            "metadata.name",
            &format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    if let Some(names) = obj.pointer_mut("/spec/names").and_then(Value::as_object_mut)
        && !kind.is_empty()
    {
        names
            .entry("singular")
            .or_insert_with(|| json!(kind.to_lowercase()));
        names
            .entry("listKind")
            .or_insert_with(|| json!(format!("{kind}List")));
    }
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.entry("conversion")
            .or_insert_with(|| json!({"strategy": "None"}));
    }
    errs
}

impl State {
    pub fn new(tx: broadcast::Sender<Arc<Event>>) -> Self {
        Self {
            rv: 1,
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            tx,
            pending_establish: Vec::new(),
            established_at: BTreeMap::new(),
            rt_cache: Default::default(),
            legacy_webhook_defaults: false,
            namespaces: None,
            last_event: 0,
        }
    }

    fn emit(&mut self, group: &str, plural: &str, etype: &'static str, object: Value) {
        let ev = Arc::new(Event {
            rv: self.rv,
            group: group.into(),
            plural: plural.into(),
            etype,
            object,
        });
        if self.history.len() >= HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(ev.clone());
        self.last_event = self.last_event.max(ev.rv);
        let _ = self.tx.send(ev);
    }

    /// Replay history after `rv` and subscribe to what follows, atomically.
    /// `Err(oldest)` if `rv` is older than the kept history.
    pub fn watch_from(&self, rv: u64) -> Result<Replay, u64> {
        let oldest = self.history.front().map(|e| e.rv).unwrap_or(self.rv);
        if rv + 1 < oldest && rv < self.rv {
            return Err(oldest);
        }
        let past = self.history.iter().filter(|e| e.rv > rv).cloned().collect();
        Ok((past, self.tx.subscribe()))
    }

    /// Subscribe to future events only.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.tx.subscribe()
    }

    /// All CRD objects.
    pub fn crds(&self) -> Vec<&Value> {
        self.objects
            .get(&(CRD_GROUP.to_string(), CRD_PLURAL.to_string()))
            .map(|m| m.values().collect())
            .unwrap_or_default()
    }

    /// The kind served at `group/version/plural`, if any.
    pub fn resolve(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        if group == CRD_GROUP && version == "v1" && plural == CRD_PLURAL {
            return Some(ResourceType::crd());
        }
        self.objects
            .get(&(CRD_GROUP.to_string(), CRD_PLURAL.to_string()))?
            .values()
            .find_map(|c| {
                let same = c.pointer("/spec/group").and_then(Value::as_str) == Some(group)
                    && c.pointer("/spec/names/plural").and_then(Value::as_str) == Some(plural);
                if !same {
                    return None;
                }
                let key = (group.to_string(), version.to_string(), plural.to_string());
                let crd_rv = meta_str(c, "resourceVersion").unwrap_or("").to_string();
                let mut cache = self.rt_cache.borrow_mut();
                if let Some((rv, rt)) = cache.get(&key)
                    && *rv == crd_rv
                {
                    return Some(rt.clone());
                }
                let rt = type_from_crd(c, version)?;
                cache.insert(key, (crd_rv, rt.clone()));
                Some(rt)
            })
    }

    /// A raw object by key.
    pub fn get_raw(&self, group: &str, plural: &str, ns: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&(group.to_string(), plural.to_string()))?
            .get(&(ns.to_string(), name.to_string()))
    }

    /// Get an object through a served kind.
    pub fn get(&self, rt: &ResourceType, ns: &str, name: &str) -> Result<Value, ApiError> {
        self.get_raw(&rt.group, &rt.plural, ns, name)
            .map(|o| self.as_version(rt, o))
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))
    }

    fn as_version(&self, rt: &ResourceType, o: &Value) -> Value {
        let mut o = o.clone();
        if let Some(m) = o.as_object_mut() {
            m.insert("apiVersion".into(), json!(rt.api_version()));
        }
        o
    }

    /// List objects (optionally in one namespace) that match the selectors.
    pub fn list(&self, rt: &ResourceType, ns: Option<&str>, sel: &Selectors) -> Vec<Value> {
        self.objects
            .get(&(rt.group.clone(), rt.plural.clone()))
            .map(|m| {
                m.iter()
                    .filter(|((ons, _), o)| ns.is_none_or(|n| n == ons) && sel.matches(o))
                    .map(|(_, o)| self.as_version(rt, o))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn prepare(&self, rt: &ResourceType, obj: &mut Value, ctx: &WriteCtx) -> Result<Vec<String>, ApiError> {
        let name = meta_str(obj, "name").unwrap_or("").to_string();
        let mut warnings = Vec::new();
        let mut errs = Vec::new();
        if rt.is_crd() {
            errs.extend(validate_crd(obj));
        } else if let Some(s) = &rt.schema {
            let dropped = schema::prune_root(s, obj);
            if ctx.strict && !dropped.is_empty() {
                let list: Vec<String> = dropped.iter().map(|d| format!("unknown field \"{d}\"")).collect();
                return Err(ApiError::bad_request(format!(
                    "strict decoding error: {}",
                    list.join(", ")
                )));
            }
            if !ctx.ignore_unknown {
                warnings.extend(dropped.iter().map(|d| format!("unknown field \"{d}\"")));
            }
            schema::default_root(s, obj);
            if self.legacy_webhook_defaults && rt.group == "karpenter.sh" && rt.kind == "Provisioner" {
                crate::webhooks::default_provisioner(obj);
            }
            errs.extend(schema::validate_root(s, obj));
        }
        errs.splice(0..0, schema::validate_name(obj));
        if !errs.is_empty() {
            return Err(invalid(&rt.kind, &rt.group, &name, &errs));
        }
        Ok(warnings)
    }

    fn check_identity(&self, rt: &ResourceType, obj: &mut Value, ns: &str) -> Result<(), ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request("the body of the request must be an object"));
        }
        if let Some(k) = obj.get("kind").and_then(Value::as_str)
            && k != rt.kind
        {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({}) does not match the expected API version ({}) or kind {k} does not match {}",
                obj.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
                rt.api_version(),
                rt.kind
            )));
        }
        if let Some(av) = obj.get("apiVersion").and_then(Value::as_str)
            && av != rt.api_version()
        {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({})",
                rt.api_version()
            )));
        }
        if let Some(o) = obj.as_object_mut() {
            o.insert("apiVersion".into(), json!(rt.api_version()));
            o.insert("kind".into(), json!(rt.kind));
        }
        let meta = meta_mut(obj).ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
        if rt.namespaced {
            match meta.get("namespace").and_then(Value::as_str) {
                Some(n) if !n.is_empty() && n != ns => {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                _ => {
                    meta.insert("namespace".into(), json!(ns));
                }
            }
        } else {
            meta.remove("namespace");
        }
        Ok(())
    }

    /// Create an object. `manager_op` is `Update` for POST and `Apply` for an apply that creates.
    pub fn create(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        mut obj: Value,
        ctx: &WriteCtx,
        apply: bool,
    ) -> Result<Written, ApiError> {
        self.check_identity(rt, &mut obj, ns)?;
        {
            let meta =
                meta_mut(&mut obj).ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
            if meta.get("name").and_then(Value::as_str).is_none_or(str::is_empty)
                && let Some(g) = meta
                    .get("generateName")
                    .and_then(Value::as_str)
                    .filter(|g| !g.is_empty())
            {
                let n = format!("{g}{}", random_suffix());
                meta.insert("name".into(), json!(n));
            }
            if meta
                .get("resourceVersion")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
            {
                return Err(ApiError::bad_request(
                    "resourceVersion should not be set on objects to be created",
                ));
            }
            for f in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "resourceVersion",
                "selfLink",
            ] {
                meta.remove(f);
            }
            if !apply {
                meta.remove("managedFields");
            }
        }
        if rt.status_subresource
            && let Some(o) = obj.as_object_mut()
        {
            o.remove("status");
        }
        let mut warnings = self.prepare(rt, &mut obj, ctx)?;
        let name = meta_str(&obj, "name").unwrap_or("").to_string();
        if self
            .get_raw(&rt.group, &rt.plural, ns_key(rt, ns), &name)
            .is_some()
        {
            return Err(ApiError::already_exists(&rt.group, &rt.plural, &name));
        }
        if !apply {
            let fs = ssa::fieldset_of(&obj);
            ssa::record_update(&mut obj, &ctx.manager, "", &fs, &rt.api_version());
        }
        let uid = uuid::Uuid::new_v4().to_string();
        let rv = self.rv + 1;
        if let Some(m) = meta_mut(&mut obj) {
            m.insert("uid".into(), json!(uid));
            m.insert("creationTimestamp".into(), json!(now_rfc3339()));
            m.insert("generation".into(), json!(1));
            m.insert("resourceVersion".into(), json!(rv.to_string()));
        }
        if rt.is_crd() {
            let storage: Vec<Value> = obj
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .map(|vs| {
                    vs.iter()
                        .filter(|v| v["storage"] == true)
                        .map(|v| v["name"].clone())
                        .collect()
                })
                .unwrap_or_default();
            if let Some(o) = obj.as_object_mut() {
                o.insert("status".into(), json!({"conditions": [], "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": storage}));
            }
            let mut f = finalizers(&obj);
            if !f.iter().any(|x| x == CRD_CLEANUP_FINALIZER) {
                f.push(CRD_CLEANUP_FINALIZER.into());
            }
            set_finalizers(&mut obj, &f);
            if let Some(l) = self.list(rt, None, &Selectors::default()).iter().find(|c| {
                c.pointer("/spec/group") == obj.pointer("/spec/group")
                    && c.pointer("/spec/names/kind") == obj.pointer("/spec/names/kind")
            }) {
                warnings.push(format!(
                    "kind already served by {}",
                    meta_str(l, "name").unwrap_or("")
                ));
            }
        }
        if ctx.dry_run {
            return Ok(Written {
                object: obj,
                warnings,
                gone: false,
            });
        }
        self.rv = rv;
        self.objects
            .entry((rt.group.clone(), rt.plural.clone()))
            .or_default()
            .insert((ns_key(rt, ns).to_string(), name.clone()), obj.clone());
        self.emit(&rt.group, &rt.plural, "ADDED", obj.clone());
        if rt.is_crd() {
            self.pending_establish.push((name, uid));
        }
        self.gc();
        Ok(Written {
            object: obj,
            warnings,
            gone: false,
        })
    }

    /// Replace an object with `new` (already merged by the caller for patches and applies).
    /// `record_update` adds an Update entry to managedFields (false for applies, which did it).
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        mut new: Value,
        sub: Sub,
        ctx: &WriteCtx,
        record_update: bool,
    ) -> Result<Written, ApiError> {
        let ns = ns_key(rt, ns).to_string();
        let old = self
            .get_raw(&rt.group, &rt.plural, &ns, name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
        // Like kube-apiserver: a write that sends no managedFields (or writes a subresource)
        // keeps the stored ones, so clients unaware of them cannot wipe them; a write that sends
        // different ones replaces them (how `kubectl` upgrades client-side-apply ownership).
        let sent = new
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        if (!sent || sub == Sub::Status)
            && let Some(m) = meta_mut(&mut new)
        {
            match old.pointer("/metadata/managedFields") {
                Some(mf) => m.insert("managedFields".into(), mf.clone()),
                None => m.remove("managedFields"),
            };
        }
        self.check_identity(rt, &mut new, &ns)?;
        if let Some(n) = meta_str(&new, "name")
            && n != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        if let Some(rv) = meta_str(&new, "resourceVersion").filter(|s| !s.is_empty())
            && Some(rv) != meta_str(&old, "resourceVersion")
        {
            return Err(ApiError::conflict(
                &rt.group,
                &rt.plural,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        let mut new = match sub {
            Sub::Main => {
                if rt.status_subresource
                    && let Some(o) = new.as_object_mut()
                {
                    match old.get("status") {
                        Some(s) => o.insert("status".into(), s.clone()),
                        None => o.remove("status"),
                    };
                }
                new
            }
            Sub::Status => {
                let mut merged = old.clone();
                if let Some(o) = merged.as_object_mut() {
                    match new.get("status") {
                        Some(s) => o.insert("status".into(), s.clone()),
                        None => o.remove("status"),
                    };
                }
                if let (Some(m), Some(mf)) = (meta_mut(&mut merged), new.pointer("/metadata/managedFields")) {
                    m.insert("managedFields".into(), mf.clone());
                }
                merged
            }
        };
        if let (Some(m), Some(om)) = (meta_mut(&mut new), old.get("metadata").and_then(Value::as_object)) {
            for f in [
                "uid",
                "creationTimestamp",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "namespace",
                "name",
            ] {
                match om.get(f) {
                    Some(v) => m.insert(f.into(), v.clone()),
                    None => m.remove(f),
                };
            }
            m.remove("resourceVersion");
            if let Some(rv) = om.get("resourceVersion") {
                m.insert("resourceVersion".into(), rv.clone());
            }
        }
        if rt.is_crd()
            && let (Some(o), Some(s)) = (new.as_object_mut(), old.get("status"))
            && sub == Sub::Main
        {
            o.insert("status".into(), s.clone());
        }
        let warnings = self.prepare(rt, &mut new, ctx)?;
        // Finalizers may not be added once deletion started (the real server rejects that).
        if old.pointer("/metadata/deletionTimestamp").is_some() {
            let of: BTreeSet<String> = finalizers(&old).into_iter().collect();
            if finalizers(&new).iter().any(|f| !of.contains(f)) {
                return Err(invalid(
                    &rt.kind,
                    &rt.group,
                    name,
                    &[FieldError {
                        reason: "FieldValueForbidden",
                        field: "metadata.finalizers".into(),
                        message: "Forbidden: no new finalizers can be added if the object is being deleted"
                            .into(),
                    }],
                ));
            }
        }
        if record_update {
            let changed = ssa::changed_fields(&old, &new);
            if !changed.is_empty() {
                ssa::record_update(&mut new, &ctx.manager, sub.name(), &changed, &rt.api_version());
            }
        }
        if strip_for_compare(&new) == strip_for_compare(&old) {
            return Ok(Written {
                object: self.as_version(rt, &old),
                warnings,
                gone: false,
            });
        }
        let include_status = !rt.status_subresource;
        if spec_part(&new, include_status) != spec_part(&old, include_status) {
            let g = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            if let Some(m) = meta_mut(&mut new) {
                m.insert("generation".into(), json!(g + 1));
            }
        }
        let rv = self.rv + 1;
        if let Some(m) = meta_mut(&mut new) {
            m.insert("resourceVersion".into(), json!(rv.to_string()));
        }
        if ctx.dry_run {
            return Ok(Written {
                object: new,
                warnings,
                gone: false,
            });
        }
        self.rv = rv;
        let key = (ns.clone(), name.to_string());
        let gone = new.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&new).is_empty();
        if let Some(m) = self.objects.get_mut(&(rt.group.clone(), rt.plural.clone())) {
            if gone {
                m.remove(&key);
            } else {
                m.insert(key, new.clone());
            }
        }
        self.emit(
            &rt.group,
            &rt.plural,
            if gone { "DELETED" } else { "MODIFIED" },
            new.clone(),
        );
        self.gc();
        Ok(Written {
            object: self.as_version(rt, &new),
            warnings,
            gone,
        })
    }

    /// Delete an object by the rules of the real server (see module docs).
    #[allow(clippy::too_many_arguments)]
    pub fn delete(
        &mut self,
        rt: &ResourceType,
        ns: &str,
        name: &str,
        propagation: Option<&str>,
        precondition_uid: Option<&str>,
        precondition_rv: Option<&str>,
        dry_run: bool,
    ) -> Result<Written, ApiError> {
        let ns = ns_key(rt, ns).to_string();
        let old = self
            .get_raw(&rt.group, &rt.plural, &ns, name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
        let uid = meta_str(&old, "uid").unwrap_or("").to_string();
        if let Some(p) = precondition_uid.filter(|p| *p != uid) {
            return Err(ApiError::conflict(
                &rt.group,
                &rt.plural,
                name,
                &format!("Precondition failed: UID in precondition: {p}, UID in object meta: {uid}"),
            ));
        }
        let orv = meta_str(&old, "resourceVersion").unwrap_or("").to_string();
        if let Some(p) = precondition_rv.filter(|p| *p != orv) {
            return Err(ApiError::conflict(
                &rt.group,
                &rt.plural,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {p}, ResourceVersion in object meta: {orv}"
                ),
            ));
        }
        if dry_run {
            return Ok(Written {
                object: self.as_version(rt, &old),
                warnings: vec![],
                gone: false,
            });
        }
        let key: Key = (rt.group.clone(), rt.plural.clone(), ns, name.to_string());
        match propagation {
            Some("Foreground") => {
                let mut f = finalizers(&old);
                if !f.iter().any(|x| x == "foregroundDeletion") {
                    f.push("foregroundDeletion".into());
                }
                let mut o = old.clone();
                set_finalizers(&mut o, &f);
                self.put_marked(&key, o);
                // The real collector runs later, so the answer is the marked object even if the
                // (synchronous) collection below removes it at once.
                let marked = self
                    .get_raw(&key.0, &key.1, &key.2, &key.3)
                    .map(|o| self.as_version(rt, o));
                self.gc();
                if let Some(object) = marked {
                    return Ok(Written {
                        object,
                        warnings: vec![],
                        gone: false,
                    });
                }
            }
            Some("Orphan") => {
                self.orphan_dependents(&uid);
                self.mark_or_remove(&key);
            }
            _ => {
                self.mark_or_remove(&key);
            }
        }
        self.gc();
        match self.get_raw(&key.0, &key.1, &key.2, &key.3) {
            Some(o) if meta_str(o, "uid") == Some(uid.as_str()) => Ok(Written {
                object: self.as_version(rt, o),
                warnings: vec![],
                gone: false,
            }),
            _ => {
                let mut o = old;
                if let Some(m) = meta_mut(&mut o) {
                    m.insert("resourceVersion".into(), json!(self.rv.to_string()));
                }
                Ok(Written {
                    object: self.as_version(rt, &o),
                    warnings: vec![],
                    gone: true,
                })
            }
        }
    }

    /// Store `o` with deletionTimestamp set (if not yet), as a MODIFIED event.
    fn put_marked(&mut self, key: &Key, mut o: Value) {
        if let Some(m) = meta_mut(&mut o)
            && !m.contains_key("deletionTimestamp")
        {
            m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            let g = m.get("generation").and_then(Value::as_i64).unwrap_or(1);
            m.insert("generation".into(), json!(g + 1));
        }
        self.put(key, o);
    }

    fn put(&mut self, key: &Key, mut o: Value) {
        let old = self.get_raw(&key.0, &key.1, &key.2, &key.3).cloned();
        if old.as_ref() == Some(&o) {
            return;
        }
        self.rv += 1;
        if let Some(m) = meta_mut(&mut o) {
            m.insert("resourceVersion".into(), json!(self.rv.to_string()));
        }
        let gone = o.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&o).is_empty();
        let map = self.objects.entry((key.0.clone(), key.1.clone())).or_default();
        if gone {
            map.remove(&(key.2.clone(), key.3.clone()));
        } else {
            map.insert((key.2.clone(), key.3.clone()), o.clone());
        }
        self.emit(&key.0, &key.1, if gone { "DELETED" } else { "MODIFIED" }, o);
    }

    /// Remove now if no finalizers, otherwise set deletionTimestamp. Returns whether anything changed.
    fn mark_or_remove(&mut self, key: &Key) -> bool {
        let Some(o) = self.get_raw(&key.0, &key.1, &key.2, &key.3).cloned() else {
            return false;
        };
        if o.pointer("/metadata/deletionTimestamp").is_some() {
            return false;
        }
        if finalizers(&o).is_empty() {
            if let Some(m) = self.objects.get_mut(&(key.0.clone(), key.1.clone())) {
                m.remove(&(key.2.clone(), key.3.clone()));
            }
            self.rv += 1;
            let mut o = o;
            if let Some(m) = meta_mut(&mut o) {
                m.insert("resourceVersion".into(), json!(self.rv.to_string()));
            }
            self.emit(&key.0, &key.1, "DELETED", o);
        } else {
            self.put_marked(key, o);
        }
        true
    }

    fn remove_finalizer(&mut self, key: &Key, fin: &str) {
        let Some(mut o) = self.get_raw(&key.0, &key.1, &key.2, &key.3).cloned() else {
            return;
        };
        let f: Vec<String> = finalizers(&o).into_iter().filter(|x| x != fin).collect();
        set_finalizers(&mut o, &f);
        self.put(key, o);
    }

    fn all_keys(&self) -> Vec<(Key, Value)> {
        self.objects
            .iter()
            .flat_map(|((g, p), m)| {
                m.iter()
                    .map(move |((ns, n), o)| ((g.clone(), p.clone(), ns.clone(), n.clone()), o.clone()))
            })
            .collect()
    }

    /// A light snapshot for the garbage collector: for every object only uid, ownerReferences,
    /// deletionTimestamp, finalizers (and for CRDs the group and plural they serve).
    fn all_meta(&self) -> Vec<(Key, Value)> {
        self.objects
            .iter()
            .flat_map(|((g, p), m)| {
                m.iter().map(move |((ns, n), o)| {
                    let md = o.get("metadata");
                    let pick = |f: &str| md.and_then(|m| m.get(f)).cloned().unwrap_or(Value::Null);
                    let mut light = json!({"metadata": {
                        "uid": pick("uid"),
                        "ownerReferences": pick("ownerReferences"),
                        "finalizers": pick("finalizers"),
                    }});
                    if let Some(ts) = md.and_then(|m| m.get("deletionTimestamp"))
                        && let Some(m) = light.get_mut("metadata").and_then(Value::as_object_mut)
                    {
                        m.insert("deletionTimestamp".into(), ts.clone());
                    }
                    if g == CRD_GROUP && p == CRD_PLURAL {
                        light["spec"] = json!({"group": o.pointer("/spec/group").cloned().unwrap_or(Value::Null),
                            "names": {"plural": o.pointer("/spec/names/plural").cloned().unwrap_or(Value::Null)}});
                    }
                    ((g.clone(), p.clone(), ns.clone(), n.clone()), light)
                })
            })
            .collect()
    }

    fn orphan_dependents(&mut self, owner_uid: &str) {
        for (key, o) in self.all_keys() {
            let Some(refs) = o.pointer("/metadata/ownerReferences").and_then(Value::as_array) else {
                continue;
            };
            if refs.iter().any(|r| r["uid"] == owner_uid) {
                let kept: Vec<Value> = refs.iter().filter(|r| r["uid"] != owner_uid).cloned().collect();
                let mut o2 = o.clone();
                if let Some(m) = meta_mut(&mut o2) {
                    if kept.is_empty() {
                        m.remove("ownerReferences");
                    } else {
                        m.insert("ownerReferences".into(), Value::Array(kept));
                    }
                }
                self.put(&key, o2);
            }
        }
    }

    /// The garbage collector and CRD cleanup, run to a fixed point after each write.
    pub fn gc(&mut self) {
        for _ in 0..64 {
            let mut changed = false;
            let all = self.all_meta();
            let relevant = all.iter().any(|(_, o)| {
                o.pointer("/metadata/deletionTimestamp").is_some()
                    || o.pointer("/metadata/ownerReferences")
                        .is_some_and(|r| !r.is_null())
            });
            if !relevant {
                break;
            }
            let uids: BTreeSet<String> = all
                .iter()
                .filter_map(|(_, o)| meta_str(o, "uid").map(String::from))
                .collect();
            for (key, o) in &all {
                // Dependents whose owners are all gone.
                if let Some(refs) = o.pointer("/metadata/ownerReferences").and_then(Value::as_array)
                    && !refs.is_empty()
                    && refs
                        .iter()
                        .all(|r| r["uid"].as_str().is_none_or(|u| !uids.contains(u)))
                    && o.pointer("/metadata/deletionTimestamp").is_none()
                {
                    changed |= self.mark_or_remove(key);
                }
                let deleting = o.pointer("/metadata/deletionTimestamp").is_some();
                if !deleting {
                    continue;
                }
                let f = finalizers(o);
                let uid = meta_str(o, "uid").unwrap_or("");
                if f.iter().any(|x| x == "foregroundDeletion") {
                    let deps: Vec<(Key, Value)> = all
                        .iter()
                        .filter(|(_, d)| {
                            d.pointer("/metadata/ownerReferences")
                                .and_then(Value::as_array)
                                .is_some_and(|rs| rs.iter().any(|r| r["uid"] == uid))
                        })
                        .cloned()
                        .collect();
                    for (dk, _) in &deps {
                        changed |= self.mark_or_remove(dk);
                    }
                    let blocking = deps.iter().any(|(dk, d)| {
                        self.get_raw(&dk.0, &dk.1, &dk.2, &dk.3).is_some()
                            && d.pointer("/metadata/ownerReferences")
                                .and_then(Value::as_array)
                                .is_some_and(|rs| {
                                    rs.iter()
                                        .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true)
                                })
                    });
                    if !blocking {
                        self.remove_finalizer(key, "foregroundDeletion");
                        changed = true;
                    }
                }
                if key.0 == CRD_GROUP && key.1 == CRD_PLURAL && f.iter().any(|x| x == CRD_CLEANUP_FINALIZER) {
                    let group = o
                        .pointer("/spec/group")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let plural = o
                        .pointer("/spec/names/plural")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let instances: Vec<Key> = all
                        .iter()
                        .filter(|(k, _)| k.0 == group && k.1 == plural)
                        .map(|(k, _)| k.clone())
                        .collect();
                    for ik in &instances {
                        changed |= self.mark_or_remove(ik);
                    }
                    let remaining = self.objects.get(&(group, plural)).is_some_and(|m| !m.is_empty());
                    if !remaining {
                        self.remove_finalizer(key, CRD_CLEANUP_FINALIZER);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Mark a CRD Established (and NamesAccepted) if it still exists with this uid.
    pub fn establish(&mut self, name: &str, uid: &str) {
        let key: Key = (CRD_GROUP.into(), CRD_PLURAL.into(), String::new(), name.into());
        let Some(mut o) = self.get_raw(&key.0, &key.1, "", name).cloned() else {
            return;
        };
        if meta_str(&o, "uid") != Some(uid) || crd_established(&o) {
            return;
        }
        let now = now_rfc3339();
        let names = o.pointer("/spec/names").cloned().unwrap_or_else(|| json!({}));
        if let Some(obj) = o.as_object_mut() {
            let status = obj.entry("status").or_insert_with(|| json!({}));
            if let Some(s) = status.as_object_mut() {
                s.insert("acceptedNames".into(), names);
                s.insert(
                    "conditions".into(),
                    json!([
                        {"type": "NamesAccepted", "status": "True", "lastTransitionTime": now, "reason": "NoConflicts", "message": "no conflicts found"},
                        {"type": "Established", "status": "True", "lastTransitionTime": now, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
                    ]),
                );
            }
        }
        self.put(&key, o);
        self.established_at.insert(
            name.to_string(),
            crate::util::unix_micros(std::time::SystemTime::now()),
        );
    }

    /// Out-of-band: replace an object as stored (no validation, no managedFields), keeping identity.
    pub fn put_out_of_band(&mut self, group: &str, plural: &str, ns: &str, name: &str, o: Value) -> bool {
        if self.get_raw(group, plural, ns, name).is_none() {
            return false;
        }
        let key: Key = (group.into(), plural.into(), ns.into(), name.into());
        self.put(&key, o);
        self.gc();
        true
    }

    /// Out-of-band: remove an object at once, ignoring finalizers.
    pub fn remove_out_of_band(&mut self, group: &str, plural: &str, ns: &str, name: &str) -> bool {
        let Some(o) = self
            .objects
            .get_mut(&(group.to_string(), plural.to_string()))
            .and_then(|m| m.remove(&(ns.to_string(), name.to_string())))
        else {
            return false;
        };
        self.rv += 1;
        let mut o = o;
        if let Some(m) = meta_mut(&mut o) {
            m.insert("resourceVersion".into(), json!(self.rv.to_string()));
        }
        self.emit(group, plural, "DELETED", o);
        self.gc();
        true
    }

    /// All objects of a group/plural (any namespace), as stored.
    pub fn objects_of(&self, group: &str, plural: &str) -> Vec<Value> {
        self.objects
            .get(&(group.to_string(), plural.to_string()))
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }
}

fn ns_key<'a>(rt: &ResourceType, ns: &'a str) -> &'a str {
    if rt.namespaced { ns } else { "" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse_and_match() {
        let s = Selectors::parse(Some("a=b,c in (d, e),!f"), Some("metadata.name=x")).unwrap();
        let o = json!({"metadata": {"name": "x", "labels": {"a": "b", "c": "e"}}});
        assert!(s.matches(&o));
        let o2 = json!({"metadata": {"name": "x", "labels": {"a": "b", "c": "e", "f": "1"}}});
        assert!(!s.matches(&o2));
        assert!(Selectors::parse(None, Some("spec.x=1")).is_err());
    }
}
