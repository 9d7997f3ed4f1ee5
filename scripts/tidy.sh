#!/usr/bin/env bash
# clang-tidy 14 with the repository's .clang-tidy over the project's own sources (lib/, proofs/,
# cli/, gpu/*.cpp), using <build-dir>/compile_commands.json (default build/). Exit 1 on any
# finding; the output ends with the count per check.
# Usage: scripts/tidy.sh [build-dir]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
if [ -z "$tidy" ]; then
  echo "tidy.sh: clang-tidy 14 not found (Debian 12: apt-get install clang-tidy)" >&2
  exit 2
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: $build/compile_commands.json missing: configure first (scripts/build.sh)" >&2
  exit 2
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Only sources the build compiles (gpu/: the stub without CUDA, *_cuda.cpp with it).
git ls-files -- 'lib/*.cpp' 'proofs/*.cpp' 'cli/*.cpp' 'gpu/*.cpp' |
  while IFS= read -r f; do
    if grep -qF "\"file\": \"$PWD/$f\"" "$build/compile_commands.json"; then printf '%s\0' "$f"; fi
  done |
  xargs -0 -r -n 4 -P 2 "$tidy" -p "$build" --quiet >"$log" 2>/dev/null
rc=$?
grep -E '(warning|error): ' "$log" | sort -u >"$log.findings"
cat "$log"
n=$(wc -l <"$log.findings")
if [ "$n" -ne 0 ] || [ "$rc" -ne 0 ]; then
  echo "tidy: $n finding(s) by check:" >&2
  grep -oE '\[[a-z0-9.,-]+\]$' "$log.findings" | sort | uniq -c | sort -rn >&2
  rm -f "$log.findings"
  exit 1
fi
rm -f "$log.findings"
echo "tidy: no findings"
