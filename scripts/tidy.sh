#!/usr/bin/env bash
# clang-tidy 14 with the repository's .clang-tidy over the project's own sources (lib/, proofs/,
# cli/, gpu/*.cpp), using <build-dir>/compile_commands.json (default build/). Exit 1 on any
# finding; the output ends with the count per check.
#
#   scripts/tidy.sh [--all | --since REF] [--record] [build-dir]
#
#   (default)     the translation units whose source, or any header they include, changed since
#                 the commit named in .ci/tidy-clean (the last commit a full run passed on),
#                 committed or not; read from the build's dependency files (scripts/tidy-select.py).
#                 A full run instead when that commit is unknown here (shallow clone) or when
#                 .clang-tidy, a CMakeLists.txt, cmake/ or this script changed since it. CI runs this.
#   --since REF   the same, since REF instead of .ci/tidy-clean
#   --all         every translation unit (ctest -L tidy runs this; label slow)
#   --record      after a full run with no finding on a clean tree, write HEAD into .ci/tidy-clean
#                 (commit it: later runs start from there)
set -uo pipefail
cd "$(dirname "$0")/.."
mode=changed
since=""
record=0
build=build
while [ $# -gt 0 ]; do
  case "$1" in
    --all) mode=all; shift ;;
    --since)
      [ $# -ge 2 ] || { echo "tidy.sh: --since needs a commit" >&2; exit 64; }
      since=$2; shift 2 ;;
    --record) record=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "tidy.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    *) build=$1; shift ;;
  esac
done
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
work=$(mktemp -d)
trap 'rm -rf "$log" "$log.findings" "$work"' EXIT
# Only sources the build compiles (gpu/: the stub without CUDA, *_cuda.cpp with it).
git ls-files -- 'lib/*.cpp' 'proofs/*.cpp' 'cli/*.cpp' 'gpu/*.cpp' >"$work/candidates"
if [ "$mode" = changed ]; then
  if [ -z "$since" ] && [ -f .ci/tidy-clean ]; then since=$(grep -v '^#' .ci/tidy-clean | head -1); fi
  if [ -z "$since" ] || ! git rev-parse -q --verify "$since^{commit}" >/dev/null; then
    echo "tidy: no known clean commit (${since:-none}): full run"
    mode=all
  else
    { git diff --name-only "$since" HEAD; git diff --name-only HEAD; git ls-files --others --exclude-standard; } |
      sort -u >"$work/changed"
    if grep -qE '^(\.clang-tidy|.*CMakeLists\.txt|cmake/.*|scripts/tidy(\.sh|-select\.py))$' "$work/changed"; then
      echo "tidy: .clang-tidy, the build files or this script changed since $since: full run"
      mode=all
    fi
  fi
fi
if [ "$mode" = all ]; then
  cp "$work/candidates" "$work/selected.raw"
else
  python3 scripts/tidy-select.py "$build" "$work/changed" "$work/candidates" >"$work/selected.raw" ||
    { echo "tidy: tidy-select.py failed" >&2; exit 2; }
fi
while IFS= read -r f; do
  if grep -qF "\"file\": \"$PWD/$f\"" "$build/compile_commands.json"; then printf '%s\0' "$f"; fi
done <"$work/selected.raw" >"$work/selected"
total=$(while IFS= read -r f; do grep -qF "\"file\": \"$PWD/$f\"" "$build/compile_commands.json" && echo; done <"$work/candidates" | wc -l)
count=$(tr -cd '\0' <"$work/selected" | wc -c)
if [ "$mode" = all ]; then
  echo "tidy: all $count translation units"
else
  echo "tidy: $count of $total translation units changed since $since (a source or a header it includes)"
fi
xargs -0 -r -n 4 -P 2 "$tidy" -p "$build" --quiet <"$work/selected" >"$log" 2>/dev/null
rc=$?
grep -E '(warning|error): ' "$log" | sort -u >"$log.findings"
cat "$log"
n=$(wc -l <"$log.findings")
if [ "$n" -ne 0 ] || [ "$rc" -ne 0 ]; then
  echo "tidy: $n finding(s) by check:" >&2
  grep -oE '\[[a-z0-9.,-]+\]$' "$log.findings" | sort | uniq -c | sort -rn >&2
  exit 1
fi
echo "tidy: no findings"
if [ "$record" = 1 ]; then
  if [ "$mode" != all ] || [ -n "$(git status --porcelain)" ]; then
    echo "tidy: --record needs a full run (--all) on a clean tree; .ci/tidy-clean unchanged" >&2
    exit 1
  fi
  { echo "# The last commit a full clang-tidy run (scripts/tidy.sh --all) passed on: CI's tidy stage"
    echo "# checks the translation units changed since it. Written by scripts/tidy.sh --all --record."
    git rev-parse HEAD; } >.ci/tidy-clean
  echo "tidy: .ci/tidy-clean = $(git rev-parse --short HEAD) (commit it)"
fi
