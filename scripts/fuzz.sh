#!/usr/bin/env bash
# Coverage-guided fuzzing of the provider's input parsers (fuzz/, libFuzzer on stable Rust).
#
#   scripts/fuzz.sh ci                     build (after the test build: see below), then every
#                                          target for FUZZ_CI_SECONDS (default
#                                          20) from the committed corpus, FUZZ_JOBS (default: the
#                                          cores) at a time; exits non-zero on a crash. The
#                                          committed corpus is not changed.
#   scripts/fuzz.sh ci-build               only the build of `ci` (FUZZ_NO_BUILD=1 scripts/fuzz.sh ci
#                                          then runs it)
#   scripts/fuzz.sh long [SECONDS] [TARGET...]
#                                          every target (or those named) for SECONDS each
#                                          (default 600), one job, growing a work corpus in
#                                          target/fuzz/corpus/; crashes go to
#                                          target/fuzz/artifacts/<target>/. Prints the executions.
#   scripts/fuzz.sh cmin [TARGET...]       minimise committed corpus + work corpus back into
#                                          fuzz/corpus/<target>/
#   scripts/fuzz.sh repro TARGET FILE...   run the target once on each file (a crash reproduces)
#   scripts/fuzz.sh list                   the targets
#
# FUZZ_TARGET_DIR: where the instrumented build goes (default target/fuzz; for `ci`,
# target/fuzz-ci, seeded with the main debug build's dependencies); FUZZ_NO_BUILD=1 runs the
# binary already built there. `ci` writes its logs to target/fuzz-ci/logs.
#
# Why not `cargo fuzz`: it needs nightly for -Zsanitizer. The instrumentation libFuzzer needs
# (SanitizerCoverage: 8-bit counters, PC table, comparison tracing) is reachable through
# stable codegen flags, which fuzz/rustc-wrapper.sh adds to this repository's crates only.
# libfuzzer-sys builds libFuzzer itself from C++ source (needs g++).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fuzz="$root/fuzz"
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$root/target/fuzz}"
export RUSTC_WRAPPER="$fuzz/rustc-wrapper.sh"
# The wrapper's flags are invisible to cargo's fingerprints; a separate target dir keeps the
# instrumented artifacts apart from the main build. scripts/test.sh's clippy wrapper is not for
# this build either.
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS RUSTC_WORKSPACE_WRAPPER || true
bin="$CARGO_TARGET_DIR/release"
# Logs, crashes and the work corpus (not the build: `ci` builds in the main target directory).
out="$CARGO_TARGET_DIR"
targets=(tfvalue_msgpack tfvalue_json kube_read kube_write move_state policy_text)

build() {
    [[ -n "${FUZZ_NO_BUILD:-}" ]] && return 0
    local start=$SECONDS
    # A `cargo build --release` of the main crate has built every dependency exactly as the
    # shipped-profile build needs them (same profile, same lock file): start from a copy of
    # those. Not for `ci`, which builds beside the test build's own artifacts.
    if [[ -z "${ci_profile:-}" && ! -d "$CARGO_TARGET_DIR/release" && -d "$root/target/release/deps" ]]; then
        mkdir -p "$CARGO_TARGET_DIR/release"
        cp -a "$root/target/release/deps" "$root/target/release/build" "$root/target/release/.fingerprint" \
            "$CARGO_TARGET_DIR/release/"
    fi
    local profile=(--release)
    [[ -n "${ci_profile:-}" ]] && profile=()
    (cd "$fuzz" && cargo build "${profile[@]}" --locked --bin fuzz -q)
    echo "fuzz: build took $((SECONDS - start)) s" >&2
}

# run_target NAME SECONDS CORPUS_DIR... : libFuzzer on the target, its log in $out/logs.
run_target() {
    local name="$1" seconds="$2"
    shift 2
    local artifacts="$out/artifacts/$name"
    local logs="$out/logs"
    mkdir -p "$artifacts" "$logs"
    local dict=()
    [[ -f "$fuzz/dict/$name.dict" ]] && dict=("-dict=$fuzz/dict/$name.dict")
    local status=0
    FUZZ_TARGET="$name" "$bin/fuzz" "$@" "${dict[@]}" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" \
        >"$logs/$name.log" 2>&1 || status=$?
    local runs cov
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$name.log" | grep -o '[0-9]*$' || echo 0)
    cov=$(grep -o 'cov: [0-9]*' "$logs/$name.log" | tail -1 | grep -o '[0-9]*' || echo '?')
    if [[ $status -ne 0 ]]; then
        echo "fuzz: $name CRASHED after $runs executions (exit $status); see $logs/$name.log and $artifacts" >&2
        grep -m1 -A3 "panicked at\|ERROR: libFuzzer" "$logs/$name.log" >&2 || true
        return 1
    fi
    echo "fuzz: $name: $runs executions in ${seconds}s, 0 crashes, coverage $cov edges"
}

