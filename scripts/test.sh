#!/usr/bin/env bash
# Runs every check and test of the project: formatting, clippy (warnings are errors), unit and
# property tests, protocol tests against the built plugin, the Kubernetes API test server's own
# tests, the acceptance tests that drive the real `terraform` binary (moto is installed into
# target/ by the harness when an AWS test needs it), and a short fuzzing run. Clippy runs inside
# the test build; the fuzz build follows it in the same target directory. `.ci/run` calls
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

# Each stage says how long it took, in seconds of wall time and of CPU (user + system of every
# process the stage waited for, from bash's `times`: the figure a 2-core machine's minutes hinge
# on). CI logs keep the ends; the closing summary has them all.
cpu_file=$(mktemp)
cpu_now() {
  # `times` in this shell, not in a command substitution's subshell (whose children are not ours)
  times >"$cpu_file"
  cpu=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); sub("s", "", t[2]); s += t[1] * 60 + t[2] } printf "%d", s }' "$cpu_file")
}
started=$SECONDS
stage_start=$SECONDS
cpu_now
stage_cpu=$cpu
stages=()
stage_done() {
  cpu_now
  stages+=("${current}: $((SECONDS - stage_start)) s, $((cpu - stage_cpu)) CPU-s")
}
stage() {
  if [[ -n "${current:-}" ]]; then
    stage_done
  fi
  current="$1"
  stage_start=$SECONDS
  stage_cpu=$cpu
  echo "== $1"
}
# A stage that runs work in the background stops it when the script ends early (a failed step
# under `set -e`), so nothing of this run outlives it.
stop_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do stop_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
summary() {
  local job
  for job in $(jobs -pr); do stop_tree "$job"; done
  stage_done
  rm -f "$cpu_file"
  printf -v joined '%s; ' "${stages[@]}"
  echo "== stage times: ${joined}total $((SECONDS - started)) s, ${cpu} CPU-s"
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
# No incremental compilation: a CI run starts from a clean clone, where saving the incremental
# state of this workspace's crates is work no later build reads.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

stage "build and clippy (every test and binary of the workspace; warnings are errors)"
cargo test --workspace --no-run --quiet

# Three things run side by side here, because the acceptance tests leave about a quarter of two
# cores idle (they wait on terraform, moto and retries): the acceptance tests (six at a time:
# more tests than cores keep both cores busy); every other test binary of the workspace, one
# after the other; and, at a lower priority, the instrumented fuzz build (in target/fuzz-ci,
# seeded with the dependencies the test build just compiled: only this repository's crates
# compile again). The other test binaries print as they go; the acceptance tests' output and
# the fuzz build's are printed when each is waited for, so no two logs interleave (both stay in
# target/test-logs/).
stage "tests (unit, property, protocol, test server, acceptance) beside the fuzz build"
threads="${TEST_THREADS:-6}"
logs=target/test-logs
mkdir -p "$logs"
(nice -n 10 scripts/fuzz.sh ci-build >"$logs/fuzz-build.log" 2>&1) &
fuzz_build=$!
cargo test -p acceptance-tests --test acceptance --no-fail-fast -- --test-threads="$threads" \
  >"$logs/acceptance.log" 2>&1 &
acceptance=$!

# Every test target but the acceptance binary: the workspace's other packages whole, and the
# acceptance-tests package's library and other test files (read from cargo metadata, so a new
# test file is run without an edit here) and doc tests.
others=$(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "acceptance-tests":
        for t in p["targets"]:
            if "test" in t["kind"] and t["name"] != "acceptance":
                print("--test", t["name"])
')
tests_rc=0
cargo test --workspace --exclude acceptance-tests --no-fail-fast -- --test-threads="$threads" || tests_rc=$?
# shellcheck disable=SC2086 # one word per selector
cargo test -p acceptance-tests --no-fail-fast --lib $others -- --test-threads="$threads" || tests_rc=$?
cargo test -p acceptance-tests --no-fail-fast --doc || tests_rc=$?

acceptance_rc=0
wait "$acceptance" || acceptance_rc=$?
echo "== acceptance tests (tests/acceptance, ran beside the above)"
cat "$logs/acceptance.log"
[[ $acceptance_rc == 0 ]] || tests_rc=$acceptance_rc
fuzz_build_rc=0
wait "$fuzz_build" || fuzz_build_rc=$?
cat "$logs/fuzz-build.log"
[[ $tests_rc == 0 ]] || { echo "tests failed (exit $tests_rc)" >&2; exit "$tests_rc"; }
[[ $fuzz_build_rc == 0 ]] || { echo "the fuzz build failed (exit $fuzz_build_rc)" >&2; exit "$fuzz_build_rc"; }

stage "fuzz (short: every target for ${FUZZ_CI_SECONDS:-20} s from the committed corpus)"
FUZZ_NO_BUILD=1 scripts/fuzz.sh ci
