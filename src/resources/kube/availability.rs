//! Kinds that only some Karpenter installations have (newer releases, behind a feature gate).
//! Before the CRD gate waits for such a kind, this module checks that its CRD exists at all:
//! a CRD that is absent for [`ABSENT_CRD_WAIT`] (or until the operation's deadline, whichever
//! comes first) will not come by itself, so apply fails with the Karpenter version and the
//! feature gate the kind needs instead of waiting the whole `timeouts.create` for nothing. A CRD
//! that exists but is not `Established` yet is left to the normal gate and its full wait.
//!
//! Why 60 seconds: Helm and `kubectl apply` create CRDs in one request, so a CRD that is being
//! installed in the same run (a `helm_release` of the CRD chart beside this resource) shows up
//! within seconds of the release starting; a minute covers a slow chart download too, and costs a
//! user with the gate off one minute instead of ten.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use thiserror::Error;
use tokio::time::Instant;

use crate::k8s::error::humantime;
use crate::k8s::retry::{Also, retry};
use crate::k8s::{Kind, KubeError};

/// How long a missing CRD may take to appear before the kind counts as not installed.
pub const ABSENT_CRD_WAIT: Duration = Duration::from_secs(60);
/// How often the CRD is looked for while it is missing.
const POLL_EVERY: Duration = Duration::from_secs(2);

/// Where a kind comes from: the first Karpenter release that ships its CRD and the feature gate
/// that turns its controller on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Availability {
    /// First Karpenter release with the CRD, e.g. `v1.7`.
    pub since: &'static str,
    /// The feature gate's name, as in `--feature-gates`/`FEATURE_GATES` (e.g. `NodeOverlay`).
    pub feature_gate: &'static str,
    /// The Karpenter Helm chart value that enables the gate.
    pub helm_value: &'static str,
}

/// NodeOverlay: Karpenter v1.7 (its CRD first ships in v1.7.x), gate `NodeOverlay`.
pub const NODE_OVERLAY: Availability = Availability {
    since: "v1.7",
    feature_gate: "NodeOverlay",
    helm_value: "settings.featureGates.nodeOverlay",
};

/// CapacityBuffer: Karpenter v1.14 (its CRD first ships in v1.14.x), gate `CapacityBuffer`.
pub const CAPACITY_BUFFER: Availability = Availability {
    since: "v1.14",
    feature_gate: "CapacityBuffer",
    helm_value: "settings.featureGates.capacityBuffer",
};

#[derive(Debug, Error)]
pub enum AvailabilityError {
    #[error(
        "The cluster has no {crd} CRD (looked for {waited}), so it has no {kind} kind. {kind} needs Karpenter {since} or later with the {gate} feature gate enabled (Helm value {helm}=true; the CRD comes with the Karpenter CRDs of {since} and later). Upgrade Karpenter or enable the gate, then apply again; or remove this resource."
    )]
    NotInstalled {
        crd: String,
        kind: &'static str,
        since: &'static str,
        gate: &'static str,
        helm: &'static str,
        waited: String,
    },
    #[error(transparent)]
    Kube(#[from] KubeError),
}

impl AvailabilityError {
    fn not_installed(kind: &Kind, availability: &Availability, waited: Duration) -> Self {
        AvailabilityError::NotInstalled {
            crd: kind.crd_name(),
            kind: kind.kind,
            since: availability.since,
            gate: availability.feature_gate,
            helm: availability.helm_value,
            waited: humantime(waited),
        }
    }
}

/// Returns once the CRD of `kind` exists (established or not), or fails with
/// [`AvailabilityError::NotInstalled`] when it is still absent after [`ABSENT_CRD_WAIT`] or at
/// `deadline`, whichever is first.
pub async fn ensure_crd_exists(
    client: &kube::Client,
    kind: &Kind,
    availability: &Availability,
    deadline: Instant,
) -> Result<(), AvailabilityError> {
    let name = kind.crd_name();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let started = Instant::now();
    let give_up = (started + ABSENT_CRD_WAIT).min(deadline);
    loop {
        let found = retry(
            &format!("reading CRD {name}"),
            deadline,
            Also::Nothing,
            || async { crds.get_opt(&name).await.map_err(KubeError::from) },
        )
        .await?;
        if found.is_some() {
            return Ok(());
        }
        let now = Instant::now();
        if now + POLL_EVERY >= give_up {
            tracing::info!(crd = %name, "CRD {name} is not installed; {} needs Karpenter {} with the {} feature gate", kind.kind, availability.since, availability.feature_gate);
            return Err(AvailabilityError::not_installed(
                kind,
                availability,
                now - started,
            ));
        }
        if now == started {
            tracing::info!(crd = %name, "CRD {name} does not exist yet; looking again for up to {}", humantime(give_up - now));
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::kinds;

    #[test]
    fn not_installed_names_version_gate_and_crd() {
        let e =
            AvailabilityError::not_installed(&kinds::NODE_OVERLAY, &NODE_OVERLAY, Duration::from_secs(60));
        let text = e.to_string();
        for part in [
            "nodeoverlays.karpenter.sh",
            "Karpenter v1.7 or later",
            "NodeOverlay feature gate",
            "settings.featureGates.nodeOverlay=true",
            "1m",
        ] {
            assert!(text.contains(part), "{part:?} missing from {text}");
        }
    }

    /// The release facts agree with the CRD copies per release: the first release directory
    /// that has the CRD is the one `since` names.
    #[test]
    fn since_matches_the_first_release_with_the_crd() {
        let dir = format!("{}/../shared/karpenter/crds/versions", env!("CARGO_MANIFEST_DIR"));
        for (file, availability) in [
            ("karpenter.sh_nodeoverlays.yaml", NODE_OVERLAY),
            ("autoscaling.x-k8s.io_capacitybuffers.yaml", CAPACITY_BUFFER),
        ] {
            let mut with_crd: Vec<(u64, u64)> = std::fs::read_dir(&dir)
                .expect("versions dir")
                .filter_map(Result::ok)
                .filter(|e| e.path().join(file).exists())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    let mut parts = name.trim_start_matches('v').split('.');
                    let major = parts.next()?.parse().ok()?;
                    let minor = parts.next()?.parse().ok()?;
                    Some((major, minor))
                })
                .collect();
            with_crd.sort();
            let first = with_crd.first().expect("some release has the CRD");
            assert_eq!(format!("v{}.{}", first.0, first.1), availability.since, "{file}");
        }
    }
}
