//! Acceptance-test harness: runs the real `terraform` binary against the provider built from
//! this workspace.
//!
//! - [`provider_dir`] builds the provider once per test process (`cargo build`) and returns the
//!   directory holding the binary.
//! - [`Workdir`] is a temporary Terraform working directory with its own CLI configuration
//!   (`dev_overrides` pointing at that build; never the user's `~/.terraformrc`), where a test
//!   writes `.tf` files and runs `terraform` commands.
//!
//! If `terraform` is not on PATH, every test fails with one line saying so: acceptance tests
//! are never silently skipped.

pub mod eks_standin;
pub mod karpenter_release;
pub mod kube;
pub mod moto;
pub mod moved;
pub mod processes;
pub mod roundtrip;
pub mod standin_provider;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The provider's source address, as users write it in `required_providers`.
pub const PROVIDER_SOURCE: &str = "karpenter/karpenter";
const PROVIDER_ADDRESS: &str = "registry.terraform.io/karpenter/karpenter";

/// The workspace root (the provider crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// An upstream file (or a directory of them) of `acceptance-tests/upstream-files.tsv`, kept in
/// `../shared/karpenter` beside the workspace: [`kube_testserver::upstream::path`].
pub fn upstream(relative: &str) -> PathBuf {
    kube_testserver::upstream::path(relative)
}

/// One warning of a plan: the resource address it is about, its summary and its detail.
pub type PlanWarning = (String, String, String);

/// The warnings of `terraform plan -json` (with `args` after `plan`), sorted: Terraform reports
/// them in the order resources finish planning, which varies, and its JSON view neither folds
/// similar ones nor wraps their text. Panics unless the plan succeeds.
pub fn plan_warnings(work: &Workdir, args: &[&str]) -> Vec<PlanWarning> {
    let mut command = vec!["plan", "-json", "-input=false"];
    command.extend_from_slice(args);
    let run = work.terraform(&command).ok();
    let mut out: Vec<PlanWarning> = run
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["type"] == "diagnostic" && m["diagnostic"]["severity"] == "warning")
        .map(|m| {
            let d = &m["diagnostic"];
            let text = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (text("address"), text("summary"), text("detail"))
        })
        .collect();
    out.sort();
    out
}

/// Fails the test with one clear line when terraform is missing.
pub fn terraform_binary() -> PathBuf {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("terraform"))
                .find(|p| p.is_file())
        })
    });
    match found {
        Some(p) => p.clone(),
        None => {
            panic!("terraform is not on PATH: the acceptance tests need the terraform CLI (1.11 or newer)")
        }
    }
}

/// The workspace's target directory (honours `CARGO_TARGET_DIR`).
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// Builds `binary` of `package` (the debug profile, as the test run itself) and returns its path.
///
/// A narrow build: every cargo command of the workspace compiles the dependencies with the
/// same features (`workspace-hack/Cargo.toml`), so after `cargo test --workspace --no-run` this
/// finds everything fresh, and after a one-line change under a focused `cargo test -p
/// acceptance-tests --test acceptance <area>::` it compiles the provider and nothing else.
fn cargo_build(package: &str, binary: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["build", "--quiet", "-p", package, "--bin", binary])
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building {binary} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let path = target_dir().join("debug").join(binary);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("no {binary} in {}", path.display()))
    }
}

/// Panics with the message of a failed one-time build.
fn built_or_panic(built: &Result<PathBuf, String>) -> PathBuf {
    match built {
        Ok(path) => path.clone(),
        Err(e) => panic!("{e}"),
    }
}

/// Builds the provider (once per test process) and returns the directory of the binary.
pub fn provider_dir() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    built_or_panic(BUILT.get_or_init(|| {
        let binary = cargo_build("terraform-provider-karpenter", "terraform-provider-karpenter")?;
        binary
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| "binary without a directory".to_string())
    }))
}

/// Builds the stand-in for the pre-typed providers (kubectl, kubernetes) once, and returns a
/// directory holding it as `terraform-provider-kubectl` and `terraform-provider-kubernetes`,
/// for `dev_overrides` of gavinbunney/kubectl, alekc/kubectl and hashicorp/kubernetes.
pub fn legacy_standin_dir() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    built_or_panic(BUILT.get_or_init(|| {
        let binary = cargo_build("acceptance-tests", "legacy_provider_standin")?;
        let dir = target_dir().join("legacy-provider-standin");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for name in ["terraform-provider-kubectl", "terraform-provider-kubernetes"] {
            let copy = dir.join(name);
            let _ = std::fs::remove_file(&copy);
            std::fs::copy(&binary, &copy).map_err(|e| format!("{}: {e}", copy.display()))?;
        }
        Ok(dir)
    }))
}

