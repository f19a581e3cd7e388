#!/usr/bin/env bash
# Renders CAPK's infrastructure-components.yaml for a release the way CAPK's release target does
# (`kustomize build config/default`), from CAPK's own config/ in its Go module at that version,
# fetched through the Go module proxy. The one difference from the published file is the manager's
# image, which CAPK's release job sets and which this render leaves as config/ names it.
#
#   hack/capk-release.sh [VERSION]   (default: CAPK_VERSION of hack/versions.env)
#
# Output: $K8S_BIN_CACHE (default ~/.cache/capk-vmi-eviction/k8s-bin)/capk-<version>/
# infrastructure-components.yaml, reused when present. KUBECTL (default: kubectl) renders it.
# Prints the file's path as its last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
version="${1:-$CAPK_VERSION}"

say() { echo "capk-release: $*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "\"$version\" is not a release version such as v0.11.2"
command -v go >/dev/null 2>&1 || fail "no Go toolchain on PATH: Go fetches CAPK's module (install Go 1.25 or newer)"

cache_root="${K8S_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/capk-vmi-eviction/k8s-bin}"
out_dir="$cache_root/capk-$version"
out="$out_dir/infrastructure-components.yaml"
mkdir -p "$cache_root"
exec 9>"$cache_root/.capk-release.lock"
flock 9
if [ -s "$out" ]; then
  echo "$out"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Outside any module, `go mod download` fetches exactly this version and prints where it is.
module_dir="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json \
  "sigs.k8s.io/cluster-api-provider-kubevirt@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
[ -d "$module_dir/config/default" ] || fail "CAPK $version has no config/default in its module"
# The module cache is read-only; kustomize only reads, but keep the copy private to this run.
cp -r "$module_dir/config" "$work/config"
chmod -R u+w "$work/config"
mkdir -p "$out_dir"
"${KUBECTL:-kubectl}" kustomize "$work/config/default" >"$work/rendered.yaml"
grep -q "name: capk-controller-manager" "$work/rendered.yaml" || fail "the render of CAPK $version has no capk-controller-manager Deployment"
mv "$work/rendered.yaml" "$out"
say "rendered CAPK $version's config/default"
echo "$out"
