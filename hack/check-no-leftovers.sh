#!/usr/bin/env bash
# After the test suite: proves, by PID, that no process the harness started is still running.
# The harness appends "PID COMPONENT START EXECUTABLE" for each process it starts to a ledger,
# started-pids.txt, in its work directory: one per test JVM, all below e2e/target/clusters (START:
# the start time in clock ticks since boot, /proc/PID/stat field 22, or "-"); a PID counts as left
# over only if it still runs that same executable and started at that same time (PIDs get reused,
# on a busy machine even by another process of the same executable).
set -euo pipefail
root="${1:-$(dirname "$0")/../e2e/target/clusters}"
mapfile -t ledgers < <(find "$root" -name started-pids.txt 2>/dev/null | sort)
[ "${#ledgers[@]}" -gt 0 ] || { echo "check-no-leftovers: no ledger under $root (no harness process was started)"; exit 0; }
left=0
while read -r pid component start executable; do
  [ -n "${pid:-}" ] || continue
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  stat=$(cat "/proc/$pid/stat" 2>/dev/null || true)
  now_start="-"
  if [ -n "$stat" ]; then
    # shellcheck disable=SC2086
    set -- ${stat##*) }
    now_start="${20:-}"
  fi
  if [ "$start" != "-" ] && [ "$now_start" != "$start" ]; then
    continue # the PID now belongs to a process started later: not ours
  fi
  if [ -n "$exe" ] && [ "$exe" = "$executable" -o "$(basename "$exe")" = "$(basename "$executable")" ]; then
    echo "check-no-leftovers: $component (PID $pid, $executable) is still running"
    left=$((left + 1))
  fi
done < <(cat "${ledgers[@]}")
total=$(cat "${ledgers[@]}" | grep -c . || true)
if [ "$left" -gt 0 ]; then
  echo "check-no-leftovers: $left of $total started processes are still running"
  exit 1
fi
echo "check-no-leftovers: all $total processes the tests started are gone"
