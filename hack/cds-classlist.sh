#!/usr/bin/env bash
# Records controllers/src/main/cds/classes.lst: the classes the controller loads through a start-up
# and an evacuation under a budget, as the JVM lists them (-XX:DumpLoadedClassList), from the cost
# benchmark's last controller process (a fresh process that drains one VMI's guest node under a
# PodDisruptionBudget: the benchmark's pace run). Needs the benchmark's prerequisites (make bench).
set -euo pipefail
cd "$(dirname "$0")/.."
list="$(mktemp -d)/classes.lst"
make bench BENCH_OPTS="-Dbench.only=cost -Dbench.cost.budgets=budget -Dbench.cost.workers=16 \
  -Dcapk.bench.extraJvmFlags=-XX:DumpLoadedClassList=$list"
out=controllers/src/main/cds/classes.lst
{
  sed -n '1,/^#$/p' "$out"
  grep -v '^#' "$list"
} > "$out.new"
mv "$out.new" "$out"
echo "cds-classlist: $(grep -vc '^[#@]' "$out") classes in $out"
