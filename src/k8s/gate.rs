//! The CRD readiness gate: before the first write of a kind in this provider process, wait
//! until its CRD exists, is `Established`, serves the version we write, and the API lists the
//! kind. One wait per CRD, shared by every resource that needs it (100 node pools waiting for
//! `nodepools.karpenter.sh` make one watch), bounded by the caller's deadline, with progress
//! logged at info. Waiting is watch-based, so the gate opens as soon as the server says so.
//!
//! The gate keeps what it learnt: the served version's `openAPIV3Schema`, so the caller can
//! check a write against the Karpenter release actually installed (see [`super::skew`]) without
//! asking the server again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::runtime::wait::await_condition;
use serde_json::Value as Json;
use tokio::sync::OnceCell;
use tokio::time::Instant;

use super::error::{KubeError, humantime};
use super::kinds::Kind;
use super::retry::{Also, FIRST_DELAY, MAX_DELAY, retry};

/// How often a long wait says that it is still waiting.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// What the gate learnt about a served CRD.
#[derive(Debug, Default)]
pub struct Served {
    /// The `openAPIV3Schema` of the version we write, when the CRD declares one.
    pub schema: Option<Json>,
    /// Its label rules, compiled on first use.
    labels: std::sync::OnceLock<Option<super::served_labels::LabelRules>>,
    /// Its patterns, compiled on first use ([`super::served_values`]).
    pub patterns: super::served_values::Patterns,
}

impl Served {
    pub fn new(schema: Option<Json>) -> Self {
        Self {
            schema,
            labels: std::sync::OnceLock::new(),
            patterns: super::served_values::Patterns::default(),
        }
    }

    /// The schema's label rules, compiled once ([`super::served_labels`]).
    pub fn label_rules(&self) -> Option<&super::served_labels::LabelRules> {
        self.labels
            .get_or_init(|| super::served_labels::LabelRules::of(self.schema.as_ref()?))
            .as_ref()
    }
}

/// Whether a CRD exists (`Ok`), or how long it was looked for in vain (`Err`).
pub type Presence = Result<(), Duration>;

/// Remembers, per CRD, that it is ready; shares the wait while it is not.
#[derive(Default)]
pub struct CrdGate {
    ready: Mutex<HashMap<String, Arc<OnceCell<Arc<Served>>>>>,
    /// Per CRD: whether it was found to exist (`Ok`) or absent for how long (`Err`), looked
    /// for once per process ([`CrdGate::present`]).
    present: Mutex<HashMap<String, Arc<OnceCell<Presence>>>>,
    waits: AtomicU64,
}

impl CrdGate {
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns once `kind` can be written (with what the served CRD says about it), or fails
    /// when the deadline passes.
    pub async fn ensure(
        &self,
        client: &kube::Client,
        kind: &Kind,
        deadline: Instant,
    ) -> Result<Arc<Served>, KubeError> {
        let cell = {
            let mut ready = self
                .ready
                .lock()
                .map_err(|_| KubeError::Client("CRD gate lock poisoned".into()))?;
            ready.entry(kind.crd_name()).or_default().clone()
        };
        cell.get_or_try_init(|| async {
            self.waits.fetch_add(1, Ordering::Relaxed);
            wait_until_served(client, kind, deadline).await
        })
        .await
        .cloned()
    }

    /// Whether the CRD of `kind` exists (established or not), looked for every 2 s for up to
    /// `absent_for` (never past `deadline`); `Err(waited)` when it stayed absent. Once per
    /// kind and process: concurrent callers share the one look, and its verdict.
    pub async fn present(
        &self,
        client: &kube::Client,
        kind: &Kind,
        absent_for: Duration,
        deadline: Instant,
    ) -> Result<Presence, KubeError> {
        let cell = {
            let mut present = self
                .present
                .lock()
                .map_err(|_| KubeError::Client("CRD gate lock poisoned".into()))?;
            present.entry(kind.crd_name()).or_default().clone()
        };
        cell.get_or_try_init(|| look_for(client, kind, absent_for, deadline))
            .await
            .cloned()
    }

    /// How many waits this gate has run (one per CRD unless a wait failed and was retried).
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }
}

/// How often a missing CRD is looked for.
const LOOK_EVERY: Duration = Duration::from_secs(2);

