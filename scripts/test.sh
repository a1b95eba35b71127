#!/usr/bin/env bash
# Runs every check and test of the project: formatting, clippy (warnings are errors), unit and
# property tests, protocol tests against the built plugin, the Kubernetes API test server's own
# tests, and the acceptance tests that drive the real `terraform` binary (moto is installed into
# target/ by the harness when an AWS test needs it). `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "error: '$1' is not on PATH: $2" >&2; exit 1; }
}
need cargo "install the Rust toolchain (stable)"
need terraform "the acceptance tests drive the terraform CLI (1.11 or newer)"
need python3 "the AWS acceptance tests run moto (installed automatically into target/)"

echo "== rustfmt"
cargo fmt --all -- --check
echo "== clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== tests (unit, property, protocol, test server, acceptance)"
cargo test --workspace --no-fail-fast -- --test-threads="${TEST_THREADS:-2}"
echo "== fuzz (short: every target for ${FUZZ_CI_SECONDS:-20} s from the committed corpus)"
need g++ "libFuzzer is built from C++ source by libfuzzer-sys"
scripts/fuzz.sh ci
