//! Which Karpenter installations have a kind: the release that first ships its CRD, the last one
//! that does (the legacy kinds), the feature gate it needs. Before the CRD gate waits for a kind,
//! this module checks that its CRD exists at all, the same way for every kind: a CRD that is
//! absent for [`ABSENT_CRD_WAIT`] (or until the operation's deadline, whichever comes first) is
//! not being installed, so apply fails with what the kind needs instead of waiting the whole
//! `timeouts.create` for nothing. A CRD that exists but is not `Established` yet is being
//! installed: it is left to the normal gate and its full wait.
//!
//! Why 60 seconds: Helm and `kubectl apply` create CRDs in one request, so a CRD that is being
//! installed in the same run (a `helm_release` of the CRD chart beside this resource) shows up
//! within seconds of the release starting; a minute covers a slow chart download too, and costs a
//! user with the gate off one minute instead of ten.

use std::time::Duration;

use thiserror::Error;
use tokio::time::Instant;

use crate::k8s::error::humantime;
use crate::k8s::gate::CrdGate;
use crate::k8s::{Kind, KubeError};

/// How long a missing CRD may take to appear before the kind counts as not installed.
pub const ABSENT_CRD_WAIT: Duration = Duration::from_secs(60);

/// Where a kind comes from: the Karpenter releases that ship its CRD and the feature gate that
/// turns its controller on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Availability {
    /// First Karpenter release with the CRD, e.g. `v1.7`.
    pub since: &'static str,
    /// Last Karpenter release with the CRD (the legacy kinds), e.g. `v0.32`.
    pub until: Option<&'static str>,
    /// The feature gate's name, as in `--feature-gates`/`FEATURE_GATES` (e.g. `NodeOverlay`),
    /// and the Karpenter Helm chart value that enables it.
    pub feature_gate: Option<(&'static str, &'static str)>,
    /// Who installs the CRD: Karpenter's charts, or EKS on an Auto Mode cluster.
    pub installer: Installer,
}

/// Who puts a kind's CRD into the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installer {
    /// Karpenter's CRDs (the karpenter-crd Helm chart, or the karpenter chart when first installed).
    Karpenter,
    /// EKS itself, on a cluster with Auto Mode enabled.
    EksAutoMode,
}

/// NodePool and EC2NodeClass: every Karpenter v1 release.
pub const V1: Availability = Availability {
    since: "v1.0",
    until: None,
    feature_gate: None,
    installer: Installer::Karpenter,
};

/// Provisioner and AWSNodeTemplate: Karpenter v0.32 and earlier.
pub const V1ALPHA5: Availability = Availability {
    since: "v0.5",
    until: Some("v0.32"),
    feature_gate: None,
    installer: Installer::Karpenter,
};

/// NodeOverlay: Karpenter v1.7 (its CRD first ships in v1.7.x), gate `NodeOverlay`.
pub const NODE_OVERLAY: Availability = Availability {
    since: "v1.7",
    until: None,
    feature_gate: Some(("NodeOverlay", "settings.featureGates.nodeOverlay")),
    installer: Installer::Karpenter,
};

/// CapacityBuffer: Karpenter v1.14 (its CRD first ships in v1.14.x), gate `CapacityBuffer`.
pub const CAPACITY_BUFFER: Availability = Availability {
    since: "v1.14",
    until: None,
    feature_gate: Some(("CapacityBuffer", "settings.featureGates.capacityBuffer")),
    installer: Installer::Karpenter,
};

/// EKS Auto Mode's NodeClass: any cluster with Auto Mode enabled (EKS installs the CRD; no
/// Karpenter release has it).
pub const EKS_AUTO_MODE: Availability = Availability {
    since: "EKS Auto Mode",
    until: None,
    feature_gate: None,
    installer: Installer::EksAutoMode,
};

impl Availability {
    /// "Karpenter v1.7 or later with the NodeOverlay feature gate enabled (Helm value …=true)".
    fn needs(&self) -> String {
        if self.installer == Installer::EksAutoMode {
            return "a cluster with EKS Auto Mode enabled (compute_config { enabled = true } on aws_eks_cluster)".into();
        }
        let releases = match self.until {
            Some(until) => format!("Karpenter {until} or earlier (the CRD was removed in later releases)"),
            None => format!("Karpenter {} or later", self.since),
        };
        match self.feature_gate {
            Some((gate, helm)) => {
                format!("{releases} with the {gate} feature gate enabled (Helm value {helm}=true)")
            }
            None => releases,
        }
    }
}

#[derive(Debug, Error)]
pub enum AvailabilityError {
    #[error(
        "The cluster has no {crd} CRD (looked for {waited}, and nothing created it), so it has no {kind} kind. {kind} \
         needs {needs}; {remedy}"
    )]
    NotInstalled {
        crd: String,
        kind: &'static str,
        needs: String,
        waited: String,
        remedy: &'static str,
    },
    #[error(transparent)]
    Kube(#[from] KubeError),
}

impl AvailabilityError {
    fn not_installed(kind: &Kind, availability: &Availability, waited: Duration) -> Self {
        AvailabilityError::NotInstalled {
            crd: kind.crd_name(),
            kind: kind.kind,
            needs: availability.needs(),
            waited: humantime(waited),
            remedy: match availability.installer {
                Installer::Karpenter => {
                    "its CRD comes with Karpenter's CRDs: the karpenter-crd Helm chart installs and upgrades them; the \
                     karpenter chart installs the CRDs of its release only when it is first installed, never on an \
                     upgrade. Install Karpenter, or upgrade the karpenter-crd chart to a release that has this kind \
                     (the provider's guide \"Upgrading Karpenter\" shows how), then apply again. When the CRDs are \
                     installed later in the same apply, make this resource depend on that install (depends_on = \
                     [helm_release.karpenter_crd]): the provider waits for a CRD that is being established, not for \
                     one nothing creates."
                }
                Installer::EksAutoMode => {
                    "EKS installs its CRD when Auto Mode is enabled, and no Karpenter chart has it. Enable Auto Mode on \
                     the cluster and apply again, or, on a cluster with self-managed Karpenter, use \
                     karpenter_ec2_node_class instead."
                }
            },
        }
    }
}

/// Returns once the CRD of `kind` exists (established or not), or fails with
/// [`AvailabilityError::NotInstalled`] when it is still absent after [`ABSENT_CRD_WAIT`] or at
/// `deadline`, whichever is first. Looked for once per kind and process ([`CrdGate::present`]).
pub async fn ensure_crd_exists(
    gate: &CrdGate,
    client: &kube::Client,
    kind: &Kind,
    availability: &Availability,
    deadline: Instant,
) -> Result<(), AvailabilityError> {
    match gate.present(client, kind, ABSENT_CRD_WAIT, deadline).await? {
        Ok(()) => Ok(()),
        Err(waited) => {
            tracing::info!(crd = %kind.crd_name(), "CRD {} is not installed; {} needs {}", kind.crd_name(), kind.kind, availability.needs());
            Err(AvailabilityError::not_installed(kind, availability, waited))
        }
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
        let dir = kube_testserver::upstream::path("crds/versions");
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
