//! Writing and reading custom objects: server-side apply with our field manager (taking over
//! fields other managers co-own), GET and paged LIST. Transient refusals are retried inside the
//! caller's deadline (see [`super::retry`]). Deleting an object and waiting on it (until it is
//! gone, or `Ready`) are in [`super::wait`].
//!
//! Every call names its object by kind, namespace and name: `namespace` is `None` for the
//! cluster-scoped kinds and `Some` for namespaced ones (CapacityBuffer); one code path serves
//! both, only the request URL differs.

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::Value as Json;
use tokio::time::Instant;

use super::FIELD_MANAGER;
use super::error::KubeError;
use super::kinds::Kind;
use super::ownership::CreateToken;
use super::retry::{Also, retry};

/// The API of `kind`, in `namespace` when one is given (a namespaced kind), else cluster-wide.
pub(crate) fn api(client: &kube::Client, kind: &Kind, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &kind.api_resource()),
        None => Api::all_with(client.clone(), &kind.api_resource()),
    }
}

/// How an object is named in messages: `name`, or `namespace/name` for a namespaced one.
pub fn object_label(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}

/// Server-side apply of `object` (a full manifest with apiVersion, kind, metadata.name), forced,
/// as the sole manager of the fields it states. Returns the object as stored.
///
/// For a create, `create` is the token `object` is stamped with ([`CreateToken::stamp`]): when
/// an attempt fails, its write may still have been made (the answer was lost: a dropped
/// connection, a server that went down after committing), so before writing again the object is
/// read. If it exists and this create wrote it, the write is done and is simply repeated; if it
/// exists and this create did not write it, another writer took the name meanwhile, and the
/// create stops with [`KubeError::TakenMeanwhile`] instead of writing over it (create never
/// adopts). A create that still has no answer when its deadline comes reads the object once
/// more (for at most [`LAST_LOOK`]) and records it if its write went through.
pub async fn apply(
    client: &kube::Client,
    kind: &Kind,
    namespace: Option<&str>,
    name: &str,
    object: &Json,
    create: Option<&CreateToken>,
    deadline: Instant,
) -> Result<DynamicObject, KubeError> {
    let api = api(client, kind, namespace);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let label = object_label(namespace, name);
    let attempts = std::sync::atomic::AtomicU32::new(0);
    let written = retry(
        &format!("applying {} {label}", kind.kind),
        deadline,
        Also::NotFound,
        || async {
            let attempt = attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if let Some(token) = create
                && attempt > 1
                && let Some(found) = api.get_opt(name).await.map_err(KubeError::from)?
                && found.metadata.deletion_timestamp.is_none()
            {
                if !token.wrote(&found, FIELD_MANAGER) {
                    return Err(KubeError::TakenMeanwhile {
                        kind: kind.kind,
                        object: Box::new(found),
                    });
                }
                let what = format!(
                    "the answer to the create of {} {label} was lost; the {} found afterwards carries this create's \
                     token, so the write went through and is recorded",
                    kind.kind, kind.kind
                );
                tracing::warn!(kind = kind.kind, name, "{what}");
                super::retry::note(|notes| {
                    if !notes.recovered.contains(&what) {
                        notes.recovered.push(what);
                    }
                });
            }
            api.patch(name, &params, &Patch::Apply(object))
                .await
                .map_err(KubeError::from)
        },
    )
    .await;
    // A create that ends without an answer to its write (abandoned at the deadline, or the
    // server gone) looks once more: if the write went through, the object is recorded now
    // rather than refused by the next apply.
    let (
        Some(token),
        Err(e @ (KubeError::Timeout { .. } | KubeError::Unreachable { .. } | KubeError::Transport(_))),
    ) = (create, &written)
    else {
        return written;
    };
    match tokio::time::timeout(LAST_LOOK, api.get_opt(name)).await {
        Ok(Ok(Some(found))) if token.wrote(&found, FIELD_MANAGER) => {
            let what = format!(
                "the answer to the create of {} {label} did not come in time ({e}); the {} found right after \
                 carries this create's token, so the write went through and is recorded",
                kind.kind, kind.kind
            );
            tracing::warn!(kind = kind.kind, name, "{what}");
            super::retry::note(|notes| notes.recovered.push(what));
            Ok(found)
        }
        _ => written,
    }
}

/// How long a create whose write went unanswered until its deadline still looks whether the
/// write went through (one read, past the deadline).
const LAST_LOOK: std::time::Duration = std::time::Duration::from_secs(5);

