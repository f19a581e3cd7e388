#!/usr/bin/env bash
# Prints the home of a JDK 25 or later, which the build, the tests and the tools run on:
# $JAVA_HOME if it is one, else the JDK of `javac` on PATH, else one under /usr/lib/jvm (Debian
# and Ubuntu packages, Adoptium's Temurin packages) or /Library/Java/JavaVirtualMachines (macOS).
# A JDK's feature release is read from its `release` file, so nothing is started to ask.
# Fails, saying how to get one, when there is none.
set -euo pipefail
need=25

feature() {
  sed -n 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$1/release" 2>/dev/null || true
}

candidates=()
[ -z "${JAVA_HOME:-}" ] || candidates+=("$JAVA_HOME")
if javac=$(command -v javac 2>/dev/null); then
  candidates+=("$(dirname -- "$(dirname -- "$(readlink -f -- "$javac")")")")
fi
for home in /usr/lib/jvm/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
  [ ! -d "$home" ] || candidates+=("$home")
done
for home in "${candidates[@]}"; do
  release=$(feature "$home")
  if [ -n "$release" ] && [ "$release" -ge "$need" ] && [ -x "$home/bin/javac" ]; then
    echo "$home"
    exit 0
  fi
done
echo "error: no JDK $need or later found (JAVA_HOME, javac on PATH, /usr/lib/jvm); install one," \
  "e.g. Eclipse Temurin $need from https://adoptium.net, and set JAVA_HOME to it" >&2
exit 1
