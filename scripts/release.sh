#!/usr/bin/env bash
# Packages the provider the way a Terraform registry or network mirror serves it, into dist/:
#
#   terraform-provider-karpenter_<version>_<os>_<arch>.zip   the binary, named
#                                                            terraform-provider-karpenter_v<version>
#   terraform-provider-karpenter_<version>_SHA256SUMS         one "<sha256>  <zip>" line per zip
#   terraform-provider-karpenter_<version>_manifest.json      the registry manifest (protocol 6.0)
#   terraform-provider-karpenter_<version>_SHA256SUMS.sig     a detached binary GPG signature of
#                                                            SHA256SUMS, when a key is given
#   registry.terraform.io/karpenter/karpenter/index.json      a static provider network mirror
#   registry.terraform.io/karpenter/karpenter/<version>.json  (Terraform's provider network mirror
#                                                            protocol): index.json lists every
#                                                            version whose <version>.json is there;
#                                                            <version>.json has one archive per
#                                                            <os>_<arch> zip of SHA256SUMS, its url
#                                                            relative (the zip in dist/) and its
#                                                            zh: hash (the zip's SHA-256). Serve
#                                                            dist/ over HTTPS as a network_mirror
#                                                            (README "Releases")
#
# Targets: only the host's (the os/arch of `uname`). Cross targets need toolchains and C
# cross-compilers (aws-lc-rs) that are not on these machines, so they are not attempted here.
#
#   RELEASE_PROFILE=release|debug   which cargo profile to package (default: release; the
#                                   acceptance test packages the debug build to stay fast)
#   DIST=dir                        where to write (default: dist/ in the repository)
#   GPG_FINGERPRINT=fpr             sign SHA256SUMS with this key (from the default keyring, or
#                                   GNUPGHOME's); the registry requires the signature and the
#                                   key's ASCII-armoured public part. Unset: nothing is signed.
#                                   A key that cannot sign fails the release, never unsigned.
#
# Other platforms: build on (or for) each with `cargo build --release --target <triple>` and
# the matching C toolchain for aws-lc-rs, then run this script there; see README "Releases".
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in zip sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is needed to package a release" >&2; exit 1; }
done

name=terraform-provider-karpenter
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
[ -n "$version" ] || { echo "error: no version in Cargo.toml" >&2; exit 1; }
os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac
profile=${RELEASE_PROFILE:-release}
dist=${DIST:-dist}
target_dir=${CARGO_TARGET_DIR:-target}

# The shipped binary is built without the default `workspace-hack` feature (the features only
# the workspace's tests need, see workspace-hack/Cargo.toml). RELEASE_PROFILE=debug (the test
# suite) packages the development build, whose dependencies the tests have already compiled.
case "$profile" in
  release) cargo build --release --quiet --no-default-features --features ec2 --bin "$name" ;;
  debug) cargo build --quiet --bin "$name" ;;
  *) echo "error: RELEASE_PROFILE must be release or debug, not $profile" >&2; exit 1 ;;
esac
binary="$target_dir/$profile/$name"
[ -f "$binary" ] || { echo "error: no binary at $binary" >&2; exit 1; }

mkdir -p "$dist"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$binary" "$stage/${name}_v$version"
zip_name="${name}_${version}_${os}_${arch}.zip"
rm -f "$dist/$zip_name"
# -X: no extra file attributes (uid/gid, times), -j: no directories inside the archive
(cd "$stage" && zip -q -X -j "$zip_name" "${name}_v$version")
mv "$stage/$zip_name" "$dist/$zip_name"

printf '{"version":1,"metadata":{"protocol_versions":["6.0"]}}\n' >"$dist/${name}_${version}_manifest.json"
# The registry's SHA256SUMS lists the zips and the manifest, sorted by name.
(cd "$dist" && sha256sum "${name}_${version}"_*.zip "${name}_${version}_manifest.json" | sort -k2) \
  >"$dist/${name}_${version}_SHA256SUMS"

sums="$dist/${name}_${version}_SHA256SUMS"

# The network mirror: Terraform asks <mirror>/registry.terraform.io/karpenter/karpenter/index.json
# for the versions, then <version>.json for the archive of its platform, whose url it resolves
# against that document's own address (three levels up is dist/ itself).
mirror="$dist/registry.terraform.io/karpenter/karpenter"
mkdir -p "$mirror"
{
  printf '{\n  "archives": {'
  sep=''
  while read -r sum file; do
    case "$file" in
      "${name}_${version}_"*.zip) ;;
      *) continue ;;
    esac
    platform=${file#"${name}_${version}_"}
    platform=${platform%.zip}
    printf '%s\n    "%s": {\n      "url": "../../../%s",\n      "hashes": ["zh:%s"]\n    }' "$sep" "$platform" "$file" "$sum"
    sep=','
  done <"$sums"
  printf '\n  }\n}\n'
} >"$mirror/$version.json"
{
  printf '{\n  "versions": {'
  sep=''
  for doc in "$mirror"/*.json; do
    v=$(basename "$doc" .json)
    [ "$v" = index ] && continue
    printf '%s\n    "%s": {}' "$sep" "$v"
    sep=','
  done
  printf '\n  }\n}\n'
} >"$mirror/index.json"

rm -f "$sums.sig"
if [ -n "${GPG_FINGERPRINT:-}" ]; then
  command -v gpg >/dev/null 2>&1 || { echo "error: GPG_FINGERPRINT is set but gpg is not on PATH" >&2; exit 1; }
  gpg --batch --yes --local-user "$GPG_FINGERPRINT" --output "$sums.sig" --detach-sign "$sums" \
    || { echo "error: could not sign $sums with key $GPG_FINGERPRINT" >&2; exit 1; }
fi

echo "$dist/$zip_name"
echo "$dist/${name}_${version}_SHA256SUMS"
echo "$dist/${name}_${version}_manifest.json"
if [ -f "$sums.sig" ]; then echo "$sums.sig"; fi
echo "$mirror/index.json"
echo "$mirror/$version.json"
