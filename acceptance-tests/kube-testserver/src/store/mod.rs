//! The in-memory object store: CRDs and custom objects, resource versions, the event history
//! that watches replay from, and the write paths (create, update, delete) with the metadata
//! rules of kube-apiserver: uid, resourceVersion, generation, managedFields, finalizers,
//! deletionTimestamp, ownerReferences with foreground/background/orphan deletion (the garbage
//! collector runs synchronously after each write), and CRD establishment.

use crate::schema::FieldError;
use crate::util::{ApiError, meta_mut, meta_str, now_rfc3339, qualified};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use tokio::sync::broadcast;

mod crd;
mod gc;
mod types;
mod write;
use crd::crd_established;
pub use crd::type_from_crd;
pub use types::{CRD_CLEANUP_FINALIZER, CRD_GROUP, CRD_PLURAL, ResourceType};

const HISTORY: usize = 4096;

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
    /// `Config::gc_discovery_delay`.
    pub gc_discovery_delay: std::time::Duration,
    /// The garbage collector is stopped (kube-controller-manager down): no foreground deletion
    /// finishes (`TestServer::set_garbage_collector`).
    pub gc_stopped: bool,
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

impl State {
    pub fn new(tx: broadcast::Sender<Arc<Event>>) -> Self {
        Self {
            rv: 1,
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            tx,
            pending_establish: Vec::new(),
            established_at: BTreeMap::new(),
            gc_discovery_delay: std::time::Duration::ZERO,
            gc_stopped: false,
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
        if group.is_empty() && version == "v1" && plural == "nodes" {
            return Some(ResourceType::node());
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

impl State {
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
