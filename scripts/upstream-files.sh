#!/usr/bin/env bash
# The files the tests read from outside the repository (acceptance-tests/upstream-files.tsv: the
# upstream Karpenter CRDs of every supported release, the getting-started template, the
# instance-type reference, AWS's Auto Mode manifests), kept in ../shared/karpenter beside the clone.
#
#   scripts/upstream-files.sh fetch   downloads every file that is missing or differs, each from its
#                                     repository at the tag or commit the list names, and checks it
#                                     against the list's SHA-256 before putting it in place
#   scripts/upstream-files.sh check   checks the files in place against the list (no network); what
#                                     CI runs, and what the tests' own check runs
#
#   SHARED=dir         where the files go (default: ../shared/karpenter beside the repository)
#   UPSTREAM_BASE=url  where the repositories are served (default: https://raw.githubusercontent.com;
#                      any base under which <owner>/<repo>/<ref>/<path> is the raw file, file:// too)
set -euo pipefail
cd "$(dirname "$0")/.."
list=acceptance-tests/upstream-files.tsv
shared=${SHARED:-../shared/karpenter}
base=${UPSTREAM_BASE:-https://raw.githubusercontent.com}
mode=${1:-}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

case "$mode" in
  fetch)
    command -v curl >/dev/null 2>&1 || { echo "error: curl is needed to fetch the files" >&2; exit 1; }
    fetched=0 kept=0
    while IFS=$'\t' read -r path sum repo ref upstream; do
      [[ -z "$path" || "$path" == \#* ]] && continue
      dest="$shared/$path"
      if [[ -f "$dest" && "$(sha256 "$dest")" == "$sum" ]]; then
        kept=$((kept + 1))
        continue
      fi
      mkdir -p "$(dirname "$dest")"
      tmp="$dest.part"
      if ! curl -fsSL "$base/$repo/$ref/$upstream" -o "$tmp"; then
        rm -f "$tmp"
        echo "error: could not fetch $repo@$ref:$upstream (for $path)" >&2
        exit 1
      fi
      got=$(sha256 "$tmp")
      if [[ "$got" != "$sum" ]]; then
        rm -f "$tmp"
        echo "error: $repo@$ref:$upstream has SHA-256 $got, the list says $sum (for $path): nothing written" >&2
        exit 1
      fi
      mv "$tmp" "$dest"
      fetched=$((fetched + 1))
    done <"$list"
    echo "upstream files: $fetched fetched, $kept already in place, in $shared"
    ;;
  check)
    bad=0 total=0
    while IFS=$'\t' read -r path sum _repo _ref _upstream; do
      [[ -z "$path" || "$path" == \#* ]] && continue
      total=$((total + 1))
      dest="$shared/$path"
      if [[ ! -f "$dest" ]]; then
        echo "missing: $dest" >&2
        bad=$((bad + 1))
      elif [[ "$(sha256 "$dest")" != "$sum" ]]; then
        echo "differs from $list: $dest" >&2
        bad=$((bad + 1))
      fi
    done <"$list"
    if ((bad > 0)); then
      echo "error: $bad of $total upstream files are missing or differ; run scripts/upstream-files.sh fetch" >&2
      exit 1
    fi
    echo "upstream files: all $total in $shared match $list"
    ;;
  *)
    sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
