#!/usr/bin/env bash
# Regenerates what the provider derives from a Karpenter release, into data/karpenter/ (see its
# README.md): the facts of the release's files, never the files themselves.
#
#   data/karpenter/instance-types.tsv            instance types, labels, resources, prices, ENI
#                                                limits (the release's; replaces the previous one)
#   data/karpenter/controller-policy/<minor>.tsv the controller policy (one file per minor)
#   data/karpenter/crds/<minor>.tsv              the CRDs' properties (one file per minor)
#   data/karpenter/kubelet-fields.tsv            the upstream KubeletConfiguration's fields: path,
#                                                name, type (the release's; replaces the previous
#                                                one; the committed descriptions are kept)
#
# From a clone of aws/karpenter-provider-aws (the files are read at the tag, nothing is checked
# out; every file the release has is used):
#
#   scripts/karpenter-release.sh --git ../karpenter-provider-aws --tag v1.16.0
#
# The kubelet's Go types are not in that repository: --git takes them at the k8s.io/kubelet and
# k8s.io/component-base versions the tag's go.mod names, from the tag's vendor/ directory if it
# has one, else from the Go module cache (GOMODCACHE, else `go env GOMODCACHE`, else
# ~/go/pkg/mod; `go mod download k8s.io/kubelet@<version> k8s.io/component-base@<version>` puts
# them there). A tag whose go.mod names no k8s.io/kubelet (before v1.15), or whose files are in
# neither place, leaves the kubelet table as it is (a note says which); give the files by hand
# as below.
#
# From files at hand (any subset; the three instance-type files go together):
#
#   scripts/karpenter-release.sh --version v1.16 \
#     --crds <dir: pkg/apis/crds/*.yaml> \
#     --cloudformation <website/content/en/preview/getting-started/getting-started-with-karpenter/cloudformation.yaml> \
#     --instance-types <website/content/en/preview/reference/instance-types.md> \
#     --pricing <pkg/providers/pricing/zz_generated.pricing_aws.go> \
#     --vpc-limits <pkg/providers/instancetype/zz_generated.vpclimits.go> \
#     --kubelet-types <k8s.io/kubelet@<version>/config/v1beta1/types.go> \
#     --kubelet-types <k8s.io/component-base@<version>/logs/api/v1/types.go> \
#     --kubelet-types <k8s.io/component-base@<version>/tracing/api/v1/types.go> \
#     --kubelet-version <the k8s.io/kubelet version, as the release's go.mod names it>
#
# The kubelet table's path, name and type columns come from the Go types; its values and
# description columns are this project's words, written in the table by hand: a new upstream
# field is refused, with the row to write, until the table has its row.
#
# A release whose template is not at hand (v1.15's policy was made so), from an earlier minor's
# table and what the release's documentation says changed:
#
#   scripts/karpenter-release.sh --version v1.15 --policy-from v1.14 \
#     --add-action AllowScopedDeletion ec2:RebootInstances ec2:TerminateInstances \
#     --note "<what changed, and which page says so>"
#
# Also --crds-note <text> (one more header line for the CRD table, e.g. where stand-in CRDs came
# from), --vpc-limits-note <text> (the same for the instance-type table's ENI limits, when they
# are not the release's own: v1.14's table takes them from main after v1.14.1) and --out <dir>
# (default: data/karpenter). The generator is the `karpenter_release`
# binary of the acceptance-tests crate (acceptance-tests/src/karpenter_release/); it checks every
# table with the provider's own build code before writing it. Then, as CONTRIBUTING.md ("A new
# Karpenter release") says: review the diff, `cargo run --bin docgen`, and run the tests that
# read the data.
set -euo pipefail
cd "$(dirname "$0")/.."

run() {
  cargo run --quiet -p acceptance-tests --bin karpenter_release -- "$@"
}

if [[ "${1:-}" != "--git" ]]; then
  run "$@"
  exit
fi

[[ $# -eq 4 && "$3" == "--tag" ]] || {
  echo "usage: $0 --git <clone of aws/karpenter-provider-aws> --tag <vX.Y.Z>" >&2
  exit 2
}
repo="$2"
tag="$4"
git -C "$repo" rev-parse --verify --quiet "$tag^{commit}" >/dev/null || {
  echo "error: $repo has no tag $tag (git -C $repo fetch --tags)" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# show <path at the tag> <file>: copies one file of the release; false when the tag has none.
show() {
  git -C "$repo" cat-file -e "$tag:$1" 2>/dev/null && git -C "$repo" show "$tag:$1" >"$2"
}

args=(--version "$tag")
mkdir "$work/crds"
for crd in $(git -C "$repo" ls-tree --name-only "$tag" pkg/apis/crds/ | grep '\.yaml$'); do
  show "$crd" "$work/crds/$(basename "$crd")"
done
if compgen -G "$work/crds/*.yaml" >/dev/null; then
  args+=(--crds "$work/crds")
fi
if show website/content/en/preview/getting-started/getting-started-with-karpenter/cloudformation.yaml "$work/cloudformation.yaml"; then
  args+=(--cloudformation "$work/cloudformation.yaml")
fi
if show website/content/en/preview/reference/instance-types.md "$work/instance-types.md" &&
  show pkg/providers/pricing/zz_generated.pricing_aws.go "$work/pricing.go" &&
  show pkg/providers/instancetype/zz_generated.vpclimits.go "$work/vpclimits.go"; then
  args+=(--instance-types "$work/instance-types.md" --pricing "$work/pricing.go" --vpc-limits "$work/vpclimits.go")
else
  echo "note: $tag lacks one of the instance-type files; the instance-type table is left as it is" >&2
fi

# The kubelet's configuration types, at the versions go.mod names.
gomod=$(git -C "$repo" show "$tag:go.mod")
module_version() { awk -v m="$1" '$1 == m { print $2; exit }' <<<"$gomod"; }
kubelet_version=$(module_version k8s.io/kubelet)
component_version=$(module_version k8s.io/component-base)
# <module> <version> <file in the module>
kubelet_sources=(
  "k8s.io/kubelet $kubelet_version config/v1beta1/types.go"
  "k8s.io/component-base $component_version logs/api/v1/types.go"
  "k8s.io/component-base $component_version tracing/api/v1/types.go"
)
if [[ -z "$kubelet_version" || -z "$component_version" ]]; then
  echo "note: $tag's go.mod names no k8s.io/kubelet (or no k8s.io/component-base); the kubelet table is left as it is" >&2
else
  modcache=${GOMODCACHE:-$(go env GOMODCACHE 2>/dev/null || true)}
  modcache=${modcache:-${GOPATH:-$HOME/go}/pkg/mod}
  kubelet_args=(--kubelet-version "$kubelet_version")
  mkdir "$work/go"
  for source in "${kubelet_sources[@]}"; do
    read -r module version file <<<"$source"
    copy="$work/go/${module//\//_}_${file//\//_}"
    if show "vendor/$module/$file" "$copy"; then
      kubelet_args+=(--kubelet-types "$copy")
    elif [[ -f "$modcache/$module@$version/$file" ]]; then
      kubelet_args+=(--kubelet-types "$modcache/$module@$version/$file")
    else
      echo "note: $module@$version/$file is neither in $tag's vendor/ nor in $modcache (go mod download $module@$version); the kubelet table is left as it is" >&2
      kubelet_args=()
      break
    fi
  done
  args+=(${kubelet_args[@]+"${kubelet_args[@]}"})
fi
run "${args[@]}"
