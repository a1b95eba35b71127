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

# Each stage says how long it took (CI logs keep the ends; the closing summary has them all).
started=$SECONDS
stage_start=$SECONDS
stages=()
stage() {
  if [[ ${#stages[@]} -gt 0 || -n "${current:-}" ]]; then
    stages+=("${current}: $((SECONDS - stage_start)) s")
  fi
  current="$1"
  stage_start=$SECONDS
  echo "== $1"
}
summary() {
  stages+=("${current}: $((SECONDS - stage_start)) s")
  echo "== stage times: ${stages[*]}; total $((SECONDS - started)) s"
}
trap summary EXIT

stage "rustfmt"
cargo fmt --all -- --check
stage "clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
stage "tests (unit, property, protocol, test server, acceptance)"
cargo test --workspace --no-fail-fast -- --test-threads="${TEST_THREADS:-2}"
stage "fuzz (short: every target for ${FUZZ_CI_SECONDS:-20} s from the committed corpus)"
need g++ "libFuzzer is built from C++ source by libfuzzer-sys"
scripts/fuzz.sh ci
