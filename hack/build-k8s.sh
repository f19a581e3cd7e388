#!/usr/bin/env bash
# Builds the real Kubernetes components the tests run (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kwok) from source through
# the Go module proxy, at the versions pinned in hack/versions.env.
#
# Output: $K8S_BIN_CACHE (default ~/.cache/capk-vmi-eviction/k8s-bin)/<versions>/
# Binaries already there that answer --version correctly are reused, so the
# script is cheap and safe to run again (concurrent runs wait on a lock).
# Prints the binary directory as its last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

cache_root="${K8S_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/capk-vmi-eviction/k8s-bin}"
bin_dir="$cache_root/k8s-${KUBERNETES_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
components=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)

say() { echo "build-k8s: $*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

# expected_version NAME: a string NAME's --version output must contain.
expected_version() {
  case "$1" in
    etcd) echo "${ETCD_VERSION#v}" ;;
    kwok) echo "${KWOK_VERSION}" ;;
    *) echo "${KUBERNETES_VERSION}" ;;
  esac
}

# version_ok NAME: the binary exists, starts, and reports the pinned version.
version_ok() {
  local bin="$bin_dir/$1" out
  [ -x "$bin" ] || return 1
  if [ "$1" = kubectl ]; then
    out=$(timeout 20 "$bin" version --client 2>&1) || return 1
  else
    out=$(timeout 20 "$bin" --version 2>&1) || return 1
  fi
  grep -qF -- "$(expected_version "$1")" <<<"$out"
}

all_ok() {
  local c
  for c in "${components[@]}"; do version_ok "$c" || return 1; done
}

# run_logged COMPONENT LOG CMD...: runs CMD, and on failure names the
# component, the command and the last lines of its log.
run_logged() {
  local component="$1" log="$2"; shift 2
  say "$component: $*"
  if ! "$@" >>"$log" 2>&1; then
    say "ERROR: building $component failed: $*"
    say "last lines of $log:"
    tail -n 30 "$log" >&2
    exit 1
  fi
}

command -v go >/dev/null 2>&1 || fail "no Go toolchain on PATH: Go is needed to build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok (install Go 1.25 or newer)"

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9

if all_ok; then
  say "reusing binaries in $bin_dir"
  echo "$bin_dir"
  exit 0
fi

work="$cache_root/build-${KUBERNETES_VERSION}"
rm -rf "$work"
mkdir -p "$work" "$bin_dir"
log="$work/build.log"
: >"$log"
cp -R "$here/k8s-wrapper/." "$work/"

# k8s.io/kubernetes cannot be required as is: its go.mod replaces every
# k8s.io/* staging module with a path inside its own tree. Replace each with
# the published v0.x release of the same Kubernetes version instead.
k8s_mod=$(cd "$work" && go mod download -json "k8s.io/kubernetes@${KUBERNETES_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[ -f "$k8s_mod" ] || fail "could not download k8s.io/kubernetes@${KUBERNETES_VERSION} through the Go module proxy"
go_directive=$(awk '$1 == "go" { print $2; exit }' "$k8s_mod")
staging_version="v0.${KUBERNETES_VERSION#v1.}"
{
  echo "module capk.local/k8s-wrapper"
  echo
  echo "go ${go_directive}"
  echo
  echo "require ("
  echo "	k8s.io/kubernetes ${KUBERNETES_VERSION}"
  echo "	go.etcd.io/etcd/server/v3 ${ETCD_VERSION}"
  echo ")"
  echo
  echo "replace ("
  awk '/^replace \(/ { inside = 1; next } inside && /^\)/ { inside = 0 } inside && /=> \.\/staging/ { print $1 }' "$k8s_mod" |
    while read -r module; do echo "	$module => $module $staging_version"; done
  echo ")"
} >"$work/go.mod"

cd "$work"
run_logged "k8s-wrapper module" "$log" go mod tidy

# The version the binaries report, as Kubernetes' own build stamps it.
minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=${KUBERNETES_VERSION} -X $pkg.gitMajor=1 -X $pkg.gitMinor=${minor}"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# One go build for all so they share the compile cache and run in parallel.
run_logged "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl" "$log" \
  go build -trimpath -ldflags "$ldflags" -o "$bin_dir/" \
  ./cmd/etcd \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl

# kwok is an ordinary module (no replace directives): install it as is, with
# its own Kubernetes libraries.
run_logged kwok "$log" env GOBIN="$bin_dir" go install -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION}" "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"

for c in "${components[@]}"; do
  version_ok "$c" || fail "$c was built but does not report version $(expected_version "$c") with --version (see $log)"
done
say "built ${components[*]} into $bin_dir"
echo "$bin_dir"