/// What a terraform command printed, and whether it succeeded.
#[derive(Debug)]
pub struct Run {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(out: Output) -> Self {
        Run {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Both streams, for assertions and failure messages.
    pub fn output(&self) -> String {
        format!("--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr)
    }

    /// Both streams with runs of white space folded to one space, for assertions on
    /// diagnostics that terraform wraps at its terminal width.
    pub fn text(&self) -> String {
        self.output().split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Panics with the output unless the command succeeded.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert!(self.success, "terraform failed:\n{}", self.output());
        self
    }

    /// Panics with the output unless the command failed.
    #[track_caller]
    pub fn failed(self) -> Self {
        assert!(
            !self.success,
            "terraform succeeded but was expected to fail:\n{}",
            self.output()
        );
        self
    }
}

/// A terraform command running in the background (see [`Workdir::spawn`]).
pub struct Background {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Background {
    /// The terraform process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether terraform has ended.
    pub fn finished(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits until a line terraform wrote to stderr so far satisfies `matches` (true), or
    /// terraform ends or `guard` passes first (false). For a test that must act while terraform
    /// is at a given point, however long the machine takes to get it there.
    pub fn wait_for_stderr_line(&mut self, matches: impl Fn(&str) -> bool, guard: Duration) -> bool {
        let stderr = self.stderr.clone();
        self.wait_for_line(&stderr, matches, guard)
    }

    /// [`Background::wait_for_stderr_line`] for standard output (e.g. `x: Creating...`, printed
    /// when terraform starts applying a resource).
    pub fn wait_for_stdout_line(&mut self, matches: impl Fn(&str) -> bool, guard: Duration) -> bool {
        let stdout = self.stdout.clone();
        self.wait_for_line(&stdout, matches, guard)
    }

    fn wait_for_line(&mut self, stream: &Path, matches: impl Fn(&str) -> bool, guard: Duration) -> bool {
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(stream).unwrap_or_default();
            if text.lines().any(&matches) {
                return true;
            }
            if self.finished() || started.elapsed() > guard {
                return false;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for terraform to end; kills it and panics if it is still running after `guard`
    /// (a hang guard). Returns what it printed and how long the wait took.
    pub fn wait(mut self, guard: Duration) -> (Run, Duration) {
        let started = Instant::now();
        let status = loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                break status;
            }
            if started.elapsed() > guard {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "terraform still running after {guard:?}:\n{}",
                    std::fs::read_to_string(&self.stdout).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let run = Run {
            success: status.success(),
            stdout: std::fs::read_to_string(&self.stdout).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.stderr).unwrap_or_default(),
        };
        (run, started.elapsed())
    }
}

/// A temporary Terraform working directory wired to the locally built provider.
pub struct Workdir {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Workdir {
    /// A working directory with `main.tf` holding `config` (the `required_providers` block is
    /// added unless the config has its own `terraform {}` block).
    pub fn new(config: &str) -> Self {
        Self::with_overrides(config, &[])
    }

    /// Like [`Workdir::new`], with further `dev_overrides` (provider address → directory).
    pub fn with_overrides(config: &str, overrides: &[(&str, &Path)]) -> Self {
        Self::with_provider_dir(config, &provider_dir(), overrides)
    }

    /// Like [`Workdir::with_overrides`], with the provider binary taken from `plugin_dir`
    /// (for example a release build, as the benchmarks use) instead of the debug build.
    pub fn with_provider_dir(config: &str, plugin_dir: &Path, overrides: &[(&str, &Path)]) -> Self {
        terraform_binary();
        let dir = tempfile::Builder::new()
            .prefix("tfacc-")
            .tempdir()
            .unwrap_or_else(|e| panic!("tempdir: {e}"));
        let cli_config = dir.path().join("terraformrc");
        std::fs::write(
            &cli_config,
            format!(
                "provider_installation {{\n  dev_overrides {{\n    \"{PROVIDER_ADDRESS}\" = \"{}\"\n{}  }}\n  direct {{}}\n}}\n",
                plugin_dir.display(),
                overrides
                    .iter()
                    .map(|(address, dir)| format!("    \"{address}\" = \"{}\"\n", dir.display()))
                    .collect::<String>()
            ),
        )
        .unwrap_or_else(|e| panic!("write CLI config: {e}"));
        let work = Workdir { dir, env: Vec::new() };
        work.write("main.tf", &with_required_providers(config));
        work
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes (or replaces) a file in the working directory.
    pub fn write(&self, name: &str, contents: &str) {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }

    /// Replaces `main.tf`.
    pub fn set_config(&self, config: &str) {
        self.write("main.tf", &with_required_providers(config));
    }

    /// Sets an environment variable for every later command.
    pub fn env(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// Runs `terraform <args>` here, with `-no-color` semantics and no prompts.
    pub fn terraform(&self, args: &[&str]) -> Run {
        let mut cmd = self.command(args);
        Run::from(
            cmd.output()
                .unwrap_or_else(|e| panic!("could not run terraform: {e}")),
        )
    }

    /// The `terraform <args>` command [`Workdir::terraform`] runs, not started: for tests
    /// that need the process itself (to signal it midway, or to find its plugin children).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(terraform_binary());
        cmd.current_dir(self.dir.path())
            .args(args)
            .env("TF_CLI_CONFIG_FILE", self.dir.path().join("terraformrc"))
            .env("TF_IN_AUTOMATION", "1")
            .env("TF_INPUT", "0")
            .env("CHECKPOINT_DISABLE", "1")
            .env_remove("TF_LOG")
            .env_remove("TF_LOG_PROVIDER")
            .env_remove("TF_LOG_PATH")
            // The machine's CA bundle for AWS is not the tests' (a test that trusts a bundle sets
            // it with `env`): the provider reads and checks the file in every process, which cost
            // a sixth of the CPU of an AWS test in the debug build (the system bundle, 146 PEM
            // certificates, parsed more than once per process).
            .env_remove("AWS_CA_BUNDLE");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Starts `terraform <args>` in the background, its output going to files in the working
    /// directory (a pipe nobody reads would stall terraform once its plan fills it).
    pub fn spawn(&self, args: &[&str]) -> Background {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let stdout = self.dir.path().join(format!("run-{n}.stdout"));
        let stderr = self.dir.path().join(format!("run-{n}.stderr"));
        let file =
            |p: &Path| std::fs::File::create(p).unwrap_or_else(|e| panic!("create {}: {e}", p.display()));
        let child = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(file(&stdout))
            .stderr(file(&stderr))
            .spawn()
            .unwrap_or_else(|e| panic!("could not start terraform: {e}"));
        Background {
            child,
            stdout,
            stderr,
        }
    }

    pub fn validate(&self) -> Run {
        self.terraform(&["validate", "-no-color"])
    }

    pub fn plan(&self) -> Run {
        self.terraform(&["plan", "-no-color", "-input=false"])
    }

    /// `terraform plan -detailed-exitcode`: true when the plan is empty.
    pub fn plan_is_empty(&self) -> bool {
        let run = self.terraform(&["plan", "-no-color", "-input=false", "-detailed-exitcode"]);
        let code = if run.success {
            0
        } else if run.stdout.contains("Terraform will perform") {
            2
        } else {
            1
        };
        assert_ne!(code, 1, "plan failed:\n{}", run.output());
        code == 0
    }

    pub fn apply(&self) -> Run {
        self.terraform(&["apply", "-no-color", "-input=false", "-auto-approve"])
    }

    pub fn destroy(&self) -> Run {
        self.terraform(&["destroy", "-no-color", "-input=false", "-auto-approve"])
    }

    /// `terraform output -json` parsed; panics if it fails.
    pub fn outputs(&self) -> serde_json::Value {
        let run = self.terraform(&["output", "-json"]).ok();
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("output -json: {e}\n{}", run.stdout))
    }

    /// `terraform show -json` (the state) parsed.
    pub fn state(&self) -> serde_json::Value {
        let run = self.terraform(&["show", "-json"]).ok();
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("show -json: {e}\n{}", run.stdout))
    }
}

/// The resource at `address` in a state from [`Workdir::state`] (`terraform show -json`);
/// panics naming the address when it is not there.
pub fn resource_at<'a>(state: &'a serde_json::Value, address: &str) -> &'a serde_json::Value {
    state["values"]["root_module"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["address"] == address)
        .unwrap_or_else(|| panic!("{address} not in state"))
}

fn with_required_providers(config: &str) -> String {
    if config.contains("required_providers") {
        return config.to_string();
    }
    format!(
        "terraform {{\n  required_providers {{\n    karpenter = {{\n      source = \"{PROVIDER_SOURCE}\"\n    }}\n  }}\n}}\n\n{config}"
    )
}

/// Texts of the libraries' own error messages (hyper's connector, tower, the OS) that must never
/// reach a diagnostic (#41): they name internals, not the problem or what to do.
pub const LIBRARY_TEXT: &[&str] = &[
    "ServiceError",
    "HyperError",
    "client error (",
    "tcp connect error",
    "os error",
    "dns error",
    "error trying to connect",
    "hyper::",
];

/// The first [`LIBRARY_TEXT`] that `run`'s diagnostics contain, if any. Meant for runs without
/// `TF_LOG` (log lines may quote libraries; diagnostics may not).
pub fn library_text(run: &Run) -> Option<&'static str> {
    let text = run.output();
    LIBRARY_TEXT.iter().copied().find(|t| text.contains(t))
}

/// Reads a file of this repository (examples, fixtures), relative to the workspace root.
pub fn repo_file(relative: &str) -> String {
    let path = workspace_root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The provider's version, from the repository's `Cargo.toml` (this crate has its own).
pub fn provider_version() -> String {
    repo_file("Cargo.toml")
        .lines()
        .find_map(|l| {
            l.strip_prefix("version = \"")?
                .strip_suffix('"')
                .map(str::to_string)
        })
        .expect("a version in Cargo.toml")
}
