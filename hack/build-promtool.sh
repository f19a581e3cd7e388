#!/usr/bin/env bash
# Builds Prometheus' promtool (which checks and unit-tests the alert rules in config/prometheus)
# from source through the Go module proxy, at the version pinned in hack/versions.env.
#
# Output: $K8S_BIN_CACHE (default ~/.cache/capk-vmi-eviction/k8s-bin)/promtool-<version>/promtool,
# beside the Kubernetes binaries of hack/build-k8s.sh. A binary already there that reports the
# pinned version is reused, so the script is cheap and safe to run again (concurrent runs wait on a
# lock). Prints the binary's path as its last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

cache_root="${K8S_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/capk-vmi-eviction/k8s-bin}"
bin_dir="$cache_root/promtool-${PROMETHEUS_VERSION}"
bin="$bin_dir/promtool"
# Module v0.3xx.y is Prometheus 3.xx.y, the version promtool reports.
minor="${PROMETHEUS_VERSION#v0.3}"; minor="${minor%%.*}"; minor="$((10#$minor))"
release="3.${minor}.${PROMETHEUS_VERSION##*.}"

say() { echo "build-promtool: $*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

version_ok() {
  [ -x "$bin" ] && timeout 20 "$bin" --version 2>&1 | grep -qF "version ${release} "
}

command -v go >/dev/null 2>&1 || fail "no Go toolchain on PATH: Go is needed to build promtool (install Go 1.25 or newer)"

mkdir -p "$cache_root"
exec 9>"$cache_root/.promtool.lock"
flock 9

if version_ok; then
  say "reusing $bin"
  echo "$bin"
  exit 0
fi

mkdir -p "$bin_dir"
log="$bin_dir/build.log"
: >"$log"
say "go install github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_VERSION} (Prometheus ${release}); log: $log"
if ! env GOBIN="$bin_dir" go install -trimpath \
  -ldflags "-s -w -X github.com/prometheus/common/version.Version=${release}" \
  "github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_VERSION}" >>"$log" 2>&1; then
  say "ERROR: building promtool failed; last lines of $log:"
  tail -n 30 "$log" >&2
  exit 1
fi
version_ok || fail "$bin was built but does not report version ${release} (see $log)"
say "built $bin"
echo "$bin"
