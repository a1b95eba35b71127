//! The write paths with kube-apiserver's metadata rules: create, update and delete (uid,
//! resourceVersion, generation, managedFields, finalizers, deletionTimestamp), and the
//! low-level puts and removals they share.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{
    Key, ResourceType, Selectors, State, Sub, WriteCtx, Written, crd::validate_crd, invalid, ns_key,
    random_suffix, spec_part, strip_for_compare, types::CRD_CLEANUP_FINALIZER,
};
use crate::schema::{self, FieldError};
use crate::ssa;
use crate::util::{ApiError, finalizers, meta_mut, meta_str, now_rfc3339, set_finalizers};

impl State {
    pub(super) fn prepare(
        &self,
        rt: &ResourceType,
        obj: &mut Value,
        ctx: &WriteCtx,
    ) -> Result<Vec<String>, ApiError> {
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

    pub(super) fn check_identity(
        &self,
        rt: &ResourceType,
        obj: &mut Value,
        ns: &str,
    ) -> Result<(), ApiError> {
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
    pub(super) fn put_marked(&mut self, key: &Key, mut o: Value) {
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

    pub(super) fn put(&mut self, key: &Key, mut o: Value) {
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
    pub(super) fn mark_or_remove(&mut self, key: &Key) -> bool {
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

    pub(super) fn remove_finalizer(&mut self, key: &Key, fin: &str) {
        let Some(mut o) = self.get_raw(&key.0, &key.1, &key.2, &key.3).cloned() else {
            return;
        };
        let f: Vec<String> = finalizers(&o).into_iter().filter(|x| x != fin).collect();
        set_finalizers(&mut o, &f);
        self.put(key, o);
    }
}
