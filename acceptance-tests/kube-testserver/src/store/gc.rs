//! The garbage collector, run synchronously after each write: ownerReferences with foreground,
//! background and orphan deletion.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::types::{CRD_CLEANUP_FINALIZER, CRD_GROUP, CRD_PLURAL};
use super::{Key, State};
use crate::util::{finalizers, meta_mut, meta_str};

impl State {
    pub(super) fn all_keys(&self) -> Vec<(Key, Value)> {
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
    pub(super) fn all_meta(&self) -> Vec<(Key, Value)> {
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

    pub(super) fn orphan_dependents(&mut self, owner_uid: &str) {
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

    /// Whether the garbage collector has discovered the kind `group`/`plural` yet
    /// (`Config::gc_discovery_delay` after its CRD was established; built-in kinds at once),
    /// and runs at all (not `gc_stopped`).
    fn collector_knows(&self, group: &str, plural: &str) -> bool {
        if self.gc_stopped {
            return false;
        }
        if self.gc_discovery_delay.is_zero() {
            return true;
        }
        let Some(at) = self.established_at.get(&format!("{plural}.{group}")) else {
            return true;
        };
        let delay = u64::try_from(self.gc_discovery_delay.as_micros()).unwrap_or(u64::MAX);
        crate::util::unix_micros(std::time::SystemTime::now()) >= at.saturating_add(delay)
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
                if f.iter().any(|x| x == "foregroundDeletion") && self.collector_knows(&key.0, &key.1) {
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
}
