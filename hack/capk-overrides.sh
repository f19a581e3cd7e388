#!/usr/bin/env bash
# Writes clusterctl's overrides layer for CAPK with this controller beside CAPK's manager: CAPK's
# released infrastructure-components.yaml rendered with the kustomize component config/capk-sidecar
# (and, with --node-maintenance, config/capk-sidecar/node-maintenance), at the path clusterctl
# reads instead of the release's own file:
#   ${OVERRIDES_DIR:-${XDG_CONFIG_HOME:-~/.config}/cluster-api/overrides}/infrastructure-kubevirt/VERSION/infrastructure-components.yaml
#
#   hack/capk-overrides.sh CAPK_COMPONENTS_YAML VERSION [--node-maintenance]
#
# KUBECTL (default: kubectl) renders it (kubectl kustomize). Prints the path it wrote.
set -euo pipefail

usage() {
  echo "usage: hack/capk-overrides.sh CAPK_COMPONENTS_YAML VERSION [--node-maintenance]" >&2
  exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
components="$1"
version="$2"
node_maintenance="${3:-}"
[ -z "$node_maintenance" ] || [ "$node_maintenance" = "--node-maintenance" ] || usage
if [ ! -f "$components" ]; then
  echo "capk-overrides: $components is not a file (CAPK's released infrastructure-components.yaml)" >&2
  exit 2
fi
if ! [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "capk-overrides: version \"$version\" is not a release version such as v0.11.2" >&2
  exit 2
fi
if ! grep -q "name: capk-controller-manager" "$components"; then
  echo "capk-overrides: $components has no capk-controller-manager Deployment: not CAPK's components" >&2
  exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out_dir="${OVERRIDES_DIR:-${XDG_CONFIG_HOME:-$HOME/.config}/cluster-api/overrides}/infrastructure-kubevirt/$version"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# kustomize takes files from inside its directory only, and components by relative path.
cp "$components" "$work/infrastructure-components.yaml"
sidecar="$(realpath --relative-to="$work" "$root/config/capk-sidecar")"
{
  echo "apiVersion: kustomize.config.k8s.io/v1beta1"
  echo "kind: Kustomization"
  echo "resources:"
  echo "- infrastructure-components.yaml"
  echo "components:"
  echo "- $sidecar"
  [ -z "$node_maintenance" ] || echo "- $sidecar/node-maintenance"
} >"$work/kustomization.yaml"

mkdir -p "$out_dir"
"${KUBECTL:-kubectl}" kustomize "$work" >"$work/rendered.yaml"
mv "$work/rendered.yaml" "$out_dir/infrastructure-components.yaml"
echo "$out_dir/infrastructure-components.yaml"
