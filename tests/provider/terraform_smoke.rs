//! Smoke test with the real Go client: the `terraform` CLI (go-plugin, grpc-go, AutoMTLS)
//! launches the built provider through a `dev_overrides` CLI configuration and runs
//! `validate` and `plan`. Needs `terraform` on PATH; fails with one clear line otherwise.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_terraform-provider-karpenter");
const HANG_GUARD: Duration = Duration::from_secs(120);

fn terraform_on_path() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("terraform"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| panic!("`terraform` is not on PATH: install Terraform (>= 1.11) to run this test"))
}

/// A scratch Terraform working directory that loads our provider from the build directory.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = Path::new(BIN).parent().unwrap();
    let cli_config = format!(
        "provider_installation {{\n  dev_overrides {{\n    \"{}\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
        terraform_provider_karpenter::PROVIDER_ADDRESS,
        bin_dir.display()
    );
    std::fs::write(dir.path().join("cli.tfrc"), cli_config).unwrap();
    std::fs::write(
        dir.path().join("main.tf"),
        "terraform {\n  required_providers {\n    karpenter = { source = \"karpenter/karpenter\" }\n  }\n}\n\nprovider \"karpenter\" {}\n",
    )
    .unwrap();
    dir
}

/// Runs terraform in `dir` with only the variables we choose for logging and config.
fn terraform(dir: &Path, args: &[&str], extra_env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(terraform_on_path());
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in [
        "TF_LOG",
        "TF_LOG_PROVIDER",
        "TF_LOG_CORE",
        "TF_LOG_PATH",
        "TF_REATTACH_PROVIDERS",
        "TF_DISABLE_PLUGIN_TLS",
        "TF_CLI_ARGS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("TF_CLI_CONFIG_FILE", dir.join("cli.tfrc"))
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + HANG_GUARD;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("terraform {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn terraform_validate_and_plan_with_the_built_provider() {
    let _ = terraform_on_path();
    let ws = workspace();
    let dir = ws.path();

    let validate = terraform(dir, &["validate", "-no-color"], &[]);
    assert!(
        validate.status.success(),
        "terraform validate failed\nstdout:\n{}\nstderr:\n{}",
        text(&validate.stdout),
        text(&validate.stderr)
    );
    assert!(text(&validate.stdout).contains("configuration is valid"));

    let plan = terraform(dir, &["plan", "-no-color", "-input=false"], &[]);
    assert!(
        plan.status.success(),
        "terraform plan failed\nstdout:\n{}\nstderr:\n{}",
        text(&plan.stdout),
        text(&plan.stderr)
    );
    assert!(
        text(&plan.stdout).contains("No changes"),
        "{}",
        text(&plan.stdout)
    );

    // Our hclog lines reach Terraform's log, re-logged under the provider's logger.
    let logged = terraform(
        dir,
        &["plan", "-no-color", "-input=false"],
        &[("TF_LOG_PROVIDER", "debug")],
    );
    assert!(logged.status.success(), "{}", text(&logged.stderr));
    let log = text(&logged.stderr);
    let ours = log
        .lines()
        .find(|l| {
            l.contains("provider.terraform-provider-karpenter") && l.contains("provider plugin serving")
        })
        .unwrap_or_else(|| panic!("no log line from the plugin in:\n{log}"));
    // Parsed as hclog JSON (not the raw-line fallback): level and module were understood.
    assert!(ours.contains("[INFO]"), "{ours}");
    assert!(ours.contains("@module=karpenter"), "{ours}");
    assert!(
        ours.contains("mtls=true"),
        "Terraform should use AutoMTLS: {ours}"
    );

    // With AutoMTLS turned off on Terraform's side, the plugin serves plaintext.
    let plain = terraform(
        dir,
        &["plan", "-no-color", "-input=false"],
        &[("TF_DISABLE_PLUGIN_TLS", "1"), ("TF_LOG_PROVIDER", "info")],
    );
    let log = text(&plain.stderr);
    assert!(plain.status.success(), "{log}");
    assert!(log.contains("mtls=false"), "{log}");
}

#[test]
fn terraform_attaches_to_a_debug_mode_provider() {
    let _ = terraform_on_path();
    let ws = workspace();
    let dir = ws.path();
    // No dev_overrides: the provider is found only through TF_REATTACH_PROVIDERS.
    std::fs::write(dir.join("cli.tfrc"), "").unwrap();

    let mut provider = Command::new(BIN)
        .arg("--debug")
        .env_remove("TF_PLUGIN_MAGIC_COOKIE")
        .env_remove("PLUGIN_CLIENT_CERT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = provider.stdout.take().unwrap();
    let reattach = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| {
            l.trim()
                .strip_prefix("TF_REATTACH_PROVIDERS=")
                .map(|v| v.trim_matches('\'').to_owned())
        });
    let Some(reattach) = reattach else {
        let _ = provider.kill();
        panic!("the debug provider printed no TF_REATTACH_PROVIDERS line");
    };

    for args in [
        &["validate", "-no-color"][..],
        &["plan", "-no-color", "-input=false"][..],
    ] {
        let out = terraform(dir, args, &[("TF_REATTACH_PROVIDERS", &reattach)]);
        if !out.status.success() {
            let _ = provider.kill();
            panic!(
                "terraform {args:?} against the debug provider failed\nstdout:\n{}\nstderr:\n{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
    }
    // Test=true: Terraform left the provider running; Ctrl-C stops it cleanly.
    assert!(
        provider.try_wait().unwrap().is_none(),
        "Terraform stopped the debug provider"
    );
    let sent = Command::new("kill")
        .args(["-INT", &provider.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + HANG_GUARD;
    let status = loop {
        if let Some(status) = provider.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = provider.kill();
            panic!("debug provider ignored Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}
