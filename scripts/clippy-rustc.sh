#!/usr/bin/env bash
# RUSTC_WORKSPACE_WRAPPER for scripts/test.sh: cargo hands every crate of this workspace (never
# a registry dependency) to clippy-driver, a rustc that also runs clippy's lints, with warnings
# as errors. The test build is then also the clippy run: the dependencies are compiled once,
# instead of once for the tests and once more in check mode for `cargo clippy`.
set -euo pipefail
exec clippy-driver "$@" -D warnings
