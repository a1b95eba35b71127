//! How the simulated controller (and the simulated kubelet beside it) writes: a change to a
//! stored object made through the normal update path, as a real controller's write is, shared
//! by the controller and its Node handling.

use crate::shared::Shared;
use crate::store::{Sub, WriteCtx};
use crate::util::meta_str;
use serde_json::Value;
use std::sync::Arc;

/// Apply `f` to the stored object if it still has `uid`, written through the normal update
/// path as field manager `karpenter` (so it is validated, versioned and recorded in
/// managedFields like a real controller's write).
#[allow(clippy::too_many_arguments)]
pub fn mutate(
    shared: &Arc<Shared>,
    group: &str,
    plural: &str,
    ns: &str,
    name: &str,
    uid: &str,
    sub: Sub,
    f: impl FnOnce(&mut Value),
) {
    let ctx = WriteCtx::controller();
    shared.with_state(|st| {
        let Some(mut o) = st.get_raw(group, plural, ns, name).cloned() else {
            return;
        };
        if meta_str(&o, "uid") != Some(uid) {
            return;
        }
        f(&mut o);
        let version = o
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|av| av.rsplit('/').next())
            .unwrap_or("")
            .to_string();
        match st.resolve(group, &version, plural) {
            Some(rt) => {
                if let Err(e) = st.update(&rt, ns, name, o, sub, &ctx, true) {
                    tracing::warn!("simulated controller write to {plural}/{name} failed: {e}");
                }
            }
            None => {
                st.put_out_of_band(group, plural, ns, name, o);
            }
        }
    });
}
