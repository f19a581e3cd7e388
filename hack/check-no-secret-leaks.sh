#!/usr/bin/env bash
# After the test suite: searches every log, event dump and test output the suite left for the
# credentials of the clusters it ran (client keys and certificates of the kubeconfigs handed to the
# controller as guest Secrets, bearer tokens, private keys). Prints where a credential was found,
# never the credential itself. Exits 1 if any was found.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
clusters="$root/e2e/target/clusters"
[ -d "$clusters" ] || { echo "check-no-secret-leaks: no cluster data under $clusters (no integration test ran)"; exit 0; }

patterns=$(mktemp)
trap 'rm -f "$patterns"' EXIT
# Kubeconfigs: the embedded base64 values, and each line of the PEM they decode to.
while IFS= read -r -d '' kc; do
  grep -oE '(client-certificate-data|client-key-data|token): *[^ ]+' "$kc" | awk '{print $2}' | while read -r value; do
    echo "$value" >>"$patterns"
    if printf '%s' "$value" | base64 -d >/dev/null 2>&1; then
      printf '%s' "$value" | base64 -d 2>/dev/null | grep -v -- '-----' | grep -E '.{40,}' >>"$patterns" || true
    fi
  done
done < <(find "$clusters" -name '*.kubeconfig' -print0)
# Private keys of the clusters (serving, service-account signing).
while IFS= read -r -d '' key; do
  grep -v -- '-----' "$key" | grep -E '.{40,}' >>"$patterns" || true
done < <(find "$clusters" -path '*/pki/*.key' -print0)
sort -u -o "$patterns" "$patterns"
count=$(grep -c . "$patterns" || true)
[ "$count" -gt 0 ] || { echo "check-no-secret-leaks: no credentials found to look for"; exit 0; }

# Everything the suite wrote that a person or CI would read: component and controller logs, event
# dumps, test reports and their captured output.
mapfile -d '' outputs < <(find "$clusters" "$root"/*/target/failsafe-reports "$root"/*/target/surefire-reports \
  -type f \( -name '*.log' -o -name '*.txt' -o -name '*.xml' -o -name 'events-*' \) \
  ! -name 'started-pids.txt' -print0 2>/dev/null)
leaks=$(grep -l -F -f "$patterns" "${outputs[@]}" 2>/dev/null || true)
if [ -n "$leaks" ]; then
  echo "check-no-secret-leaks: credentials found in:"
  echo "$leaks" | sed 's/^/  /'
  exit 1
fi
echo "check-no-secret-leaks: none of $count credential fragments appears in ${#outputs[@]} logs, event dumps and test reports"
