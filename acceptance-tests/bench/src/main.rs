//! `bench`: measures the provider against Terraform's own floor (issue 9) and writes the
//! figures to `acceptance-tests/reports/performance.md`.
//!
//! ```text
//! cargo run --release -p bench -- [--quick] [--reps N] [--out acceptance-tests/reports/performance.md] [--json FILE]
//!                                 [--provider PATH] [--sizes 1,10,100] [--handshakes N] [--figures 1,5,8]
//!                                 [--yardstick PATH --cpu-wrapper PATH]
//! ```
//!
//! Every timed figure is measured beside its baseline in the same run, the two interleaved
//! (their order alternating between repetitions), and reported as median and min–max. The
//! provider is the release build (`cargo build --release`, the shipped profile) unless
//! `--quick` (debug build, N = 1, one repetition: the CI smoke mode, whose figures say only
//! that the bench works) or `--provider` says otherwise. `--figures` runs only the figures named
//! (a before/after comparison of a few figures); such a partial run prints its table and never
//! rewrites the report. Figure 11 also builds (unless `--yardstick` and `--cpu-wrapper` name
//! them) this package's two other binaries: the yardstick provider and the CPU wrapper.

mod configs;
mod drift;
mod figures;
mod handshake;
mod instance_types;
mod kubelet_cel;
mod queue;
mod report;
mod stats;
mod yardsticks;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Everything that stops a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("usage: {0}\n{USAGE}")]
    Usage(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("building the provider failed:\n{0}")]
    Build(String),
    #[error("terraform {what} failed:\n{output}")]
    Terraform { what: String, output: String },
    #[error("{0}")]
    Measure(String),
    #[error("AWS SDK baseline: {0}")]
    Aws(String),
}

impl BenchError {
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
        let what = what.into();
        move |source| BenchError::Io { what, source }
    }
}

const USAGE: &str = "bench [--quick] [--reps N] [--out FILE.md] [--json FILE.json] [--provider PATH] \
                     [--sizes 1,10,100] [--handshakes N] [--figures 1,5,8] [--yardstick PATH --cpu-wrapper PATH]";

/// Every figure the bench has.
pub const ALL_FIGURES: &[u8] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    pub quick: bool,
    pub reps: usize,
    pub sizes: Vec<usize>,
    pub handshakes: usize,
    pub out: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub provider: Option<PathBuf>,
    /// Figure 11's yardstick provider and CPU wrapper, instead of building them.
    pub yardstick: Option<PathBuf>,
    pub cpu_wrapper: Option<PathBuf>,
    /// The figures to run (figures 2 and 4 come from the same applies).
    pub figures: Vec<u8>,
}

impl Options {
    /// Whether figure `n` is run.
    pub fn wants(&self, n: u8) -> bool {
        self.figures.contains(&n)
    }
}

