//! Out-of-band reads and writes of the store: CRD installation and object inspection and
//! mutation that bypass the API (no authentication, admission or request log), for the admin
//! endpoint, the simulated controller and the library handle.

use crate::shared::{Shared, lock};
use crate::store::{ResourceType, Sub, WriteCtx};
use crate::util::{ApiError, merge_patch, meta_str};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
/// Install every CustomResourceDefinition document in `text` (YAML or JSON, one or more
/// documents). Existing CRDs are updated in place. Returns the CRD names.
pub fn install_crd_docs(
    shared: &Arc<Shared>,
    text: &str,
    delay: Option<Duration>,
) -> Result<Vec<String>, ApiError> {
    let docs: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![v],
        Err(_) => serde_saphyr::from_multiple::<Value>(text)
            .map_err(|e| ApiError::bad_request(format!("error parsing YAML: {e}")))?,
    };
    let rt = ResourceType::crd();
    let ctx = WriteCtx {
        manager: "kube-testserver".into(),
        dry_run: false,
        strict: false,
        ignore_unknown: false,
    };
    let mut names = Vec::new();
    for doc in docs.into_iter().filter(|d| !d.is_null()) {
        if doc.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            continue;
        }
        let name = meta_str(&doc, "name").unwrap_or("").to_string();
        shared.with_state_delay(delay, |st| {
            if st.get(&rt, "", &name).is_ok() {
                st.update(&rt, "", &name, doc, Sub::Main, &ctx, true).map(|_| ())
            } else {
                st.create(&rt, "", doc, &ctx, false).map(|_| ())
            }
        })?;
        names.push(name);
    }
    Ok(names)
}

/// Out-of-band read of a stored object (any version of its kind; `apiVersion` set to `version`).
pub fn object(
    shared: &Shared,
    group: &str,
    version: &str,
    plural: &str,
    ns: &str,
    name: &str,
) -> Option<Value> {
    let mut o = lock(&shared.state).get_raw(group, plural, ns, name).cloned()?;
    if let Some(m) = o.as_object_mut() {
        m.insert("apiVersion".into(), json!(format!("{group}/{version}")));
    }
    Some(o)
}

/// Out-of-band JSON merge patch of a stored object (no validation, no managedFields).
pub fn patch_object(
    shared: &Arc<Shared>,
    group: &str,
    plural: &str,
    ns: &str,
    name: &str,
    patch: &Value,
) -> bool {
    shared.with_state(|st| {
        let Some(mut o) = st.get_raw(group, plural, ns, name).cloned() else {
            return false;
        };
        merge_patch(&mut o, patch);
        st.put_out_of_band(group, plural, ns, name, o)
    })
}

/// Out-of-band create of an object as field manager `manager` (as a `kubectl create` would:
/// validated, defaulted, with a `managedFields` entry of operation `Update`), while the API
/// port may be down. Returns the stored object.
pub fn create_object(
    shared: &Arc<Shared>,
    group: &str,
    version: &str,
    plural: &str,
    ns: &str,
    obj: Value,
    manager: &str,
) -> Result<Value, ApiError> {
    let ctx = WriteCtx {
        manager: manager.into(),
        dry_run: false,
        strict: false,
        ignore_unknown: false,
    };
    shared.with_state(|st| {
        let rt = st
            .resolve(group, version, plural)
            .ok_or_else(|| ApiError::not_found(group, plural, ""))?;
        st.create(&rt, ns, obj, &ctx, false).map(|w| w.object)
    })
}

/// Out-of-band removal of an object, ignoring finalizers.
pub fn delete_object(shared: &Arc<Shared>, group: &str, plural: &str, ns: &str, name: &str) -> bool {
    shared.with_state(|st| st.remove_out_of_band(group, plural, ns, name))
}
