//! The generator behind `scripts/karpenter-release.sh`: takes a Karpenter release's files and
//! writes the facts the provider derives from them into `data/karpenter/` (see its README),
//! which the provider's build and tests read. Nothing of the files' text is kept but the facts
//! (names, numbers, actions, ARN patterns); no upstream file is ever copied into the repository.
//!
//! - [`instance_types`]: the instance-type reference, price table and ENI limits →
//!   `instance-types.tsv` (the newest release's; the offline instance-type data);
//! - [`cloudformation`]: the getting-started `cloudformation.yaml` →
//!   `controller-policy/<minor>.tsv` (every minor's; `karpenter_version` of the controller
//!   role and policy);
//! - [`crds`]: the CRD directory → `crds/<minor>.tsv` (every minor's; the CRD coverage test),
//!   and [`served`]: those tables → CRDs again (the quick-start's local environment);
//! - [`kubelet_fields`]: the Go types of the upstream `KubeletConfiguration` (read by
//!   [`go_types`]) → `kubelet-fields.tsv` (the kubelet fields of Karpenter v1.15's open
//!   `spec.kubelet`), keeping the committed table's own words.
//!
//! The `karpenter_release` binary is the command line; [`Args`] says what it takes.

pub mod cloudformation;
pub mod crds;
mod error;
pub mod go_types;
pub mod instance_types;
pub mod kubelet_fields;
mod provider_build;
pub mod served;

use std::path::{Path, PathBuf};

use cloudformation::AddedAction;
pub use error::{ReleaseError, USAGE};
use instance_types::Sources;

/// What to generate, from which files.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Args {
    /// The release's minor, `v1.15` (a patch, `v1.15.1`, names its minor).
    pub version: String,
    /// The data directory (default: the repository's `data/karpenter`).
    pub out: Option<PathBuf>,
    pub crds: Option<PathBuf>,
    pub crds_note: Option<String>,
    pub cloudformation: Option<PathBuf>,
    pub instance_types: Option<PathBuf>,
    pub pricing: Option<PathBuf>,
    pub vpc_limits: Option<PathBuf>,
    /// Where the VPC limits file came from, when not the release's own (one more header line).
    pub vpc_limits_note: Option<String>,
    /// Derive the policy table from an earlier minor's, with `added`, when the release's
    /// template is not at hand.
    pub policy_from: Option<String>,
    pub added: Vec<AddedAction>,
    pub note: Option<String>,
    /// The Go files of the kubelet's configuration types (k8s.io/kubelet/config/v1beta1's
    /// `types.go`, and component-base's `logs/api/v1/types.go` and `tracing/api/v1/types.go`).
    pub kubelet_types: Vec<PathBuf>,
    /// The k8s.io/kubelet version those files are of, `v0.36.3`.
    pub kubelet_version: Option<String>,
}

/// `v1.15`, `1.15`, `v1.15.1` → `v1.15`.
pub fn minor(version: &str) -> Result<String, ReleaseError> {
    let digits = version.strip_prefix('v').unwrap_or(version);
    let parts: Vec<&str> = digits.split('.').collect();
    let number = |p: &&str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    if !(2..=3).contains(&parts.len()) || !parts.iter().all(number) {
        return Err(ReleaseError::Usage(format!(
            "{version:?} is not a Karpenter version such as v1.15, 1.15 or v1.15.1"
        )));
    }
    Ok(format!("v{}.{}", parts[0], parts[1]))
}

impl Args {
    /// Reads the command line (without the program name).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, ReleaseError> {
        let mut out = Args::default();
        let mut args = args.into_iter();
        let usage = |m: String| ReleaseError::Usage(m);
        while let Some(flag) = args.next() {
            let mut value = |name: &str| args.next().ok_or_else(|| usage(format!("{name} needs a value")));
            match flag.as_str() {
                "--version" => out.version = minor(&value("--version")?)?,
                "--out" => out.out = Some(value("--out")?.into()),
                "--crds" => out.crds = Some(value("--crds")?.into()),
                "--crds-note" => out.crds_note = Some(value("--crds-note")?),
                "--cloudformation" => out.cloudformation = Some(value("--cloudformation")?.into()),
                "--instance-types" => out.instance_types = Some(value("--instance-types")?.into()),
                "--pricing" => out.pricing = Some(value("--pricing")?.into()),
                "--vpc-limits" => out.vpc_limits = Some(value("--vpc-limits")?.into()),
                "--vpc-limits-note" => out.vpc_limits_note = Some(value("--vpc-limits-note")?),
                "--policy-from" => out.policy_from = Some(minor(&value("--policy-from")?)?),
                "--note" => out.note = Some(value("--note")?),
                "--kubelet-types" => out.kubelet_types.push(value("--kubelet-types")?.into()),
                "--kubelet-version" => out.kubelet_version = Some(value("--kubelet-version")?),
                "--add-action" => {
                    let sid = value("--add-action")?;
                    let action = value("--add-action")?;
                    let after = value("--add-action")?;
                    out.added.push(AddedAction { sid, action, after });
                }
                "-h" | "--help" => return Err(usage("".into())),
                other => return Err(usage(format!("unknown argument {other:?}"))),
            }
        }
        if out.version.is_empty() {
            return Err(usage("--version is required".into()));
        }
        if out.instance_types.is_some() != out.pricing.is_some()
            || (out.instance_types.is_some() && out.vpc_limits.is_none())
        {
            return Err(usage(
                "--instance-types, --pricing and --vpc-limits go together: the table holds the release's types, \
                 their prices and their ENI limits"
                    .into(),
            ));
        }
        if out.vpc_limits_note.is_some() && out.vpc_limits.is_none() {
            return Err(usage(
                "--vpc-limits-note says where --vpc-limits came from; give both".into(),
            ));
        }
        if out.policy_from.is_some() && out.cloudformation.is_some() {
            return Err(usage("--policy-from is for a release whose cloudformation.yaml is not at hand; give one or the other".into()));
        }
        if out.kubelet_types.is_empty() == out.kubelet_version.is_some() {
            return Err(usage(
                "--kubelet-types and --kubelet-version go together: the table's header names the k8s.io/kubelet \
                 version its fields are of"
                    .into(),
            ));
        }
        if out.policy_from.is_some() != out.note.is_some()
            || (!out.added.is_empty() && out.policy_from.is_none())
        {
            return Err(usage("--policy-from, --add-action and --note go together: the note says where the change is documented".into()));
        }
        Ok(out)
    }
}