mode="${1:-}"
shift || true
case "$mode" in
    ci | ci-build)
        seconds="${FUZZ_CI_SECONDS:-20}"
        # A CI run builds with the dev profile after `cargo test --workspace --no-run`: every
        # dependency is compiled, with the same profile, lock file versions and features
        # (fuzz/Cargo.toml aligns them), so only this repository's crates compile, instrumented,
        # with every debug check, at the opt-level fuzz/Cargo.toml gives them (0). Fewer
        # executions per second than the shipped profile gives, which a smoke run can afford;
        # `long` keeps the shipped profile in its own directory.
        #
        # Its own target directory, seeded with hard links to the test build's compiled
        # dependencies: cargo locks a target directory for a whole build, so in the main one
        # this build and the tests (whose harness runs `cargo build` for the plugins it needs)
        # would wait on each other; here scripts/test.sh runs the two side by side. Links cost
        # no copy, and the build adds files without rewriting any: the instrumented crates get
        # their own file names (fuzz/Cargo.toml's profile), the dependencies are fresh. The seed
        # is taken anew each time, so a link never outlives the build it was taken from.
        export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$root/target/fuzz-ci}"
        ci_profile=1
        bin="$CARGO_TARGET_DIR/debug"
        out="$root/target/fuzz-ci"
        if [[ -z "${FUZZ_NO_BUILD:-}" && -z "${FUZZ_TARGET_DIR:-}" && -d "$root/target/debug/deps" ]]; then
            rm -rf "$CARGO_TARGET_DIR/debug"
            mkdir -p "$CARGO_TARGET_DIR/debug"
            cp -al "$root/target/debug/deps" "$root/target/debug/build" "$root/target/debug/.fingerprint" \
                "$CARGO_TARGET_DIR/debug/"
        fi
        build
        # `ci-build` only builds (scripts/test.sh builds right after the test build, and fuzzes
        # after the tests).
        [[ "$mode" == ci-build ]] && exit 0
        # One target per core at a time (libFuzzer runs one process per target): the targets
        # are independent, and a run is bounded by its seconds, not by its CPU.
        jobs="${FUZZ_JOBS:-$(nproc)}"
        pids=()
        for t in "${targets[@]}"; do
            while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
            (
                # A scratch corpus: what the run finds is not written into the repository.
                work="$(mktemp -d)"
                status=0
                run_target "$t" "$seconds" "$work" "$fuzz/corpus/$t" || status=1
                rm -rf "$work"
                exit $status
            ) &
            pids+=($!)
        done
        failed=0
        for pid in "${pids[@]}"; do
            wait "$pid" || failed=1
        done
        exit $failed
        ;;
    long)
        seconds="${1:-600}"
        [[ $# -gt 0 ]] && shift
        selected=("$@")
        [[ ${#selected[@]} -eq 0 ]] && selected=("${targets[@]}")
        build
        failed=0
        for t in "${selected[@]}"; do
            work="$CARGO_TARGET_DIR/corpus/$t"
            mkdir -p "$work"
            run_target "$t" "$seconds" "$work" "$fuzz/corpus/$t" || failed=1
        done
        exit $failed
        ;;
    cmin)
        selected=("$@")
        [[ ${#selected[@]} -eq 0 ]] && selected=("${targets[@]}")
        build
        for t in "${selected[@]}"; do
            new="$(mktemp -d)"
            mkdir -p "$CARGO_TARGET_DIR/corpus/$t"
            # Edges only (no hit-count buckets): the smallest corpus that reaches the same code.
            FUZZ_TARGET="$t" "$bin/fuzz" -merge=1 -use_counters=0 -max_len=4096 "$new" "$fuzz/corpus/$t" "$CARGO_TARGET_DIR/corpus/$t" \
                >"$CARGO_TARGET_DIR/cmin-$t.log" 2>&1
            # Crash reproducers stay, whether or not they still add coverage.
            cp "$fuzz/corpus/$t"/crash-* "$new"/ 2>/dev/null || true
            rm -rf "$fuzz/corpus/$t"
            mkdir -p "$fuzz/corpus/$t"
            # Name files by content, so re-minimising does not rename what stayed.
            for f in "$new"/*; do
                [[ -e "$f" ]] || continue
                case "$(basename "$f")" in
                    crash-*) cp "$f" "$fuzz/corpus/$t/" ;;
                    *) cp "$f" "$fuzz/corpus/$t/$(sha1sum "$f" | cut -c1-16)" ;;
                esac
            done
            rm -rf "$new"
            echo "fuzz: $t corpus: $(ls "$fuzz/corpus/$t" | wc -l) files, $(du -sk "$fuzz/corpus/$t" | cut -f1) KB"
        done
        ;;
    repro)
        t="${1:?target}"
        shift
        build
        FUZZ_TARGET="$t" "$bin/fuzz" -runs=1 "$@"
        ;;
    list)
        printf '%s\n' "${targets[@]}"
        ;;
    *)
        sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
esac
