#!/usr/bin/env bash
# Builds the provider, installs it into a local filesystem mirror in Terraform's layout, starts
# the local test environment (the Kubernetes API test server with the real Karpenter CRDs and a
# simulated Karpenter, and moto for IAM/SQS/EventBridge), and runs examples/quick-start with an
# ordinary `terraform init` / `apply` / `destroy`. Nothing touches a real cluster or AWS account.
#
#   MIRROR=dir   where to install (default: ~/.terraform.d/plugins, which Terraform searches by
#                itself on Linux and on macOS when no CLI configuration says otherwise)
#   PROFILE=release  install the optimised build instead of the debug (dev-profile) build
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

command -v terraform >/dev/null 2>&1 || { echo "error: terraform is not on PATH (1.11 or newer is needed)" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "error: python3 is needed for moto, the local AWS stand-in" >&2; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac
mirror=${MIRROR:-$HOME/.terraform.d/plugins}

# moto goes into target/moto-venv while cargo compiles (the same venv the tests use; see
# acceptance-tests/src/moto.rs, which skips the install when the venv holds these requirements).
requirements=acceptance-tests/moto-requirements.txt
venv=target/moto-venv
moto_pid=
if ! cmp -s "$requirements" "$venv/requirements.txt" 2>/dev/null || [ ! -f "$venv/bin/moto_server" ]; then
  echo "== installing moto into $venv (in the background)"
  mkdir -p target
  staging="target/moto-venv.tmp-$$"
  (
    rm -rf "$staging"
    python3 -m venv "$staging" &&
      "$staging/bin/pip" install --quiet --disable-pip-version-check --requirement "$requirements" &&
      cp "$requirements" "$staging/requirements.txt" &&
      rm -rf "$venv" && mv "$staging" "$venv"
  ) >target/moto-install.log 2>&1 &
  moto_pid=$!
fi

# One cargo invocation in one profile builds the provider and the local environment, so every
# dependency compiles once, with the features every other cargo command of the workspace uses
# (workspace-hack/Cargo.toml): after ./scripts/test.sh, or before it, nothing compiles twice.
# The default is the dev profile: it compiles in a fraction of the release profile's time (thin
# LTO, one codegen unit) and is what the test suite builds too. PROFILE=release installs the
# optimised build instead.
profile=${PROFILE:-dev}
case "$profile" in
  dev) out=target/debug ;;
  *) out="target/$profile" ;;
esac
echo "== building terraform-provider-karpenter $version and the local environment (profile $profile)"
cargo build --quiet --profile "$profile" -p terraform-provider-karpenter -p acceptance-tests \
  --bin terraform-provider-karpenter --bin local_env

dest="$mirror/registry.terraform.io/karpenter/karpenter/$version/${os}_${arch}"
mkdir -p "$dest"
install -m 0755 "$out/terraform-provider-karpenter" "$dest/terraform-provider-karpenter_v$version"
echo "== installed into $dest"

if [ -n "$moto_pid" ] && ! wait "$moto_pid"; then
  cat target/moto-install.log >&2
  echo "error: installing moto failed (python3 -m venv + pip install -r $requirements)" >&2
  exit 1
fi

work="$root/target/quickstart"
rm -rf "$work"
mkdir -p "$work"
cp examples/quick-start/*.tf "$work/"
cat >"$work/terraformrc" <<CFG
provider_installation {
  filesystem_mirror {
    path    = "$mirror"
    include = ["registry.terraform.io/karpenter/karpenter"]
  }
  direct {
    exclude = ["registry.terraform.io/karpenter/karpenter"]
  }
}
CFG
echo "== starting the local test environment (kube-testserver + moto)"
mkfifo "$work/env.stdin"
"$out/local_env" "$work/local.auto.tfvars" <"$work/env.stdin" >"$work/env.log" 2>&1 &
env_pid=$!
exec 3>"$work/env.stdin" # holding the pipe open keeps the environment up
cleanup() { exec 3>&-; wait "$env_pid" 2>/dev/null || true; }
trap cleanup EXIT
until grep -q '^ready' "$work/env.log" 2>/dev/null; do
  kill -0 "$env_pid" 2>/dev/null || { cat "$work/env.log" >&2; echo "error: the local test environment did not start" >&2; exit 1; }
  sleep 0.2
done

# moto accepts any credentials; keep the real ones out of this run.
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1 \
  AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
export TF_CLI_CONFIG_FILE="$work/terraformrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
cd "$work"
echo "== terraform init"
terraform init -input=false -no-color >/dev/null
echo "== terraform apply"
terraform apply -input=false -auto-approve -no-color
echo "== terraform output"
terraform output -no-color
echo "== objects in the test cluster"
kubectl --kubeconfig "$(sed -n 's/^kubeconfig_path *= *"\(.*\)"/\1/p' local.auto.tfvars)" get nodepools,ec2nodeclasses 2>/dev/null || true
echo "== terraform destroy"
terraform destroy -input=false -auto-approve -no-color >/dev/null
minor=${version%.*}
echo "== quick-start done: the provider is installed; use it with source = \"karpenter/karpenter\", version = \"~> $minor.0\""