fn parse_args(args: &[String]) -> Result<Options, BenchError> {
    let mut o = Options {
        quick: false,
        reps: 5,
        sizes: vec![1, 10, 100],
        handshakes: 50,
        out: None,
        json: None,
        provider: None,
        yardstick: None,
        cpu_wrapper: None,
        figures: ALL_FIGURES.to_vec(),
    };
    let mut reps = None;
    let mut sizes = None;
    let mut handshakes = None;
    let mut it = args.iter();
    let number = |v: Option<&String>, flag: &str| -> Result<usize, BenchError> {
        v.and_then(|v| v.parse::<usize>().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| BenchError::Usage(format!("{flag} needs a positive number")))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--reps" => reps = Some(number(it.next(), "--reps")?),
            "--handshakes" => handshakes = Some(number(it.next(), "--handshakes")?),
            "--out" => o.out = it.next().map(PathBuf::from),
            "--json" => o.json = it.next().map(PathBuf::from),
            "--provider" => o.provider = it.next().map(PathBuf::from),
            "--yardstick" => o.yardstick = it.next().map(PathBuf::from),
            "--cpu-wrapper" => o.cpu_wrapper = it.next().map(PathBuf::from),
            "--sizes" => {
                let list = it
                    .next()
                    .ok_or_else(|| BenchError::Usage("--sizes needs a list such as 1,10,100".into()))?;
                let parsed: Result<Vec<usize>, _> =
                    list.split(',').map(|s| s.trim().parse::<usize>()).collect();
                match parsed {
                    Ok(v) if !v.is_empty() && v.iter().all(|n| *n > 0) => sizes = Some(v),
                    _ => {
                        return Err(BenchError::Usage(format!(
                            "--sizes {list}: positive numbers, comma-separated"
                        )));
                    }
                }
            }
            "--figures" => {
                let list = it
                    .next()
                    .ok_or_else(|| BenchError::Usage("--figures needs a list such as 1,5,8".into()))?;
                let parsed: Result<Vec<u8>, _> = list.split(',').map(|s| s.trim().parse::<u8>()).collect();
                match parsed {
                    Ok(v) if !v.is_empty() && v.iter().all(|n| ALL_FIGURES.contains(n)) => o.figures = v,
                    _ => {
                        return Err(BenchError::Usage(format!(
                            "--figures {list}: figure numbers 1 to 11, comma-separated"
                        )));
                    }
                }
            }
            "-h" | "--help" => return Err(BenchError::Usage("help".into())),
            other => return Err(BenchError::Usage(format!("unknown argument {other}"))),
        }
    }
    if o.out.is_some() && o.figures != ALL_FIGURES {
        return Err(BenchError::Usage(
            "--figures makes a partial run, which does not rewrite the report: drop --out".into(),
        ));
    }
    if o.quick {
        o.reps = 1;
        o.sizes = vec![1];
        o.handshakes = 3;
    }
    o.reps = reps.unwrap_or(o.reps);
    o.sizes = sizes.unwrap_or(o.sizes);
    o.handshakes = handshakes.unwrap_or(o.handshakes);
    Ok(o)
}

/// Builds the provider (`--release` unless quick) and returns the binary.
fn build_provider(quick: bool) -> Result<PathBuf, BenchError> {
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
    fn new(binary: &Path) -> Result<Self, BenchError> {
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

fn run() -> Result<(), BenchError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = parse_args(&args)?;
    let binary = match &options.provider {
        Some(p) => p.clone(),
        None => build_provider(options.quick)?,
    };
    let provider = ProviderDir::new(&binary)?;
    eprintln!(
        "bench: provider {} ; {} repetition(s), N = {:?}",
        provider.binary.display(),
        options.reps,
        options.sizes
    );
    let results = figures::run_all(&options, &provider)?;
    let md = report::markdown(&options, &provider, &results);
    match &options.out {
        Some(path) => report::write_into(path, &md)?,
        None => println!("{md}"),
    }
    if let Some(path) = &options.json {
        let text = serde_json::to_string_pretty(&report::json(&options, &provider, &results))
            .map_err(|e| BenchError::Measure(format!("JSON: {e}")))?;
        std::fs::write(path, text).map_err(BenchError::io(format!("writing {}", path.display())))?;
    }
    eprintln!("{}", report::console_summary(&options, &results));
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn quick_mode_shrinks_everything_but_explicit_flags_win() {
        let o = parse_args(&args(&["--quick"])).unwrap();
        assert_eq!((o.reps, o.sizes.clone(), o.handshakes), (1, vec![1], 3));
        let o = parse_args(&args(&["--quick", "--reps", "2", "--sizes", "1,5"])).unwrap();
        assert_eq!((o.reps, o.sizes), (2, vec![1, 5]));
        let o = parse_args(&args(&[])).unwrap();
        assert_eq!((o.reps, o.sizes), (5, vec![1, 10, 100]));
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        for bad in [
            &["--reps", "0"][..],
            &["--sizes", "1,x"],
            &["--what"],
            &["--figures", "12"],
            &["--figures", "1", "--out", "x.md"],
        ] {
            assert!(
                matches!(parse_args(&args(bad)), Err(BenchError::Usage(_))),
                "{bad:?}"
            );
        }
    }
}
