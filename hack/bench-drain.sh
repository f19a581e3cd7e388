#!/usr/bin/env bash
# Drain benchmark (not a test): our drain CLI (the runnable jar, as its own process) against the real
# kubectl drain, same flags, same local cluster (kwok nodes with 100 and 1,000 pods), at least 5 timed
# runs each, alternating; prints medians and the ratio ours/kubectl.
#
#   hack/bench-drain.sh                 # sizes 100,1000; 5 runs
#   BENCH_SIZES=100 BENCH_RUNS=7 hack/bench-drain.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

sizes="${BENCH_SIZES:-100,1000}"
runs="${BENCH_RUNS:-5}"
if [ "$runs" -lt 5 ]; then
  echo "bench-drain: BENCH_RUNS must be at least 5" >&2
  exit 2
fi

export K8S_BIN_DIR="${K8S_BIN_DIR:-$(bash hack/build-k8s.sh 2>/dev/null | tail -n 1)}"
MVN="${MVN:-mvn -B}"

# The runnable jar is what operators run: build it, then run the benchmark class through Failsafe
# (its name keeps it out of every test run) so the harness starts and stops the cluster.
$MVN -q package -DskipTests -pl controllers -am
$MVN -pl e2e -am verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=DrainBenchmark -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dbench.sizes="$sizes" -Dbench.runs="$runs" 2>&1 \
  | grep -E '^(bench:|==|pods |-{10}|[0-9]+ +\||ratio =)|BUILD|ERROR|FAIL'
