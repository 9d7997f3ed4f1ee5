#!/usr/bin/env bash
# Fails when any tracked *.cpp *.hpp *.cu *.cuh differs from the repository's .clang-format
# (clang-format 14); prints the offending files. Fix with: clang-format -i <files>.
set -uo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format)
if [ -z "$cf" ]; then
  echo "check-format.sh: clang-format 14 not found (Debian 12: apt-get install clang-format)" >&2
  exit 2
fi
bad=()
while IFS= read -r -d '' f; do
  "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files -z -- '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ ${#bad[@]} -ne 0 ]; then
  printf '%s\n' "${bad[@]}"
  echo "check-format: ${#bad[@]} file(s) differ from .clang-format ($("$cf" --version))" >&2
  exit 1
fi
echo "check-format: all tracked C++/CUDA sources match .clang-format"
# Catch test names become CTest names: a ';' splits one into two (neither runs) and a leading '-'
# is read by Catch as an option (the test never runs). Both have happened; refuse them here.
bad_names=$(git grep -n -E 'TEST_CASE\("(-|[^"]*;)' -- 'tests/*.cpp' || true)
if [ -n "$bad_names" ]; then
  echo "$bad_names"
  echo "check-format: test names above hold ';' or start with '-' (CTest cannot run them)" >&2
  exit 1
fi
echo "check-format: test names are safe for CTest"
