//! The bench's quick mode end to end (debug provider, N = 1, one repetition), so the bench
//! cannot rot: every figure is produced, parses and is sane (positive, finite; counts whole).
//! It asserts nothing about speed: the figures' targets are judged in acceptance-tests/reports/performance.md.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn quick_mode_produces_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("performance.md");
    let json = dir.path().join("performance.json");
    std::fs::write(
        &md,
        "# Performance\n\nhand-written intro\n\n<!-- bench:begin (old) -->\nold\n<!-- bench:end -->\n\n## History\nkept\n",
    )
    .unwrap();
    // The debug provider the acceptance tests use, built with the test run's own selection (the
    // bench's own `cargo build --bin` would compile the dependency tree again, with other
    // features).
    let provider = acceptance_tests::provider_dir().join("terraform-provider-karpenter");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_bench"))
        .arg("--provider")
        .arg(&provider)
        .arg("--yardstick")
        .arg(env!("CARGO_BIN_EXE_terraform-provider-yardstick"))
        .arg("--cpu-wrapper")
        .arg(env!("CARGO_BIN_EXE_cpu_wrapper"))
        .args(["--quick", "--out"])
        .arg(&md)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bench --quick failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // A guard against a hang, not a speed limit.
    assert!(started.elapsed() < Duration::from_secs(600));

    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["quick"], true);
    let figures = report["figures"].as_array().unwrap();
    for n in 1..=11u64 {
        assert!(
            figures.iter().any(|f| f["figure"] == n),
            "figure {n} missing: {report:#}"
        );
    }
    for f in figures {
        let v = f["value"].as_f64().unwrap_or(f64::NAN);
        assert!(v.is_finite() && v > 0.0, "not a sane value: {f}");
        if let Some(b) = f["baseline"].as_f64() {
            assert!(b.is_finite() && b > 0.0, "not a sane baseline: {f}");
        }
        if f["unit"] == "calls" {
            assert_eq!(v.fract(), 0.0, "{f}");
        }
        assert!(
            ["pass", "miss", "not judged"].contains(&f["result"].as_str().unwrap_or("")),
            "{f}"
        );
    }
    for key in ["Commit", "Machine", "Date (UTC)"] {
        let v = report["header"][key].as_str().unwrap_or("");
        assert!(!v.is_empty() && v != "unknown", "{key}: {v:?}");
    }

    // The generated part replaced the old one; the hand-written text around it stayed.
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.starts_with("# Performance\n\nhand-written intro\n"),
        "{text}"
    );
    assert!(text.contains("## History\nkept"), "{text}");
    assert!(!text.contains("\nold\n"), "{text}");
    assert_eq!(text.matches("<!-- bench:begin").count(), 1, "{text}");
    assert!(
        text.contains("| 7 | interruption queue: AWS calls of create"),
        "{text}"
    );
    assert!(text.contains("Quick mode"), "{text}");
}
