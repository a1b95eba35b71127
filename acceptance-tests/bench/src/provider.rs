//! The provider under measure: the binary (built here, or given with `--provider`) and the
//! directory holding it under the name `dev_overrides` looks for.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::BenchError;

/// Builds the provider (`--release` unless quick) and returns the binary.
pub fn build_provider(quick: bool) -> Result<PathBuf, BenchError> {
    let root = acceptance_tests::workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args(["build", "--quiet", "--bin", "terraform-provider-karpenter"]);
    if !quick {
        cmd.arg("--release");
    }
    eprintln!(
        "bench: building the provider ({})",
        if quick { "debug" } else { "release" }
    );
    let out = cmd.output().map_err(BenchError::io("running cargo"))?;
    if !out.status.success() {
        return Err(BenchError::Build(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let bin = target
        .join(if quick { "debug" } else { "release" })
        .join("terraform-provider-karpenter");
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(BenchError::Build(format!("no binary at {}", bin.display())))
    }
}

/// A directory holding the provider as `terraform-provider-karpenter` (what `dev_overrides`
/// names): the binary's own directory when it has that name, else a directory with a link.
pub struct ProviderDir {
    pub binary: PathBuf,
    pub dir: PathBuf,
    _link_dir: Option<tempfile::TempDir>,
}

impl ProviderDir {
    pub fn new(binary: &Path) -> Result<Self, BenchError> {
        let binary = binary
            .canonicalize()
            .map_err(BenchError::io(format!("provider binary {}", binary.display())))?;
        if binary
            .file_name()
            .is_some_and(|n| n == "terraform-provider-karpenter")
            && let Some(dir) = binary.parent()
        {
            return Ok(ProviderDir {
                dir: dir.to_path_buf(),
                binary: binary.clone(),
                _link_dir: None,
            });
        }
        let tmp = tempfile::Builder::new()
            .prefix("bench-provider-")
            .tempdir()
            .map_err(BenchError::io("temp dir"))?;
        std::os::unix::fs::symlink(&binary, tmp.path().join("terraform-provider-karpenter"))
            .map_err(BenchError::io("linking the provider"))?;
        Ok(ProviderDir {
            dir: tmp.path().to_path_buf(),
            binary,
            _link_dir: Some(tmp),
        })
    }
}
