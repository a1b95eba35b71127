#!/usr/bin/env bash
# RUSTC_WRAPPER for the fuzz build (set by scripts/fuzz.sh): adds libFuzzer's coverage
# instrumentation (SanitizerCoverage, all stable codegen flags) and `--cfg fuzzing` to the
# crates of this repository only. Registry dependencies build plainly: their coverage would
# only dilute the feedback, and instrumenting them would make the build much slower.
set -euo pipefail
rustc="$1"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name=""
src=""
prev=""
for arg in "$@"; do
    [[ "$prev" == "--crate-name" ]] && name="$arg"
    [[ "$arg" == *.rs && -z "$src" ]] && src="$arg"
    prev="$arg"
done
case "$src" in
    /*) abs="$src" ;;
    *) abs="$PWD/$src" ;;
esac
if [[ -n "$src" && "$abs" == "$root"/* && "$name" != build_script_* ]]; then
    exec "$rustc" "$@" \
        -Cpasses=sancov-module \
        -Cllvm-args=-sanitizer-coverage-level=4 \
        -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
        -Cllvm-args=-sanitizer-coverage-pc-table \
        -Cllvm-args=-sanitizer-coverage-trace-compares \
        --cfg fuzzing
fi
exec "$rustc" "$@"