async fn look_for(
    client: &kube::Client,
    kind: &Kind,
    absent_for: Duration,
    deadline: Instant,
) -> Result<Presence, KubeError> {
    let name = kind.crd_name();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let started = Instant::now();
    let give_up = (started + absent_for).min(deadline);
    loop {
        let found = retry(
            &format!("reading CRD {name}"),
            deadline,
            Also::Nothing,
            || async { crds.get_opt(&name).await.map_err(KubeError::from) },
        )
        .await?;
        if found.is_some() {
            return Ok(Ok(()));
        }
        let now = Instant::now();
        if now + LOOK_EVERY >= give_up {
            return Ok(Err(now - started));
        }
        if now == started {
            tracing::info!(crd = %name, "CRD {name} does not exist yet; looking again for up to {}", humantime(give_up - now));
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// The CRD is established and serves `kind.version`.
pub(crate) fn serves(
    kind: &Kind,
) -> impl Fn(Option<&CustomResourceDefinition>) -> bool + Send + Clone + 'static {
    let version = kind.version;
    move |crd| {
        let Some(crd) = crd else { return false };
        let established = crd
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Established" && c.status == "True"));
        established && crd.spec.versions.iter().any(|v| v.name == version && v.served)
    }
}

/// The schema of `version` in `crd`, if it has one.
pub(crate) fn served_schema(crd: &CustomResourceDefinition, version: &str) -> Option<Json> {
    let v = crd.spec.versions.iter().find(|v| v.name == version)?;
    let schema = v.schema.as_ref()?.open_api_v3_schema.as_ref()?;
    serde_json::to_value(schema).ok()
}

async fn wait_until_served(
    client: &kube::Client,
    kind: &Kind,
    deadline: Instant,
) -> Result<Arc<Served>, KubeError> {
    let name = kind.crd_name();
    let started = Instant::now();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let ready = serves(kind);

    // Fast path: one GET when the CRD is already there (the usual case).
    let current = retry(
        &format!("reading CRD {name}"),
        deadline,
        Also::Nothing,
        || async { crds.get_opt(&name).await.map_err(KubeError::from) },
    )
    .await?;
    let mut crd = current.filter(|c| ready(Some(c)));
    if crd.is_none() {
        tracing::info!(crd = %name, "waiting for CRD {name} to be established");
        let watch = watch_until(crds, &name, ready, deadline);
        let mut watch = std::pin::pin!(watch);
        let mut ticker = tokio::time::interval_at(Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        loop {
            tokio::select! {
                done = &mut watch => { crd = done?; break; }
                _ = ticker.tick() => {
                    tracing::info!(crd = %name, "waiting for CRD {name} to be established, {}", humantime(started.elapsed()));
                }
            }
        }
    }

    // The API may list the kind a moment after the CRD says Established.
    let group_version = kind.api_version();
    retry(
        &format!("discovering {group_version}"),
        deadline,
        Also::NotFound,
        || async {
            let list = client
                .list_api_group_resources(&group_version)
                .await
                .map_err(KubeError::from)?;
            if list.resources.iter().any(|r| r.name == kind.plural) {
                Ok(())
            } else {
                Err(KubeError::Api(Box::new(kube::core::Status {
                    code: 404,
                    message: format!("{group_version} does not list {} yet", kind.plural),
                    ..Default::default()
                })))
            }
        },
    )
    .await?;
    if started.elapsed() > FIRST_DELAY {
        tracing::info!(crd = %name, "CRD {name} is established; continuing after {}", humantime(started.elapsed()));
    }
    Ok(Arc::new(Served::new(
        crd.as_ref().and_then(|c| served_schema(c, kind.version)),
    )))
}

/// Watches the CRD until `ready`, re-establishing the watch after errors, until the deadline.
async fn watch_until(
    crds: Api<CustomResourceDefinition>,
    name: &str,
    ready: impl Fn(Option<&CustomResourceDefinition>) -> bool + Send + Clone + 'static,
    deadline: Instant,
) -> Result<Option<CustomResourceDefinition>, KubeError> {
    let mut delay = FIRST_DELAY;
    let started = Instant::now();
    loop {
        let attempt =
            tokio::time::timeout_at(deadline, await_condition(crds.clone(), name, ready.clone())).await;
        match attempt {
            Ok(Ok(found)) => return Ok(found),
            Ok(Err(e)) => {
                tracing::debug!(crd = %name, error = %e, "watch on CRD failed; watching again");
                if Instant::now() + delay >= deadline {
                    return Err(timeout(name, started, Some(e.to_string())));
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(MAX_DELAY);
            }
            Err(_) => return Err(timeout(name, started, None)),
        }
    }
}

fn timeout(name: &str, started: Instant, last_error: Option<String>) -> KubeError {
    let mut what = format!(
        "CRD {name} did not become Established. Is Karpenter (or its CRD chart) installed in this cluster? \
         Install it, or raise the resource's timeouts.create"
    );
    if let Some(e) = last_error {
        what.push_str(&format!(" (last error: {e})"));
    }
    KubeError::Timeout {
        what,
        waited: started.elapsed(),
    }
}