/// The object an apply is about: its kind, namespace (`None` for cluster-scoped kinds) and name.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub kind: &'a Kind,
    pub namespace: Option<&'a str>,
    pub name: &'a str,
}

/// [`apply`] (with `create`'s token for a create), then makes this provider the only manager of `fields` (what the prior state
/// and the plan state; see [`super::ownership`]): when other managers co-own some of them,
/// their `managedFields` entries give them up in a patch guarded by the `resourceVersion` the
/// takeover was computed from, and the manifest is applied again so that fields it no longer
/// states are really removed. A concurrent write makes the guarded patch fail; the takeover is
/// then computed again from a fresh apply (a few times, within the deadline).
pub async fn apply_owning(
    client: &kube::Client,
    target: Target<'_>,
    object: &Json,
    fields: &[super::ownership::FieldPath],
    create: Option<&CreateToken>,
    deadline: Instant,
) -> Result<DynamicObject, KubeError> {
    let Target {
        kind,
        namespace,
        name,
    } = target;
    let mut stored = apply(client, kind, namespace, name, object, create, deadline).await?;
    for _ in 0..TAKEOVER_ATTEMPTS {
        let entries: Vec<Json> = stored
            .metadata
            .managed_fields
            .iter()
            .flatten()
            .filter_map(|e| serde_json::to_value(e).ok())
            .collect();
        let Some(takeover) = super::ownership::take_over(&entries, fields, FIELD_MANAGER) else {
            return Ok(stored);
        };
        for (manager, lost) in &takeover.taken {
            tracing::info!(
                kind = kind.kind,
                name,
                "taking over {} from field manager {manager}",
                lost.join(", ")
            );
        }
        let patch = serde_json::json!({"metadata": {
            "resourceVersion": stored.metadata.resource_version,
            "managedFields": takeover.managed_fields,
        }});
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..Default::default()
        };
        match api(client, kind, namespace)
            .patch(name, &params, &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            // Someone wrote in between (409), or the object changed shape: compute again.
            Err(kube::Error::Api(s)) if s.code == 409 || s.code == 422 => {
                tracing::debug!(kind = kind.kind, name, "ownership takeover raced a write; again");
            }
            Err(e) => return Err(KubeError::from(e)),
        }
        stored = apply(client, kind, namespace, name, object, None, deadline).await?;
    }
    Ok(stored)
}

/// How often a takeover is computed again when concurrent writes keep invalidating it.
const TAKEOVER_ATTEMPTS: usize = 4;

/// The object, or `None` when it does not exist.
pub async fn get(
    client: &kube::Client,
    kind: &Kind,
    namespace: Option<&str>,
    name: &str,
    deadline: Instant,
) -> Result<Option<DynamicObject>, KubeError> {
    let api = api(client, kind, namespace);
    retry(
        &format!("reading {} {}", kind.kind, object_label(namespace, name)),
        deadline,
        Also::Nothing,
        || async { api.get_opt(name).await.map_err(KubeError::from) },
    )
    .await
}

/// Every object of `kind` (in `namespace`, or in all namespaces when `None`) matching the
/// label selector, page by page; `Ok(None)` when the API server does not serve the kind (its
/// CRD is not installed). Retried like [`get`] inside `deadline`.
pub async fn list(
    client: &kube::Client,
    kind: &Kind,
    namespace: Option<&str>,
    label_selector: Option<&str>,
    deadline: Instant,
) -> Result<Option<Vec<DynamicObject>>, KubeError> {
    const PAGE: u32 = 500;
    let api = api(client, kind, namespace);
    let mut objects = Vec::new();
    let mut continue_token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(PAGE);
        if let Some(selector) = label_selector {
            params = params.labels(selector);
        }
        if let Some(token) = &continue_token {
            params = params.continue_token(token);
        }
        let page = retry(
            &format!("listing {} objects", kind.kind),
            deadline,
            Also::Nothing,
            || async { api.list(&params).await.map_err(KubeError::from) },
        )
        .await;
        let page = match page {
            Ok(page) => page,
            Err(KubeError::Api(status)) if status.code == 404 => return Ok(None),
            Err(e) => return Err(e),
        };
        objects.extend(page.items);
        continue_token = page.metadata.continue_.filter(|t| !t.is_empty());
        if continue_token.is_none() {
            return Ok(Some(objects));
        }
    }
}
