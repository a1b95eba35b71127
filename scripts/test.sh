#!/usr/bin/env bash
# Runs every check and test of the project: formatting, clippy (warnings are errors), unit and
# property tests, protocol tests against the built plugin, the Kubernetes API test server's own
# tests, the acceptance tests that drive the real `terraform` binary (moto is installed into
# target/ by the harness when an AWS test needs it), and a short fuzzing run. Clippy runs inside
# the test build; the fuzz build runs beside the tests, at the lowest priority. `.ci/run` calls
# exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "error: '$1' is not on PATH: $2" >&2; exit 1; }
}
need cargo "install the Rust toolchain (stable)"
need clippy-driver "install clippy (rustup component add clippy)"
need terraform "the acceptance tests drive the terraform CLI (1.11 or newer)"
need python3 "the AWS acceptance tests run moto (installed automatically into target/)"

# Each stage says how long it took (CI logs keep the ends; the closing summary has them all).
started=$SECONDS
stage_start=$SECONDS
stages=()
stage() {
  if [[ -n "${current:-}" ]]; then
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
need g++ "libFuzzer is built from C++ source by libfuzzer-sys"

# Clippy is the compiler of this workspace's crates for the whole run (scripts/clippy-rustc.sh):
# the build stage lints every target `cargo clippy --workspace --all-targets` would (lib, bins,
# tests; the workspace has no benches or examples) with warnings as errors, and the nested
# `cargo build` of the acceptance harness inherits the same wrapper, so it finds everything fresh.
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/clippy-rustc.sh"

stage "build and clippy (every test and binary of the workspace; warnings are errors)"
cargo test --workspace --no-run --quiet

# While the tests run, the instrumented fuzz build (its own target directory) runs beside them at
# the lowest priority. The tests are not idle on two cores (terraform and the debug provider keep
# both busy), so this build still costs the test stage time; it is a second build of the
# dependency tree, and the next thing to remove. Its output is shown after the tests.
logs=target/ci-logs
mkdir -p "$logs"
(
  rc=0
  nice -n 19 scripts/fuzz.sh ci-build >"$logs/fuzz-build.log" 2>&1 || rc=$?
  echo "$rc" >"$logs/fuzz-build.rc"
) &
beside=$!
trap 'kill $beside 2>/dev/null || true; summary' EXIT

stage "tests (unit, property, protocol, test server, acceptance), with the fuzz build beside them"
tests_rc=0
cargo test --workspace --no-fail-fast -- --test-threads="${TEST_THREADS:-2}" || tests_rc=$?
wait "$beside" || true
trap summary EXIT

[[ $tests_rc == 0 ]] || { echo "tests failed (exit $tests_rc)" >&2; exit "$tests_rc"; }

stage "fuzz (short: every target for ${FUZZ_CI_SECONDS:-20} s from the committed corpus)"
cat "$logs/fuzz-build.log"
[[ "$(cat "$logs/fuzz-build.rc")" == 0 ]] || { echo "the fuzz build failed" >&2; exit 1; }
FUZZ_NO_BUILD=1 scripts/fuzz.sh ci
