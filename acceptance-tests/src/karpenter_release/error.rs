//! Why the generator could not turn a release's files into data, and its usage text (which a
//! usage error prints).

use thiserror::Error;

/// How the binary is called.
pub const USAGE: &str = "usage: karpenter_release --version <vX.Y[.Z]> [--out <data dir>]
    [--crds <CRD directory> [--crds-note <text>]]
    [--cloudformation <cloudformation.yaml>]
    [--instance-types <instance-types-vX.Y.md> --pricing <zz_generated.pricing_aws.go>
     --vpc-limits <zz_generated.vpclimits.go> [--vpc-limits-note <text>]]
    [--policy-from <vA.B> --add-action <Sid> <action> <after action> ... --note <text>]
    [--kubelet-types <k8s.io/kubelet config/v1beta1/types.go> --kubelet-types <component-base
     logs/api/v1/types.go> --kubelet-types <component-base tracing/api/v1/types.go>
     --kubelet-version <k8s.io/kubelet version, vX.Y.Z>]";

/// Why a release's files could not be turned into data.
#[derive(Debug, Error)]
pub enum ReleaseError {
    /// An input file is not what the generator expects (it names the file and what is wrong).
    #[error("{0}")]
    Input(String),
    /// The command line asks for something the generator cannot do.
    #[error("{0}\n\n{USAGE}")]
    Usage(String),
    /// What the generator made is not what the provider's build reads (a bug here or there).
    #[error("the generated {0}")]
    Unbuildable(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}