/// The kubelet-fields table, in the data directory.
pub const KUBELET_FIELDS: &str = "kubelet-fields.tsv";

/// The repository's data directory.
pub fn data_dir() -> PathBuf {
    crate::workspace_root().join("data/karpenter")
}

fn read(path: &Path) -> Result<String, ReleaseError> {
    std::fs::read_to_string(path).map_err(|source| ReleaseError::Io {
        path: path.display().to_string(),
        source,
    })
}

fn write(path: &Path, text: &str) -> Result<(), ReleaseError> {
    let io = |source| ReleaseError::Io {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(path, text).map_err(io)
}

fn within(path: &Path, e: ReleaseError) -> ReleaseError {
    match e {
        ReleaseError::Input(m) => ReleaseError::Input(format!("{}: {m}", path.display())),
        other => other,
    }
}

/// The instance-type table's text from the three files; `vpc_note` says where the VPC limits
/// came from when not from the release itself.
pub fn instance_type_table(
    version: &str,
    md: &Path,
    pricing: &Path,
    vpc: &Path,
    vpc_note: Option<&str>,
) -> Result<String, ReleaseError> {
    let types = instance_types::parse_reference(&read(md)?).map_err(|e| within(md, e))?;
    let (prices, prices_at) =
        instance_types::parse_prices(&read(pricing)?).map_err(|e| within(pricing, e))?;
    let (limits, limits_at) = instance_types::parse_vpc_limits(&read(vpc)?).map_err(|e| within(vpc, e))?;
    Ok(instance_types::render(&Sources {
        version,
        types: &types,
        prices: &prices,
        prices_generated_at: &prices_at,
        vpc_limits: Some((&limits, &limits_at)),
        vpc_limits_note: vpc_note,
    }))
}

/// Writes every table `args` has the files for; returns the files written.
pub fn run(args: &Args) -> Result<Vec<PathBuf>, ReleaseError> {
    let out = args.out.clone().unwrap_or_else(data_dir);
    let version = args.version.as_str();
    let mut written = Vec::new();
    if let Some(dir) = &args.crds {
        let properties = crds::inventory(dir)?;
        let path = out.join("crds").join(format!("{version}.tsv"));
        write(
            &path,
            &crds::render(version, &properties, args.crds_note.as_deref()),
        )?;
        written.push(path);
    }
    let policy = out.join("controller-policy").join(format!("{version}.tsv"));
    let unbuildable = |e: &dyn std::fmt::Display| ReleaseError::Unbuildable(e.to_string());
    if let Some(file) = &args.cloudformation {
        let policies = cloudformation::parse(&read(file)?).map_err(|e| within(file, e))?;
        let text = cloudformation::render(version, &policies);
        provider_build::check_controller_policy(version, &text).map_err(|e| unbuildable(&e))?;
        write(&policy, &text)?;
        written.push(policy.clone());
    }
    if let (Some(from), Some(note)) = (&args.policy_from, &args.note) {
        let from_path = out.join("controller-policy").join(format!("{from}.tsv"));
        let text = cloudformation::derive(version, from, &read(&from_path)?, &args.added, note)?;
        provider_build::check_controller_policy(version, &text).map_err(|e| unbuildable(&e))?;
        write(&policy, &text)?;
        written.push(policy);
    }
    if let (Some(md), Some(pricing), Some(vpc)) = (&args.instance_types, &args.pricing, &args.vpc_limits) {
        let path = out.join("instance-types.tsv");
        let text = instance_type_table(version, md, pricing, vpc, args.vpc_limits_note.as_deref())?;
        provider_build::check_instance_types(&text).map_err(|e| unbuildable(&e))?;
        write(&path, &text)?;
        written.push(path);
    }
    if let Some(kubelet_version) = &args.kubelet_version {
        let path = out.join(KUBELET_FIELDS);
        let committed = if path.exists() {
            read(&path)?
        } else {
            read(&data_dir().join(KUBELET_FIELDS))?
        };
        let go_files = args
            .kubelet_types
            .iter()
            .map(|p| Ok((p.display().to_string(), read(p)?)))
            .collect::<Result<Vec<_>, ReleaseError>>()?;
        let text = kubelet_fields::table(version, kubelet_version, &go_files, &committed)?;
        write(&path, &text)?;
        written.push(path);
    }
    if written.is_empty() {
        return Err(ReleaseError::Usage(
            "no input files given: nothing to generate".into(),
        ));
    }
    Ok(written)
}

#[cfg(test)]
mod tests;
